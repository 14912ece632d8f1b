//! `version-prune` on a real engine and a real graph: answers shrink to what
//! the cluster's version reaches, and what a cluster is offered, read the
//! way the cluster-version operator reads it, is unchanged.

use std::collections::BTreeSet;

use policy_engine::settings::PolicyTable;

use crate::support::app::{TestApp, settings, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{fixture, recommended_from};

const CHANNEL: &str = "stable-4.6";

fn filters(names: &[&str]) -> Vec<PolicyTable> {
    names
        .iter()
        .map(|name| {
            PolicyTable::Filter(toml::Table::from_iter([(
                "name".to_owned(),
                toml::Value::from(*name),
            )]))
        })
        .collect()
}

/// Every update from `version` (recommended and conditional), as the
/// cluster-version operator reads them from `graph`.
fn offered(graph: &serde_json::Value, version: &str) -> BTreeSet<(String, bool)> {
    let recommended = recommended_from(graph, version)
        .into_iter()
        .map(|to| (to.to_owned(), false));
    let conditional = graph["conditionalEdges"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|group| group["edges"].as_array().unwrap())
        .filter(|edge| edge["from"] == version)
        .map(|edge| (edge["to"].as_str().unwrap().to_owned(), true));
    recommended.chain(conditional).collect()
}

async fn answer(app: &TestApp, query: &str) -> serde_json::Value {
    let answer = app.get(&format!("/graph?channel={CHANNEL}&{query}")).await;
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    answer.json()
}

#[tokio::test]
async fn pruned_answers_offer_every_cluster_what_the_whole_channel_does() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let whole = spawn_ready(settings(&upstream.url())).await;
    let mut pruning = settings(&upstream.url());
    pruning.policy = filters(&["channel-filter", "arch-filter", "version-prune"]);
    let pruning = spawn_ready(pruning).await;

    let channel = answer(&whole, "").await;
    let versions: Vec<String> = channel["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| node["version"].as_str().unwrap().to_owned())
        .collect();
    assert!(versions.len() > 20, "{}", versions.len());
    let mut smaller = 0;
    for version in &versions {
        let pruned = answer(&pruning, &format!("version={version}")).await;
        assert_eq!(offered(&pruned, version), offered(&channel, version), "{version}");
        let kept = pruned["nodes"].as_array().unwrap().len();
        smaller += usize::from(kept < versions.len());
    }
    assert!(
        smaller > versions.len() / 2,
        "{smaller} of {} answers pruned",
        versions.len()
    );
    // Without a version, or with one not in the channel: the whole channel.
    for query in ["", "version=1.2.3", "version=nonsense"] {
        assert_eq!(answer(&pruning, query).await, channel, "{query}");
    }
}
