//! Content negotiation: upstream's single values, and real Accept lists.

use crate::support::app::{settings, spawn_ready};
use crate::support::fixture;
use crate::support::upstream::{Behaviour, FakeUpstream};

const JSON: &str = "application/json";
const V1: &str = "application/vnd.redhat.cincinnati.v1+json";

#[tokio::test]
async fn accept_headers_choose_the_media_type() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let cases: &[(Option<&str>, &str)] = &[
        (Some(JSON), JSON),
        (Some(V1), V1),
        (Some("*/*"), JSON),
        (Some("application/*"), JSON),
        (Some("*"), JSON),
        (Some("text/html, application/json;q=0.9, */*;q=0.1"), JSON),
        (
            Some("application/json;q=0.5, application/vnd.redhat.cincinnati.v1+json"),
            V1,
        ),
        (Some("application/json; charset=utf-8"), JSON),
    ];
    let mut bodies = Vec::new();
    for (accept, expected) in cases {
        let headers: Vec<(&str, &str)> = accept.iter().map(|value| ("accept", *value)).collect();
        let answer = app.get_with("/graph?channel=stable-4.6", &headers).await;
        assert_eq!(answer.status, 200, "{accept:?}");
        assert_eq!(answer.header("content-type"), Some(*expected), "{accept:?}");
        bodies.push(answer.body);
    }
    assert!(
        bodies.windows(2).all(|pair| pair[0] == pair[1]),
        "one graph, two labels"
    );
}

#[tokio::test]
async fn no_accept_header_means_the_v1_type() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    // reqwest always sends `Accept: */*`; a raw request sends none.
    let head = app.raw_request_head("/graph?channel=stable-4.6").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains(&format!("content-type: {V1}")),
        "{head}"
    );
}

#[tokio::test]
async fn unacceptable_types_are_406() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    for accept in [
        "app/anything-really",
        "text/plain",
        "application/json;q=0",
        "image/*",
    ] {
        let answer = app
            .get_with("/graph?channel=stable-4.6", &[("accept", accept)])
            .await;
        let value = answer.assert_error(406, "invalid_content_type");
        assert_eq!(value, "invalid Content-Type requested", "{accept}");
    }
}

#[tokio::test]
async fn negotiation_comes_before_parameter_checks() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    app.get_with("/graph", &[("accept", "text/plain")])
        .await
        .assert_error(406, "invalid_content_type");
}
