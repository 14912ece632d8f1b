//! The graph one client (one channel, one architecture) should be served,
//! worked out from the published release images and graph-data by the
//! rules of the compatibility contract: simple rules over what the test
//! pushed, sharing no code with the services.
//!
//! The rules:
//! - a node per release of the architecture whose version the channel lists;
//! - an edge per `previous` and `next` entry whose both ends are such nodes;
//! - an edge that a blocked edge matches (`to` equal, `from` an unanchored
//!   regular expression over `<version>+<arch>`) is removed when a match has
//!   no risk, else it is conditional with the risks of every match;
//! - node metadata: the manifest digest, the channels listing the version
//!   (ordered lexically, then stably by what follows the first `-`), the
//!   release's own metadata; versions without `+arch`.
//!
//! [`engine_view`] does the same for an engine behind a graph in the
//! upstream graph-builder's JSON, by the engine's rules alone.

use std::collections::BTreeMap;

use anyhow::Context as _;
use cincinnati_core::release::keys;
use regex::Regex;
use serde_json::{Value, json};

use crate::client_graph::{ClientGraph, Node, array, opaque_metadata, sorted_by_name, string};
use crate::graph_data::{BlockedEdge, GraphData, MatchingRule, Risk};
use crate::releases::{MULTI, PushedRelease};
use crate::scenario::Published;

/// The graph `published` should give a client asking for `channel` and `arch`.
pub fn client_graph(published: &Published, channel: &str, arch: &str) -> ClientGraph {
    let graph_data = &published.graph_data;
    let listed = graph_data.channels.get(channel).cloned().unwrap_or_default();
    let releases: BTreeMap<&str, &PushedRelease> = published
        .releases
        .iter()
        .filter(|pushed| pushed.release.arch == arch && listed.contains(&pushed.release.version))
        .map(|pushed| (pushed.release.version.as_str(), pushed))
        .collect();

    let nodes = releases
        .iter()
        .map(|(version, pushed)| {
            let node = Node {
                payload: Some(pushed.payload.clone()),
                metadata: node_metadata(pushed, graph_data),
            };
            ((*version).to_owned(), node)
        })
        .collect();

    let declared = releases.values().flat_map(|pushed| {
        let release = &pushed.release;
        let from_previous = release
            .previous
            .iter()
            .map(|from| (from.clone(), release.version.clone()));
        let to_next = release
            .next
            .iter()
            .map(|to| (release.version.clone(), to.clone()));
        from_previous.chain(to_next)
    });
    let mut graph = ClientGraph {
        nodes,
        ..ClientGraph::default()
    };
    for (from, to) in declared {
        if !(releases.contains_key(from.as_str()) && releases.contains_key(to.as_str())) {
            continue;
        }
        let blocking: Vec<&BlockedEdge> = graph_data
            .blocked_edges
            .iter()
            .filter(|blocked| blocks(blocked, &from, &to, arch))
            .collect();
        if blocking.is_empty() {
            graph.edges.insert((from, to));
            continue;
        }
        // One match without a risk removes the update; otherwise it carries every risk.
        let risks: Option<Vec<Value>> = blocking
            .iter()
            .map(|blocked| blocked.risk.as_ref().map(risk_json))
            .collect();
        if let Some(risks) = risks {
            graph.conditional.insert((from, to), sorted_by_name(risks));
        }
    }
    graph
}

