//! `version-prune` (off unless a `[[policy]]` table names it): a request
//! with a `version` gets only what a cluster at that version can use
//! instead of the whole channel. What the cluster is offered is unchanged:
//! its release and every update from it (recommended and conditional, with
//! their risks) stay. With `keep = "reachable"` (the default) everything
//! beyond them stays too, the single-root graph of the Cincinnati design;
//! with `keep = "updates"` nothing else, what the cluster-version operator
//! reads of an answer: a stable-4.18 answer shrinks from some 170 KB to
//! about a KB. A request without `version`, or with one not in the graph,
//! gets the graph unpruned.
//!
//! Answers then differ per version, so with this filter the answer cache is
//! keyed by version too (only by a version the upstream's graph has: a
//! made-up one is answered, and cached, as a request without one).

use std::collections::{HashMap, HashSet};

use cincinnati_core::release::same_release;
use cincinnati_core::stage::{Stage, StageSettings};
use cincinnati_core::{ApiError, ConditionalEdge, EdgeEndpoints, Graph, ReleaseId, Version};
use serde::Deserialize;

use super::PolicyRequest;

pub const NAME: &str = "version-prune";

/// `[[policy]] name = "version-prune"`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionPruneSettings {
    #[serde(default)]
    keep: Keep,
}

/// What a request with a known `version` keeps of its channel.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Keep {
    /// Its release and every release an update path from it reaches.
    #[default]
    Reachable,
    /// Its release, the releases it updates to, and its own updates only.
    Updates,
}

impl StageSettings<PolicyRequest> for VersionPruneSettings {
    const NAME: &'static str = NAME;

    fn build(self) -> Result<Box<dyn Stage<PolicyRequest>>, String> {
        Ok(Box::new(VersionPrune { keep: self.keep }))
    }
}

#[derive(Debug)]
struct VersionPrune {
    keep: Keep,
}

impl Stage<PolicyRequest> for VersionPrune {
    fn name(&self) -> &'static str {
        NAME
    }

    fn apply(&self, graph: &mut Graph, request: &PolicyRequest) -> Result<(), ApiError> {
        // The engine keys the answer by this release: pruned exactly when keyed.
        let Some(version) = request
            .version_key
            .as_deref()
            .and_then(|version| Version::parse(version).ok())
        else {
            return Ok(());
        };
        let Some(root) = graph
            .releases()
            .find(|(_, release)| same_release(&release.version, &version))
            .map(|(_, release)| release.version.clone())
        else {
            return Ok(());
        };
        match self.keep {
            Keep::Reachable => {
                let reachable = reachable_from(graph, root);
                graph.retain_releases(|release| reachable.contains(&release.version));
                graph.retain_conditional_edges(|edge| {
                    reachable.contains(&edge.from) && reachable.contains(&edge.to)
                });
            }
            Keep::Updates => {
                if let Some(trimmed) = updates_graph(graph, &root) {
                    *graph = trimmed;
                }
            }
        }
        Ok(())
    }
}

/// `root`, the releases it updates to and its own updates (recommended,
/// and conditional with their risks) out of `graph`; none when `root` is
/// not in it. The updates between those releases are of no use to a
/// cluster at `root`. Built afresh from those few releases, not by
/// filtering the channel's: its cost is the cluster's updates, not the
/// channel's size.
fn updates_graph(graph: &Graph, root: &Version) -> Option<Graph> {
    let root_id = graph.find(root)?;
    let conditional: Vec<ConditionalEdge> = graph
        .conditional_edges()
        .iter()
        .filter_map(|group| {
            let edges: Vec<EdgeEndpoints> = group
                .edges
                .iter()
                .filter(|edge| *edge.from == *root)
                .cloned()
                .collect();
            (!edges.is_empty()).then(|| ConditionalEdge {
                edges,
                risks: group.risks.clone(),
            })
        })
        .collect();
    let recommended: Vec<ReleaseId> = graph.children(root_id).collect();
    let conditional_targets = conditional
        .iter()
        .flat_map(|group| &group.edges)
        .filter_map(|edge| graph.find(&edge.to));
    let mut kept: Vec<ReleaseId> = std::iter::once(root_id)
        .chain(recommended.iter().copied())
        .chain(conditional_targets)
        .collect();
    // The root stays first; a target both recommended and conditional once.
    let mut seen = HashSet::new();
    kept.retain(|id| seen.insert(*id));
    let releases = kept.iter().filter_map(|id| graph.release(*id).cloned()).collect();
    let edges = (1..=recommended.len()).map(|target| (0, target));
    Some(Graph::from_parts(releases, edges, conditional).expect("distinct releases, edges within them"))
}

