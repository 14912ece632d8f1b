//! `version-prune` on a real engine and a real graph: answers shrink to what
//! the cluster's version reaches (or, with `keep = "updates"`, to its own
//! updates), and what a cluster is offered, read the way the
//! cluster-version operator reads it, is unchanged; a made-up version is
//! answered from the answer without one, computed once.

use std::collections::BTreeSet;

use policy_engine::settings::PolicyTable;

use crate::support::app::{TestApp, settings, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{fixture, recommended_from};

const CHANNEL: &str = "stable-4.6";

/// The filters `names`, then `version-prune` keeping `keep`.
pub(crate) fn pruning(names: &[&str], keep: &str) -> Vec<PolicyTable> {
    let table = |entries: &[(&str, &str)]| {
        PolicyTable::Filter(toml::Table::from_iter(
            entries
                .iter()
                .map(|(key, value)| ((*key).to_owned(), toml::Value::from(*value))),
        ))
    };
    names
        .iter()
        .map(|name| table(&[("name", name)]))
        .chain([table(&[("name", "version-prune"), ("keep", keep)])])
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
    let engine_keeping = async |keep| {
        let mut settings = settings(&upstream.url());
        settings.policy = pruning(&["channel-filter", "arch-filter"], keep);
        spawn_ready(settings).await
    };
    let pruning = engine_keeping("reachable").await;
    let trimming = engine_keeping("updates").await;

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
        let trimmed = answer(&trimming, &format!("version={version}")).await;
        let updates = offered(&channel, version);
        assert_eq!(offered(&trimmed, version), updates, "{version}");
        assert_eq!(
            trimmed["nodes"].as_array().unwrap().len(),
            1 + updates.len(),
            "{version}: its release and its targets"
        );
        let edges = trimmed["edges"].as_array().unwrap().len();
        assert_eq!(
            edges,
            recommended_from(&trimmed, version).len(),
            "{version}: its own updates only"
        );
    }
    assert!(
        smaller > versions.len() / 2,
        "{smaller} of {} answers pruned",
        versions.len()
    );
    // Without a version, or with one not in the channel: the whole channel,
    // and for a version of no release, the very answer without one.
    for engine in [&pruning, &trimming] {
        for query in ["", "version=1.2.3", "version=nonsense"] {
            assert_eq!(answer(engine, query).await, channel, "{query}");
        }
        let computed = engine.metric("cincinnati_pe_graph_cache_misses_total").await;
        for made_up in 0..20 {
            answer(engine, &format!("version=9.9.{made_up}")).await;
        }
        assert_eq!(
            engine.metric("cincinnati_pe_graph_cache_misses_total").await,
            computed,
            "made-up versions are not answers of their own"
        );
    }
}
