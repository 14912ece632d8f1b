//! Malformed graph-data, one test per validation rule: each names the rule,
//! the file and the line, and the rules that lose information refuse the
//! graph-data.

use openshift_graph_data::{
    Diagnostic, DiagnosticKind, GraphData, GraphDataFiles, Location, Refused, Severity, Strictness,
    UpstreamErrorClass,
};

use crate::support::{Context, files, parse_then_edges, v};

const CHANNEL: (&str, &str) = ("channels/fast-4.1.yaml", "name: fast-4.1\nversions:\n- 4.1.0\n");

/// A valid graph-data plus `extra` files (which replace same-named ones).
fn graph_data_with(extra: &[(&str, &str)]) -> GraphDataFiles {
    let mut entries = vec![("version", "1.1.0\n"), ("raw/metadata.json", "{}"), CHANNEL];
    entries.extend_from_slice(extra);
    files(&entries)
}

fn refused(files: GraphDataFiles) -> Refused {
    GraphData::load(&files, &Strictness::default()).expect_err("the graph-data must be refused")
}

fn warnings(files: GraphDataFiles) -> Vec<Diagnostic> {
    GraphData::load(&files, &Strictness::default())
        .unwrap_or_else(|refused| panic!("{refused}"))
        .warnings
}

fn only(diagnostics: &[Diagnostic]) -> &Diagnostic {
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    &diagnostics[0]
}

fn at(path: &str, line: u64) -> Location {
    Location::file(path, Some(line))
}

#[test]
fn a_yaml_error_refuses_naming_file_and_line() {
    let refused = refused(graph_data_with(&[(
        "blocked-edges/4.1.0.yaml",
        "to: 4.1.0\nfrom: [.*\n",
    )]));
    let error = only(&refused.errors);
    assert_eq!(error.kind, DiagnosticKind::Syntax);
    assert!(
        matches!(&error.location, Location::File { path, line: Some(_) } if path == "blocked-edges/4.1.0.yaml")
    );
    assert!(
        refused.to_string().contains("blocked-edges/4.1.0.yaml:"),
        "{refused}"
    );
}

#[test]
fn a_missing_key_refuses() {
    let error = refused(graph_data_with(&[("blocked-edges/4.1.0.yaml", "to: 4.1.0\n")]));
    let error = only(&error.errors);
    assert_eq!(error.kind, DiagnosticKind::Syntax);
    assert!(error.message.contains("from"), "{error}");
}

#[test]
fn an_unknown_key_is_a_warning_at_its_line() {
    let warnings = warnings(graph_data_with(&[(
        "blocked-edges/4.1.0.yaml",
        "to: 4.1.0\nfrom: .*\nfixedIn: 4.1.1\nreason: typo\n",
    )]));
    let warning = only(&warnings);
    assert_eq!(warning.kind, DiagnosticKind::UnknownKey);
    assert_eq!(warning.severity, Severity::Warning);
    assert_eq!(warning.location, at("blocked-edges/4.1.0.yaml", 4));
    assert!(warning.message.contains("`reason`"), "{warning}");
}

#[test]
fn an_invalid_regex_refuses_at_its_line() {
    let refused = refused(graph_data_with(&[(
        "blocked-edges/4.1.0.yaml",
        "to: 4.1.0\nfrom: 4[.1\n",
    )]));
    let error = only(&refused.errors);
    assert_eq!(error.kind, DiagnosticKind::InvalidRegex);
    assert_eq!(error.location, at("blocked-edges/4.1.0.yaml", 2));
}

#[test]
fn a_target_that_is_not_semver_refuses() {
    let refused = refused(graph_data_with(&[(
        "blocked-edges/4.1.yaml",
        "to: 4.1\nfrom: .*\n",
    )]));
    let error = only(&refused.errors);
    assert_eq!(error.kind, DiagnosticKind::InvalidVersion);
    assert_eq!(error.location, at("blocked-edges/4.1.yaml", 1));
}

#[test]
fn a_channel_version_that_is_not_semver_refuses() {
    let refused = refused(graph_data_with(&[(
        "channels/fast-4.1.yaml",
        "name: fast-4.1\nversions:\n- 4.1.0\n- four\n",
    )]));
    let error = only(&refused.errors);
    assert_eq!(error.kind, DiagnosticKind::InvalidVersion);
    assert_eq!(error.location, at("channels/fast-4.1.yaml", 4));
}

#[test]
fn a_channel_version_matching_no_release_is_a_warning_when_applied() {
    let data = GraphData::load(
        &graph_data_with(&[(
            "channels/fast-4.1.yaml",
            "name: fast-4.1\nversions:\n- 4.1.0\n- 4.1.9\n",
        )]),
        &Strictness::default(),
    )
    .unwrap()
    .graph_data;
    let mut graph = cincinnati_core::Graph::new();
    let mut metadata = cincinnati_core::Metadata::new();
    metadata.insert(cincinnati_core::release::keys::ARCH, "amd64");
    graph
        .add_release(cincinnati_core::Release::concrete(
            v("4.1.0+amd64"),
            "p",
            metadata,
        ))
        .unwrap();
    let context = Context::with(data);
    parse_then_edges().run(&mut graph, &context).unwrap();
    let reported = context.reported();
    let warning = only(&reported);
    assert_eq!(warning.kind, DiagnosticKind::UnmatchedChannelVersion);
    assert_eq!(warning.location, at("channels/fast-4.1.yaml", 4));
}

#[test]
fn duplicate_channel_names_refuse() {
    let refused = refused(graph_data_with(&[(
        "channels/other.yaml",
        "name: fast-4.1\nversions: []\n",
    )]));
    let error = only(&refused.errors);
    assert_eq!(error.kind, DiagnosticKind::DuplicateChannel);
    assert!(error.message.contains("channels/fast-4.1.yaml:1"), "{error}");
}

