//! Every error is JSON `{kind, value}` with upstream's status, and counted.

use crate::support::app::{settings, spawn_ready};
use crate::support::fixture;
use crate::support::upstream::{Behaviour, FakeUpstream};

#[tokio::test]
async fn unknown_paths_are_json_404() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    // `/` is the explorer page (tests/api/explorer.rs).
    for path in ["/graphs", "/v2/graph", "/graph/extra", "/explorer/missing.js"] {
        let value = app.get(path).await.assert_error(404, "does_not_exist");
        assert_eq!(value, format!("does not exist: path {path}"));
    }
}

#[tokio::test]
async fn other_methods_are_json_405_naming_the_allowed_ones() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    for request in [
        app.client.post(app.url("/graph?channel=a")),
        app.client.delete(app.url("/v1/graph")),
        app.client.put(app.url("/openapi")),
    ] {
        let answer = app.send(request, &[]).await;
        answer.assert_error(405, "method_not_allowed");
        assert_eq!(answer.header("allow"), Some("GET, HEAD"));
    }
}

#[tokio::test]
async fn error_answers_are_counted_by_code_and_kind() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    app.get("/graph").await;
    app.get("/graph").await;
    app.get_with("/graph?channel=a", &[("accept", "text/plain")])
        .await;
    app.get("/nope").await;
    let errors = "cincinnati_pe_graph_response_errors_total";
    assert_eq!(
        app.metric(&format!("{errors}{{code=\"400\",kind=\"missing_params\"}}"))
            .await,
        2.0
    );
    assert_eq!(
        app.metric(&format!("{errors}{{code=\"406\",kind=\"invalid_content_type\"}}"))
            .await,
        1.0
    );
    assert_eq!(
        app.metric(&format!("{errors}{{code=\"404\",kind=\"does_not_exist\"}}"))
            .await,
        1.0
    );
    assert_eq!(
        app.metric("cincinnati_pe_graph_incoming_requests_total{uri_path=\"/graph\"}")
            .await,
        3.0
    );
}

#[tokio::test]
async fn errors_are_not_cached() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let answer = app.get("/graph").await;
    assert_eq!(answer.header("cache-control"), Some("no-store"));
}
