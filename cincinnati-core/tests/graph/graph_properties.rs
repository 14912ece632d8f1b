//! The graph's invariants under random changes, and round trips through the
//! wire format.

use cincinnati_core::graph::{Graph, GraphError};
use cincinnati_core::{ConditionalEdge, EdgeEndpoints, MatchingRule, Release, Risk, Version, wire};
use petgraph::algo::toposort;
use petgraph::graph::DiGraph;
use proptest::prelude::*;

fn version(n: u8) -> Version {
    Version::parse(&format!("4.{}.{}+amd64", n / 16, n % 16)).unwrap()
}

#[derive(Debug, Clone)]
enum Change {
    AddRelease(u8),
    RemoveRelease(u8),
    AddEdge(u8, u8),
    RemoveEdge(u8, u8),
}

fn change() -> impl Strategy<Value = Change> {
    let n = 0u8..24;
    prop_oneof![
        3 => n.clone().prop_map(Change::AddRelease),
        1 => n.clone().prop_map(Change::RemoveRelease),
        6 => (n.clone(), n.clone()).prop_map(|(a, b)| Change::AddEdge(a, b)),
        1 => (n.clone(), n).prop_map(|(a, b)| Change::RemoveEdge(a, b)),
    ]
}

/// Asserts the invariants: acyclic, lookups agree with contents, no dangling
/// handles.
fn assert_invariants(graph: &Graph) {
    let mut copy = DiGraph::<(), ()>::new();
    let ids: Vec<_> = graph.releases().map(|(id, _)| id).collect();
    let nodes: Vec<_> = ids.iter().map(|_| copy.add_node(())).collect();
    let position = |id| {
        ids.iter()
            .position(|&known| known == id)
            .expect("edge to a known release")
    };
    for (from, to) in graph.edges() {
        copy.add_edge(nodes[position(from)], nodes[position(to)], ());
    }
    assert!(toposort(&copy, None).is_ok(), "the graph has a cycle");
    for (id, release) in graph.releases() {
        assert_eq!(graph.find(&release.version), Some(id));
    }
}

fn apply(graph: &mut Graph, change: &Change) {
    match *change {
        Change::AddRelease(n) => {
            let existed = graph.find(&version(n)).is_some();
            let result =
                graph.add_release(Release::concrete(version(n), format!("p{n}"), Default::default()));
            assert_eq!(result.is_err(), existed, "only a known version is refused");
        }
        Change::RemoveRelease(n) => {
            if let Some(id) = graph.find(&version(n)) {
                assert_eq!(graph.remove_release(id).unwrap().version, version(n));
                assert_eq!(graph.find(&version(n)), None);
            }
        }
        Change::AddEdge(a, b) => {
            let (Some(from), Some(to)) = (graph.find(&version(a)), graph.find(&version(b))) else {
                return;
            };
            match graph.add_edge(from, to) {
                Ok(_) => assert!(graph.has_edge(from, to)),
                Err(GraphError::SelfLoop(_)) => assert_eq!(a, b),
                Err(GraphError::Cycle(cycle)) => {
                    // The named cycle is real: it starts at `to`, ends at `from`
                    // then `to`, and follows existing edges.
                    let versions = &cycle.cycle;
                    assert_eq!(versions.first(), Some(&version(b)));
                    assert_eq!(versions.last(), Some(&version(b)));
                    assert_eq!(versions[versions.len() - 2], version(a));
                    for pair in versions[..versions.len() - 1].windows(2) {
                        let (x, y) = (graph.find(&pair[0]).unwrap(), graph.find(&pair[1]).unwrap());
                        assert!(graph.has_edge(x, y), "{} -> {} is not an edge", pair[0], pair[1]);
                    }
                    assert!(!graph.has_edge(from, to));
                }
                Err(other) => panic!("unexpected {other}"),
            }
        }
        Change::RemoveEdge(a, b) => {
            if let (Some(from), Some(to)) = (graph.find(&version(a)), graph.find(&version(b))) {
                let existed = graph.has_edge(from, to);
                assert_eq!(graph.remove_edge(from, to), existed);
                assert!(!graph.has_edge(from, to));
            }
        }
    }
}

