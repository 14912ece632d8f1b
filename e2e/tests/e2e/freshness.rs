//! A change reaches clusters through every hop (registry → graph-builder →
//! A → B): a newly pushed release, and graph-data carrying a new risk.
//! These check that it arrives (within the harness's generous deadline);
//! how soon is measured by the benchmarks, not here. The times are printed
//! (`--no-capture` shows them).

use std::time::Duration;

use e2e::graph_builder::GraphBuilderOptions;
use e2e::graph_data::{GraphData, MatchingRule};
use e2e::scenario::{self, ARCHITECTURES, CANDIDATE};
use e2e::stack::Stack;
use tokio::time::Instant;

/// Waits until B serves the expected graph for every architecture of the
/// candidate channel, and returns the time since `since` for the slowest.
async fn slowest_arrival(stack: &Stack, since: Instant) -> Duration {
    let mut slowest = Duration::ZERO;
    for arch in ARCHITECTURES {
        stack.await_expected(CANDIDATE, arch).await.unwrap();
        slowest = slowest.max(since.elapsed());
    }
    slowest
}

fn report(what: &str, took: Duration) {
    println!("e2e: {what} reached B in {took:.2?}");
}

#[tokio::test]
async fn a_new_release_reaches_clusters() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    // B refreshes what clusters ask for: the clusters of every architecture ask first.
    slowest_arrival(&stack, Instant::now()).await;

    let new = scenario::new_releases(scenario::FUTURE_VERSIONS[0], &["4.17.0", "4.17.1"]);
    stack.push_releases(&new).await.unwrap();
    let took = slowest_arrival(&stack, Instant::now()).await;
    report("a new release", took);
}

/// The scenario's graph-data with a risk on 4.17.0 -> 4.17.1.
fn graph_data_with_a_new_risk() -> GraphData {
    scenario::graph_data().blocked_edge(scenario::risk(
        "4.17.1-IngressOutage",
        "4.17.1",
        "4[.]17[.]0",
        MatchingRule::Always,
    ))
}

#[tokio::test]
async fn a_new_risk_in_graph_data_reaches_clusters() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    slowest_arrival(&stack, Instant::now()).await;

    let with_new_risk = graph_data_with_a_new_risk();
    stack.push_graph_data(&with_new_risk).await.unwrap();
    let took = slowest_arrival(&stack, Instant::now()).await;
    let amd64 = stack.expected(CANDIDATE, "amd64");
    assert!(
        amd64
            .conditional
            .contains_key(&("4.17.0".to_owned(), "4.17.1".to_owned())),
        "the new risk makes 4.17.0 -> 4.17.1 conditional"
    );
    report("a new risk", took);
}

#[tokio::test]
async fn between_full_refreshes_the_change_checks_and_held_fetches_carry_changes_to_clusters() {
    let options = GraphBuilderOptions {
        changes_by_checks_only: true,
        ..GraphBuilderOptions::default()
    };
    let mut stack = Stack::start(options).await.unwrap();
    slowest_arrival(&stack, Instant::now()).await;

    // A new image of graph-data: its digest changes (a HEAD finds it), and
    // B's answers, computed already, change only by following A.
    let with_new_risk = graph_data_with_a_new_risk();
    stack.push_graph_data(&with_new_risk).await.unwrap();
    let took = slowest_arrival(&stack, Instant::now()).await;
    report("a new risk, by the checks", took);

    // A new tag: the tag list differs from the last scrape's.
    let new = scenario::new_releases(scenario::FUTURE_VERSIONS[0], &["4.17.0", "4.17.1"]);
    stack.push_releases(&new).await.unwrap();
    let took = slowest_arrival(&stack, Instant::now()).await;
    report("a new release, by the checks", took);
}
