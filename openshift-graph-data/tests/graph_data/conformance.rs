//! Upstream's conformance fixtures: graph-data applied to a scraped graph,
//! then edge instructions, gives the graph upstream served (nodes with
//! their exact metadata, edges as version pairs), and the conditional edges
//! the risk files describe.

use std::collections::BTreeMap;

use cincinnati_core::release::keys;
use cincinnati_core::{Graph, Metadata};

use crate::support::{
    Context, edge_names, edges_only, expected, fixture, load_dir, parse_then_edges, read_graph,
};

/// Instruction keys, which upstream's fixtures record in whatever form its
/// own parser wrote them; they are compared through their effect on edges.
const INSTRUCTIONS: [&str; 2] = [
    "io.openshift.upgrades.graph.previous.remove_regex",
    "io.openshift.upgrades.graph.previous.remove",
];

fn nodes(graph: &Graph) -> BTreeMap<String, (Option<String>, Metadata)> {
    graph
        .releases()
        .map(|(_, release)| {
            let mut metadata = release.metadata.clone();
            for key in INSTRUCTIONS {
                metadata.remove(key);
            }
            (release.version.to_string(), (release.payload.clone(), metadata))
        })
        .collect()
}

fn conforms(name: &str) {
    let dir = fixture(name);
    let graph_data_dir = dir.join("cincinnati-graph-data");
    let (graph_data, load_warnings) = load_dir(&graph_data_dir);
    assert!(
        load_warnings.iter().all(|warning| !warning.is_error()),
        "{load_warnings:?}"
    );

    let raw = read_graph(&dir.join("graph-gb-raw.json"));
    let mut actual = raw.clone();
    parse_then_edges()
        .run(&mut actual, &Context::with(graph_data))
        .unwrap();

    let mut expected_graph = read_graph(&dir.join("graph-gb-with-quay-metadata.json"));
    edges_only()
        .run(&mut expected_graph, &Context::default())
        .unwrap();

    let (actual_nodes, expected_nodes) = (nodes(&actual), nodes(&expected_graph));
    assert_eq!(actual_nodes.len(), expected_nodes.len());
    for (version, expected_node) in &expected_nodes {
        assert_eq!(
            actual_nodes.get(version),
            Some(expected_node),
            "release {version}"
        );
    }
    assert_eq!(edge_names(&actual), edge_names(&expected_graph));

    // Raw metadata adds no update into a risk target in these fixtures, so
    // the updates present before removals are the scraped ones.
    let expected_conditional = expected::conditional_groups(&graph_data_dir, &raw);
    assert_eq!(expected::actual_groups(&actual), expected_conditional);
    let unconditional = edge_names(&actual);
    for edge in expected_conditional.values().flatten() {
        assert!(
            unconditional.binary_search(edge).is_err(),
            "{edge:?} is both conditional and not"
        );
    }
}

#[test]
fn fixture_2020_02_conforms() {
    conforms("20200220.104838");
}

#[test]
fn fixture_2020_03_conforms() {
    conforms("20200319.204124");
}

#[test]
fn fixture_2021_11_conforms_with_its_risks() {
    conforms("20211124.083150");
    let (graph_data, _) = load_dir(&fixture("20211124.083150").join("cincinnati-graph-data"));
    assert_eq!(graph_data.risks().len(), 3, "the fixture declares three risks");
}

#[test]
fn channels_read_in_upstream_order() {
    let mut graph = read_graph(&fixture("20211124.083150").join("graph-gb-raw.json"));
    let (graph_data, _) = load_dir(&fixture("20211124.083150").join("cincinnati-graph-data"));
    parse_then_edges()
        .run(&mut graph, &Context::with(graph_data))
        .unwrap();
    let release = graph
        .release(graph.find(&crate::support::v("4.6.16+amd64")).unwrap())
        .unwrap();
    let channels: Vec<&str> = release.metadata_list(keys::CHANNELS).collect();
    let versions: Vec<&str> = channels
        .iter()
        .map(|name| name.split_once('-').unwrap().1)
        .collect();
    assert!(versions.is_sorted(), "grouped by version: {channels:?}");
    assert!(
        channels.contains(&"stable-4.6") && channels.contains(&"eus-4.6"),
        "{channels:?}"
    );
}
