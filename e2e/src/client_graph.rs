//! One client's graph (one channel, one architecture) in a shape that
//! compares with `==`: read from what a service answered, or built by the
//! rules in [`crate::expected`]. And what a cluster at one version makes of
//! it, by the CVO's rules.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context as _, bail, ensure};
use cincinnati_core::Version;
use serde_json::Value;

/// Graph-data's blocked edges reach the graph as these node metadata keys,
/// which stay in the served metadata as upstream leaves them. They are
/// instructions, opaque to clusters, and compared the way the conformance
/// tests compare: not at all.
const EDGE_INSTRUCTIONS: [&str; 2] = [
    "io.openshift.upgrades.graph.previous.remove_regex",
    "io.openshift.upgrades.graph.previous.remove",
];

/// One client's graph, normalised: versions without `+arch`, risks sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientGraph {
    pub nodes: BTreeMap<String, Node>,
    pub edges: BTreeSet<(String, String)>,
    /// (from, to) → the risks of that update.
    pub conditional: BTreeMap<(String, String), Vec<Value>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub payload: Option<String>,
    pub metadata: BTreeMap<String, String>,
}

impl ClientGraph {
    /// Reads a policy-engine's answer, checking the parts of the wire
    /// contract a client relies on: `version: 1`, edges that index nodes,
    /// `conditionalEdges` present, and each conditional update in exactly
    /// one entry (a cluster drops a target listed twice).
    pub fn from_served(document: &Value) -> anyhow::Result<Self> {
        ensure!(
            document["version"] == 1,
            "the answer's `version` is {}, not 1",
            document["version"]
        );
        let mut graph = ClientGraph::default();
        let mut versions = Vec::new();
        for node in array(&document["nodes"], "nodes")? {
            let version = string(&node["version"], "a node's version")?;
            let metadata =
                opaque_metadata(&node["metadata"]).with_context(|| format!("the metadata of {version}"))?;
            let payload = node["payload"].as_str().map(str::to_owned);
            ensure!(
                graph
                    .nodes
                    .insert(version.to_owned(), Node { payload, metadata })
                    .is_none(),
                "{version} is served twice"
            );
            versions.push(version.to_owned());
        }
        for edge in array(&document["edges"], "edges")? {
            let end = |position: usize| {
                edge[position]
                    .as_u64()
                    .and_then(|index| versions.get(usize::try_from(index).ok()?))
                    .with_context(|| format!("edge {edge} does not index the nodes"))
            };
            let pair = (end(0)?.clone(), end(1)?.clone());
            ensure!(graph.edges.insert(pair.clone()), "edge {pair:?} is served twice");
        }
        for group in array(&document["conditionalEdges"], "conditionalEdges")? {
            let risks = sorted_by_name(array(&group["risks"], "risks")?.clone());
            for edge in array(&group["edges"], "conditional edges")? {
                let pair = (
                    string(&edge["from"], "a conditional edge's from")?.to_owned(),
                    string(&edge["to"], "a conditional edge's to")?.to_owned(),
                );
                if graph.conditional.insert(pair.clone(), risks.clone()).is_some() {
                    bail!("conditional update {pair:?} is listed in two entries");
                }
            }
        }
        Ok(graph)
    }

    /// How `self` (served) differs from `expected`, for failure messages.
    pub fn difference_from(&self, expected: &ClientGraph) -> String {
        let mut lines = Vec::new();
        for (version, node) in &expected.nodes {
            match self.nodes.get(version) {
                None => lines.push(format!("missing node {version}")),
                Some(served) if served != node => {
                    lines.push(format!("node {version} is {served:?}, expected {node:?}"));
                }
                Some(_) => {}
            }
        }
        let unexpected = self
            .nodes
            .keys()
            .filter(|version| !expected.nodes.contains_key(*version));
        lines.extend(unexpected.map(|version| format!("unexpected node {version}")));
        lines.extend(
            expected
                .edges
                .difference(&self.edges)
                .map(|edge| format!("missing edge {edge:?}")),
        );
        lines.extend(
            self.edges
                .difference(&expected.edges)
                .map(|edge| format!("unexpected edge {edge:?}")),
        );
        for (edge, risks) in &expected.conditional {
            match self.conditional.get(edge) {
                None => lines.push(format!("missing conditional edge {edge:?}")),
                Some(served) if served != risks => {
                    lines.push(format!(
                        "conditional edge {edge:?} has risks {served:?}, expected {risks:?}"
                    ));
                }
                Some(_) => {}
            }
        }
        let unexpected = self
            .conditional
            .keys()
            .filter(|edge| !expected.conditional.contains_key(*edge));
        lines.extend(unexpected.map(|edge| format!("unexpected conditional edge {edge:?}")));
        lines.join("\n")
    }