/// A graph made by random changes, with conditional edges in groups of a
/// risk each. A graph lists each update in one conditional entry at most (as
/// graph-data's resolution makes it): views of it must keep that.
fn graph_with_risks() -> impl Strategy<Value = Graph> {
    (
        prop::collection::vec(change(), 1..120),
        prop::collection::vec(prop::collection::vec((0u8..24, 0u8..24), 0..4), 0..6),
    )
        .prop_map(|(changes, conditional)| {
            let mut graph = Graph::new();
            for change in &changes {
                apply(&mut graph, change);
            }
            let mut listed = std::collections::HashSet::new();
            *graph.conditional_edges_mut() = conditional
                .iter()
                .enumerate()
                .map(|(n, edges)| ConditionalEdge {
                    edges: edges
                        .iter()
                        .filter(|&&edge| listed.insert(edge))
                        .map(|&(a, b)| EdgeEndpoints::new(version(a), version(b)))
                        .collect(),
                    risks: vec![Risk {
                        url: "u".to_owned(),
                        name: format!("R{n}"),
                        message: "m".to_owned(),
                        matching_rules: vec![MatchingRule::Always],
                    }],
                })
                .collect();
            graph
        })
}

/// Whether `version` is among those `mask` picks (one bit per version, as
/// [`version`] numbers them, modulo 32).
fn in_mask(mask: u32, version: &Version) -> bool {
    mask & (1 << ((version.minor * 16 + version.patch) % 32)) != 0
}