/// What an engine should serve `channel` and `arch` clients from an
/// upstream graph-builder's `graph` (Graph API JSON), by the engine's rules:
/// keep the releases of the architecture (by the `release.arch` key) that
/// list the channel, drop that key and the `+arch` build metadata, keep the
/// edges and conditional edges between kept releases.
pub fn engine_view(graph: &Value, channel: &str, arch: &str) -> anyhow::Result<ClientGraph> {
    let nodes = array(&graph["nodes"], "nodes")?;
    let mut client = ClientGraph::default();
    // Upstream version (`4.2.1+amd64`) → served version (`4.2.1`), by node index too.
    let mut kept: BTreeMap<String, String> = BTreeMap::new();
    let mut kept_by_index: BTreeMap<usize, String> = BTreeMap::new();
    for (index, node) in nodes.iter().enumerate() {
        let metadata = &node["metadata"];
        let listed = metadata[keys::CHANNELS]
            .as_str()
            .is_some_and(|channels| channels.split(',').any(|listed| listed.trim() == channel));
        if metadata[keys::ARCH] != arch || !listed {
            continue;
        }
        let version = string(&node["version"], "a node's version")?;
        let served = version
            .strip_suffix(&format!("+{arch}"))
            .unwrap_or(version)
            .to_owned();
        let mut metadata = opaque_metadata(metadata).with_context(|| format!("the metadata of {version}"))?;
        metadata.remove(keys::ARCH);
        let payload = node["payload"].as_str().map(str::to_owned);
        client.nodes.insert(served.clone(), Node { payload, metadata });
        kept.insert(version.to_owned(), served.clone());
        kept_by_index.insert(index, served);
    }
    for edge in array(&graph["edges"], "edges")? {
        let end = |position: usize| {
            let index = usize::try_from(edge[position].as_u64()?).ok()?;
            kept_by_index.get(&index).cloned()
        };
        if let (Some(from), Some(to)) = (end(0), end(1)) {
            client.edges.insert((from, to));
        }
    }
    // Upstream graph-builders may leave the key out.
    let no_groups = Vec::new();
    let groups = graph["conditionalEdges"].as_array().unwrap_or(&no_groups);
    for group in groups {
        let risks = sorted_by_name(array(&group["risks"], "risks")?.clone());
        for edge in array(&group["edges"], "conditional edges")? {
            let end = |key: &str| edge[key].as_str().and_then(|version| kept.get(version)).cloned();
            if let (Some(from), Some(to)) = (end("from"), end("to")) {
                client
                    .conditional
                    .entry((from, to))
                    .or_default()
                    .extend(risks.iter().cloned());
            }
        }
    }
    Ok(client)
}

fn blocks(blocked: &BlockedEdge, from: &str, to: &str, arch: &str) -> bool {
    let from_pattern = Regex::new(&blocked.from).expect("the scenario's blocked-edge patterns are valid");
    blocked.to == to && from_pattern.is_match(&format!("{from}+{arch}"))
}

fn node_metadata(pushed: &PushedRelease, graph_data: &GraphData) -> BTreeMap<String, String> {
    let release = &pushed.release;
    let mut metadata = BTreeMap::from([
        (keys::MANIFESTREF.to_owned(), pushed.digest.clone()),
        (
            keys::CHANNELS.to_owned(),
            channels_listing(&release.version, graph_data),
        ),
        ("url".to_owned(), release.errata_url()),
    ]);
    if release.arch == MULTI {
        metadata.insert(keys::RELEASE_ARCHITECTURE.to_owned(), MULTI.to_owned());
    }
    if let Some(created) = &release.created {
        metadata.insert(keys::CREATED.to_owned(), created.clone());
    }
    metadata
}

/// The channels that list `version`, in upstream's order: `candidate-4.6,
/// eus-4.6, fast-4.6, candidate-4.7, ...`.
fn channels_listing(version: &str, graph_data: &GraphData) -> String {
    let mut names: Vec<&str> = graph_data
        .channels
        .iter()
        .filter(|(_, versions)| versions.iter().any(|listed| listed == version))
        .map(|(name, _)| name.as_str())
        .collect();
    names.sort_unstable();
    // Stable: names with the same suffix keep their lexical order.
    names.sort_by_key(|name| name.split_once('-').map_or("", |(_, suffix)| suffix));
    names.join(",")
}

