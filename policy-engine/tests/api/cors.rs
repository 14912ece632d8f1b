//! CORS: any origin, GET and HEAD, the Origin echoed.

use crate::support::app::{Answer, TestApp, settings, spawn_ready};
use crate::support::fixture;
use crate::support::upstream::{Behaviour, FakeUpstream};

#[tokio::test]
async fn the_origin_is_echoed() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let answer = app
        .get_with("/graph?channel=stable-4.6", &[("origin", "https://example.com")])
        .await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.header("access-control-allow-origin"),
        Some("https://example.com")
    );
    // Errors carry it too, so a browser can read them.
    let error = app.get_with("/graph", &[("origin", "https://example.com")]).await;
    assert_eq!(
        error.header("access-control-allow-origin"),
        Some("https://example.com")
    );
}

#[tokio::test]
async fn preflights_allow_get_and_head_only() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let allowed = preflight(&app, "GET").await;
    assert_eq!(allowed.status, 200);
    assert_eq!(
        allowed.header("access-control-allow-origin"),
        Some("https://example.com")
    );
    let methods = allowed.header("access-control-allow-methods").unwrap();
    assert!(methods.contains("GET") && methods.contains("HEAD"), "{methods}");
    assert_eq!(preflight(&app, "DELETE").await.status, 400);
}

async fn preflight(app: &TestApp, method: &str) -> Answer {
    app.send(
        app.client.request(reqwest::Method::OPTIONS, app.url("/graph")),
        &[
            ("origin", "https://example.com"),
            ("access-control-request-method", method),
        ],
    )
    .await
}
