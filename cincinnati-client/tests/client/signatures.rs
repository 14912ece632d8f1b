//! A release's signatures checked as the CVO checks them, from a signature
//! store on a real HTTP server.

use cincinnati_client::signatures::{Outcome, check_release};
use http_fetch::ExtraRoots;
use image_signature::store::{SignatureStore, path};
use image_signature::{Digest, Rejection, TrustedKeys};
use registry_testkit::{Body, FileServer};
use release_images::signature::SigningKey;

const DIGEST: &str = "sha256:4ab6f4a3e18df3e7c0b2be6cda44b6e1f6e8a0dba1b8a35b1b3a2bb0f5b6c7d8";
const OTHER_DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
const REPOSITORY: &str = "quay.io/openshift-release-dev/ocp-release";
const PREFIX: &str = "/api/upgrades_info/signatures";

fn store_serving(bodies: &[(u32, Body)]) -> (FileServer, SignatureStore) {
    let server = FileServer::start().unwrap();
    let digest = Digest::parse(DIGEST).unwrap();
    for (index, body) in bodies {
        server.serve(&format!("{PREFIX}/{}", path(&digest, *index)), body.clone());
    }
    let base_url = format!("{}{PREFIX}", server.url());
    let store = SignatureStore::new(&base_url, ExtraRoots::default(), "client-test").unwrap();
    (server, store)
}

fn keys(key: &SigningKey) -> TrustedKeys {
    TrustedKeys::from_armored(&key.public_key_armored()).unwrap()
}

#[tokio::test]
async fn every_signature_up_to_the_first_missing_one_is_checked_and_reported() {
    let (trusted, other) = (SigningKey::from_seed(1), SigningKey::from_seed(2));
    let reference = format!("{REPOSITORY}:4.18.1-x86_64");
    let (_server, store) = store_serving(&[
        (1, Body::Bytes(other.sign(&reference, DIGEST))),
        (2, Body::Status(503)),
        (3, Body::Bytes(trusted.sign(&reference, OTHER_DIGEST))),
        (4, Body::Bytes(trusted.sign(&reference, DIGEST))),
        (6, Body::Bytes(trusted.sign(&reference, DIGEST))),
    ]);
    let checked = check_release(&store, &keys(&trusted), &format!("{REPOSITORY}@{DIGEST}"))
        .await
        .unwrap();
    assert_eq!(checked.digest.as_str(), DIGEST);
    let outcomes: Vec<(u32, String)> = checked
        .signatures
        .iter()
        .map(|signature| {
            let outcome = match &signature.outcome {
                Outcome::Verified(verified) => format!("verified: {}", verified.document.docker_reference()),
                Outcome::Rejected(rejection) => format!("rejected: {rejection}"),
                Outcome::Unavailable(error) => format!("unavailable: {error}"),
            };
            (signature.index, outcome)
        })
        .collect();
    assert_eq!(outcomes.len(), 4, "up to the 404 of signature-5: {outcomes:#?}");
    assert_eq!(outcomes[0], (1, format!("rejected: {}", Rejection::Untrusted)));
    assert!(
        outcomes[1].1.starts_with("unavailable: ") && outcomes[1].1.ends_with("HTTP 503"),
        "{:?}",
        outcomes[1]
    );
    assert_eq!(
        outcomes[2],
        (3, format!("rejected: signs {OTHER_DIGEST}, not {DIGEST}"))
    );
    assert_eq!(outcomes[3], (4, format!("verified: {reference}")));
    assert!(checked.is_verified());
    assert_eq!(
        checked
            .verified()
            .map(|verified| verified.signer.clone())
            .collect::<Vec<_>>(),
        [trusted.fingerprint()]
    );
}

#[tokio::test]
async fn a_release_without_signatures_is_not_verified() {
    let (server, store) = store_serving(&[]);
    let checked = check_release(&store, &keys(&SigningKey::from_seed(1)), DIGEST)
        .await
        .unwrap();
    assert!(checked.signatures.is_empty() && !checked.is_verified());
    assert_eq!(server.requests().len(), 1, "signature-1 only");
}

#[tokio::test]
async fn a_release_signed_only_by_untrusted_keys_is_not_verified() {
    let untrusted = SigningKey::from_seed(2);
    let (_server, store) = store_serving(&[(1, Body::Bytes(untrusted.sign("quay.io/a/b:1", DIGEST)))]);
    let checked = check_release(&store, &keys(&SigningKey::from_seed(1)), DIGEST)
        .await
        .unwrap();
    assert_eq!(checked.signatures.len(), 1);
    assert!(!checked.is_verified());
}

#[tokio::test]
async fn a_pull_spec_without_a_digest_is_refused() {
    let (_server, store) = store_serving(&[]);
    let spec = format!("{REPOSITORY}:4.18.1-x86_64");
    let error = check_release(&store, &keys(&SigningKey::from_seed(1)), &spec)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("4.18.1-x86_64"), "{error}");
}