/// The targets of each release's conditional updates.
fn conditional_targets(graph: &Graph) -> HashMap<&Version, Vec<&Version>> {
    let mut conditional: HashMap<&Version, Vec<&Version>> = HashMap::new();
    for edge in graph.conditional_edges().iter().flat_map(|group| &group.edges) {
        conditional.entry(&edge.from).or_default().push(&edge.to);
    }
    conditional
}

/// The releases `version` updates to, recommended or conditional.
fn updates_from(
    graph: &Graph,
    conditional: &HashMap<&Version, Vec<&Version>>,
    version: Version,
) -> HashSet<Version> {
    let recommended = graph.find(&version).into_iter().flat_map(|id| {
        graph
            .children(id)
            .filter_map(|child| graph.release(child))
            .map(|release| &release.version)
    });
    recommended
        .chain(conditional.get(&version).into_iter().flatten().copied())
        .cloned()
        .collect()
}

/// `root` and every release an update path from it reaches, through
/// recommended and conditional updates alike.
fn reachable_from(graph: &Graph, root: Version) -> HashSet<Version> {
    let conditional = conditional_targets(graph);
    let mut reached = HashSet::from([root.clone()]);
    let mut pending = vec![root];
    while let Some(version) = pending.pop() {
        for to in updates_from(graph, &conditional, version) {
            if reached.insert(to.clone()) {
                pending.push(to);
            }
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::client::request::UpstreamKind;
    use crate::test_graphs::{graph, serialized};

    const GRAPH: &str = r#"{
      "nodes": [
        {"version": "4.18.0", "payload": "p0"},
        {"version": "4.18.1", "payload": "p1"},
        {"version": "4.18.2", "payload": "p2"},
        {"version": "4.18.3", "payload": "p3"},
        {"version": "4.18.4", "payload": "p4"}
      ],
      "edges": [[0, 1], [1, 2], [0, 3]],
      "conditionalEdges": [
        {"edges": [{"from": "4.18.2", "to": "4.18.4"}, {"from": "4.18.0", "to": "4.18.4"}],
         "risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "Always"}]}]}
      ]
    }"#;

    fn prune(query: &str) -> serde_json::Value {
        prune_keeping(Keep::Reachable, query)
    }

    /// The answer to `query`, keyed (as the engine keys it) by its version
    /// when the graph has that release.
    fn prune_keeping(keep: Keep, query: &str) -> serde_json::Value {
        let mut graph = graph(GRAPH);
        let mut request = PolicyRequest::for_test(query, UpstreamKind::GraphBuilder);
        request.version_key = request.query.version.clone().filter(|version| {
            graph
                .releases()
                .any(|(_, release)| release.version.to_string() == *version)
        });
        VersionPrune { keep }.apply(&mut graph, &request).unwrap();
        serialized(&graph)
    }

    fn versions(graph: &serde_json::Value) -> Vec<&str> {
        graph["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|node| node["version"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn keeps_what_the_version_reaches_through_any_update() {
        let pruned = prune("channel=c&version=4.18.1");
        assert_eq!(versions(&pruned), ["4.18.1", "4.18.2", "4.18.4"]);
        assert_eq!(pruned["edges"], json!([[0, 1]]));
        assert_eq!(
            pruned["conditionalEdges"][0]["edges"],
            json!([{"from": "4.18.2", "to": "4.18.4"}])
        );
        // A release nothing leads on from is its own single-node graph.
        assert_eq!(versions(&prune("channel=c&version=4.18.3")), ["4.18.3"]);
    }

    #[test]
    fn updates_from_the_version_are_unchanged() {
        let full = serialized(&graph(GRAPH));
        let pruned = prune("channel=c&version=4.18.0");
        assert_eq!(pruned, full, "4.18.0 reaches everything");
    }

    /// Kept with `keep = "updates"`: the release, its targets, its own
    /// updates and nothing between the targets (4.18.0 → 4.18.1 → 4.18.2
    /// is not 4.18.0's to take in one hop).
    #[test]
    fn keeping_updates_leaves_the_release_its_targets_and_its_own_updates() {
        let trimmed = prune_keeping(Keep::Updates, "channel=c&version=4.18.0");
        assert_eq!(versions(&trimmed), ["4.18.0", "4.18.1", "4.18.3", "4.18.4"]);
        assert_eq!(trimmed["edges"], json!([[0, 1], [0, 2]]));
        assert_eq!(
            trimmed["conditionalEdges"],
            json!([{"edges": [{"from": "4.18.0", "to": "4.18.4"}],
                    "risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "Always"}]}]}])
        );
        let from_2 = prune_keeping(Keep::Updates, "channel=c&version=4.18.2");
        assert_eq!(versions(&from_2), ["4.18.2", "4.18.4"]);
        assert_eq!(from_2["edges"], json!([]));
        assert_eq!(
            prune_keeping(Keep::Updates, "channel=c&version=4.17.9"),
            serialized(&graph(GRAPH)),
            "a version not in the graph: whole"
        );
    }

    #[test]
    fn without_a_known_version_the_graph_is_whole() {
        let full = serialized(&graph(GRAPH));
        for query in [
            "channel=c",
            "channel=c&version=4.17.9",
            "channel=c&version=garbage",
        ] {
            assert_eq!(prune(query), full, "{query}");
        }
    }

    /// On every (channel, arch, version) of the demo data (5,743 releases
    /// and 2026's graph-data), the cluster-version operator's own rules
    /// (`cincinnati_client`'s) offer exactly the same updates and risks
    /// from the trimmed answer as from the whole channel.
    #[test]
    fn the_cvo_is_offered_the_same_from_a_trimmed_answer_on_all_the_demo_data() {
        use cincinnati_client::UpdateGraph;
        use cincinnati_client::document::{self, Document, Shape};
        use cincinnati_client::view::Cluster;
        use cincinnati_core::release::keys;

        use crate::client::filters::{catalog, default_tables};

        let full = release_set_generator::demo_graph().unwrap();
        let pipeline = catalog().pipeline(&default_tables(false)).unwrap();
        let channels: std::collections::BTreeSet<&str> = full
            .releases()
            .flat_map(|(_, release)| release.metadata_list(keys::CHANNELS))
            .collect();
        let mut checked = 0;
        for arch in document::architectures(&full) {
            let cvo_view = |graph: Graph, channel: &str| {
                let shape = Shape::View {
                    arch: arch.to_owned(),
                    channel: Some(channel.to_owned()),
                };
                UpdateGraph::build(arch, &[Document { graph, shape }])
            };
            for &channel in &channels {
                let request = PolicyRequest::for_test(
                    &format!("channel={channel}&arch={arch}"),
                    UpstreamKind::GraphBuilder,
                );
                let answer = pipeline.run_on(&full, &request).unwrap();
                let whole = cvo_view(answer.clone(), channel);
                let Some(whole) = whole.channel(channel) else {
                    continue;
                };
                for (_, release) in answer.releases() {
                    let cluster = Cluster {
                        version: release.version.clone(),
                        arch: arch.to_owned(),
                    };
                    let trimmed = cvo_view(updates_graph(&answer, &release.version).unwrap(), channel);
                    assert_eq!(
                        trimmed.channel(channel).unwrap().updates_for(&cluster),
                        whole.updates_for(&cluster),
                        "{channel} {arch} {}",
                        release.version
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000, "{checked} (channel, arch, version)");
    }
}
