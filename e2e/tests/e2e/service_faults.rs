//! Faults inside the chain: graph-data that does not parse, engine A
//! killed, the graph-builder restarted. Clusters keep being served the last
//! good graph throughout, and each service recovers by itself.

use e2e::graph_builder::GraphBuilderOptions;
use e2e::graph_data::{GraphData, MatchingRule};
use e2e::scenario::{self, CANDIDATE, WATCHED};
use e2e::stack::{ONE_REFRESH_PER_HOP, Stack};
use registry_testkit::{LoggedRequest, RequestKind};
use serde_json::Value;

/// Every feed of an engine's status satisfies `condition` (and there is one).
fn every_feed(status: &Value, condition: impl Fn(&Value) -> bool) -> bool {
    status["feeds"]
        .as_array()
        .is_some_and(|feeds| !feeds.is_empty() && feeds.iter().all(condition))
}

/// The standard graph-data with one more risk (4.17.0 -> 4.17.1).
fn graph_data_with_new_risk() -> GraphData {
    scenario::graph_data().blocked_edge(scenario::risk(
        "4.17.1-IngressOutage",
        "4.17.1",
        "4[.]17[.]0",
        MatchingRule::Always,
    ))
}

/// Pushes [`graph_data_with_new_risk`] with one channel file that is not
/// YAML, and waits until the graph-builder reports refusing it.
async fn push_graph_data_with_a_yaml_error(stack: &mut Stack) {
    let mut broken = graph_data_with_new_risk();
    broken.raw_files.push((
        "channels/fast-4.18.yaml".to_owned(),
        "name: fast-4.18\nversions: [4.18.0\n".to_owned(),
    ));
    stack.push_refused_graph_data(&broken).await.unwrap();
    stack
        .graph_builder
        .await_status("the refused graph-data", graph_data_refused)
        .await
        .unwrap();
}

fn graph_data_refused(status: &Value) -> bool {
    status["sources"]["graph_data"]["stale"] == true
}

#[tokio::test]
async fn graph_data_that_does_not_parse_is_refused_and_the_last_good_kept() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    stack.await_all_expected(&WATCHED).await.unwrap();
    let last_good = stack.expected(CANDIDATE, "amd64");

    push_graph_data_with_a_yaml_error(&mut stack).await;
    stack.assert_steady(&WATCHED, ONE_REFRESH_PER_HOP).await.unwrap();

    stack.push_graph_data(&graph_data_with_new_risk()).await.unwrap();
    stack.await_all_expected(&WATCHED).await.unwrap();
    assert_ne!(
        stack.expected(CANDIDATE, "amd64"),
        last_good,
        "the fixed graph-data adds a risk"
    );
}

#[tokio::test]
async fn refused_graph_data_stays_reported_while_it_is_the_latest_image() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    push_graph_data_with_a_yaml_error(&mut stack).await;
    // A few graph-data refreshes later, the broken image is still the latest.
    stack.assert_steady(&WATCHED, ONE_REFRESH_PER_HOP).await.unwrap();
    let status = stack.graph_builder.status().await.unwrap();
    assert!(
        graph_data_refused(&status),
        "the refusal is no longer reported: {:#}",
        status["sources"]["graph_data"]
    );
}

#[tokio::test]
async fn engine_a_killed_leaves_b_serving_the_last_graph_until_a_returns() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    stack.await_all_expected(&WATCHED).await.unwrap();

    stack.engines.engine_a.kill().unwrap();
    stack
        .engines
        .engine_b
        .await_status("A unreachable", |status| {
            every_feed(status, |feed| feed["stale"] == true)
        })
        .await
        .unwrap();
    stack.assert_steady(&WATCHED, ONE_REFRESH_PER_HOP).await.unwrap();

    stack.engines.engine_a.restart().await.unwrap();
    stack
        .engines
        .engine_b
        .await_status("A back", |status| {
            every_feed(status, |feed| feed["stale"] == false)
        })
        .await
        .unwrap();
    stack.assert_a_new_release_arrives("4.17.2").await.unwrap();
}

/// GETs of release manifests and blobs: what reading a release costs.
fn release_downloads(log: &[LoggedRequest]) -> usize {
    log.iter()
        .filter(|request| request.method == "GET" && request.path.starts_with("/v2/ocp/release/"))
        .filter(|request| matches!(request.kind(), RequestKind::Manifest | RequestKind::Blob))
        .count()
}

#[tokio::test]
async fn a_restarted_graph_builder_reads_known_releases_from_its_cache() {
    let options = GraphBuilderOptions {
        scrape_cache: true,
        ..GraphBuilderOptions::default()
    };
    let mut stack = Stack::start(options).await.unwrap();
    stack.await_all_expected(&WATCHED).await.unwrap();
    let first_start = release_downloads(&stack.registry.request_log().await.unwrap());
    let releases = stack.published().releases.len();
    assert!(
        first_start >= releases,
        "the first start downloads every release ({first_start} downloads for {releases} releases)"
    );

    stack.graph_builder.kill().unwrap();
    stack.assert_steady(&WATCHED, ONE_REFRESH_PER_HOP).await.unwrap();
    stack.registry.clear_request_log();
    stack.graph_builder.restart().await.unwrap();

    let log = stack.registry.request_log().await.unwrap();
    assert_eq!(
        release_downloads(&log),
        0,
        "after a restart, known releases come from the cache: {log:#?}"
    );
    stack.assert_a_new_release_arrives("4.17.2").await.unwrap();
}
