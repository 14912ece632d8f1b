//! What a graph-data change must pass before it merges
//! (`Strictness::pre_merge`, `cincinnati graph-data check`): every rule of
//! graph-data's own CI (`hack/validate-blocked-edges.py`, and the upstream
//! loader with every `disallowed_errors` class), and the slips no validator
//! there catches that change what clusters see. One test per rule, each on a
//! copy of the bundled graph-data (`testdata/graph-data`) broken in one
//! place, naming the kind, the file and the line.

use std::path::PathBuf;

use openshift_graph_data::apply::unmatched;
use openshift_graph_data::{
    Diagnostic, DiagnosticKind, GraphData, GraphDataFiles, Location, Severity, Strictness,
};
use release_set_generator::{Settings, present_day_graph, testdata_graph_data};

use crate::support::write_published;

/// A copy of the bundled graph-data (every file the loader reads), to break.
struct Copy {
    dir: tempfile::TempDir,
}

impl Copy {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        write_published(
            &GraphDataFiles::from_dir(&testdata_graph_data()).unwrap(),
            dir.path(),
        );
        Self { dir }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    fn write(&self, relative: &str, text: &str) {
        std::fs::write(self.path(relative), text).unwrap();
    }

    /// Replaces the one occurrence of `from` in the file with `to`.
    fn replace(&self, relative: &str, from: &str, to: &str) {
        let text = self.read(relative);
        assert_eq!(text.matches(from).count(), 1, "{relative}: {from:?} in\n{text}");
        self.write(relative, &text.replacen(from, to, 1));
    }

    fn rename(&self, from: &str, to: &str) {
        std::fs::rename(self.path(from), self.path(to)).unwrap();
    }

    fn files(&self) -> GraphDataFiles {
        GraphDataFiles::from_dir(self.dir.path()).unwrap()
    }

    /// What the pre-merge check reports, errors then warnings.
    fn checked(&self) -> Vec<Diagnostic> {
        loaded(&self.files(), &Strictness::pre_merge())
    }

    /// The pre-merge check refuses the copy at `path` and `line` with an
    /// error of `kind`, and only there.
    fn refused_at(&self, kind: DiagnosticKind, path: &str, line: Option<u64>) -> Diagnostic {
        refused_at(&self.checked(), kind, path, line)
    }

    /// [`Copy::refused_at`], and the graph-builder (upstream's rules, our
    /// default) still loads the copy, with a warning of `kind`: graph-data's
    /// CI's rules are not the graph-builder's.
    fn refused_only_before_merge_at(
        &self,
        kind: DiagnosticKind,
        path: &str,
        line: Option<u64>,
    ) -> Diagnostic {
        let error = self.refused_at(kind, path, line);
        let loaded = GraphData::load(&self.files(), &Strictness::default())
            .unwrap_or_else(|refused| panic!("the graph-builder refused it: {refused}"));
        assert!(
            loaded.warnings.iter().any(|warning| warning.kind == kind),
            "{:#?}",
            loaded.warnings
        );
        error
    }
}

fn loaded(files: &GraphDataFiles, strictness: &Strictness) -> Vec<Diagnostic> {
    match GraphData::load(files, strictness) {
        Ok(loaded) => loaded.warnings,
        Err(refused) => refused.errors.into_iter().chain(refused.warnings).collect(),
    }
}

/// `diagnostics` hold an error of `kind` at `path` and `line`, and nothing
/// outside `path`: breaking one file refuses that file only.
fn refused_at(diagnostics: &[Diagnostic], kind: DiagnosticKind, path: &str, line: Option<u64>) -> Diagnostic {
    let location = Location::file(path, line);
    let found = diagnostics
        .iter()
        .find(|diagnostic| diagnostic.kind == kind && diagnostic.location == location)
        .unwrap_or_else(|| panic!("no {kind:?} at {location}: {diagnostics:#?}"));
    assert_eq!(found.severity, Severity::Error, "{found}");
    for diagnostic in diagnostics {
        assert!(
            matches!(&diagnostic.location, Location::File { path: at, .. } if at == path),
            "{diagnostic}"
        );
    }
    found.clone()
}

const ALWAYS_RISK: &str = "blocked-edges/4.10.10-parallel-ceph_fsync.yaml";
const PROMQL_RISK: &str = "blocked-edges/4.11.0-KeepalivedMulticastSkew.yaml";
/// The only file declaring its risk.
const LONE_RISK: &str = "blocked-edges/4.11.2-PodmanTermStorageCorruption.yaml";
const BLOCK: &str = "blocked-edges/4.1.1.yaml";
const CHANNEL: &str = "channels/stable-4.16.yaml";

#[test]
fn the_bundled_graph_data_passes_clean() {
    let files = GraphDataFiles::from_dir(&testdata_graph_data()).unwrap();
    assert_eq!(loaded(&files, &Strictness::pre_merge()), []);
}

