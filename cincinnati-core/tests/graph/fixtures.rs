//! Every real graph under testdata/fixtures parses, and serialising it loses
//! nothing: the output is checked against the input with plain JSON values,
//! independently of the parser under test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use cincinnati_core::wire;
use serde_json::Value;

fn fixture_graphs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fixtures/secondary-metadata");
    let mut graphs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("testdata/fixtures is in the repository")
        .flat_map(|snapshot| {
            let snapshot = snapshot.unwrap().path();
            ["graph-gb-raw.json", "graph-gb-with-quay-metadata.json"].map(|name| snapshot.join(name))
        })
        .collect();
    graphs.sort();
    assert_eq!(graphs.len(), 6, "three snapshots with two graphs each");
    graphs
}

/// A graph as plain JSON facts: nodes by version, edges as version pairs,
/// conditional edges as sorted strings.
#[derive(Debug, PartialEq)]
struct Facts {
    nodes: BTreeMap<String, Value>,
    edges: BTreeSet<(String, String)>,
    conditional_edges: Vec<String>,
}

fn facts(document: &Value) -> Facts {
    let nodes_json = document["nodes"].as_array().unwrap();
    let version_at = |index: &Value| {
        nodes_json[index.as_u64().unwrap() as usize]["version"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let nodes = nodes_json
        .iter()
        .map(|node| (node["version"].as_str().unwrap().to_owned(), node.clone()))
        .collect();
    let edges = document["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| (version_at(&pair[0]), version_at(&pair[1])))
        .collect();
    let mut conditional_edges: Vec<String> = document["conditionalEdges"]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .map(|group| {
                    let mut edges: Vec<String> = group["edges"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(Value::to_string)
                        .collect();
                    edges.sort();
                    format!("{edges:?} {}", group["risks"])
                })
                .collect()
        })
        .unwrap_or_default();
    conditional_edges.sort();
    Facts {
        nodes,
        edges,
        conditional_edges,
    }
}

#[test]
fn every_fixture_graph_round_trips_without_loss() {
    for path in fixture_graphs() {
        let bytes = std::fs::read(&path).unwrap();
        let original: Value = serde_json::from_slice(&bytes).unwrap();

        let parsed = wire::parse(&bytes).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let serialised = wire::serialize(&parsed.graph, None);
        let output: Value = serde_json::from_slice(&serialised).unwrap();

        assert_eq!(facts(&output), facts(&original), "{}", path.display());
        assert_eq!(
            parsed.graph.release_count(),
            original["nodes"].as_array().unwrap().len(),
            "{}",
            path.display()
        );
        assert!(
            output.get("version").is_none(),
            "graph-builder output has no version key"
        );
    }
}

#[test]
fn the_largest_fixture_has_the_expected_shape() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures/secondary-metadata/20211124.083150/graph-gb-raw.json");
    let graph = wire::parse(&std::fs::read(path).unwrap()).unwrap().graph;
    assert_eq!(graph.release_count(), 1085);
    assert_eq!(graph.edge_count(), 19478);
    let abstract_releases = graph
        .releases()
        .filter(|(_, release)| release.is_abstract())
        .count();
    assert_eq!(
        abstract_releases, 92,
        "nodes with only a version are kept as abstract releases"
    );
}

#[test]
fn serialisation_is_deterministic_and_sorted() {
    for path in fixture_graphs() {
        let graph = wire::parse(&std::fs::read(&path).unwrap()).unwrap().graph;
        let first = wire::serialize(&graph, Some(1));
        let reparsed = wire::parse(&first).unwrap();
        assert_eq!(reparsed.api_version, Some(1));
        assert_eq!(reparsed.graph, graph, "{}", path.display());
        assert_eq!(
            wire::serialize(&reparsed.graph, Some(1)),
            first,
            "{}",
            path.display()
        );

        let output: Value = serde_json::from_slice(&first).unwrap();
        let versions: Vec<semver::Version> = output["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|node| node["version"].as_str().unwrap().parse().unwrap())
            .collect();
        assert!(
            versions.windows(2).all(|pair| pair[0] < pair[1]),
            "nodes sorted by version"
        );
        let edges: Vec<(u64, u64)> = output["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| (pair[0].as_u64().unwrap(), pair[1].as_u64().unwrap()))
            .collect();
        assert!(edges.windows(2).all(|pair| pair[0] < pair[1]), "edges sorted");
    }
}
