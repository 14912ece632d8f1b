//! Signature verification of a graph-data image digest (upstream
//! graph-builder's rule), with keys generated here, against signatures in
//! memory and in a signature store over HTTP.

use http_fetch::ExtraRoots;
use image_signature::store::{SignatureStore, path};
use image_signature::{Digest, TrustedKeys};
use openshift_graph_data::signature::{SignatureError, verify_digest, verify_image};
use registry_testkit::{Body, FileServer};
use release_images::signature::SigningKey;

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

fn signature_path(index: u32) -> String {
    format!("/signatures/{}", path(&Digest::parse(DIGEST).unwrap(), index))
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
        store.url(&Digest::parse(DIGEST).unwrap(), 2).as_str(),
        format!("{}{}", server.url(), signature_path(2))
    );
    verify_image(&store, DIGEST, &trusted(&key)).await.unwrap();
}

#[tokio::test]
async fn a_store_without_signatures_fails_verification() {
    let (_server, store) = store_serving(Vec::new());
    let error = verify_image(&store, DIGEST, &trusted(&signing_key(1)))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("no valid signature for {DIGEST}: the signature store has none")
    );
}

#[tokio::test]
async fn a_failing_store_is_an_error_not_a_missing_signature() {
    let (_server, store) = store_serving(vec![(signature_path(1), Body::Status(503))]);
    let error = verify_image(&store, DIGEST, &trusted(&signing_key(1)))
        .await
        .unwrap_err();
    assert!(matches!(error, SignatureError::Fetch(_)), "{error}");
    assert!(error.to_string().ends_with("HTTP 503"), "{error}");
}