#[test]
fn the_test_files_are_what_the_tests_take_them_for() {
    let copy = Copy::new();
    assert!(copy.read(ALWAYS_RISK).contains("- type: Always\n"));
    assert!(
        copy.read(PROMQL_RISK)
            .contains("- type: PromQL\n  promql:\n    promql:\n")
    );
    let lone = copy.read(LONE_RISK);
    let name = lone.lines().find_map(|line| line.strip_prefix("name: ")).unwrap();
    let declaring = std::fs::read_dir(copy.path("blocked-edges"))
        .unwrap()
        .filter(|entry| {
            let text = std::fs::read_to_string(entry.as_ref().unwrap().path()).unwrap();
            text.lines().any(|line| line == format!("name: {name}"))
        })
        .count();
    assert_eq!(declaring, 1, "{name}");
    assert_eq!(copy.read(BLOCK), "to: 4.1.1\nfrom: .*\n");
}

// Blocked edges: what every file needs (enforced before graph-data's CI's
// rules were added; now each with its line).

#[test]
fn a_blocked_edge_without_to_is_refused() {
    let copy = Copy::new();
    copy.write(BLOCK, "from: .*\n");
    copy.refused_at(DiagnosticKind::Syntax, BLOCK, Some(1));
}

#[test]
fn a_blocked_edge_without_from_is_refused() {
    let copy = Copy::new();
    copy.write(BLOCK, "to: 4.1.1\n");
    copy.refused_at(DiagnosticKind::Syntax, BLOCK, Some(1));
}

// Risks: name, url, message.

#[test]
fn a_risk_name_that_is_not_camel_case_is_refused() {
    let copy = Copy::new();
    copy.replace(LONE_RISK, "name: PodmanTerm", "name: podmanTerm");
    let error = copy.refused_only_before_merge_at(DiagnosticKind::InvalidRiskName, LONE_RISK, Some(4));
    assert!(error.message.contains("CamelCase"), "{error}");
}

#[test]
fn a_risk_name_with_a_space_is_refused() {
    let copy = Copy::new();
    copy.replace(LONE_RISK, "name: PodmanTerm", "name: Podman Term");
    copy.refused_at(DiagnosticKind::InvalidRiskName, LONE_RISK, Some(4));
}

#[test]
fn a_risk_name_yaml_reads_as_a_boolean_is_refused_unless_quoted() {
    let copy = Copy::new();
    let name = copy.read(LONE_RISK);
    let name = name.lines().find(|line| line.starts_with("name: ")).unwrap();
    copy.replace(LONE_RISK, name, "name: Yes");
    let error = copy.refused_at(DiagnosticKind::InvalidRiskName, LONE_RISK, Some(4));
    assert!(error.message.contains("not a string"), "{error}");

    copy.replace(LONE_RISK, "name: Yes", "name: 'Yes'");
    assert_eq!(copy.checked(), []);
}

#[test]
fn a_risk_url_that_is_not_https_is_refused() {
    let copy = Copy::new();
    copy.replace(LONE_RISK, "url: https://", "url: http://");
    let error = copy.refused_only_before_merge_at(DiagnosticKind::InvalidRiskUrl, LONE_RISK, Some(3));
    assert!(error.message.contains("https://"), "{error}");
}

#[test]
fn a_risk_message_that_is_not_a_string_is_refused() {
    let copy = Copy::new();
    let text = copy.read(LONE_RISK);
    let (head, rest) = text.split_once("message:").unwrap();
    let rules = &rest[rest.find("matchingRules:").unwrap()..];
    copy.write(LONE_RISK, &format!("{head}message: 42\n{rules}"));
    copy.refused_only_before_merge_at(DiagnosticKind::InvalidRiskMessage, LONE_RISK, Some(5));
}

// Risks: matchingRules.

#[test]
fn a_risk_without_matching_rules_is_refused() {
    let copy = Copy::new();
    let text = copy.read(LONE_RISK);
    copy.write(LONE_RISK, &text[..text.find("matchingRules:").unwrap()]);
    let error = copy.refused_at(DiagnosticKind::Syntax, LONE_RISK, Some(3));
    assert!(error.message.contains("matchingRules"), "{error}");
}

#[test]
fn a_risk_with_empty_matching_rules_is_refused() {
    let copy = Copy::new();
    copy.write(
        ALWAYS_RISK,
        &copy
            .read(ALWAYS_RISK)
            .replace("matchingRules:\n- type: Always\n", "matchingRules: []\n"),
    );
    copy.refused_at(DiagnosticKind::Syntax, ALWAYS_RISK, Some(3));
}

