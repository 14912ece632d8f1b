//! The signature store client against a real HTTP(S) server on loopback:
//! the CVO's search (until the first 404, past errors, at most nine), the
//! size limit and the extra CAs.

use http_fetch::ExtraRoots;
use image_signature::MAX_SIGNATURE_BYTES;
use image_signature::store::{FetchError, SignatureStore, path};
use registry_testkit::{Body, CertificateShape, FileServer};

use crate::support::digest;

fn served_path(index: u32) -> String {
    format!("/signatures/{}", path(&digest(), index))
}

/// A store on a real server answering `bodies` (signature index → body).
fn store_serving(bodies: &[(u32, Body)]) -> (FileServer, SignatureStore) {
    let server = FileServer::start().unwrap();
    for (index, body) in bodies {
        server.serve(&served_path(*index), body.clone());
    }
    let store = SignatureStore::new(
        &format!("{}/signatures/", server.url()),
        ExtraRoots::default(),
        "signature-test",
    )
    .unwrap();
    (server, store)
}

fn asked(server: &FileServer) -> Vec<String> {
    server
        .requests()
        .into_iter()
        .map(|request| request.path)
        .collect()
}

#[tokio::test]
async fn the_search_stops_at_the_first_missing_signature() {
    let (server, store) = store_serving(&[
        (1, Body::Bytes(b"one".to_vec())),
        (2, Body::Bytes(b"two".to_vec())),
        (4, Body::Bytes(b"four".to_vec())),
    ]);
    let found = store.search(&digest()).await;
    let bodies: Vec<_> = found
        .iter()
        .map(|fetched| (fetched.index, fetched.signature.as_ref().unwrap().clone()))
        .collect();
    assert_eq!(bodies, [(1, b"one".to_vec()), (2, b"two".to_vec())]);
    assert_eq!(
        found[1].url.as_str(),
        format!("{}{}", server.url(), served_path(2))
    );
    assert_eq!(asked(&server), [1, 2, 3].map(served_path));
}

#[tokio::test]
async fn a_failed_index_is_reported_and_the_search_goes_on_and_empty_ones_are_skipped() {
    let (server, store) = store_serving(&[
        (1, Body::Status(503)),
        (2, Body::Bytes(Vec::new())),
        (3, Body::Streamed(2 * MAX_SIGNATURE_BYTES as u64)),
        (4, Body::Bytes(b"four".to_vec())),
    ]);
    let found = store.search(&digest()).await;
    assert_eq!(
        found.iter().map(|fetched| fetched.index).collect::<Vec<_>>(),
        [1, 3, 4]
    );
    assert!(
        matches!(&found[0].signature, Err(FetchError::Status { status: 503, .. })),
        "{:?}",
        found[0].signature
    );
    let too_large = found[1].signature.as_ref().unwrap_err().to_string();
    assert!(
        too_large.ends_with(&format!("sent more than the {MAX_SIGNATURE_BYTES} bytes allowed")),
        "{too_large}"
    );
    assert_eq!(found[2].signature.as_ref().unwrap(), b"four");
    assert_eq!(asked(&server).len(), 5, "up to the 404 of signature-5");
}

#[tokio::test]
async fn no_more_than_nine_signatures_are_asked_for() {
    let bodies: Vec<_> = (1..=12).map(|index| (index, Body::Bytes(vec![b'x']))).collect();
    let (server, store) = store_serving(&bodies);
    assert_eq!(store.search(&digest()).await.len(), 9);
    assert_eq!(asked(&server), (1..=9).map(served_path).collect::<Vec<_>>());
}

#[tokio::test]
async fn an_unreachable_store_fails_every_index_it_tries() {
    let server = FileServer::start().unwrap();
    let url = format!("{}/signatures", server.url());
    drop(server);
    let store = SignatureStore::new(&url, ExtraRoots::default(), "signature-test").unwrap();
    let found = store.search(&digest()).await;
    assert_eq!(found.len(), 9);
    assert!(
        found
            .iter()
            .all(|fetched| matches!(fetched.signature, Err(FetchError::Http(_))))
    );
}

#[tokio::test]
async fn a_store_behind_a_private_ca_is_trusted_through_the_roots_given() {
    let server = FileServer::start_tls(CertificateShape::CaSignedServer).unwrap();
    server.serve(&served_path(1), Body::Bytes(b"one".to_vec()));
    let base_url = format!("{}/signatures", server.url());
    let untrusting = SignatureStore::new(&base_url, ExtraRoots::default(), "signature-test").unwrap();
    let error = untrusting.fetch(&digest(), 1).await.unwrap_err();
    assert!(error.to_string().contains("certificate"), "{error}");
    let roots = ExtraRoots::from_pem("store CA", server.ca_pem().unwrap()).unwrap();
    let trusting = SignatureStore::new(&base_url, roots, "signature-test").unwrap();
    assert_eq!(trusting.fetch(&digest(), 1).await.unwrap().unwrap(), b"one");
    assert_eq!(trusting.fetch(&digest(), 2).await.unwrap(), None);
}
