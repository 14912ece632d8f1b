//! Calm when the upstream is not: the last good graph is served through
//! outages, garbage, slowness and huge answers; staleness is visible; the
//! next good fetch recovers.

use std::time::Duration;

use crate::support::app::{TestApp, settings, spawn, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, fixture, other_fixture};

const QUERY: &str = "/graph?channel=stable-4.6";
const DEADLINE: Duration = Duration::from_secs(10);
/// Well above the fixtures (about 1.2 MB).
const MAX_BODY: usize = 16 * 1024 * 1024;

async fn stale(app: &TestApp) -> bool {
    app.status_document()
        .await
        .client
        .feeds
        .first()
        .is_some_and(|feed| feed.freshness.is_stale())
}

/// Serves a good graph, switches the upstream to `failure`, and checks the
/// engine keeps serving, flags staleness, then recovers on a new graph.
async fn keeps_serving_through(failure: Behaviour, error_mentions: &str) {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut settings = settings(&upstream.url());
    settings.upstream.cincinnati.max_body_bytes = MAX_BODY;
    let app = spawn_ready(settings).await;
    let good = app.get(QUERY).await;
    assert_eq!(good.status, 200);

    upstream.set(failure);
    eventually("the engine notices the failure", DEADLINE, || stale(&app)).await;
    let status = app.status_document().await;
    let message = status.client.feeds[0]
        .freshness
        .last_error()
        .unwrap()
        .message
        .as_str();
    assert!(message.contains(error_mentions), "{message}");
    assert_eq!(app.metric("cincinnati_pe_upstream_stale").await, 1.0);
    assert!(app.metric("cincinnati_pe_http_upstream_errors_total").await >= 1.0);
    assert!(
        app.metric("cincinnati_pe_upstream_last_error_timestamp_seconds")
            .await
            > 0.0
    );
    assert_eq!(
        app.status_get("/readyz").await.status,
        200,
        "a stale graph is still a graph"
    );
    let during = app.get(QUERY).await;
    assert_eq!(during.status, 200);
    assert_eq!(during.body, good.body);

    upstream.set(Behaviour::Graph(other_fixture()));
    eventually("the engine recovers", DEADLINE, || async { !stale(&app).await }).await;
    assert_eq!(app.metric("cincinnati_pe_upstream_stale").await, 0.0);
    let after = app.get(QUERY).await;
    assert_eq!(after.status, 200);
    assert_ne!(after.body, good.body, "the new revision is served");
    assert_ne!(after.header("etag"), good.header("etag"));
}

#[tokio::test]
async fn an_upstream_error_status_is_survived() {
    keeps_serving_through(Behaviour::Status(500), "500 Internal Server Error").await;
}

#[tokio::test]
async fn upstream_garbage_is_survived() {
    keeps_serving_through(Behaviour::Garbage, "upstream graph refused").await;
}

#[tokio::test]
async fn a_huge_upstream_answer_is_cut_off() {
    keeps_serving_through(Behaviour::Huge(4 * MAX_BODY), "sent more than").await;
}

#[tokio::test]
async fn a_slow_upstream_never_blocks_serving() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut settings = settings(&upstream.url());
    // A request held up by the pending fetch would be answered only after
    // the fetch gave up (and the feed turned stale): this long after.
    settings.upstream.cincinnati.timeout_secs = 8;
    let app = spawn_ready(settings).await;
    let good = app.get(QUERY).await;
    upstream.set(Behaviour::Slow(Duration::from_secs(30), fixture()));
    eventually("a fetch is pending", DEADLINE, || async {
        upstream.requests().iter().any(|request| request.status.is_none())
    })
    .await;
    let during = app.get(QUERY).await;
    assert!(!stale(&app).await, "answered while the fetch was still pending");
    assert_eq!(during.body, good.body);
    eventually("the fetch times out", Duration::from_secs(60), || stale(&app)).await;
    let status = app.status_document().await;
    let message = status.client.feeds[0]
        .freshness
        .last_error()
        .unwrap()
        .message
        .as_str()
        .to_owned();
    assert!(
        message.contains("timed out") || message.contains("timeout"),
        "{message}"
    );
}

