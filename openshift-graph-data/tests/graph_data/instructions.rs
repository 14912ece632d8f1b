//! Each edge instruction and each graph-data rule on small graphs.

use cincinnati_core::{Graph, Metadata, wire};
use openshift_graph_data::apply::{
    EdgeRules, InstructionKeys, apply_edge_instructions, apply_graph_data, remove_flagged_releases,
};
use openshift_graph_data::{DiagnosticKind, GraphData, Strictness};

use crate::support::{ANY_TIME, edge_names, files, graph, v};

fn set(graph: &mut Graph, version: &str, key: &str, value: &str) {
    let id = graph.find(&v(version)).unwrap();
    graph.metadata_mut(id).unwrap().insert(key, value);
}

fn metadata<'a>(graph: &'a Graph, version: &str) -> &'a Metadata {
    &graph.release(graph.find(&v(version)).unwrap()).unwrap().metadata
}

fn pairs(edges: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut pairs: Vec<_> = edges
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    pairs.sort();
    pairs
}

fn keys() -> InstructionKeys {
    InstructionKeys::default()
}

fn run_edges(graph: &mut Graph) -> Vec<openshift_graph_data::Diagnostic> {
    apply_edge_instructions(graph, None, &EdgeRules::default()).unwrap()
}

/// Graph-data with these blocked-edges files (and one channel).
fn graph_data(blocked_edges: &[(&str, &str)]) -> GraphData {
    let mut entries = vec![
        ("version", "1.1.0\n"),
        ("raw/metadata.json", "{}"),
        ("channels/fast-4.1.yaml", "name: fast-4.1\nversions: []\n"),
    ];
    entries.extend_from_slice(blocked_edges);
    GraphData::load(&files(&entries), &Strictness::default())
        .unwrap_or_else(|refused| panic!("{refused}"))
        .graph_data
}

fn apply_all(graph: &mut Graph, data: &GraphData) {
    apply_graph_data(graph, data, &keys(), ANY_TIME);
    apply_edge_instructions(graph, Some(data), &EdgeRules::default()).unwrap();
}

fn risk(to: &str, from: &str, name: &str) -> String {
    format!(
        "to: {to}\nfrom: {from}\nurl: https://example.com/{name}\nname: {name}\nmessage: {name} happens\nmatchingRules:\n- type: Always\n"
    )
}

const AMD_AND_S390X: [&str; 6] = [
    "4.1.0+amd64",
    "4.1.1+amd64",
    "4.1.2+amd64",
    "4.1.0+s390x",
    "4.1.1+s390x",
    "4.1.2+s390x",
];

#[test]
fn previous_add_adds_within_the_architecture() {
    let mut graph = graph(&AMD_AND_S390X, &[]);
    set(&mut graph, "4.1.2+amd64", &keys().previous_add, "4.1.0, 4.1.1");
    assert!(run_edges(&mut graph).is_empty());
    assert_eq!(
        edge_names(&graph),
        pairs(&[("4.1.0+amd64", "4.1.2+amd64"), ("4.1.1+amd64", "4.1.2+amd64")])
    );
}

#[test]
fn next_add_adds_from_the_release_carrying_it() {
    let mut graph = graph(&AMD_AND_S390X, &[]);
    set(&mut graph, "4.1.0+s390x", &keys().next_add, "4.1.2");
    run_edges(&mut graph);
    assert_eq!(edge_names(&graph), pairs(&[("4.1.0+s390x", "4.1.2+s390x")]));
}

#[test]
fn an_addition_naming_a_missing_release_is_reported_and_skipped() {
    let mut graph = graph(&AMD_AND_S390X, &[]);
    set(&mut graph, "4.1.2+amd64", &keys().previous_add, "4.0.9,4.1.1");
    let warnings = run_edges(&mut graph);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].kind, DiagnosticKind::UnknownRelease);
    assert_eq!(edge_names(&graph), pairs(&[("4.1.1+amd64", "4.1.2+amd64")]));
}

