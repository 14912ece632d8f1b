//! An HTTPS upstream whose certificate comes from a private CA: trusted
//! through `upstream.cincinnati.root_certificate_dir`, and only so.

use std::path::Path;
use std::time::Duration;

use registry_testkit::{Body, CertificateShape, FileServer};

use crate::support::app::{settings, spawn, spawn_ready};
use crate::support::{eventually, fixture};

fn settings_trusting(server: &FileServer, root_certificate_dir: &Path) -> policy_engine::Settings {
    let mut settings = settings(&format!("{}/graph", server.url()));
    settings.upstream.cincinnati.root_certificate_dir = root_certificate_dir.to_owned();
    settings
}

#[tokio::test]
async fn a_private_ca_is_trusted_only_through_root_certificate_dir() {
    let server = FileServer::start_tls(CertificateShape::CaSignedServer).unwrap();
    server.serve("/graph", Body::Bytes(fixture()));

    let no_extra_cas = tempfile::tempdir().unwrap();
    let untrusting = spawn(settings_trusting(&server, no_extra_cas.path())).await;
    eventually("the first fetch fails", Duration::from_secs(10), || async {
        untrusting
            .status_document()
            .await
            .client
            .feeds
            .first()
            .is_some_and(|feed| feed.freshness.is_stale())
    })
    .await;
    let status = untrusting.status_document().await;
    let message = status.client.feeds[0]
        .freshness
        .last_error()
        .unwrap()
        .message
        .as_str();
    assert!(message.contains("certificate"), "{message}");
    assert_eq!(untrusting.status_get("/readyz").await.status, 503);

    let certificates = tempfile::tempdir().unwrap();
    std::fs::write(
        certificates.path().join("upstream-ca.pem"),
        server.ca_pem().unwrap(),
    )
    .unwrap();
    let trusting = spawn_ready(settings_trusting(&server, certificates.path())).await;
    assert_eq!(trusting.get("/graph?channel=stable-4.6").await.status, 200);
}
