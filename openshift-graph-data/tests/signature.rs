//! Signature verification of a graph-data image digest, with keys generated
//! here, and fetching signatures from a signature store over HTTP.

use http_fetch::ExtraRoots;
use openshift_graph_data::signature::store::MAX_SIGNATURE_BYTES;
use openshift_graph_data::signature::{SignatureError, SignatureStore, TrustedKeys, verify_digest};
use registry_testkit::{Body, CertificateShape, FileServer};
use release_images::signature::{SigningKey, store_path};

const DIGEST: &str = "sha256:4ab6f4a3e18df3e7c0b2be6cda44b6e1f6e8a0dba1b8a35b1b3a2bb0f5b6c7d8";
const OTHER_DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

fn signing_key(seed: u64) -> SigningKey {
    SigningKey::from_seed(seed)
}

fn trusted(key: &SigningKey) -> TrustedKeys {
    TrustedKeys::from_armored(&key.public_key_armored()).unwrap()
}

fn signature(key: &SigningKey, digest: &str) -> Vec<u8> {
    key.sign("quay.io/openshift/graph-data:latest", digest)
}

fn rejections(error: SignatureError) -> Vec<String> {
    match error {
        SignatureError::NotVerified { rejected, .. } => rejected,
        other => panic!("expected NotVerified, got {other}"),
    }
}

#[test]
fn a_signature_by_a_trusted_key_naming_the_digest_verifies() {
    let key = signing_key(1);
    let signatures = [signature(&key, OTHER_DIGEST), signature(&key, DIGEST)];
    assert_eq!(verify_digest(DIGEST, &signatures, &trusted(&key)).unwrap(), 1);
}

#[test]
fn a_signature_by_another_key_is_rejected() {
    let error = verify_digest(
        DIGEST,
        &[signature(&signing_key(2), DIGEST)],
        &trusted(&signing_key(1)),
    )
    .unwrap_err();
    assert_eq!(rejections(error), ["signature-1: not signed by a trusted key"]);
}

#[test]
fn a_signature_of_another_digest_is_rejected_and_named() {
    let key = signing_key(1);
    let error = verify_digest(DIGEST, &[signature(&key, OTHER_DIGEST)], &trusted(&key)).unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "no valid signature for {DIGEST}: signature-1: signs {OTHER_DIGEST}"
        )),
        "{message}"
    );
}

#[test]
fn garbage_is_rejected_not_a_crash() {
    let error = verify_digest(DIGEST, &[b"not a signature".to_vec()], &trusted(&signing_key(1))).unwrap_err();
    assert!(rejections(error)[0].starts_with("signature-1: not an OpenPGP message"));
}

#[test]
fn keys_are_read_from_every_file_of_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (signing_key(1), signing_key(2));
    for (name, key) in [("a.asc", &first), ("b.asc", &second)] {
        std::fs::write(dir.path().join(name), key.public_key_armored()).unwrap();
    }
    let keys = TrustedKeys::from_dir(dir.path()).unwrap();
    assert_eq!(keys.len(), 2);
    assert!(verify_digest(DIGEST, &[signature(&second, DIGEST)], &keys).is_ok());

    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        TrustedKeys::from_dir(empty.path()),
        Err(SignatureError::NoKeys(_))
    ));
}

fn signature_path(index: usize) -> String {
    format!("/signatures/{}", store_path(DIGEST, index))
}

/// A store on a real server holding `signatures` (path → body).
fn store_serving(signatures: Vec<(String, Body)>) -> (FileServer, SignatureStore) {
    let server = FileServer::start().unwrap();
    for (path, body) in signatures {
        server.serve(&path, body);
    }
    let store = SignatureStore::new(
        &format!("{}/signatures/", server.url()),
        ExtraRoots::default(),
        "signature-test",
    )
    .unwrap();
    (server, store)
}

#[tokio::test]
async fn the_store_is_searched_until_a_valid_signature() {
    let key = signing_key(1);
    let (server, store) = store_serving(vec![
        (signature_path(1), Body::Bytes(signature(&signing_key(2), DIGEST))),
        (signature_path(2), Body::Bytes(signature(&key, DIGEST))),
    ]);
    assert_eq!(
        store.url(DIGEST, 2).unwrap().as_str(),
        format!("{}{}", server.url(), signature_path(2))
    );
    store.verify(DIGEST, &trusted(&key)).await.unwrap();
}