    /// What a cluster at `version` may update to, by the CVO's rules;
    /// `None` when the version is not in the graph.
    pub fn updates_from(&self, version: &str) -> Option<ClientUpdates> {
        self.nodes.get(version)?;
        let conditional: BTreeMap<&str, Vec<String>> = self
            .conditional
            .iter()
            .filter(|((from, _), _)| from == version)
            .map(|((_, to), risks)| (to.as_str(), risks.iter().map(risk_name).collect()))
            .collect();
        let available = self
            .edges
            .iter()
            .filter(|(from, to)| from == version && !conditional.contains_key(to.as_str()))
            .map(|(_, to)| to.clone())
            .collect();
        let conditional = conditional
            .into_iter()
            .map(|(to, risks)| (to.to_owned(), risks))
            .collect();
        Some(ClientUpdates::newest_first(available, conditional))
    }
}

pub(crate) fn risk_name(risk: &Value) -> String {
    risk["name"].as_str().unwrap_or_default().to_owned()
}

/// A node's metadata without the [`EDGE_INSTRUCTIONS`].
pub(crate) fn opaque_metadata(metadata: &Value) -> anyhow::Result<BTreeMap<String, String>> {
    let mut metadata: BTreeMap<String, String> = match metadata {
        Value::Null => BTreeMap::new(),
        metadata => serde_json::from_value(metadata.clone())?,
    };
    metadata.retain(|key, _| !EDGE_INSTRUCTIONS.contains(&key.as_str()));
    Ok(metadata)
}

pub(crate) fn array<'a>(value: &'a Value, what: &str) -> anyhow::Result<&'a Vec<Value>> {
    value
        .as_array()
        .with_context(|| format!("`{what}` is not an array: {value}"))
}

pub(crate) fn string<'a>(value: &'a Value, what: &str) -> anyhow::Result<&'a str> {
    value
        .as_str()
        .with_context(|| format!("{what} is not a string: {value}"))
}

/// Risks in a fixed order: a cluster does not care about theirs.
pub(crate) fn sorted_by_name(mut risks: Vec<Value>) -> Vec<Value> {
    risks.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    risks
}

/// A cluster's updates: versions, newest first; conditional ones with their
/// risks' names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientUpdates {
    pub available: Vec<String>,
    pub conditional: Vec<(String, Vec<String>)>,
}

impl ClientUpdates {
    fn newest_first(mut available: Vec<String>, mut conditional: Vec<(String, Vec<String>)>) -> Self {
        let newest_first = |a: &String, b: &String| semver(b).cmp(&semver(a));
        available.sort_by(newest_first);
        conditional.sort_by(|(a, _), (b, _)| newest_first(a, b));
        for (_, risks) in &mut conditional {
            risks.sort();
        }
        Self {
            available,
            conditional,
        }
    }

    /// The same shape from cincinnati-client's answer, in its order.
    pub fn from_client(updates: &cincinnati_client::Updates) -> Self {
        let available = updates
            .recommended
            .iter()
            .map(|release| release.version.to_string())
            .collect();
        let conditional = updates
            .conditional
            .iter()
            .map(|update| {
                let mut risks: Vec<String> = update.risks.iter().map(|risk| risk.name.clone()).collect();
                risks.sort();
                (update.release.version.to_string(), risks)
            })
            .collect();
        Self {
            available,
            conditional,
        }
    }
}

fn semver(version: &str) -> Version {
    Version::parse(version).expect("the scenario's versions are SemVer")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_update_listed_in_two_conditional_entries_is_refused() {
        let entry = json!({ "edges": [{ "from": "4.1.0", "to": "4.1.1" }], "risks": [] });
        let document = json!({
            "version": 1,
            "nodes": [{ "version": "4.1.0" }, { "version": "4.1.1" }],
            "edges": [],
            "conditionalEdges": [entry.clone(), entry],
        });
        let error = ClientGraph::from_served(&document).unwrap_err().to_string();
        assert!(error.contains("two entries"), "{error}");
    }
}
