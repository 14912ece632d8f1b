//! Today's graph-data (testdata/graph-data) on a present-day-sized release
//! set generated from its own channels.

mod common;

use std::collections::BTreeSet;

use common::{Context, edge_names, expected, load_dir, parse_then_edges};
use openshift_graph_data::{DiagnosticKind, Location};
use release_set_generator::{Settings, present_day_graph, testdata_graph_data};

#[test]
fn todays_graph_data_loads_without_a_problem() {
    let (graph_data, warnings) = load_dir(&testdata_graph_data());
    assert!(warnings.is_empty(), "{warnings:#?}");
    assert_eq!(graph_data.channels().len(), 76);
    assert_eq!(graph_data.blocks().len() + graph_data.risks().len(), 1717);
    assert_eq!(graph_data.risks().len(), 1601);
    assert_eq!(graph_data.schema_version().to_string(), "1.1.0");
}

#[test]
fn conditional_edges_match_the_risk_files() {
    let dir = testdata_graph_data();
    let (graph_data, _) = load_dir(&dir);
    let releases = present_day_graph(&Settings::default()).unwrap();
    let mut graph = releases.clone();
    let context = Context::with(graph_data);
    parse_then_edges().run(&mut graph, &context).unwrap();

    // raw/metadata.json only adds updates between 4.1 releases, which the
    // generated set does not have, so the updates before removals are the
    // generated ones.
    let expected_groups = expected::conditional_groups(&dir, &releases);
    let actual_groups = expected::actual_groups(&graph);
    assert_eq!(actual_groups.len(), expected_groups.len());
    assert_eq!(actual_groups, expected_groups);

    let conditional: BTreeSet<_> = actual_groups.values().flatten().collect();
    let unconditional: BTreeSet<_> = edge_names(&graph).into_iter().collect();
    assert!(
        conditional.len() > 30_000,
        "{} conditional updates",
        conditional.len()
    );
    assert!(conditional.iter().all(|edge| !unconditional.contains(*edge)));

    // Channels list releases of 4.1, which the generated set starts after.
    let reported = context.reported();
    for warning in &reported {
        assert_eq!(warning.kind, DiagnosticKind::UnmatchedChannelVersion, "{warning}");
        assert!(warning.message.starts_with("4.1."), "{warning}");
        assert!(
            matches!(&warning.location, Location::File { path, line: Some(_) } if path.starts_with("channels/"))
        );
    }
}

#[test]
fn every_unconditional_block_removes_its_updates() {
    let (graph_data, _) = load_dir(&testdata_graph_data());
    let mut graph = present_day_graph(&Settings::default()).unwrap();
    parse_then_edges()
        .run(&mut graph, &Context::with(graph_data.clone()))
        .unwrap();
    let updates: Vec<(String, cincinnati_core::Version)> = edge_names(&graph)
        .into_iter()
        .map(|(from, to)| (from, common::v(&to)))
        .collect();
    for block in graph_data.blocks() {
        for (from, to) in &updates {
            assert!(
                !(block.to.matches(to) && block.from.regex.is_match(from)),
                "{from} -> {to} survived {}",
                block.origin.path
            );
        }
    }
}
