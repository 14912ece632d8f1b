//! Today's graph-data (testdata/graph-data) on a present-day-sized release
//! set generated from its own channels.

use std::collections::BTreeSet;

use cincinnati_core::Release;
use openshift_graph_data::apply::{apply_with_defaults, apply_with_defaults_to};
use openshift_graph_data::{DiagnosticKind, Location};
use release_set_generator::{Settings, present_day_graph, testdata_graph_data};

use crate::support::{ANY_TIME, Context, edge_names, expected, load_dir, parse_then_edges};

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
        .map(|(from, to)| (from, crate::support::v(&to)))
        .collect();
    for block in graph_data.blocks() {
        for (from, to) in &updates {
            assert!(
                !(block.to.matches(to) && block.from.is_match(from)),
                "{from} -> {to} survived {}",
                block.origin.path
            );
        }
    }
}

/// What `cincinnati graph-data preview` relies on: graph-data applied to one
/// architecture's releases leaves them as applying it to every release does,
/// and reports what applying to every release reports about graph-data.
#[test]
fn applying_to_one_architecture_leaves_its_releases_as_applying_to_all_does() {
    let (graph_data, _) = load_dir(&testdata_graph_data());
    let releases = present_day_graph(&Settings::default()).unwrap();
    let mut whole = releases.clone();
    let whole_warnings = apply_with_defaults(&mut whole, &graph_data, ANY_TIME).unwrap();
    assert!(
        !whole_warnings.is_empty(),
        "channels list 4.1 releases, which the generated set starts after"
    );
    for arch in ["amd64", "arm64", "multi", "ppc64le", "s390x"] {
        let of_arch = |release: &Release| release.version.build.as_str() == arch;
        let mut one = releases.clone();
        let warnings = apply_with_defaults_to(&mut one, &graph_data, ANY_TIME, of_arch).unwrap();
        assert!(one.release_count() > 0 && one.release_count() < releases.release_count() / 3);
        assert!(!one.conditional_edges().is_empty(), "{arch}");
        assert!(
            one == whole.subgraph(of_arch),
            "{arch}: not as applying to every release"
        );
        assert_eq!(warnings, whole_warnings, "{arch}");
    }
}

/// An update between architectures (never in a graph-builder's releases)
/// would make one architecture's result depend on another's releases: then
/// the whole graph is applied to.
#[test]
fn an_update_across_architectures_has_the_whole_graph_applied_to() {
    let (graph_data, _) = load_dir(&testdata_graph_data());
    let mut releases = present_day_graph(&Settings::default()).unwrap();
    let find = |graph: &cincinnati_core::Graph, version: &str| {
        graph
            .find(&crate::support::v(version))
            .unwrap_or_else(|| panic!("{version} is generated"))
    };
    let (from, to) = (find(&releases, "4.16.3+amd64"), find(&releases, "4.16.4+arm64"));
    releases.add_edge(from, to).unwrap();
    let mut whole = releases.clone();
    apply_with_defaults(&mut whole, &graph_data, ANY_TIME).unwrap();
    let of_amd64 = |release: &Release| release.version.build.as_str() == "amd64";
    apply_with_defaults_to(&mut releases, &graph_data, ANY_TIME, of_amd64).unwrap();
    assert!(releases == whole);
}

/// A left-out release's edge instruction could fail the graph-builder's
/// build: then the whole graph is applied to, and fails the same way.
#[test]
fn an_edge_instruction_on_a_left_out_release_has_the_whole_graph_applied_to() {
    let (graph_data, _) = load_dir(&testdata_graph_data());
    let mut releases = present_day_graph(&Settings::default()).unwrap();
    let arm64 = releases.find(&crate::support::v("4.16.4+arm64")).unwrap();
    releases
        .metadata_mut(arm64)
        .unwrap()
        .insert("io.openshift.upgrades.graph.previous.remove", "not-a-version");
    let whole = apply_with_defaults(&mut releases.clone(), &graph_data, ANY_TIME).unwrap_err();
    let of_amd64 = |release: &Release| release.version.build.as_str() == "amd64";
    let one = apply_with_defaults_to(&mut releases, &graph_data, ANY_TIME, of_amd64).unwrap_err();
    assert_eq!(one.to_string(), whole.to_string());
}
