//! The fetch path against real servers on 127.0.0.1: plain HTTP, and HTTPS
//! with a private CA.

use std::time::Duration;

use http_fetch::{ClientSettings, ExtraRoots, FetchError, HttpClient, Request, StatusCode, Url};
use registry_testkit::{Body, CertificateShape, FileServer};

const LIMIT: usize = 64 * 1024;

fn settings(roots: ExtraRoots) -> ClientSettings {
    ClientSettings {
        user_agent: "http-fetch-test/1".to_owned(),
        timeout: Duration::from_secs(30),
        roots,
        gzip: false,
    }
}

fn client(roots: ExtraRoots) -> HttpClient {
    HttpClient::new(settings(roots)).unwrap()
}

fn url(server: &FileServer, path: &str) -> Url {
    Url::parse(&format!("{}{path}", server.url())).unwrap()
}

#[tokio::test]
async fn a_body_up_to_the_limit_is_read_whole() {
    let server = FileServer::start().unwrap();
    server.serve("/exact", Body::Bytes(vec![7; LIMIT]));
    let response = client(ExtraRoots::default())
        .send(Request::get("test", &url(&server, "/exact"), LIMIT))
        .await
        .unwrap();
    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(response.body.len(), LIMIT);
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_naming_the_limit() {
    let server = FileServer::start().unwrap();
    // One announced by its Content-Length, one found out while reading.
    server.serve("/declared", Body::Bytes(vec![7; LIMIT + 1]));
    server.serve("/streamed", Body::Streamed(64 * LIMIT as u64));
    for path in ["/declared", "/streamed"] {
        let error = client(ExtraRoots::default())
            .send(Request::get("test", &url(&server, path), LIMIT))
            .await
            .unwrap_err();
        assert!(
            matches!(error, FetchError::TooLarge { limit: LIMIT, .. }),
            "{path}: {error}"
        );
        assert!(
            error
                .to_string()
                .contains(&format!("more than the {LIMIT} bytes allowed")),
            "{error}"
        );
    }
}

#[tokio::test]
async fn other_statuses_are_answers_not_errors() {
    let server = FileServer::start().unwrap();
    let response = client(ExtraRoots::default())
        .send(Request::get("test", &url(&server, "/missing"), LIMIT))
        .await
        .unwrap();
    assert_eq!(response.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn sends_the_headers_asked_for() {
    let server = FileServer::start().unwrap();
    server.serve("/graph", Body::Bytes(b"{}".to_vec()));
    let target = url(&server, "/graph");
    client(ExtraRoots::default())
        .send(
            Request::get("test", &target, LIMIT)
                .accept("application/json")
                .if_none_match(Some("\"abc\"")),
        )
        .await
        .unwrap();
    let request = &server.requests()[0];
    assert_eq!(request.headers["accept"], "application/json");
    assert_eq!(request.headers["if-none-match"], "\"abc\"");
    assert_eq!(request.headers["user-agent"], "http-fetch-test/1");
}

#[tokio::test]
async fn a_conditional_get_is_answered_304_while_the_entity_tag_matches() {
    let server = FileServer::start().unwrap();
    server.serve("/graph-data", Body::Tagged(b"first".to_vec()));
    let target = url(&server, "/graph-data");
    let client = client(ExtraRoots::default());
    let first = client.send(Request::get("test", &target, LIMIT)).await.unwrap();
    let etag = first.etag.expect("an entity tag");
    let again = client
        .send(Request::get("test", &target, LIMIT).if_none_match(Some(&etag)))
        .await
        .unwrap();
    assert_eq!((again.status, again.body.len()), (StatusCode::NOT_MODIFIED, 0));

    server.serve("/graph-data", Body::Tagged(b"second".to_vec()));
    let changed = client
        .send(Request::get("test", &target, LIMIT).if_none_match(Some(&etag)))
        .await
        .unwrap();
    assert_eq!(
        (changed.status, changed.body.as_ref()),
        (StatusCode::OK, &b"second"[..])
    );
    assert_ne!(changed.etag, Some(etag));
}

/// A `root_certificate_dir` holding `pem`, as operators configure it.
fn certificate_dir(pem: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pem")).unwrap();
    std::fs::write(dir.path().join("pem/private-ca.crt"), pem).unwrap();
    dir
}

#[tokio::test]
async fn a_private_ca_is_trusted_only_through_extra_roots() {
    for shape in [CertificateShape::CaSignedServer, CertificateShape::SelfSignedCa] {
        let server = FileServer::start_tls(shape).unwrap();
        server.serve("/file", Body::Bytes(b"trusted".to_vec()));
        let target = url(&server, "/file");

        let refused = client(ExtraRoots::default())
            .send(Request::get("test", &target, LIMIT))
            .await
            .unwrap_err();
        assert!(
            matches!(refused, FetchError::Transport { .. }) && refused.to_string().contains("certificate"),
            "{shape:?}: {refused}"
        );

        let dir = certificate_dir(server.ca_pem().unwrap());
        let response = client(ExtraRoots::from_dir(dir.path()))
            .send(Request::get("test", &target, LIMIT))
            .await
            .unwrap_or_else(|error| panic!("{shape:?}: {error}"));
        assert_eq!(&response.body[..], b"trusted", "{shape:?}");
    }
}

#[tokio::test]
async fn errors_do_not_show_credentials_in_the_url() {
    let server = FileServer::start().unwrap();
    let address = server.url().trim_start_matches("http://").to_owned();
    drop(server);
    let target = Url::parse(&format!("http://user:s3cret@{address}/graph")).unwrap();
    let error = client(ExtraRoots::default())
        .send(Request::get("test", &target, LIMIT))
        .await
        .unwrap_err()
        .to_string();
    assert!(!error.contains("s3cret") && error.contains(&address), "{error}");
}

#[tokio::test]
async fn the_server_receives_the_trace_context_of_the_client_span() {
    use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
    use tracing::Instrument as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    use tracing_subscriber::layer::SubscriberExt as _;

    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _guard = tracing::subscriber::set_default(subscriber);

    let server = FileServer::start().unwrap();
    let target = url(&server, "/traced");
    let caller = tracing::info_span!("caller");
    let trace_id = caller.context().span().span_context().trace_id();
    client(ExtraRoots::default())
        .send(Request::get("test", &target, LIMIT))
        .instrument(caller)
        .await
        .unwrap();
    let traceparent = server.requests()[0].headers["traceparent"].clone();
    assert!(
        traceparent.contains(&trace_id.to_string()),
        "{traceparent} does not continue trace {trace_id}"
    );
}

#[tokio::test]
async fn trust_roots_are_loaded_on_the_first_https_request_only() {
    let plain = FileServer::start().unwrap();
    plain.serve("/file", Body::Bytes(b"plain".to_vec()));
    let http_only = client(ExtraRoots::default());
    for _ in 0..2 {
        let response = http_only
            .send(Request::get("test", &url(&plain, "/file"), LIMIT))
            .await
            .unwrap();
        assert_eq!(&response.body[..], b"plain");
    }
    assert!(!http_only.tls_configured(), "http:// requests set up no TLS");

    let secure = FileServer::start_tls(CertificateShape::SelfSignedCa).unwrap();
    secure.serve("/file", Body::Bytes(b"trusted".to_vec()));
    let dir = certificate_dir(secure.ca_pem().unwrap());
    let first = client(ExtraRoots::from_dir(dir.path()));
    let second = first.clone();
    assert!(!first.tls_configured(), "nothing asked yet");
    for asking in [&first, &second] {
        let response = asking
            .send(Request::get("test", &url(&secure, "/file"), LIMIT))
            .await
            .unwrap();
        assert_eq!(
            &response.body[..],
            b"trusted",
            "the --cacert-style roots are trusted"
        );
    }
    assert!(
        second.tls_configured(),
        "clones share one TLS set-up, made by the first https:// request"
    );
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[tokio::test]
async fn a_gzip_answer_is_inflated_and_the_limit_bounds_the_inflated_bytes() {
    let server = FileServer::start().unwrap();
    server.serve("/fits", Body::Gzip(gzip(&[7; LIMIT])));
    server.serve("/bomb", Body::Gzip(gzip(&vec![0; 64 * LIMIT])));
    let inflating = HttpClient::new(ClientSettings {
        gzip: true,
        ..settings(ExtraRoots::default())
    })
    .unwrap();
    let response = inflating
        .send(Request::get("test", &url(&server, "/fits"), LIMIT))
        .await
        .unwrap();
    assert_eq!(response.body.len(), LIMIT);
    assert!(
        !response.headers.contains_key("content-encoding"),
        "the headers describe the inflated body"
    );
    assert_eq!(server.requests()[0].headers["accept-encoding"], "gzip");
    let error = inflating
        .send(Request::get("test", &url(&server, "/bomb"), LIMIT))
        .await
        .unwrap_err();
    assert!(
        matches!(error, FetchError::TooLarge { limit: LIMIT, .. }),
        "{error}"
    );

    // A client without gzip (tarballs) keeps the bytes as sent.
    let kept = client(ExtraRoots::default())
        .send(Request::get("test", &url(&server, "/fits"), LIMIT))
        .await
        .unwrap();
    assert_eq!(kept.body, gzip(&[7; LIMIT]));
}

#[tokio::test]
async fn a_redirect_is_followed() {
    let server = FileServer::start().unwrap();
    server.serve("/moved", Body::Redirect(url(&server, "/here").to_string()));
    server.serve("/here", Body::Bytes(b"here".to_vec()));
    let response = client(ExtraRoots::default())
        .send(Request::get("test", &url(&server, "/moved"), LIMIT))
        .await
        .unwrap();
    assert_eq!(
        (response.status, &response.body[..]),
        (StatusCode::OK, &b"here"[..])
    );
}