#[test]
fn a_target_listed_in_two_risk_groups_refuses() {
    let risk = "to: 4.1.0\nfrom: FROM\nurl: https://example.com\nname: Leak\nmessage: m\nmatchingRules:\n- type: Always\n";
    let refused = refused(graph_data_with(&[
        (
            "blocked-edges/4.1.0-Leak.yaml",
            &risk.replace("FROM", "4[.]0[.].*"),
        ),
        ("blocked-edges/4.1.0-Leak-more.yaml", &risk.replace("FROM", ".*")),
    ]));
    let error = only(&refused.errors);
    assert_eq!(error.kind, DiagnosticKind::DuplicateRisk);
    assert_eq!(error.location, at("blocked-edges/4.1.0-Leak.yaml", 1));
    assert!(
        error.message.contains("blocked-edges/4.1.0-Leak-more.yaml:1"),
        "{error}"
    );
}

#[test]
fn an_incomplete_risk_refuses() {
    let refused = refused(graph_data_with(&[(
        "blocked-edges/4.1.0-Leak.yaml",
        "to: 4.1.0\nfrom: .*\nname: Leak\nmatchingRules: []\n",
    )]));
    let error = only(&refused.errors);
    assert_eq!(error.kind, DiagnosticKind::Syntax);
    assert!(error.message.contains("url, message, matchingRules"), "{error}");
}

#[test]
fn a_promql_rule_without_a_query_refuses() {
    let refused = refused(graph_data_with(&[(
        "blocked-edges/4.1.0-Leak.yaml",
        "to: 4.1.0\nfrom: .*\nurl: u\nname: Leak\nmessage: m\nmatchingRules:\n- type: PromQL\n",
    )]));
    assert!(
        only(&refused.errors).message.contains("matchingRules[0]"),
        "{refused}"
    );
}

#[test]
fn an_unknown_schema_major_refuses_and_a_newer_minor_warns() {
    let refused = refused(graph_data_with(&[("version", "3.0.0\n")]));
    let error = only(&refused.errors);
    assert_eq!(error.kind, DiagnosticKind::UnsupportedSchema);
    assert_eq!(
        error.to_string(),
        "version:1: error[unsupported_schema]: schema 3.0.0 is not supported: only 1.x and 2.x can be read"
    );

    let warnings = warnings(graph_data_with(&[("version", "1.7.0\n")]));
    assert_eq!(only(&warnings).kind, DiagnosticKind::NewerSchema);
}

#[test]
fn required_files_are_required() {
    let refused = refused(files(&[("raw/metadata.json", "{}")]));
    let kinds: Vec<_> = refused.errors.iter().map(|error| error.kind).collect();
    assert_eq!(
        kinds,
        [DiagnosticKind::MissingFile, DiagnosticKind::MissingFile],
        "version, channels"
    );
}

#[test]
fn invalid_raw_metadata_refuses_at_its_line() {
    let refused = refused(graph_data_with(&[(
        "raw/metadata.json",
        "{\n  \"4.1.0\": {\"k\": 1}\n}\n",
    )]));
    let error = only(&refused.errors);
    assert_eq!(error.kind, DiagnosticKind::Syntax);
    assert_eq!(error.location, at("raw/metadata.json", 2));
}

#[test]
fn stray_files_warn_unless_disallowed() {
    let stray = graph_data_with(&[
        ("blocked-edges/OWNERS", "approvers: []\n"),
        ("channels/notes.txt", ""),
    ]);
    let kinds: Vec<_> = warnings(stray.clone())
        .iter()
        .map(|warning| warning.kind)
        .collect();
    assert_eq!(
        kinds,
        [DiagnosticKind::InvalidExtension, DiagnosticKind::MissingExtension],
        "channels, then blocked edges"
    );

    let strict = Strictness::disallowing([UpstreamErrorClass::MissingExtension]);
    let refused = GraphData::load(&stray, &strict).unwrap_err();
    assert_eq!(only(&refused.errors).kind, DiagnosticKind::MissingExtension);
}

#[test]
fn an_empty_disallowed_errors_skips_broken_files_like_upstream() {
    let broken = graph_data_with(&[("blocked-edges/4.1.0.yaml", "to: 4.1.0\nfrom: [\n")]);
    let loaded = GraphData::load(&broken, &Strictness::disallowing([])).unwrap();
    assert_eq!(only(&loaded.warnings).kind, DiagnosticKind::Syntax);
    assert!(loaded.graph_data.blocks().is_empty());
}

/// Files are parsed side by side, but their problems are listed file by
/// file, in path order: a file's reading and content problems together.
#[test]
fn problems_are_listed_file_by_file() {
    let refused = refused(graph_data_with(&[
        ("blocked-edges/a.yaml", "to: 4.1.0\nfrom: '['\nowner: x\n"),
        ("blocked-edges/b.yaml", "to: 4.1.0\nfrom: [.*\n"),
        ("blocked-edges/c.yaml", "to: not-semver\nfrom: .*\n"),
    ]));
    let errors: Vec<_> = refused
        .errors
        .iter()
        .map(|error| (error.location.clone(), error.kind))
        .collect();
    assert_eq!(
        errors,
        [
            (at("blocked-edges/a.yaml", 2), DiagnosticKind::InvalidRegex),
            (at("blocked-edges/b.yaml", 2), DiagnosticKind::Syntax),
            (at("blocked-edges/c.yaml", 1), DiagnosticKind::InvalidVersion),
        ]
    );
    assert_eq!(only(&refused.warnings).kind, DiagnosticKind::UnknownKey);
}