fn risk(name: &str) -> Risk {
    Risk {
        url: format!("https://example.com/{name}"),
        name: name.to_owned(),
        message: format!("{name} \"may\" break\nthings"),
        matching_rules: vec![
            MatchingRule::PromQl {
                promql: "up == 1".into(),
            },
            MatchingRule::Always,
        ],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_changes_keep_the_graph_acyclic(changes in prop::collection::vec(change(), 1..120)) {
        let mut graph = Graph::new();
        for change in &changes {
            apply(&mut graph, change);
            assert_invariants(&graph);
        }
    }

    #[test]
    fn serialise_then_parse_is_the_identity(
        changes in prop::collection::vec(change(), 1..120),
        conditional in prop::collection::vec((0u8..24, 0u8..24, 0usize..3), 0..10),
    ) {
        let mut graph = Graph::new();
        for change in &changes {
            apply(&mut graph, change);
        }
        *graph.conditional_edges_mut() = conditional
            .iter()
            .map(|&(from, to, risks)| ConditionalEdge {
                edges: vec![EdgeEndpoints::new(version(from), version(to))],
                risks: (0..risks).map(|n| risk(&format!("Risk{n}"))).collect(),
            })
            .collect();
        let bytes = wire::serialize(&graph, None);
        let parsed = wire::parse(&bytes).unwrap().graph;
        prop_assert_eq!(&parsed, &graph);
        prop_assert_eq!(wire::serialize(&parsed, None), bytes);
    }

    #[test]
    fn retain_releases_keeps_exactly_the_edges_between_kept_releases(
        changes in prop::collection::vec(change(), 1..120),
        keep_mask in any::<u32>(),
    ) {
        let mut graph = Graph::new();
        for change in &changes {
            apply(&mut graph, change);
        }
        let keep = |v: &Version| in_mask(keep_mask, v);
        let expected_edges: Vec<(Version, Version)> = graph
            .edges()
            .map(|(a, b)| (graph.release(a).unwrap().version.clone(), graph.release(b).unwrap().version.clone()))
            .filter(|(a, b)| keep(a) && keep(b))
            .collect();
        let mut filtered = graph.clone();
        filtered.retain_releases(|release| keep(&release.version));
        assert_invariants(&filtered);
        prop_assert_eq!(filtered.edge_count(), expected_edges.len());
        for (a, b) in expected_edges {
            prop_assert!(filtered.has_edge(filtered.find(&a).unwrap(), filtered.find(&b).unwrap()));
        }
        prop_assert!(filtered.releases().all(|(_, release)| keep(&release.version)));
    }

    #[test]
    fn a_subgraph_is_the_graph_filtered_in_place(
        graph in graph_with_risks(),
        keep_mask in any::<u32>(),
    ) {
        let keep = |v: &Version| in_mask(keep_mask, v);
        let mut in_place = graph.clone();
        in_place.retain_releases(|release| keep(&release.version));
        let kept = |version: &Version| in_place.find(version).is_some();
        let mut expected = in_place.clone();
        expected.retain_conditional_edges(|edge| kept(&edge.from) && kept(&edge.to));

        let subgraph = graph.subgraph(|release| keep(&release.version));
        assert_invariants(&subgraph);
        prop_assert_eq!(&subgraph, &expected);
        prop_assert_eq!(wire::serialize(&subgraph, None), wire::serialize(&expected, None));
    }
}

proptest! {
    #[test]
    fn views_of_one_graph_merge_into_what_either_has(
        graph in graph_with_risks(),
        mask_a in any::<u32>(),
        mask_b in any::<u32>(),
    ) {
        let (a, b) = (
            graph.subgraph(|release| in_mask(mask_a, &release.version)),
            graph.subgraph(|release| in_mask(mask_b, &release.version)),
        );
        let mut merged = a.clone();
        merged.merge(&b).unwrap();
        assert_invariants(&merged);

        let in_either = |v: &Version| in_mask(mask_a, v) || in_mask(mask_b, v);
        let within_one = |from: &Version, to: &Version| {
            (in_mask(mask_a, from) && in_mask(mask_a, to)) || (in_mask(mask_b, from) && in_mask(mask_b, to))
        };
        prop_assert_eq!(
            merged.release_count(),
            graph.releases().filter(|(_, release)| in_either(&release.version)).count()
        );
        let name = |g: &Graph, id| g.release(id).unwrap().version.clone();
        let expected_edges: Vec<(Version, Version)> = graph
            .edges()
            .map(|(from, to)| (name(&graph, from), name(&graph, to)))
            .filter(|(from, to)| within_one(from, to))
            .collect();
        prop_assert_eq!(merged.edge_count(), expected_edges.len());
        for (from, to) in &expected_edges {
            prop_assert!(merged.has_edge(merged.find(from).unwrap(), merged.find(to).unwrap()));
        }
        let mut listed: Vec<&EdgeEndpoints> = merged.conditional_edges().iter().flat_map(|group| &group.edges).collect();
        let count = listed.len();
        listed.sort();
        listed.dedup();
        prop_assert_eq!(listed.len(), count, "no update listed twice");
        let mut expected: Vec<&EdgeEndpoints> = graph
            .conditional_edges()
            .iter()
            .flat_map(|group| &group.edges)
            .filter(|edge| within_one(&edge.from, &edge.to) && graph.find(&edge.from).is_some() && graph.find(&edge.to).is_some())
            .collect();
        expected.sort();
        expected.dedup();
        prop_assert_eq!(listed, expected);
    }
}

#[test]
fn cycle_error_names_the_whole_cycle() {
    let mut graph = Graph::new();
    let ids: Vec<_> = (0..3)
        .map(|n| graph.add_release(Release::abstract_release(version(n))).unwrap())
        .collect();
    graph.add_edge(ids[0], ids[1]).unwrap();
    graph.add_edge(ids[1], ids[2]).unwrap();
    let error = graph.add_edge(ids[2], ids[0]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "update edges would form a cycle: 4.0.0+amd64 -> 4.0.1+amd64 -> 4.0.2+amd64 -> 4.0.0+amd64"
    );
    assert_eq!(
        graph.add_edge(ids[0], ids[1]),
        Ok(false),
        "an existing edge is not added twice"
    );
}

#[test]
fn conditional_groups_that_lose_all_edges_are_dropped() {
    let mut graph = Graph::new();
    let edge = |a, b| EdgeEndpoints::new(version(a), version(b));
    *graph.conditional_edges_mut() = vec![
        ConditionalEdge {
            edges: vec![edge(0, 1), edge(0, 2)],
            risks: vec![risk("A")],
        },
        ConditionalEdge {
            edges: vec![edge(1, 2)],
            risks: vec![risk("B")],
        },
        ConditionalEdge {
            edges: vec![],
            risks: vec![risk("C")],
        },
    ];
    graph.retain_conditional_edges(|edge| *edge.to != version(2));
    let names: Vec<_> = graph
        .conditional_edges()
        .iter()
        .map(|group| group.risks[0].name.as_str())
        .collect();
    assert_eq!(names, ["A", "C"]);
    assert_eq!(graph.conditional_edges()[0].edges, [edge(0, 1)]);
}

#[test]
fn renaming_a_release_keeps_lookups_right() {
    let mut graph = Graph::new();
    let a = graph.add_release(Release::abstract_release(version(1))).unwrap();
    let b = graph.add_release(Release::abstract_release(version(2))).unwrap();
    let plain = Version::parse("4.0.1").unwrap();
    graph.set_version(a, plain.clone()).unwrap();
    assert_eq!(graph.find(&plain), Some(a));
    assert_eq!(graph.find(&version(1)), None);
    assert_eq!(
        graph.set_version(b, plain.clone()),
        Err(GraphError::DuplicateVersion(plain))
    );
}

#[test]
fn graphs_can_be_shared_across_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Graph>();
}
