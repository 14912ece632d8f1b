//! The signature route on a real HTTP server over a real directory: what a
//! CVO gets, conditional requests, HEAD, every error as JSON, and no way out
//! of the tree by `..`, encoded slashes or links.

use std::net::SocketAddr;
use std::os::unix::fs::symlink;

use actix_web::{App, HttpServer, web};
use http_answers::PathPrefix;
use http_answers::errors::not_found;
use metadata_helper::Signatures;
use metadata_helper::directory::DirectorySource;
use metadata_helper::metrics::ServeMetrics;
use metadata_helper::serve::SignatureRoute;
use service_kit::metrics::MetricRegistry;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::{A, B, directory_source, write};

const PREFIX: &str = "/api/upgrades_info";

/// A running helper route over `signatures`.
struct Helper {
    address: SocketAddr,
    metrics: ServeMetrics,
    handle: actix_web::dev::ServerHandle,
}

impl Helper {
    fn start(signatures: Signatures) -> Self {
        let metrics = ServeMetrics::register(&MetricRegistry::new("cincinnati_mh").unwrap()).unwrap();
        let route = SignatureRoute::new(signatures, metrics.clone(), &PathPrefix::parse(PREFIX));
        let server = HttpServer::new(move || {
            App::new()
                .service(route.clone().scope(&PathPrefix::parse(PREFIX)))
                .default_service(web::to(not_found))
        })
        .workers(1)
        .disable_signals()
        .bind("127.0.0.1:0")
        .unwrap();
        let address = server.addrs()[0];
        let server = server.run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Self {
            address,
            metrics,
            handle,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{PREFIX}/signatures/{path}", self.address)
    }

    /// `GET <path>` sent byte for byte (HTTP clients normalise `..` away):
    /// the status code and the body.
    async fn raw_get(&self, path: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(self.address).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        let status = answer[9..12].parse().unwrap();
        let body = answer.split_once("\r\n\r\n").unwrap().1.to_owned();
        (status, body)
    }
}

async fn error_kind(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    (status, body["kind"].as_str().unwrap().to_owned())
}

#[actix_web::test]
async fn a_signature_is_served_as_the_cvo_fetches_it() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), A, 1, b"first signature");
    write(root.path(), A, 2, b"second signature");
    let helper = Helper::start(directory_source(root.path()).signatures().clone());
    let client = reqwest::Client::new();

    let response = client
        .get(helper.url(&format!("sha256={A}/signature-2")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "application/octet-stream");
    assert_eq!(headers["cache-control"], "public, max-age=31536000, immutable");
    let etag = headers["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.len() == 66, "a strong tag: {etag}");
    assert_eq!(response.bytes().await.unwrap().as_ref(), b"second signature");

    let again = client
        .get(helper.url(&format!("sha256={A}/signature-2")))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"], etag.as_str());
    let other = client
        .get(helper.url(&format!("sha256={A}/signature-1")))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200, "another signature has another tag");

    let head = client
        .head(helper.url(&format!("sha256={A}/signature-1")))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["content-length"], "15");
    assert!(head.bytes().await.unwrap().is_empty());

    // The CVO's search ends at the first 404.
    let next = client
        .get(helper.url(&format!("sha256={A}/signature-3")))
        .send()
        .await
        .unwrap();
    assert_eq!(error_kind(next).await, (404, "does_not_exist".to_owned()));
    let unsigned = client
        .get(helper.url(&format!("sha256={B}/signature-1")))
        .send()
        .await
        .unwrap();
    assert_eq!(error_kind(unsigned).await, (404, "does_not_exist".to_owned()));

    let post = client
        .post(helper.url(&format!("sha256={A}/signature-1")))
        .send()
        .await
        .unwrap();
    assert_eq!(error_kind(post).await, (405, "method_not_allowed".to_owned()));
    // Every GET and HEAD is counted; the refused method is not.
    let pattern = SignatureRoute::pattern(&PathPrefix::parse(PREFIX));
    assert_eq!(helper.metrics.requests(&pattern), 6);
    helper.handle.stop(false).await;
}

