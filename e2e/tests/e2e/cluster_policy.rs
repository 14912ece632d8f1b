//! Per-cluster policy across the real chain: an in-cluster engine C with a
//! policy file, chained to the central engine A, which has none, in front
//! of the graph-builder scraping a real registry. Clusters asking C the same
//! question see what their groups and the rollout in flight say; the
//! creation times the graph-builder read from the images travel the chain.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use e2e::client_graph::ClientGraph;
use e2e::fleet::place_percent;
use e2e::graph_builder::GraphBuilderOptions;
use e2e::policy_engine::{self, graph_url};
use e2e::scenario::CANDIDATE;
use e2e::stack::Stack;

/// Held at or below 4.16.2.
const HELD: &str = "5c1f0a2e-7d3b-4e6a-9f80-112233445566";
/// Defers releases built since 2025: the 4.17 images.
const CAUTIOUS: &str = "6d2e1b3f-8e4c-4f7b-8a91-223344556677";

/// Ids inside and outside a rollout at 50%.
fn ids_around_half() -> (String, String) {
    let ids = (0..u32::MAX).map(|n| format!("{n:08x}-0000-4000-8000-000000000000"));
    let inside = ids.clone().find(|id| place_percent(id) < 45.0).unwrap();
    let outside = ids.clone().find(|id| place_percent(id) > 55.0).unwrap();
    (inside, outside)
}

fn policy_file(inside: &str, outside: &str) -> String {
    let since_2025 =
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap() - Duration::from_secs(1_735_689_600);
    let deferral_days = since_2025.as_secs() / 86_400;
    format!(
        "\
groups:
  held: {{max_version: 4.16.2}}
  cautious: {{deferral_days: {deferral_days}}}
  fleet: {{}}
clusters:
  {HELD}: [held]
  {CAUTIOUS}: [cautious]
  {inside}: [fleet]
  {outside}: [fleet]
rollouts:
  # Half the fleet, for decades.
  - target: 4.17.1
    start: 2020-01-01T00:00:00Z
    duration_hours: 800000
    starting_percentage: 50
"
    )
}

/// Every update a cluster at `from` is offered, recommended or conditional.
fn targets(graph: &ClientGraph, from: &str) -> BTreeSet<String> {
    let updates = graph.updates_from(from).expect("the version is in the graph");
    updates
        .available
        .iter()
        .chain(updates.conditional.iter().map(|(to, _)| to))
        .cloned()
        .collect()
}

#[tokio::test]
async fn an_in_cluster_engine_with_a_policy_chained_to_a_central_one_without() {
    let stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    stack.await_expected(CANDIDATE, "amd64").await.unwrap();
    let (inside, outside) = ids_around_half();
    let file = stack.workdir().join("policy.yaml");
    std::fs::write(&file, policy_file(&inside, &outside)).unwrap();
    let engine_c = policy_engine::start_with(
        stack.workdir(),
        "c",
        &graph_url(&stack.engines.engine_a),
        &["--cluster_policy.file", file.to_str().unwrap()],
    )
    .await
    .unwrap();
    let http = stack.http().clone();
    let served = |id: &str| {
        let url = format!("{}?channel={CANDIDATE}&arch=amd64&id={id}", graph_url(&engine_c));
        let http = http.clone();
        async move {
            let answer = e2e::http::get(&http, &url, Some("application/json"))
                .await
                .unwrap();
            ClientGraph::from_served(&answer.json().unwrap()).unwrap()
        }
    };

    let expected = stack.expected(CANDIDATE, "amd64");
    let everything = targets(&expected, "4.16.1");
    assert!(
        everything.contains("4.17.1") && everything.contains("4.17.0"),
        "{everything:?}"
    );
    let without = |versions: &[&str]| -> BTreeSet<String> {
        everything
            .iter()
            .filter(|version| !versions.contains(&version.as_str()))
            .cloned()
            .collect()
    };

    // Inside the rollout: everything A serves; the graph itself is A's.
    let inside_view = served(&inside).await;
    assert_eq!(
        inside_view.nodes, expected.nodes,
        "releases and metadata (creation times included) pass the chain"
    );
    assert_eq!(targets(&inside_view, "4.16.1"), everything);
    // Outside the rollout, or without an id: all but the rollout's target.
    assert_eq!(targets(&served(&outside).await, "4.16.1"), without(&["4.17.1"]));
    assert_eq!(targets(&served("").await, "4.16.1"), without(&["4.17.1"]));
    // Held: nothing above 4.16.2 (and 4.17.1 is withheld either way).
    assert_eq!(
        targets(&served(HELD).await, "4.16.1"),
        without(&["4.17.0", "4.17.1"])
    );
    // Cautious: the 4.17 images are too recent.
    let cautious = served(CAUTIOUS).await;
    assert_eq!(targets(&cautious, "4.16.1"), without(&["4.17.0", "4.17.1"]));
    assert!(targets(&cautious, "4.16.0").contains("4.16.2"));
}

/// In the early-access group: `fast-4.17` is scoped to it.
const EARLY: &str = "7e3f2c40-9f5d-4a8c-8ba2-334455667788";

/// A scoped channel across the real chain: C, with the policy, fetches the
/// scoped channel's view from A apart and joins it to the channel a cluster
/// of the entitled group asks for; every other cluster sees the channel as
/// A serves it, and the scoped channel not at all.
#[tokio::test]
async fn a_scoped_channel_joins_its_groups_views_across_the_chain_and_no_one_elses() {
    let stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    stack.await_expected("fast-4.17", "amd64").await.unwrap();
    let file = stack.workdir().join("policy.yaml");
    let policy = format!(
        "\
groups:
  early: {{}}
  others: {{}}
clusters:
  {EARLY}: [early]
  {HELD}: [others]
scoped_channels:
  - {{channel: fast-4.17, joins: [stable-4.16], groups: [early]}}
"
    );
    std::fs::write(&file, policy).unwrap();
    let engine_c = policy_engine::start_with(
        stack.workdir(),
        "c",
        &graph_url(&stack.engines.engine_a),
        &["--cluster_policy.file", file.to_str().unwrap()],
    )
    .await
    .unwrap();
    let http = stack.http().clone();
    let served = |channel: &str, id: &str| {
        let url = format!("{}?channel={channel}&arch=amd64&id={id}", graph_url(&engine_c));
        let http = http.clone();
        async move {
            let answer = e2e::http::get(&http, &url, Some("application/json"))
                .await
                .unwrap();
            ClientGraph::from_served(&answer.json().unwrap()).unwrap()
        }
    };
    let (stable, fast) = (
        stack.expected("stable-4.16", "amd64"),
        stack.expected("fast-4.17", "amd64"),
    );
    let names = |graph: &ClientGraph| graph.nodes.keys().cloned().collect::<BTreeSet<_>>();

    let early = served("stable-4.16", EARLY).await;
    assert_eq!(
        names(&early),
        &names(&stable) | &names(&fast),
        "stable-4.16 joined by fast-4.17"
    );
    assert!(
        fast.edges.is_subset(&early.edges) && stable.edges.is_subset(&early.edges),
        "the updates of both views: {:?}",
        early.edges
    );
    assert!(targets(&early, "4.16.2").contains("4.17.1"), "{:?}", early.edges);

    for id in [HELD, ""] {
        let other = served("stable-4.16", id).await;
        assert_eq!(names(&other), names(&stable), "{id}");
        assert!(
            served("fast-4.17", id).await.nodes.is_empty(),
            "{id}: fast-4.17 is not theirs"
        );
    }
    assert_eq!(names(&served("fast-4.17", EARLY).await), names(&fast));
}
