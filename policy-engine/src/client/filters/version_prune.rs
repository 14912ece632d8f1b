//! `version-prune` (off unless a `[[policy]]` table names it): a request
//! with a `version` gets only what a cluster at that version can reach, the
//! single-root graph of the Cincinnati design, instead of the whole
//! channel: a stable-4.18 answer shrinks from some 170 KB to a few KB. What
//! the cluster is offered is unchanged: its release, every update from it
//! (recommended and conditional) and everything beyond them stay. A request
//! without `version`, or with one not in the graph, gets the graph unpruned.
//!
//! Answers then differ per version, so with this filter the answer cache is
//! keyed by version too.

use std::collections::{HashMap, HashSet};

use cincinnati_core::release::same_release;
use cincinnati_core::stage::{Stage, StageSettings};
use cincinnati_core::{ApiError, Graph, Version};
use serde::Deserialize;

use super::PolicyRequest;

pub const NAME: &str = "version-prune";

/// `[[policy]] name = "version-prune"`: no keys.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionPruneSettings {}

impl StageSettings<PolicyRequest> for VersionPruneSettings {
    const NAME: &'static str = NAME;

    fn build(self) -> Result<Box<dyn Stage<PolicyRequest>>, String> {
        Ok(Box::new(VersionPrune))
    }
}

#[derive(Debug)]
struct VersionPrune;

impl Stage<PolicyRequest> for VersionPrune {
    fn name(&self) -> &'static str {
        NAME
    }

    fn apply(&self, graph: &mut Graph, request: &PolicyRequest) -> Result<(), ApiError> {
        let Some(version) = request
            .query
            .version
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
        let reachable = reachable_from(graph, root);
        graph.retain_releases(|release| reachable.contains(&release.version));
        graph.retain_conditional_edges(|edge| reachable.contains(&edge.from) && reachable.contains(&edge.to));
        Ok(())
    }
}

/// `root` and every release an update path from it reaches, through
/// recommended and conditional updates alike.
fn reachable_from(graph: &Graph, root: Version) -> HashSet<Version> {
    let mut conditional: HashMap<&Version, Vec<&Version>> = HashMap::new();
    for edge in graph.conditional_edges().iter().flat_map(|group| &group.edges) {
        conditional.entry(&edge.from).or_default().push(&edge.to);
    }
    let mut reached = HashSet::from([root.clone()]);
    let mut pending = vec![root];
    while let Some(version) = pending.pop() {
        let recommended = graph.find(&version).into_iter().flat_map(|id| {
            graph
                .children(id)
                .filter_map(|child| graph.release(child))
                .map(|release| &release.version)
        });
        let next: Vec<Version> = recommended
            .chain(conditional.get(&version).into_iter().flatten().copied())
            .filter(|to| !reached.contains(*to))
            .cloned()
            .collect();
        for to in next {
            reached.insert(to.clone());
            pending.push(to);
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
        let mut graph = graph(GRAPH);
        VersionPrune
            .apply(
                &mut graph,
                &PolicyRequest::for_test(query, UpstreamKind::GraphBuilder),
            )
            .unwrap();
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
}