#[tokio::test]
async fn a_store_without_signatures_fails_verification() {
    let (_server, store) = store_serving(Vec::new());
    let error = store.verify(DIGEST, &trusted(&signing_key(1))).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("no valid signature for {DIGEST}: the signature store has none")
    );
}

#[tokio::test]
async fn a_failing_store_is_an_error_not_a_missing_signature() {
    let (_server, store) = store_serving(vec![(signature_path(1), Body::Status(503))]);
    let error = store.verify(DIGEST, &trusted(&signing_key(1))).await.unwrap_err();
    assert!(matches!(error, SignatureError::Fetch(_)), "{error}");
    assert!(error.to_string().ends_with("HTTP 503"), "{error}");
}

#[tokio::test]
async fn an_oversized_signature_is_refused_naming_the_limit() {
    let (_server, store) = store_serving(vec![(
        signature_path(1),
        Body::Streamed(4 * MAX_SIGNATURE_BYTES as u64),
    )]);
    let error = store.verify(DIGEST, &trusted(&signing_key(1))).await.unwrap_err();
    assert!(matches!(error, SignatureError::Fetch(_)), "{error}");
    assert!(
        error
            .to_string()
            .ends_with(&format!("sent more than the {MAX_SIGNATURE_BYTES} bytes allowed")),
        "{error}"
    );
}

#[tokio::test]
async fn a_store_behind_a_private_ca_is_trusted_through_the_roots_given() {
    let key = signing_key(1);
    let server = FileServer::start_tls(CertificateShape::CaSignedServer).unwrap();
    server.serve(&signature_path(1), Body::Bytes(signature(&key, DIGEST)));
    let base_url = format!("{}/signatures", server.url());
    let untrusting = SignatureStore::new(&base_url, ExtraRoots::default(), "signature-test").unwrap();
    let error = untrusting.verify(DIGEST, &trusted(&key)).await.unwrap_err();
    assert!(
        matches!(error, SignatureError::Fetch(_)) && error.to_string().contains("certificate"),
        "{error}"
    );
    let roots = ExtraRoots::from_pem("store CA", server.ca_pem().unwrap()).unwrap();
    let trusting = SignatureStore::new(&base_url, roots, "signature-test").unwrap();
    trusting.verify(DIGEST, &trusted(&key)).await.unwrap();
}

/// Real release signatures are made by GnuPG; check one made by it, when
/// the machine has `gpg` (Debian does).
#[test]
fn a_gnupg_signature_verifies() {
    use std::process::Command;
    if Command::new("gpg").arg("--version").output().is_err() {
        eprintln!("gpg is not installed; GnuPG interoperability not checked");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let gpg = |arguments: &[&str]| {
        let output = Command::new("gpg")
            .env("GNUPGHOME", home.path())
            .args(["--batch", "--yes", "--passphrase", ""])
            .args(arguments)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "gpg {arguments:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    };
    gpg(&[
        "--quick-gen-key",
        "Release <release@example.com>",
        "ed25519",
        "sign",
        "never",
    ]);
    let document = home.path().join("signature.json");
    std::fs::write(
        &document,
        format!(r#"{{"critical": {{"image": {{"docker-manifest-digest": "{DIGEST}"}}}}}}"#),
    )
    .unwrap();
    let signed = home.path().join("signature-1");
    gpg(&[
        "--output",
        signed.to_str().unwrap(),
        "--sign",
        document.to_str().unwrap(),
    ]);
    let public_key = String::from_utf8(gpg(&["--armor", "--export", "release@example.com"])).unwrap();

    let keys = TrustedKeys::from_armored(&public_key).unwrap();
    let signature = std::fs::read(&signed).unwrap();
    assert_eq!(
        verify_digest(DIGEST, std::slice::from_ref(&signature), &keys).unwrap(),
        0
    );
    assert!(verify_digest(OTHER_DIGEST, &[signature], &keys).is_err());
}