#[actix_web::test]
async fn malformed_algorithms_and_digests_are_invalid_params() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), A, 1, b"a1");
    let helper = Helper::start(directory_source(root.path()).signatures().clone());
    let upper = A.to_uppercase();
    for path in [
        format!("sha512={A}/signature-1"),
        format!("sha256={upper}/signature-1"),
        format!("sha256={}/signature-1", &A[..63]),
        format!("sha256:{A}/signature-1"),
        format!("{A}/signature-1"),
    ] {
        let response = reqwest::get(helper.url(&path)).await.unwrap();
        assert_eq!(
            error_kind(response).await,
            (400, "invalid_params".to_owned()),
            "{path}"
        );
    }
    for path in [format!("sha256={A}/signature-0"), format!("sha256={A}/signature")] {
        let response = reqwest::get(helper.url(&path)).await.unwrap();
        assert_eq!(
            error_kind(response).await,
            (404, "does_not_exist".to_owned()),
            "{path}"
        );
    }
    helper.handle.stop(false).await;
}

#[actix_web::test]
async fn no_request_reads_outside_the_tree() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "SECRET").unwrap();
    let graph_data = tempfile::tempdir().unwrap();
    std::fs::write(graph_data.path().join("version"), "SECRET").unwrap();
    let root = graph_data.path().join("signatures");
    write(&root, A, 1, b"a1");
    // A signature file and a digest directory that are links out of the tree.
    symlink(
        outside.path().join("secret"),
        root.join("sha256").join(A).join("signature-2"),
    )
    .unwrap();
    symlink(outside.path(), root.join("sha256").join(B)).unwrap();
    std::fs::write(outside.path().join("signature-1"), "SECRET").unwrap();
    let helper = Helper::start(directory_source(&root).signatures().clone());
    let signatures = format!("{PREFIX}/signatures");

    for path in [
        format!("{signatures}/sha256={A}/signature-2"),
        format!("{signatures}/sha256={B}/signature-1"),
        format!("{signatures}/sha256={A}/..%2F..%2F..%2Fversion"),
        format!("{signatures}/sha256={A}/..%2f..%2f..%2fversion"),
        format!("{signatures}/sha256={A}/%2E%2E%2F%2E%2E%2F%2E%2E%2Fversion"),
        format!("{signatures}/sha256={A}/../../../version"),
        format!("{signatures}/sha256=..%2F..%2F/version"),
        format!("{signatures}/..%2F..%2Fversion/signature-1"),
        format!("{signatures}/sha256={A}%2F..%2F..%2F..%2F..%2Fversion/signature-1"),
        format!("{signatures}/../version"),
        format!("{signatures}/sha256={A}/signature-1%2F..%2F..%2F..%2F..%2F..%2Fversion"),
        format!("{signatures}/sha256={A}/signature-1/../../../../version"),
        format!("{signatures}/sha256={A}"),
        format!("{signatures}/"),
    ] {
        let (status, body) = helper.raw_get(&path).await;
        assert!(!body.contains("SECRET"), "{path} read outside the tree");
        assert!(matches!(status, 400 | 404), "{path}: {status} {body}");
        assert!(body.contains("\"kind\""), "{path}: a JSON error, got {body}");
    }
    // The file inside is still served.
    let (status, body) = helper
        .raw_get(&format!("{signatures}/sha256={A}/signature-1"))
        .await;
    assert_eq!((status, body.as_str()), (200, "a1"));
    helper.handle.stop(false).await;
}

#[actix_web::test]
async fn before_a_set_is_loaded_the_route_is_unavailable() {
    let unloaded = DirectorySource::new("/nonexistent".into());
    let helper = Helper::start(unloaded.signatures().clone());
    let response = reqwest::get(helper.url(&format!("sha256={A}/signature-1")))
        .await
        .unwrap();
    assert_eq!(
        error_kind(response).await,
        (503, "service_unavailable".to_owned())
    );
    helper.handle.stop(false).await;
}
