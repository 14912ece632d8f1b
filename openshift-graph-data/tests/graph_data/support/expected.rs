//! The conditional edges graph-data should produce, derived straight from
//! the risk YAML files with the simplest rules that describe them, and
//! deliberately not with the crate's own code (nor its YAML reader).
//!
//! For each risk file, in file-name order: every update that exists before
//! removals, into a release whose version is `to` (or whose version without
//! its `+arch` suffix is `to`), from a release whose full version matches the
//! `from` regex anywhere, carries the risk. Updates with the same list of
//! risk names form one group.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use cincinnati_core::Graph;
use regex::Regex;

/// Group → updates, as (sorted risk names) → sorted (from, to) version pairs.
pub type Groups = BTreeMap<Vec<String>, Vec<(String, String)>>;

/// The expected groups for the risks in `graph_data/blocked-edges`, on a
/// graph whose edges are those that exist before removals.
pub fn conditional_groups(graph_data: &Path, graph_before_removals: &Graph) -> Groups {
    let mut paths: Vec<_> = std::fs::read_dir(graph_data.join("blocked-edges"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    let mut regexes: HashMap<String, Regex> = HashMap::new();
    // Updates by target, and by target without its `+arch` suffix.
    let mut into: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for (parent, target) in super::edge_names(graph_before_removals) {
        let release = target.split('+').next().unwrap().to_owned();
        into.entry(release)
            .or_default()
            .push((parent.clone(), target.clone()));
        into.entry(target.clone()).or_default().push((parent, target));
    }
    let mut risks_of: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for path in paths {
        let document: HashMap<String, serde_json::Value> =
            serde_norway::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let Some(name) = document.get("name").and_then(|name| name.as_str()) else {
            continue; // no risk: an unconditional block
        };
        let to = document["to"].as_str().unwrap();
        let from = document["from"].as_str().unwrap();
        let regex = regexes
            .entry(from.to_owned())
            .or_insert_with(|| Regex::new(from).unwrap());
        for (parent, target) in into.get(to).into_iter().flatten() {
            if regex.is_match(parent) {
                risks_of
                    .entry((parent.clone(), target.clone()))
                    .or_default()
                    .push(name.to_owned());
            }
        }
    }
    let mut groups = Groups::new();
    for (edge, mut names) in risks_of {
        names.sort();
        groups.entry(names).or_default().push(edge);
    }
    groups
}

/// The conditional edges of `graph` in the same shape.
pub fn actual_groups(graph: &Graph) -> Groups {
    let mut groups = Groups::new();
    for group in graph.conditional_edges() {
        let mut names: Vec<String> = group.risks.iter().map(|risk| risk.name.clone()).collect();
        names.sort();
        let mut edges: Vec<_> = group
            .edges
            .iter()
            .map(|edge| (edge.from.to_string(), edge.to.to_string()))
            .collect();
        edges.sort();
        let duplicate = groups.insert(names.clone(), edges);
        assert!(duplicate.is_none(), "two groups carry the same risks {names:?}");
    }
    groups
}