#[test]
fn an_addition_closing_a_cycle_is_reported_and_skipped() {
    let mut graph = graph(&AMD_AND_S390X, &[("4.1.0+amd64", "4.1.1+amd64")]);
    set(&mut graph, "4.1.1+amd64", &keys().next_add, "4.1.0");
    let warnings = run_edges(&mut graph);
    assert_eq!(warnings[0].kind, DiagnosticKind::Cycle);
    assert_eq!(graph.edge_count(), 1);
}

#[test]
fn previous_remove_removes_listed_updates_and_star_removes_all() {
    let edges = [
        ("4.1.0+amd64", "4.1.2+amd64"),
        ("4.1.1+amd64", "4.1.2+amd64"),
        ("4.1.0+s390x", "4.1.2+s390x"),
        ("4.1.1+s390x", "4.1.2+s390x"),
    ];
    let mut graph = graph(&AMD_AND_S390X, &edges);
    set(&mut graph, "4.1.2+amd64", &keys().previous_remove, "4.1.0,4.1.7");
    set(&mut graph, "4.1.2+s390x", &keys().previous_remove, "*");
    run_edges(&mut graph);
    assert_eq!(edge_names(&graph), pairs(&[("4.1.1+amd64", "4.1.2+amd64")]));
}

#[test]
fn previous_remove_regex_matches_anywhere_in_the_suffixed_version() {
    let releases = ["4.1.0-rc.1+amd64", "4.1.0+amd64", "4.1.1+amd64", "4.1.2+amd64"];
    let edges = [
        ("4.1.0-rc.1+amd64", "4.1.2+amd64"),
        ("4.1.0+amd64", "4.1.2+amd64"),
        ("4.1.1+amd64", "4.1.2+amd64"),
    ];
    let mut graph = graph(&releases, &edges);
    set(
        &mut graph,
        "4.1.2+amd64",
        &keys().previous_remove_regex,
        "0[+]amd",
    );
    run_edges(&mut graph);
    assert_eq!(
        edge_names(&graph),
        pairs(&[
            ("4.1.0-rc.1+amd64", "4.1.2+amd64"),
            ("4.1.1+amd64", "4.1.2+amd64")
        ])
    );
}

#[test]
fn next_remove_removes_from_the_release_carrying_it() {
    let mut graph = graph(
        &AMD_AND_S390X,
        &[("4.1.0+amd64", "4.1.1+amd64"), ("4.1.0+amd64", "4.1.2+amd64")],
    );
    set(&mut graph, "4.1.0+amd64", &keys().next_remove, "4.1.2");
    run_edges(&mut graph);
    assert_eq!(edge_names(&graph), pairs(&[("4.1.0+amd64", "4.1.1+amd64")]));
}

#[test]
fn removals_win_over_additions() {
    let mut graph = graph(&AMD_AND_S390X, &[]);
    set(&mut graph, "4.1.2+amd64", &keys().previous_add, "4.1.0,4.1.1");
    set(&mut graph, "4.1.2+amd64", &keys().previous_remove, "4.1.0");
    run_edges(&mut graph);
    assert_eq!(edge_names(&graph), pairs(&[("4.1.1+amd64", "4.1.2+amd64")]));
}

#[test]
fn a_removal_that_cannot_be_read_fails_rather_than_keep_the_update() {
    let mut graph = graph(&AMD_AND_S390X, &[("4.1.0+amd64", "4.1.1+amd64")]);
    set(&mut graph, "4.1.1+amd64", &keys().previous_remove_regex, "4[.1");
    let error = apply_edge_instructions(&mut graph, None, &EdgeRules::default()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("release 4.1.1+amd64: `io.openshift.upgrades.graph.previous.remove_regex`")
    );
}

#[test]
fn consumed_instructions_can_be_stripped() {
    let mut graph = graph(&AMD_AND_S390X, &[]);
    set(&mut graph, "4.1.2+amd64", &keys().previous_add, "4.1.1");
    let rules = EdgeRules {
        remove_consumed_metadata: true,
        ..EdgeRules::default()
    };
    apply_edge_instructions(&mut graph, None, &rules).unwrap();
    assert_eq!(graph.edge_count(), 1);
    assert!(!metadata(&graph, "4.1.2+amd64").contains_key(&keys().previous_add));
}

