//! Prepared answers: ETag, 304, gzip, Cache-Control, HEAD.

use std::io::Read as _;

use flate2::read::GzDecoder;

use std::time::Duration;

use crate::support::app::{settings, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, fixture};

const QUERY: &str = "/graph?channel=stable-4.6";

#[tokio::test]
async fn a_current_etag_gets_304_without_a_body() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;

    let first = app.get_with(QUERY, &[("accept", "application/json")]).await;
    let etag = first.header("etag").expect("answers carry an ETag").to_owned();
    assert!(
        etag.starts_with('"') && etag.ends_with('"'),
        "strong ETag: {etag}"
    );
    assert_eq!(first.header("cache-control"), Some("public, no-cache"));
    assert!(first.header("vary").unwrap().contains("Accept, Accept-Encoding"));

    let again = app
        .get_with(QUERY, &[("accept", "application/json"), ("if-none-match", &etag)])
        .await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(again.header("etag"), Some(etag.as_str()));

    let other = app
        .get_with(
            QUERY,
            &[("accept", "application/json"), ("if-none-match", "\"stale\"")],
        )
        .await;
    assert_eq!(other.status, 200);
    assert_eq!(other.body, first.body);

    // Another media type is another representation with another tag.
    let v1_type = [("accept", "application/vnd.redhat.cincinnati.v1+json")];
    let v1 = app.get_with(QUERY, &v1_type).await;
    assert_ne!(v1.header("etag"), Some(etag.as_str()));
    let v1_again = app.get_with(QUERY, &[v1_type[0], ("if-none-match", &etag)]).await;
    assert_eq!(v1_again.status, 200);
}

#[tokio::test]
async fn gzip_is_served_to_clients_that_accept_it() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;

    let plain = app.get_with(QUERY, &[("accept", "application/json")]).await;
    assert_eq!(plain.header("content-encoding"), None);

    let compressed = app
        .get_with(
            QUERY,
            &[("accept", "application/json"), ("accept-encoding", "gzip, br")],
        )
        .await;
    assert_eq!(compressed.status, 200);
    assert_eq!(compressed.header("content-encoding"), Some("gzip"));
    assert!(
        compressed.body.len() * 4 < plain.body.len(),
        "the graph compresses well"
    );
    let mut decompressed = Vec::new();
    GzDecoder::new(&compressed.body[..])
        .read_to_end(&mut decompressed)
        .unwrap();
    assert_eq!(decompressed, plain.body);

    let gzip_etag = compressed.header("etag").unwrap().to_owned();
    assert_ne!(Some(gzip_etag.as_str()), plain.header("etag"));
    let revalidated = app
        .get_with(
            QUERY,
            &[
                ("accept", "application/json"),
                ("accept-encoding", "gzip"),
                ("if-none-match", &gzip_etag),
            ],
        )
        .await;
    assert_eq!(revalidated.status, 304);
}

#[tokio::test]
async fn head_answers_headers_only() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let get = app.get(QUERY).await;
    let head = app.send(app.client.head(app.url(QUERY)), &[]).await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.header("etag"), get.header("etag"));
    assert_eq!(
        head.header("content-length"),
        Some(get.body.len().to_string().as_str())
    );
}

#[tokio::test]
async fn answers_are_computed_once_per_revision() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let requests = futures::future::join_all((0..8).map(|_| app.get(QUERY))).await;
    assert!(
        requests
            .iter()
            .all(|answer| answer.status == 200 && answer.body == requests[0].body)
    );
    app.get(QUERY).await;
    assert_eq!(app.metric("cincinnati_pe_graph_cache_misses_total").await, 1.0);
    assert_eq!(app.metric("cincinnati_pe_graph_cache_hits_total").await, 8.0);
    assert!(app.metric("cincinnati_pe_graph_cache_hit_ratio").await > 0.85);
}

/// The fixture with metadata added to a release of stable-4.9: a revision
/// that changes that channel's answers and leaves stable-4.6's alike.
fn fixture_with_a_changed_4_9_release() -> Vec<u8> {
    let mut graph: serde_json::Value = serde_json::from_slice(&fixture()).unwrap();
    let release = graph["nodes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|node| node["version"] == "4.9.7+amd64")
        .expect("the fixture has 4.9.7+amd64");
    release["metadata"]["io.example/note"] = "changed".into();
    serde_json::to_vec(&graph).unwrap()
}

#[tokio::test]
async fn a_new_revision_keeps_the_answers_of_the_channels_it_leaves_alike() {
    const CHANGED: &str = "/graph?channel=stable-4.9";
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut polling = settings(&upstream.url());
    polling.upstream.cincinnati.interval_secs = 1;
    let app = spawn_ready(polling).await;
    let (kept, changed) = (app.get(QUERY).await, app.get(CHANGED).await);
    assert_eq!(app.metric("cincinnati_pe_graph_cache_misses_total").await, 2.0);

    upstream.set(Behaviour::Graph(fixture_with_a_changed_4_9_release()));
    eventually(
        "the new revision at the engine",
        Duration::from_secs(60),
        || async { app.get(CHANGED).await.body != changed.body },
    )
    .await;
    let misses = app.metric("cincinnati_pe_graph_cache_misses_total").await;
    assert_eq!(misses, 3.0, "stable-4.9 made again");
    let after = app.get(QUERY).await;
    assert_eq!(after.header("etag"), kept.header("etag"));
    assert_eq!(
        app.metric("cincinnati_pe_graph_cache_misses_total").await,
        misses,
        "stable-4.6 kept"
    );

    // What an engine that never saw the old revision answers.
    let fresh = spawn_ready(settings(&upstream.url())).await;
    assert_eq!(fresh.get(QUERY).await.body, after.body);
    assert_eq!(fresh.get(CHANGED).await.body, app.get(CHANGED).await.body);
}

#[tokio::test]
async fn answers_are_kept_compressed_with_identity_bytes_only_for_clients_without_gzip() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let held = || app.metric("cincinnati_pe_identity_cache_bytes");
    for channel in ["stable-4.6", "fast-4.6", "candidate-4.7", "stable-4.7"] {
        let answer = app
            .get_with(
                &format!("/graph?channel={channel}"),
                &[("accept-encoding", "gzip")],
            )
            .await;
        assert_eq!(answer.status, 200);
    }
    assert_eq!(held().await, 0.0, "every answer is held compressed only");

    let identity = app.get_with(QUERY, &[("accept", "application/json")]).await;
    assert_eq!(identity.status, 200);
    assert_eq!(held().await, identity.body.len() as f64);
    let again = app.get_with(QUERY, &[("accept", "application/json")]).await;
    assert_eq!(again.body, identity.body);
    assert_eq!(held().await, identity.body.len() as f64);
}

#[tokio::test]
async fn identity_answers_beyond_the_budget_are_inflated_as_they_are_sent() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut small = settings(&upstream.url());
    small.service.identity_cache_bytes = 1_000;
    let app = spawn_ready(small).await;
    let identity = app.get_with(QUERY, &[("accept", "application/json")]).await;
    let gzip = app.get_with(QUERY, &[("accept-encoding", "gzip")]).await;
    let mut inflated = Vec::new();
    GzDecoder::new(&gzip.body[..]).read_to_end(&mut inflated).unwrap();
    assert!(identity.body.len() > 1_000);
    assert_eq!(identity.body, inflated);
    assert_eq!(app.metric("cincinnati_pe_identity_cache_bytes").await, 0.0);
}