#[test]
fn a_matching_rule_without_a_type_is_refused() {
    let copy = Copy::new();
    copy.replace(ALWAYS_RISK, "- type: Always", "- kind: Always");
    let error = copy.refused_at(DiagnosticKind::Syntax, ALWAYS_RISK, Some(8));
    assert!(error.message.contains("matchingRules[0]"), "{error}");
}

#[test]
fn a_matching_rule_type_listed_twice_is_refused() {
    let copy = Copy::new();
    copy.replace(LONE_RISK, "- type: Always\n", "- type: Always\n- type: Always\n");
    let line = line_of(&copy.read(LONE_RISK), "- type: Always") + 1;
    let error = copy.refused_only_before_merge_at(DiagnosticKind::InvalidMatchingRule, LONE_RISK, Some(line));
    assert!(error.message.contains("matchingRules[1]"), "{error}");
}

#[test]
fn an_unknown_matching_rule_type_is_refused_and_served_by_the_graph_builder() {
    let copy = Copy::new();
    copy.replace(LONE_RISK, "- type: Always", "- type: Sometimes");
    let line = line_of(&copy.read(LONE_RISK), "- type: Sometimes");
    let error = copy.refused_only_before_merge_at(DiagnosticKind::InvalidMatchingRule, LONE_RISK, Some(line));
    assert!(error.message.contains("Sometimes"), "{error}");
}

#[test]
fn an_always_rule_with_other_keys_is_refused() {
    let copy = Copy::new();
    copy.replace(ALWAYS_RISK, "- type: Always\n", "- type: Always\n  promql: {}\n");
    let error = copy.refused_at(DiagnosticKind::InvalidMatchingRule, ALWAYS_RISK, Some(8));
    assert!(error.message.contains("`promql`"), "{error}");
}

#[test]
fn a_promql_rule_without_a_query_is_refused() {
    for (without, promql) in [("promql", "  promql:\n"), ("promql.promql", "    promql:\n")] {
        let copy = Copy::new();
        let text = copy.read(PROMQL_RISK);
        copy.write(PROMQL_RISK, &text[..text.find(promql).unwrap()]);
        let error = copy.refused_at(DiagnosticKind::Syntax, PROMQL_RISK, Some(8));
        assert!(
            error.message.contains("promql.promql"),
            "without {without}: {error}"
        );
    }
}

#[test]
fn a_promql_query_that_is_not_a_string_is_refused() {
    let copy = Copy::new();
    let text = copy.read(PROMQL_RISK);
    copy.write(
        PROMQL_RISK,
        &format!("{}    promql: 42\n", &text[..text.find("    promql:\n").unwrap()]),
    );
    copy.refused_at(DiagnosticKind::Syntax, PROMQL_RISK, Some(8));
}

#[test]
fn a_promql_rule_with_other_keys_is_refused() {
    for (key, replacement) in [
        ("`severity`", "  severity: high\n  promql:\n    promql:\n"),
        ("`timeout`", "  promql:\n    timeout: 5m\n    promql:\n"),
    ] {
        let copy = Copy::new();
        copy.replace(PROMQL_RISK, "  promql:\n    promql:\n", replacement);
        let error = copy.refused_at(DiagnosticKind::InvalidMatchingRule, PROMQL_RISK, Some(8));
        assert!(error.message.contains(key), "{error}");
    }
}

// Risks across files.

#[test]
fn a_risk_in_a_file_not_named_for_its_target_is_refused() {
    let copy = Copy::new();
    let misplaced = "blocked-edges/4.11.3-PodmanTermStorageCorruption.yaml";
    copy.rename(LONE_RISK, misplaced);
    let error = copy.refused_only_before_merge_at(DiagnosticKind::MisplacedRisk, misplaced, Some(1));
    assert!(error.message.contains("4.11.2-<Name>.yaml"), "{error}");
}

#[test]
fn a_risk_declared_otherwise_than_in_its_other_files_is_refused_there() {
    for (key, from, to) in [
        (
            "`message`",
            "message: |-\n",
            "message: |-\n  Also, something else.\n",
        ),
        ("`url`", "url: https://", "url: https://example.com/"),
        (
            "`matchingRules`",
            "- type: Always\n",
            "- type: PromQL\n  promql:\n    promql: vector(1)\n",
        ),
        ("`autoExtend`", "matchingRules:", "autoExtend: {}\nmatchingRules:"),
    ] {
        let copy = Copy::new();
        // 4.10.10 sorts first of the files declaring CephParallelFsync, the
        // others agree with each other: the one changed is blamed.
        copy.replace(ALWAYS_RISK, from, to);
        // At the key's line.
        let line = line_of(&copy.read(ALWAYS_RISK), &format!("{}:", key.trim_matches('`')));
        let error = copy.refused_only_before_merge_at(DiagnosticKind::DivergentRisk, ALWAYS_RISK, Some(line));
        assert!(error.message.contains(key), "{error}");
        assert!(error.message.contains("and 11 more files"), "{error}");
    }
}