#[test]
fn a_block_without_arch_applies_to_every_arch() {
    let edges = [("4.1.0+amd64", "4.1.1+amd64"), ("4.1.0+s390x", "4.1.1+s390x")];
    let mut graph = graph(&AMD_AND_S390X, &edges);
    apply_all(
        &mut graph,
        &graph_data(&[("blocked-edges/4.1.1.yaml", "to: 4.1.1\nfrom: .*\n")]),
    );
    assert_eq!(graph.edge_count(), 0);
}

#[test]
fn a_block_with_arch_applies_to_that_arch() {
    let edges = [("4.1.0+amd64", "4.1.1+amd64"), ("4.1.0+s390x", "4.1.1+s390x")];
    let mut graph = graph(&AMD_AND_S390X, &edges);
    apply_all(
        &mut graph,
        &graph_data(&[("blocked-edges/4.1.1+s390x.yaml", "to: 4.1.1+s390x\nfrom: .*\n")]),
    );
    assert_eq!(edge_names(&graph), pairs(&[("4.1.0+amd64", "4.1.1+amd64")]));
}

#[test]
fn a_legacy_s390x_prerelease_target_names_the_s390x_build() {
    let releases = [
        "4.2.10+s390x",
        "4.2.11-s390x+s390x",
        "4.2.10+amd64",
        "4.2.11-s390x+amd64",
    ];
    let edges = [
        ("4.2.10+s390x", "4.2.11-s390x+s390x"),
        ("4.2.10+amd64", "4.2.11-s390x+amd64"),
    ];
    let mut graph = graph(&releases, &edges);
    apply_all(
        &mut graph,
        &graph_data(&[("blocked-edges/4.2.11-s390x.yaml", "to: 4.2.11-s390x\nfrom: .*\n")]),
    );
    assert_eq!(
        edge_names(&graph),
        pairs(&[("4.2.10+amd64", "4.2.11-s390x+amd64")])
    );
}

#[test]
fn two_unconditional_files_for_one_release_combine() {
    let edges = [("4.1.0+amd64", "4.1.2+amd64"), ("4.1.1+amd64", "4.1.2+amd64")];
    let mut graph = graph(&AMD_AND_S390X, &edges);
    let data = graph_data(&[
        ("blocked-edges/4.1.2-a.yaml", "to: 4.1.2\nfrom: 4[.]1[.]0[+]\n"),
        ("blocked-edges/4.1.2-b.yaml", "to: 4.1.2\nfrom: 4[.]1[.]1[+]\n"),
    ]);
    apply_all(&mut graph, &data);
    assert_eq!(graph.edge_count(), 0, "upstream kept the last file only");
    assert_eq!(
        &metadata(&graph, "4.1.2+amd64")[&keys().previous_remove_regex],
        "(?:4[.]1[.]0[+])|(?:4[.]1[.]1[+])"
    );
}

#[test]
fn the_declarations_removing_an_update_are_found_by_its_ends() {
    let data = graph_data(&[
        ("blocked-edges/4.1.2-a.yaml", "to: 4.1.2\nfrom: 4[.]1[.]0[+]\n"),
        ("blocked-edges/4.1.2-b.yaml", &risk("4.1.2", ".*[+]s390x$", "B")),
        ("blocked-edges/4.1.2-c.yaml", "to: 4.1.2+amd64\nfrom: .*\n"),
    ]);
    let found = |from: &str, to: &str| -> Vec<String> {
        let (from, to) = (v(from), v(to));
        data.declarations_for(&from, &to)
            .map(|declaration| declaration.origin().path.clone())
            .collect()
    };
    assert_eq!(
        found("4.1.0+amd64", "4.1.2+amd64"),
        ["blocked-edges/4.1.2-a.yaml", "blocked-edges/4.1.2-c.yaml"]
    );
    assert_eq!(
        found("4.1.1+s390x", "4.1.2+s390x"),
        ["blocked-edges/4.1.2-b.yaml"]
    );
    assert!(found("4.1.1+s390x", "4.1.1+s390x").is_empty());
}