#[tokio::test]
async fn before_the_first_graph_requests_get_503_not_a_hang() {
    let mut upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    upstream.stop().await;
    let app = spawn(settings(&upstream.url())).await;
    eventually("the first fetch fails", DEADLINE, || async {
        app.status_document()
            .await
            .client
            .feeds
            .first()
            .is_some_and(|feed| feed.freshness.is_stale())
    })
    .await;
    assert_eq!(app.status_get("/readyz").await.status, 503);
    // Answered (503), not held: a hung answer fails the test at the
    // harness's deadline.
    let value = app.get(QUERY).await.assert_error(503, "service_unavailable");
    assert!(
        value.contains("Connection refused") || value.contains("connect"),
        "{value}"
    );

    upstream.restart().await;
    app.wait_ready().await;
    assert_eq!(app.get(QUERY).await.status, 200);
}

#[tokio::test]
async fn garbage_before_the_first_graph_keeps_the_engine_unready() {
    let upstream = FakeUpstream::start(Behaviour::Garbage).await;
    let app = spawn(settings(&upstream.url())).await;
    eventually("the garbage is refused", DEADLINE, || async {
        app.status_document()
            .await
            .client
            .feeds
            .first()
            .is_some_and(|feed| feed.freshness.is_stale())
    })
    .await;
    assert_eq!(app.status_get("/readyz").await.status, 503);
    app.get(QUERY).await.assert_error(503, "service_unavailable");
    upstream.set(Behaviour::Graph(fixture()));
    app.wait_ready().await;
}

#[tokio::test]
async fn a_graph_builders_raw_output_is_filtered_like_upstream() {
    // Unsorted nodes, an abstract node, `+arch` versions, no `version` key.
    let raw = br#"{
      "nodes": [
        {"version": "4.6.2+amd64", "payload": "p2", "metadata": {
          "io.openshift.upgrades.graph.release.arch": "amd64",
          "io.openshift.upgrades.graph.release.channels": "stable-4.6"}},
        {"version": "4.6.9+amd64"},
        {"version": "4.6.1+amd64", "payload": "p1", "metadata": {
          "io.openshift.upgrades.graph.release.arch": "amd64",
          "io.openshift.upgrades.graph.release.channels": "fast-4.6,stable-4.6"}},
        {"version": "4.6.1-s390x+s390x", "payload": "s1", "metadata": {
          "io.openshift.upgrades.graph.release.arch": "s390x",
          "io.openshift.upgrades.graph.release.channels": "stable-4.6"}}
      ],
      "edges": [[2, 0], [0, 1]],
      "conditionalEdges": [{"edges": [{"from": "4.6.1+amd64", "to": "4.6.2+amd64"}],
        "risks": [{"url": "https://r", "name": "R", "message": "m", "matchingRules": [{"type": "Always"}]}]}]
    }"#;
    let upstream = FakeUpstream::start(Behaviour::Graph(raw.to_vec())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let answer = app.get_with(QUERY, &[("accept", "application/json")]).await;
    assert_eq!(
        String::from_utf8(answer.body).unwrap(),
        concat!(
            r#"{"version":1,"nodes":["#,
            r#"{"version":"4.6.1","payload":"p1","metadata":{"io.openshift.upgrades.graph.release.channels":"fast-4.6,stable-4.6"}},"#,
            r#"{"version":"4.6.2","payload":"p2","metadata":{"io.openshift.upgrades.graph.release.channels":"stable-4.6"}}],"#,
            r#""edges":[[0,1]],"#,
            r#""conditionalEdges":[{"edges":[{"from":"4.6.1","to":"4.6.2"}],"#,
            r#""risks":[{"url":"https://r","name":"R","message":"m","matchingRules":[{"type":"Always"}]}]}]}"#
        )
    );
}