#[test]
fn a_yml_file_in_blocked_edges_is_refused() {
    let copy = Copy::new();
    let yml = "blocked-edges/4.1.1.yml";
    copy.rename(BLOCK, yml);
    copy.refused_only_before_merge_at(DiagnosticKind::YmlExtension, yml, None);
}

#[test]
fn a_file_not_named_yaml_in_blocked_edges_is_refused() {
    for (name, kind) in [
        ("blocked-edges/README", DiagnosticKind::MissingExtension),
        ("blocked-edges/4.1.1.txt", DiagnosticKind::InvalidExtension),
        ("blocked-edges/.gitkeep", DiagnosticKind::InvalidExtension),
    ] {
        let copy = Copy::new();
        copy.write(name, "");
        copy.refused_only_before_merge_at(kind, name, None);
    }
}

// Channels: not checked by graph-data's CI, but each changes what clusters see.

#[test]
fn a_channel_named_otherwise_than_its_file_is_refused() {
    let copy = Copy::new();
    copy.replace(CHANNEL, "name: stable-4.16\n", "name: stable-4.61\n");
    let error = copy.refused_only_before_merge_at(DiagnosticKind::ChannelNameMismatch, CHANNEL, Some(1));
    assert!(error.message.contains("stable-4.61"), "{error}");
}

#[test]
fn a_version_listed_twice_in_a_channel_is_refused() {
    let copy = Copy::new();
    let text = copy.read(CHANNEL);
    copy.write(CHANNEL, &format!("{text}- 4.16.3\n"));
    let line = text.lines().count() as u64 + 1;
    let error =
        copy.refused_only_before_merge_at(DiagnosticKind::DuplicateChannelVersion, CHANNEL, Some(line));
    let first = line_of(&text, "- 4.16.3");
    assert!(error.message.contains(&format!("at line {first}")), "{error}");
}

// Against releases.

/// What checking against the present-day release set reports that it does
/// not report for the bundled graph-data (which names releases the set,
/// built from its channels, does not have).
fn newly_unmatched(copy: &Copy) -> Vec<Diagnostic> {
    let releases = present_day_graph(&Settings::default()).unwrap();
    let reported = |files: &GraphDataFiles| {
        let loaded = GraphData::load(files, &Strictness::pre_merge()).unwrap();
        unmatched(&releases, &loaded.graph_data, &Strictness::pre_merge())
    };
    let before = reported(&GraphDataFiles::from_dir(&testdata_graph_data()).unwrap());
    let mut after = reported(&copy.files());
    after.retain(|diagnostic| !before.contains(diagnostic));
    after
}

#[test]
fn a_blocked_edge_to_no_release_is_refused_against_releases() {
    let copy = Copy::new();
    copy.replace(LONE_RISK, "to: 4.11.2\n", "to: 4.11.999\n");
    let copy_to = "blocked-edges/4.11.999-PodmanTermStorageCorruption.yaml";
    copy.rename(LONE_RISK, copy_to);
    let found = newly_unmatched(&copy);
    assert_eq!(found.len(), 1, "{found:#?}");
    refused_at(&found, DiagnosticKind::UnmatchedTarget, copy_to, Some(1));
}

#[test]
fn a_from_matching_no_release_is_refused_against_releases() {
    let copy = Copy::new();
    copy.replace(LONE_RISK, "from: ", "from: 9[.]99[.]|");
    let found = newly_unmatched(&copy);
    // The pattern still matches what it did: changing it to match nothing.
    assert_eq!(found, []);
    let text = copy.read(LONE_RISK);
    let from = text.lines().find(|line| line.starts_with("from: ")).unwrap();
    copy.replace(LONE_RISK, from, "from: ^9[.]99[.]");
    let found = newly_unmatched(&copy);
    refused_at(&found, DiagnosticKind::UnmatchedFrom, LONE_RISK, Some(2));
    assert_eq!(found.len(), 1, "{found:#?}");
}

#[test]
fn a_channel_version_of_no_release_is_refused_against_releases() {
    let copy = Copy::new();
    let text = copy.read(CHANNEL);
    copy.write(CHANNEL, &format!("{text}- 4.16.999\n"));
    let found = newly_unmatched(&copy);
    let line = text.lines().count() as u64 + 1;
    refused_at(
        &found,
        DiagnosticKind::UnmatchedChannelVersion,
        CHANNEL,
        Some(line),
    );
}

/// The 1-based line of the first line of `text` starting with `start`.
fn line_of(text: &str, start: &str) -> u64 {
    let index = text.lines().position(|line| line.starts_with(start)).unwrap();
    index as u64 + 1
}