/// A risk as the Graph API carries it.
fn risk_json(risk: &Risk) -> Value {
    let rule = match &risk.rule {
        MatchingRule::Always => json!({ "type": "Always" }),
        MatchingRule::PromQl(query) => json!({ "type": "PromQL", "promql": { "promql": query } }),
    };
    json!({
        "url": risk.url,
        "name": risk.name,
        "message": risk.message,
        "matchingRules": [rule],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_graph::risk_name;
    use crate::scenario;

    /// The standard scenario with made-up digests.
    fn standard() -> Published {
        let releases = scenario::releases()
            .into_iter()
            .enumerate()
            .map(|(position, release)| PushedRelease {
                digest: format!("sha256:{position:064}"),
                payload: format!("registry/ocp/release@sha256:{position:064}"),
                release,
            })
            .collect();
        Published {
            releases,
            graph_data: scenario::graph_data(),
        }
    }

    fn pair(from: &str, to: &str) -> (String, String) {
        (from.to_owned(), to.to_owned())
    }

    fn risk_names(graph: &ClientGraph, from: &str, to: &str) -> Vec<String> {
        graph.conditional[&pair(from, to)].iter().map(risk_name).collect()
    }

    #[test]
    fn risks_accumulate_and_a_blocked_edge_without_risk_removes_the_update() {
        let graph = client_graph(&standard(), scenario::CANDIDATE, "amd64");
        assert_eq!(graph.nodes.len(), 5);
        assert_eq!(
            risk_names(&graph, "4.16.1", "4.17.0"),
            ["EtcdDataLoss", "NetworkMigration"]
        );
        assert_eq!(risk_names(&graph, "4.16.0", "4.17.0"), ["NetworkMigration"]);
        assert_eq!(graph.conditional.len(), 2);
        assert!(
            !graph.edges.contains(&pair("4.16.0", "4.17.1")),
            "pulled without a risk"
        );
        assert!(
            graph.edges.contains(&pair("4.16.2", "4.17.1")),
            "declared by 4.16.2's next"
        );
        assert!(
            !graph.edges.contains(&pair("4.16.1", "4.17.0")),
            "conditional, not recommended"
        );
    }

    #[test]
    fn a_risk_can_apply_to_one_architecture() {
        let arm = client_graph(&standard(), scenario::CANDIDATE, "arm64");
        assert_eq!(risk_names(&arm, "4.16.0", "4.16.2"), ["ArmFirmware"]);
        let multi = client_graph(&standard(), scenario::CANDIDATE, "multi");
        assert!(multi.edges.contains(&pair("4.16.0", "4.16.2")));
        let node = &multi.nodes["4.16.0"];
        assert_eq!(node.metadata[keys::RELEASE_ARCHITECTURE], "multi");
    }

    #[test]
    fn channels_are_listed_in_upstreams_order_and_filter_the_graph() {
        let graph = client_graph(&standard(), "stable-4.17", "s390x");
        assert_eq!(graph.nodes.keys().collect::<Vec<_>>(), ["4.16.2", "4.17.0"]);
        assert!(graph.edges.is_empty() && graph.conditional.is_empty());
        assert_eq!(
            graph.nodes["4.16.2"].metadata[keys::CHANNELS],
            "stable-4.16,candidate-4.17,fast-4.17,stable-4.17"
        );
        assert_eq!(
            client_graph(&standard(), "eus-4.16", "amd64"),
            ClientGraph::default()
        );
    }

    #[test]
    fn a_served_graph_reads_back_as_the_same_client_graph() {
        let graph = client_graph(&standard(), scenario::CANDIDATE, "amd64");
        let versions: Vec<&String> = graph.nodes.keys().collect();
        let index = |version: &String| versions.iter().position(|v| *v == version).unwrap();
        let document = json!({
            "version": 1,
            "nodes": graph.nodes.iter().map(|(version, node)| json!({
                "version": version, "payload": node.payload, "metadata": node.metadata,
            })).collect::<Vec<_>>(),
            "edges": graph.edges.iter().map(|(from, to)| json!([index(from), index(to)])).collect::<Vec<_>>(),
            "conditionalEdges": graph.conditional.iter().map(|((from, to), risks)| json!({
                "edges": [{ "from": from, "to": to }], "risks": risks,
            })).collect::<Vec<_>>(),
        });
        assert_eq!(ClientGraph::from_served(&document).unwrap(), graph);
    }

    #[test]
    fn a_cluster_gets_recommended_and_conditional_updates_newest_first() {
        let graph = client_graph(&standard(), scenario::CANDIDATE, "amd64");
        let updates = graph.updates_from("4.16.1").unwrap();
        assert_eq!(updates.available, ["4.17.1", "4.16.2"]);
        assert_eq!(
            updates.conditional,
            [(
                "4.17.0".to_owned(),
                vec!["EtcdDataLoss".to_owned(), "NetworkMigration".to_owned()]
            )]
        );
        assert_eq!(graph.updates_from("4.17.2"), None);
    }
}