#[test]
fn raw_metadata_is_set_or_appended_with_commas() {
    let mut graph = graph(&AMD_AND_S390X, &[]);
    set(&mut graph, "4.1.1+amd64", "note", "first");
    let data = GraphData::load(
        &files(&[
            ("version", "1.0.0\n"),
            (
                "raw/metadata.json",
                r#"{"4.1.1": {"note": "second", "url": "u"}}"#,
            ),
            ("channels/a-4.1.yaml", "name: a-4.1\nversions: []\n"),
        ]),
        &Strictness::default(),
    )
    .unwrap()
    .graph_data;
    apply_graph_data(&mut graph, &data, &keys(), ANY_TIME);
    assert_eq!(&metadata(&graph, "4.1.1+amd64")["note"], "first,second");
    assert_eq!(&metadata(&graph, "4.1.1+s390x")["url"], "u");
    assert!(!metadata(&graph, "4.1.0+s390x").contains_key("url"));
}

#[test]
fn channels_are_appended_in_client_order_even_without_a_dash() {
    let mut graph = graph(&AMD_AND_S390X, &[]);
    set(&mut graph, "4.1.1+amd64", &keys().channels, "stable-4.2");
    let data = GraphData::load(
        &files(&[
            ("version", "1.0.0\n"),
            ("raw/metadata.json", "{}"),
            (
                "channels/fast-4.1.yaml",
                "name: fast-4.1\nversions: [4.1.1, 4.1.2+s390x]\n",
            ),
            (
                "channels/candidate-4.2.yaml",
                "name: candidate-4.2\nversions: [4.1.1]\n",
            ),
            ("channels/lab.yaml", "name: lab\nversions: [4.1.1+amd64]\n"),
        ]),
        &Strictness::default(),
    )
    .unwrap()
    .graph_data;
    let warnings = apply_graph_data(&mut graph, &data, &keys(), ANY_TIME);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        &metadata(&graph, "4.1.1+amd64")[&keys().channels],
        "lab,fast-4.1,candidate-4.2,stable-4.2"
    );
    assert_eq!(
        &metadata(&graph, "4.1.1+s390x")[&keys().channels],
        "fast-4.1,candidate-4.2"
    );
    assert_eq!(&metadata(&graph, "4.1.2+s390x")[&keys().channels], "fast-4.1");
    assert!(!metadata(&graph, "4.1.2+amd64").contains_key(&keys().channels));
}

