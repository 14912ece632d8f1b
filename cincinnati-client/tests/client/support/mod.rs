//! Small graphs in the graph-builder's format, written in a few lines.

use cincinnati_client::{Document, UpdateGraph};
use cincinnati_core::release::keys;
use cincinnati_core::{Version, wire};
use serde_json::{Value, json};

/// A full graph under construction: releases of amd64 unless said
/// otherwise, updates between them, conditional updates with one risk each.
#[derive(Default, Clone)]
pub struct Fixture {
    nodes: Vec<Value>,
    edges: Vec<(usize, usize)>,
    conditional: Vec<Value>,
}

impl Fixture {
    pub fn new() -> Self {
        Self::default()
    }

    /// An amd64 release in `channels`.
    pub fn release(self, version: &str, channels: &[&str]) -> Self {
        self.release_of("amd64", version, channels)
    }

    pub fn release_of(mut self, arch: &str, version: &str, channels: &[&str]) -> Self {
        self.nodes.push(json!({
            "version": format!("{version}+{arch}"),
            "payload": format!("quay.io/ocp-release@sha256:{:0>64}", self.nodes.len()),
            "metadata": {
                keys::ARCH: arch,
                keys::CHANNELS: channels.join(","),
                "url": format!("https://errata.example.com/{version}"),
            },
        }));
        self
    }

    /// Sets metadata on an amd64 release.
    pub fn metadata(mut self, version: &str, key: &str, value: &str) -> Self {
        let position = self.position(version);
        self.nodes[position]["metadata"][key] = Value::from(value);
        self
    }

    /// Releases `<minor>.0` to `<minor>.<last>` in `channels`.
    pub fn releases(self, minor: &str, last: u64, channels: &[&str]) -> Self {
        (0..=last).fold(self, |fixture, patch| {
            fixture.release(&format!("{minor}.{patch}"), channels)
        })
    }

    /// A recommended amd64 update.
    pub fn update(mut self, from: &str, to: &str) -> Self {
        let edge = (self.position(from), self.position(to));
        self.edges.push(edge);
        self
    }

    /// Recommended updates from each of `froms` to each of `tos`.
    pub fn updates(self, froms: &[&str], tos: &[&str]) -> Self {
        froms.iter().fold(self, |fixture, from| {
            tos.iter().fold(fixture, |fixture, to| fixture.update(from, to))
        })
    }

    /// A conditional amd64 update with one risk, its rule `Always`.
    pub fn risky(self, from: &str, to: &str, risk: &str) -> Self {
        self.conditional_entry(&[(from, to)], risk, json!([{"type": "Always"}]))
    }

    /// A conditional-edge entry with one risk and the given rules.
    pub fn conditional_entry(mut self, edges: &[(&str, &str)], risk: &str, rules: Value) -> Self {
        let edges: Vec<Value> = edges
            .iter()
            .map(|(from, to)| json!({"from": format!("{from}+amd64"), "to": format!("{to}+amd64")}))
            .collect();
        self.conditional.push(json!({
            "edges": edges,
            "risks": [{
                "url": format!("https://issues.example.com/{risk}"),
                "name": risk,
                "message": format!("{risk} may happen."),
                "matchingRules": rules,
            }],
        }));
        self
    }

    pub fn json(&self) -> Value {
        json!({"nodes": self.nodes, "edges": self.edges, "conditionalEdges": self.conditional})
    }

    pub fn document(&self) -> Document {
        let graph = wire::parse(self.json().to_string().as_bytes()).unwrap().graph;
        Document::classify(graph, "amd64", None)
    }

    pub fn graph(&self) -> UpdateGraph {
        UpdateGraph::build("amd64", &[self.document()])
    }

    fn position(&self, version: &str) -> usize {
        let wanted = format!("{version}+amd64");
        self.nodes
            .iter()
            .position(|node| node["version"] == wanted.as_str())
            .unwrap_or_else(|| panic!("no release {wanted} in the fixture"))
    }
}

pub fn v(text: &str) -> Version {
    Version::parse(text).unwrap()
}

/// What a policy-engine serves from `full` for `channel` and amd64: the
/// channel's amd64 releases without `+amd64` and without the arch key, the
/// updates between them, listed in reverse (clients must not rely on order).
pub fn served(full: &Value, channel: &str) -> Value {
    let in_channel = |node: &Value| {
        node["version"].as_str().unwrap().ends_with("+amd64")
            && node["metadata"][keys::CHANNELS]
                .as_str()
                .is_some_and(|channels| channels.split(',').any(|listed| listed == channel))
    };
    let nodes = full["nodes"].as_array().unwrap();
    let kept: Vec<usize> = (0..nodes.len())
        .rev()
        .filter(|&index| in_channel(&nodes[index]))
        .collect();
    let position = |index: u64| kept.iter().position(|&kept| kept as u64 == index);
    let strip = |version: &Value| version.as_str().unwrap().trim_end_matches("+amd64").to_owned();
    let served_nodes: Vec<Value> = kept
        .iter()
        .map(|&index| {
            let mut node = nodes[index].clone();
            node["version"] = Value::from(strip(&node["version"]));
            node["metadata"].as_object_mut().unwrap().remove(keys::ARCH);
            node
        })
        .collect();
    let versions: Vec<String> = served_nodes.iter().map(|node| strip(&node["version"])).collect();
    let edges: Vec<(usize, usize)> = full["edges"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .filter_map(|edge| Some((position(edge[0].as_u64()?)?, position(edge[1].as_u64()?)?)))
        .collect();
    let conditional: Vec<Value> = full["conditionalEdges"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|entry| {
            let edges: Vec<Value> = entry["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|edge| json!({"from": strip(&edge["from"]), "to": strip(&edge["to"])}))
                .filter(|edge| {
                    versions.contains(&edge["from"].as_str().unwrap().to_owned())
                        && versions.contains(&edge["to"].as_str().unwrap().to_owned())
                })
                .collect();
            (!edges.is_empty()).then(|| json!({"edges": edges, "risks": entry["risks"]}))
        })
        .collect();
    json!({"version": 1, "nodes": served_nodes, "edges": edges, "conditionalEdges": conditional})
}

/// A served answer as a document for `channel`.
pub fn served_document(full: &Value, channel: &str) -> Document {
    let graph = wire::parse(served(full, channel).to_string().as_bytes())
        .unwrap()
        .graph;
    Document::classify(graph, "amd64", Some(channel))
}
