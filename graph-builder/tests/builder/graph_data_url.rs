//! Graph-data from a tarball URL (`graph-data-tarball` with `url`): the
//! download is bounded, trusts the CAs of `root_certificate_dir`, and a URL
//! that goes bad keeps the last good graph-data in service.

use std::path::Path;

use openshift_graph_data::GraphDataFiles;
use openshift_graph_data::MAX_TARBALL_BYTES;
use registry_testkit::{Body, CertificateShape, FileServer};

use crate::support::fixture;
use crate::support::{Running, StatusExt as _};

/// The fixture graph-data as the `{prefix}/graph-data` tarball.
fn tarball() -> Vec<u8> {
    let dir = fixture("cincinnati-graph-data");
    openshift_graph_data::tarball::write_tar_gz(&GraphDataFiles::from_dir(&dir).unwrap()).bytes
}

/// A graph-builder reading the fixture releases, and graph-data from `url`.
async fn spawn(url: &str, root_certificate_dir: &Path) -> Running {
    let releases = fixture("graph-gb-raw.json");
    let text = format!(
        "[service]\nport = 0\npublic_port = 0\npause_secs = 1\n[status]\nport = 0\n\
         [[plugin_settings]]\nname = \"release-graph-file\"\npath = {releases:?}\n\
         [[plugin_settings]]\nname = \"graph-data-tarball\"\nurl = \"{url}\"\nroot_certificate_dir = {dir:?}\n\
         [[plugin_settings]]\nname = \"openshift-secondary-metadata-parse\"\n\
         [[plugin_settings]]\nname = \"edge-add-remove\"\n",
        releases = releases.display().to_string(),
        dir = root_certificate_dir.display().to_string(),
    );
    crate::support::spawn(&toml::from_str(&text).unwrap(), "").await
}

#[tokio::test]
async fn an_oversized_tarball_is_refused_naming_the_limit_and_the_last_good_graph_data_stays() {
    let server = FileServer::start().unwrap();
    server.serve("/graph-data", Body::Bytes(tarball()));
    let no_extra_cas = tempfile::tempdir().unwrap();
    let app = spawn(&format!("{}/graph-data", server.url()), no_extra_cas.path()).await;
    let ready = app.wait_until_ready().await;
    let published = || async {
        app.get(&format!("{}/graph-data", app.public))
            .await
            .bytes()
            .await
            .unwrap()
    };
    let published_before = published().await;

    // Streamed without a length: the limit is found by reading.
    server.serve(
        "/graph-data",
        Body::Streamed(MAX_TARBALL_BYTES as u64 + 1024 * 1024),
    );
    let status = app
        .wait_for("the size error", |status| status.graph_data_error().is_some())
        .await;
    let error = status.graph_data_error().unwrap();
    assert!(
        error.contains(&format!("sent more than the {MAX_TARBALL_BYTES} bytes allowed")),
        "{error}"
    );
    assert_eq!(
        status.graph_data.as_ref().unwrap().revision,
        ready.graph_data.as_ref().unwrap().revision
    );
    assert_eq!(
        status.graph().etag,
        ready.graph().etag,
        "the last good graph is served"
    );
    assert_eq!(app.get(&format!("{}/graph", app.api)).await.status(), 200);
    assert_eq!(published().await, published_before, "and so is its graph-data");
}

#[tokio::test]
async fn a_tarball_url_with_a_private_ca_is_trusted_only_through_root_certificate_dir() {
    // A mirror's certificate that is its own CA: what OpenSSL accepts once trusted.
    let server = FileServer::start_tls(CertificateShape::SelfSignedCa).unwrap();
    server.serve("/graph-data", Body::Bytes(tarball()));
    let url = format!("{}/graph-data", server.url());

    let no_extra_cas = tempfile::tempdir().unwrap();
    let untrusting = spawn(&url, no_extra_cas.path()).await;
    let status = untrusting
        .wait_for("the TLS error", |status| status.graph_data_error().is_some())
        .await;
    let error = status.graph_data_error().unwrap();
    assert!(error.contains("certificate"), "{error}");
    assert!(!status.ready, "no graph without its graph-data");

    let certificates = tempfile::tempdir().unwrap();
    std::fs::create_dir(certificates.path().join("pem")).unwrap();
    std::fs::write(
        certificates.path().join("pem/mirror.crt"),
        server.ca_pem().unwrap(),
    )
    .unwrap();
    let trusting = spawn(&url, certificates.path()).await;
    let status = trusting.wait_until_ready().await;
    assert!(status.graph_data_error().is_none(), "{status:#?}");
}