#[test]
fn risks_become_conditional_edges_where_updates_existed() {
    let releases = ["4.0.9+amd64", "4.1.0+amd64", "4.1.1+amd64", "4.1.2+amd64"];
    let edges = [
        ("4.0.9+amd64", "4.1.2+amd64"),
        ("4.1.0+amd64", "4.1.2+amd64"),
        ("4.1.1+amd64", "4.1.2+amd64"),
    ];
    let mut graph = graph(&releases, &edges);
    let data = graph_data(&[
        ("blocked-edges/4.1.2-Broad.yaml", &risk("4.1.2", ".*", "Broad")),
        (
            "blocked-edges/4.1.2-Narrow.yaml",
            &risk("4.1.2", "4[.]0[.]", "Narrow"),
        ),
        ("blocked-edges/4.1.3-Future.yaml", &risk("4.1.3", ".*", "Future")),
    ]);
    apply_all(&mut graph, &data);
    assert_eq!(graph.edge_count(), 0);
    let groups: Vec<(Vec<String>, Vec<String>)> = graph
        .sorted_conditional_edges()
        .iter()
        .map(|group| {
            (
                group
                    .edges
                    .iter()
                    .map(|edge| format!("{} -> {}", edge.from, edge.to))
                    .collect(),
                group.risks.iter().map(|risk| risk.name.clone()).collect(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            (
                vec!["4.0.9+amd64 -> 4.1.2+amd64".to_owned()],
                vec!["Broad".to_owned(), "Narrow".to_owned()]
            ),
            (
                vec![
                    "4.1.0+amd64 -> 4.1.2+amd64".to_owned(),
                    "4.1.1+amd64 -> 4.1.2+amd64".to_owned()
                ],
                vec!["Broad".to_owned()]
            ),
        ],
        "each update in one group with all its risks; none for a release without updates"
    );
}

#[test]
fn an_update_added_by_metadata_can_carry_a_risk_but_a_removed_one_cannot() {
    let mut graph = graph(&AMD_AND_S390X, &[("4.1.0+amd64", "4.1.2+amd64")]);
    set(&mut graph, "4.1.2+amd64", &keys().previous_add, "4.1.1");
    set(&mut graph, "4.1.2+amd64", &keys().previous_remove, "4.1.0");
    apply_all(
        &mut graph,
        &graph_data(&[("blocked-edges/4.1.2-R.yaml", &risk("4.1.2", "4[.]1[.]1", "R"))]),
    );
    let conditional: Vec<String> = graph.conditional_edges()[0]
        .edges
        .iter()
        .map(|edge| format!("{}", edge.from))
        .collect();
    assert_eq!(conditional, ["4.1.1+amd64"]);
    assert_eq!(graph.edge_count(), 0);
}

#[test]
fn without_conditional_edges_risky_updates_are_only_removed() {
    let mut graph = graph(&AMD_AND_S390X, &[("4.1.0+amd64", "4.1.2+amd64")]);
    let data = graph_data(&[("blocked-edges/4.1.2-R.yaml", &risk("4.1.2", ".*", "R"))]);
    apply_graph_data(&mut graph, &data, &keys(), ANY_TIME);
    let rules = EdgeRules {
        include_conditional_edges: false,
        ..EdgeRules::default()
    };
    apply_edge_instructions(&mut graph, Some(&data), &rules).unwrap();
    assert_eq!(graph.edge_count(), 0);
    assert!(graph.conditional_edges().is_empty());
}

#[test]
fn release_remove_drops_the_release_and_conditional_edges_touching_it() {
    let edges = [("4.1.0+amd64", "4.1.2+amd64"), ("4.1.1+amd64", "4.1.2+amd64")];
    let mut graph = graph(&AMD_AND_S390X, &edges);
    apply_all(
        &mut graph,
        &graph_data(&[("blocked-edges/4.1.2-R.yaml", &risk("4.1.2", ".*", "R"))]),
    );
    assert_eq!(graph.conditional_edges()[0].edges.len(), 2);
    set(&mut graph, "4.1.0+amd64", &keys().release_remove, "true");
    set(&mut graph, "4.1.1+amd64", &keys().release_remove, "yes");
    assert_eq!(remove_flagged_releases(&mut graph, &keys()), 1);
    assert!(graph.find(&v("4.1.0+amd64")).is_none());
    let remaining: Vec<String> = graph.conditional_edges()[0]
        .edges
        .iter()
        .map(|e| e.from.to_string())
        .collect();
    assert_eq!(remaining, ["4.1.1+amd64"]);
}

#[test]
fn output_does_not_depend_on_insertion_order() {
    let data = graph_data(&[
        ("blocked-edges/4.1.2-A.yaml", &risk("4.1.2", ".*", "A")),
        ("blocked-edges/4.1.2-B.yaml", &risk("4.1.2", "4[.]1[.]0", "B")),
    ]);
    let edges = [
        ("4.1.0+amd64", "4.1.2+amd64"),
        ("4.1.1+amd64", "4.1.2+amd64"),
        ("4.1.0+s390x", "4.1.2+s390x"),
    ];
    let mut forward = graph(&AMD_AND_S390X, &edges);
    let reversed_releases: Vec<&str> = AMD_AND_S390X.iter().rev().copied().collect();
    let reversed_edges: Vec<_> = edges.iter().rev().copied().collect();
    let mut backward = graph(&reversed_releases, &reversed_edges);
    apply_all(&mut forward, &data);
    apply_all(&mut backward, &data);
    assert_eq!(wire::serialize(&forward, None), wire::serialize(&backward, None));
    assert_eq!(forward.conditional_edges(), backward.conditional_edges());
}
