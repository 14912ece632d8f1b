//! Signature verification of a graph-data image digest, with keys generated
//! here, and fetching signatures from a signature store over HTTP.

use std::collections::HashMap;

use openshift_graph_data::signature::{SignatureError, SignatureStore, TrustedKeys, verify_digest};
use release_images::signature::{SigningKey, store_path};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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

/// Serves `files` (path → body, anything else 404) on 127.0.0.1 for a
/// bounded number of requests; returns the base URL.
async fn serve(files: HashMap<String, (u16, Vec<u8>)>, requests: usize) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        for _ in 0..requests {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buffer = [0u8; 1024];
            while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                let read = stream.read(&mut buffer).await.unwrap();
                if read == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..read]);
            }
            let line = String::from_utf8_lossy(&request);
            let path = line.split_whitespace().nth(1).unwrap_or_default().to_owned();
            let (status, body) = files.get(&path).cloned().unwrap_or((404, Vec::new()));
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await.unwrap();
            stream.write_all(&body).await.unwrap();
        }
    });
    base
}

fn signature_path(index: usize) -> String {
    format!("/signatures/{}", store_path(DIGEST, index))
}

#[tokio::test]
async fn the_store_is_searched_until_a_valid_signature() {
    let key = signing_key(1);
    let files = HashMap::from([
        (signature_path(1), (200, signature(&signing_key(2), DIGEST))),
        (signature_path(2), (200, signature(&key, DIGEST))),
    ]);
    let base = serve(files, 2).await;
    let store = SignatureStore::with_default_client(&format!("{base}/signatures/")).unwrap();
    assert_eq!(
        store.url(DIGEST, 2).unwrap(),
        format!("{base}{}", signature_path(2))
    );
    store.verify(DIGEST, &trusted(&key)).await.unwrap();
}

#[tokio::test]
async fn a_store_without_signatures_fails_verification() {
    let base = serve(HashMap::new(), 1).await;
    let store = SignatureStore::with_default_client(&format!("{base}/signatures")).unwrap();
    let error = store.verify(DIGEST, &trusted(&signing_key(1))).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("no valid signature for {DIGEST}: the signature store has none")
    );
}

#[tokio::test]
async fn a_failing_store_is_an_error_not_a_missing_signature() {
    let base = serve(HashMap::from([(signature_path(1), (503, Vec::new()))]), 1).await;
    let store = SignatureStore::with_default_client(&format!("{base}/signatures")).unwrap();
    let error = store.verify(DIGEST, &trusted(&signing_key(1))).await.unwrap_err();
    assert!(matches!(error, SignatureError::Fetch(_)), "{error}");
    assert!(error.to_string().ends_with("HTTP 503"), "{error}");
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
