//! The status port: probes, metrics with upstream's names, the status document.

use std::time::Duration;

use policy_engine::UpstreamKind;

use crate::support::app::{settings, spawn_ready};
use crate::support::fixture;
use crate::support::upstream::{Behaviour, FakeUpstream};

#[tokio::test]
async fn metrics_keep_upstream_names() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    app.get("/graph?channel=stable-4.6").await;
    app.get("/graph").await;
    let metrics = app.metrics().await;
    for name in [
        "cincinnati_pe_build_info{git_commit=",
        "cincinnati_pe_graph_incoming_requests_total{uri_path=\"/graph\"} 2",
        "cincinnati_pe_graph_serve_duration_seconds_bucket{le=\"0.005\"}",
        "cincinnati_pe_graph_serve_duration_seconds_count 2",
        "cincinnati_pe_graph_response_errors_total{code=\"400\",kind=\"missing_params\"} 1",
        "cincinnati_pe_http_upstream_requests_total",
        "cincinnati_pe_http_upstream_errors_total 0",
        "cincinnati_pe_graph_age_seconds",
        "cincinnati_pe_upstream_stale 0",
        "cincinnati_pe_upstream_last_error_timestamp_seconds 0",
        "cincinnati_pe_graph_cache_hit_ratio",
    ] {
        assert!(metrics.contains(name), "{name} missing from\n{metrics}");
    }
    assert_eq!(
        app.status_get("/metrics").await.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
}

#[tokio::test]
async fn the_status_document_describes_the_upstream() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let status = app.status_document().await;
    assert!(status.client.ready);
    assert_eq!(status.client.upstream.kind, Some(UpstreamKind::GraphBuilder));
    assert_eq!(status.client.upstream.url, upstream.url());
    assert_eq!(status.client.pipeline, ["channel-filter", "arch-filter"]);
    assert_eq!(status.client.feeds[0].releases, Some(1085));
    assert!(!status.client.feeds[0].freshness.is_stale());
    assert!(status.client.feeds[0].age_seconds.unwrap() >= 0.0);
    let refresher = &status.tasks[0];
    assert_eq!(refresher.name, "upstream refresh");
    assert!(refresher.live);
    assert_eq!(refresher.restarts, 0);
    assert_eq!(app.status_get("/livez").await.status, 200);
}

#[tokio::test]
async fn the_upstream_is_fetched_on_an_interval_with_if_none_match() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let _engine = spawn_ready(settings(&upstream.url())).await;
    crate::support::eventually("a second fetch answered", Duration::from_secs(5), || async {
        upstream
            .requests()
            .get(1)
            .is_some_and(|second| second.status.is_some())
    })
    .await;
    let requests = upstream.requests();
    assert_eq!(requests[0].if_none_match, None);
    assert_eq!(requests[0].query, "");
    assert_eq!(
        requests[1].status,
        Some(304),
        "the unchanged graph is not sent again"
    );
    assert!(requests[1].if_none_match.is_some());
}

#[tokio::test]
async fn client_traffic_for_a_computed_answer_does_not_reach_the_upstream() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut quiet = settings(&upstream.url());
    // No background refresh while the test asks.
    quiet.upstream.cincinnati.interval_secs = 3600;
    let app = spawn_ready(quiet).await;
    // The first request computes the answer, revalidating the upstream.
    assert_eq!(app.get("/graph?channel=stable-4.6").await.status, 200);
    let before = upstream.requests().len();
    for _ in 0..20 {
        assert_eq!(app.get("/graph?channel=stable-4.6").await.status, 200);
    }
    assert_eq!(upstream.requests().len(), before, "{:?}", upstream.requests());
}

#[tokio::test]
async fn an_unchanged_graph_without_etag_keeps_its_revision_and_answers() {
    let upstream = FakeUpstream::start(Behaviour::Untagged(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    app.get("/graph?channel=stable-4.6").await;
    let first = app.status_document().await.client.feeds[0].fetched_at.clone();
    crate::support::eventually("two more fetches", Duration::from_secs(5), || async {
        upstream
            .requests()
            .iter()
            .filter(|request| request.status.is_some())
            .count()
            >= 3
    })
    .await;
    assert_eq!(app.status_document().await.client.feeds[0].fetched_at, first);
    app.get("/graph?channel=stable-4.6").await;
    assert_eq!(app.metric("cincinnati_pe_graph_cache_misses_total").await, 1.0);
}

#[tokio::test]
async fn stopping_closes_both_ports() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    app.stop();
    for address in [app.address, app.status_address] {
        crate::support::eventually("the port is closed", Duration::from_secs(10), || async move {
            tokio::net::TcpStream::connect(address).await.is_err()
        })
        .await;
    }
}
