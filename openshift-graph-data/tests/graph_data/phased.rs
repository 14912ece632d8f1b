//! Graph-data schema 2.0.0: phased rollouts in channel files (rules and
//! version entries with `start`), read, validated, applied at a moment, and
//! a change judged against the graph-data it replaces.

use cincinnati_core::release::keys;
use cincinnati_core::{ConditionalEdge, EdgeEndpoints, Graph};
use jiff::Timestamp;
use openshift_graph_data::phased::published::PhasedChannels;
use openshift_graph_data::phased::{Standing, moved_rollouts};
use openshift_graph_data::{
    Channel, Diagnostic, DiagnosticKind, GraphData, GraphDataFiles, Location, Refused, Severity, Strictness,
    UpdateKind,
};

use crate::support::{Context, files, graph, parse_then_edges, v};

const CHANNEL_PATH: &str = "channels/stable-4.18.yaml";

/// Graph-data of schema `version` with one channel file, stable-4.18.
fn graph_data(version: &str, channel: &str) -> GraphDataFiles {
    files(&[
        ("version", version),
        ("raw/metadata.json", "{}"),
        (CHANNEL_PATH, channel),
    ])
}

fn load(files: &GraphDataFiles) -> Result<(GraphData, Vec<Diagnostic>), Refused> {
    GraphData::load(files, &Strictness::default()).map(|loaded| (loaded.graph_data, loaded.warnings))
}

fn loaded(files: &GraphDataFiles) -> (GraphData, Vec<Diagnostic>) {
    load(files).unwrap_or_else(|refused| panic!("{refused}"))
}

fn phased_channel(channel: &str) -> Channel {
    let (data, warnings) = loaded(&graph_data("2.0.0\n", channel));
    assert_eq!(warnings, [], "{channel}");
    data.channels()[0].clone()
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn rendered(diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics.iter().map(Diagnostic::to_string).collect()
}

#[test]
fn a_phased_channel_reads_its_rules_and_its_entries() {
    let channel = phased_channel(
        "name: stable-4.18\n\
         versions:\n\
         - 4.18.1\n\
         - name: 4.18.2\n  start: 2025-06-02T09:00:00Z\n\
         - {name: 4.18.3+amd64, start: '2025-06-09T09:00:00+02:00', locked: true}\n\
         phasedRollouts:\n\
         - duration: P14D\n\
         - duration: P2D\n  fromVersion: patch\n",
    );
    let entries: Vec<_> = channel
        .versions
        .iter()
        .map(|entry| (entry.name.to_string(), entry.line, entry.start, entry.locked))
        .collect();
    assert_eq!(
        entries,
        [
            ("4.18.1".to_owned(), 3, None, false),
            ("4.18.2".to_owned(), 4, Some(at("2025-06-02T09:00:00Z")), false),
            (
                "4.18.3+amd64".to_owned(),
                6,
                Some(at("2025-06-09T07:00:00Z")),
                true
            ),
        ]
    );
    let rules: Vec<_> = channel
        .phased_rollouts
        .iter()
        .map(|rule| (rule.criterion.to_string(), rule.duration.as_str(), rule.line))
        .collect();
    assert_eq!(
        rules,
        [
            ("the default (no `fromVersion`)".to_owned(), "P14D", 8),
            ("`fromVersion: patch`".to_owned(), "P2D", 9),
        ]
    );
    assert_eq!(
        channel.phased_window(&v("4.18.1+amd64"), &v("4.18.2+amd64")),
        Some(openshift_graph_data::PhasedWindow {
            start: at("2025-06-02T09:00:00Z"),
            end: at("2025-06-04T09:00:00Z"),
        })
    );
    assert_eq!(
        channel.phased_window(&v("4.18.0+amd64"), &v("4.18.1+amd64")),
        None,
        "no start: not phased"
    );
}

/// Which rule's duration an update gets: (rules, from, to, duration).
#[test]
fn a_rule_for_the_kind_of_update_beats_the_default_and_none_is_zero() {
    let default_and_patch = "- duration: P14D\n- duration: P2D\n  fromVersion: patch\n";
    let patch_then_default = "- duration: P2D\n  fromVersion: patch\n- duration: P14D\n";
    let minor_only = "- duration: P1M\n  fromVersion: minor\n";
    let all_three =
        "- {duration: P3D, fromVersion: minor}\n- {duration: PT12H}\n- {duration: P1D, fromVersion: patch}\n";
    let unknown_and_default = "- {duration: P9D, fromVersion: major}\n- {duration: P1D}\n";
    let unknown_only = "- {duration: P9D, fromVersion: z-stream}\n";
    for (rules, from, to, duration) in [
        (default_and_patch, "4.18.1", "4.18.2", "P2D"),
        (default_and_patch, "4.17.9", "4.18.2", "P14D"),
        (patch_then_default, "4.18.1", "4.18.2", "P2D"),
        (patch_then_default, "4.17.9", "4.18.2", "P14D"),
        (minor_only, "4.17.9", "4.18.2", "P1M"),
        (minor_only, "4.18.1", "4.18.2", "PT0S"),
        (all_three, "4.17.9", "4.18.2", "P3D"),
        (all_three, "4.18.1", "4.18.2", "P1D"),
        (all_three, "3.11.9", "4.18.2", "PT12H"),
        (all_three, "4.18.2-rc.1", "4.18.2", "PT12H"),
        (unknown_and_default, "3.11.9", "4.18.2", "P1D"),
        (unknown_only, "4.18.1", "4.18.2", "PT0S"),
    ] {
        let (data, _) = loaded(&graph_data(
            "2.0.0\n",
            &format!("name: stable-4.18\nversions: [4.18.2]\nphasedRollouts:\n{rules}"),
        ));
        let channel = &data.channels()[0];
        let found = channel.phased_duration(&v(from), &v(to));
        assert_eq!(
            found.fieldwise(),
            duration.parse::<jiff::Span>().unwrap().fieldwise(),
            "{from} → {to} with\n{rules}"
        );
    }
}

#[test]
fn an_unknown_from_version_is_accepted_and_refused_before_a_merge() {
    let files = graph_data(
        "2.0.0\n",
        "name: stable-4.18\nversions: [4.18.2]\nphasedRollouts:\n- duration: P2D\n  fromVersion: pach\n",
    );
    let (_, warnings) = loaded(&files);
    assert_eq!(
        rendered(&warnings),
        [
            "channels/stable-4.18.yaml:5: warning[unknown_rollout_criterion]: `fromVersion: pach` matches no update (known: patch, minor)"
        ]
    );
    let refused = GraphData::load(&files, &Strictness::pre_merge()).unwrap_err();
    assert_eq!(refused.errors[0].kind, DiagnosticKind::UnknownRolloutCriterion);
}

/// The same criterion twice refuses the graph-data, at the second rule,
/// naming the first: (rules, message).
#[test]
fn the_same_criterion_twice_refuses_at_the_second_rule() {
    for (rules, message) in [
        (
            "- duration: P2D\n- duration: P3D\n",
            "a rule for the default (no `fromVersion`) is declared already, at line 4",
        ),
        (
            "- {duration: P2D, fromVersion: patch}\n- duration: P1D\n- {duration: P3D, fromVersion: patch}\n",
            "a rule for `fromVersion: patch` is declared already, at line 4",
        ),
        (
            "- {duration: P2D, fromVersion: major}\n- {duration: P3D, fromVersion: minor}\n- {duration: P3D, fromVersion: major}\n",
            "a rule for `fromVersion: major` is declared already, at line 4",
        ),
    ] {
        let refused = load(&graph_data(
            "2.0.0\n",
            &format!("name: stable-4.18\nversions: [4.18.2]\nphasedRollouts:\n{rules}"),
        ))
        .unwrap_err();
        let duplicates: Vec<_> = refused
            .errors
            .iter()
            .filter(|error| error.kind == DiagnosticKind::DuplicateRolloutCriterion)
            .map(|error| (error.location.clone(), error.message.as_str()))
            .collect();
        let second_line = 3 + rules.lines().count() as u64;
        assert_eq!(
            duplicates,
            [(Location::file(CHANNEL_PATH, Some(second_line)), message)],
            "{rules}"
        );
    }
}

#[test]
fn a_channel_managed_by_two_files_refuses() {
    let refused = load(&files(&[
        ("version", "2.0.0\n"),
        ("raw/metadata.json", "{}"),
        (CHANNEL_PATH, "name: stable-4.18\nversions: [4.18.1]\n"),
        (
            "channels/stable-4.18-phased.yaml",
            "name: stable-4.18\nversions:\n- {name: 4.18.2, start: 2025-06-02T09:00:00Z}\nphasedRollouts:\n- duration: P2D\n",
        ),
    ]))
    .unwrap_err();
    let kinds: Vec<_> = refused.errors.iter().map(|error| error.kind).collect();
    assert_eq!(kinds, [DiagnosticKind::DuplicateChannel], "{refused}");
    assert!(
        refused.errors[0]
            .message
            .contains("also declared in channels/stable-4.18"),
        "{refused}"
    );
}

/// (version file, outcome): the schema decides what channel files may say.
#[test]
fn schema_versions_1_and_2_are_read_and_3_is_refused() {
    let unphased = "name: stable-4.18\nversions:\n- 4.18.1\n";
    let phased = "name: stable-4.18\nversions:\n- {name: 4.18.1, start: 2025-06-02T09:00:00Z}\nphasedRollouts:\n- duration: P2D\n";
    for (version, channel, outcome) in [
        ("1.0.0\n", unphased, Ok(vec![])),
        ("1.2.0\n", unphased, Ok(vec![])),
        (
            "1.3.0\n",
            unphased,
            Ok(vec![
                "version:1: warning[newer_schema]: schema 1.3.0 is newer than 1.2.0: features added since are ignored",
            ]),
        ),
        ("2.0.0\n", unphased, Ok(vec![])),
        ("2.0.0\n", phased, Ok(vec![])),
        (
            "2.1.0\n",
            phased,
            Ok(vec![
                "version:1: warning[newer_schema]: schema 2.1.0 is newer than 2.0.0: features added since are ignored",
            ]),
        ),
        (
            "3.0.0\n",
            unphased,
            Err(vec![
                "version:1: error[unsupported_schema]: schema 3.0.0 is not supported: only 1.x and 2.x can be read",
            ]),
        ),
        (
            "1.2.0\n",
            phased,
            Err(vec![
                "channels/stable-4.18.yaml:3: error[syntax]: a version object ({name, start, locked}) needs graph-data schema 2.0.0: write the release name alone, or raise the `version` file",
            ]),
        ),
    ] {
        let found = load(&graph_data(version, channel))
            .map(|(_, warnings)| rendered(&warnings))
            .map_err(|refused| rendered(&refused.errors));
        let expected = outcome
            .map(|lines| lines.into_iter().map(str::to_owned).collect::<Vec<_>>())
            .map_err(|lines| lines.into_iter().map(str::to_owned).collect::<Vec<_>>());
        assert_eq!(found, expected, "{version}{channel}");
    }
}

#[test]
fn before_2_0_0_phased_rollouts_are_an_unknown_key_as_they_always_were() {
    let (data, warnings) = loaded(&graph_data(
        "1.2.0\n",
        "name: stable-4.18\nversions: [4.18.1]\nphasedRollouts: {not: [a, list]}\n",
    ));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].kind, DiagnosticKind::UnknownKey);
    assert_eq!(warnings[0].location, Location::file(CHANNEL_PATH, Some(3)));
    assert_eq!(data.channels()[0].phased_rollouts, []);
}

/// Each mistake refuses at its file and line: (channel file, the error).
#[test]
fn phasing_mistakes_refuse_at_their_file_and_line() {
    for (channel, error) in [
        (
            "name: stable-4.18\nversions: [4.18.1]\nphasedRollouts:\n- duration: 2 days\n",
            "channels/stable-4.18.yaml:4: error[invalid_rollout_duration]: \"2 days\" is not an ISO 8601 duration",
        ),
        (
            "name: stable-4.18\nversions: [4.18.1]\nphasedRollouts:\n- fromVersion: patch\n  duration: -P2D\n",
            "channels/stable-4.18.yaml:5: error[invalid_rollout_duration]: \"-P2D\" is negative: a rollout cannot end before it starts",
        ),
        (
            "name: stable-4.18\nversions:\n- 4.18.1\n- name: 4.18.2\n  start: 2025-06-02 09:00\n",
            "channels/stable-4.18.yaml:5: error[invalid_rollout_start]: start \"2025-06-02 09:00\" is not an RFC 3339 time (such as 2025-06-02T09:00:00Z)",
        ),
        (
            "name: stable-4.18\nversions:\n- name: 4.18.2\n  strat: 2025-06-02T09:00:00Z\n",
            "channels/stable-4.18.yaml:4: error[syntax]: unknown field `strat`",
        ),
        (
            "name: stable-4.18\nversions: [4.18.1]\nphasedRollouts:\n- fromVersion: patch\n",
            "channels/stable-4.18.yaml:4: error[syntax]: missing field `duration`",
        ),
        (
            "name: stable-4.18\nversions:\n- {name: 4.18.x, start: 2025-06-02T09:00:00Z}\n",
            "channels/stable-4.18.yaml:3: error[invalid_version]: version \"4.18.x\" is not SemVer",
        ),
    ] {
        let refused = load(&graph_data("2.0.0\n", channel)).unwrap_err();
        // A channel file that does not read leaves graph-data without a channel.
        let errors: Vec<String> = refused
            .errors
            .iter()
            .filter(|error| error.kind != DiagnosticKind::MissingFile)
            .map(Diagnostic::to_string)
            .collect();
        assert!(
            errors.len() == 1 && errors[0].starts_with(error),
            "{channel}\nexpected {error}\nfound {errors:#?}"
        );
    }
}

/// What the full graph built at `now` says of each release:
/// (version, `release.channels`, `release.phased_rollouts`).
fn membership_at(data: &GraphData, graph: Graph, now: Timestamp) -> Vec<(String, String, Option<String>)> {
    let mut graph = graph;
    let mut context = Context::with(data.clone());
    context.now = now;
    parse_then_edges().run(&mut graph, &context).unwrap();
    graph
        .releases()
        .map(|(_, release)| {
            let value = |key: &str| release.metadata.get(key).map(str::to_owned);
            (
                release.version.to_string(),
                value(keys::CHANNELS).unwrap_or_default(),
                value(keys::PHASED_ROLLOUTS),
            )
        })
        .collect()
}

/// 4.17.9, 4.18.1 and 4.18.2, with updates from both older ones into 4.18.2.
fn three_releases() -> Graph {
    graph(
        &["4.17.9+amd64", "4.18.1+amd64", "4.18.2+amd64"],
        &[("4.17.9+amd64", "4.18.2+amd64"), ("4.18.1+amd64", "4.18.2+amd64")],
    )
}

/// stable-4.18 phasing 4.18.2 in from 2025-06-02 09:00: patch updates
/// over P2D, the rest over P14D.
const STABLE_PHASED: &str = "name: stable-4.18\nversions:\n- 4.17.9\n- 4.18.1\n- {name: 4.18.2, start: 2025-06-02T09:00:00Z}\n\
                             phasedRollouts:\n- duration: P14D\n- {duration: P2D, fromVersion: patch}\n";

/// stable-4.18 phases 4.18.2 from 2025-06-02 09:00 (patch P2D, the rest
/// P14D); fast-4.18 lists the same releases unphased.
fn stable_phased_fast_not() -> GraphData {
    loaded(&files(&[
        ("version", "2.0.0\n"),
        ("raw/metadata.json", "{}"),
        (CHANNEL_PATH, STABLE_PHASED),
        (
            "channels/fast-4.18.yaml",
            "name: fast-4.18\nversions: [4.17.9, 4.18.1, 4.18.2]\n",
        ),
    ]))
    .0
}

const STABLE_ROLLOUT: &str =
    r#"{"stable-4.18":{"start":"2025-06-02T09:00:00Z","patch":"P2D","default":"P14D"}}"#;

/// 4.18.2 is not in stable-4.18 before its start; from its start until its
/// longest window (the minor update's, P14D) ends, `release.channels` does
/// not list stable-4.18 (a client that does not know phasing never sees the
/// update early) and the rollout is published for the engines that phase;
/// from then on it is listed. fast-4.18 lists it throughout.
#[test]
fn a_phased_release_is_listed_in_its_channel_once_its_longest_window_ends() {
    let data = stable_phased_fast_not();
    let both = "fast-4.18,stable-4.18";
    let phasing = ("fast-4.18", Some(STABLE_ROLLOUT));
    let listed = (both, None);
    // (now, 4.18.2's channels and rollouts)
    for (now, (channels, rollouts)) in [
        ("2025-06-02T08:59:59.999999999Z", ("fast-4.18", None)),
        ("2025-06-02T09:00:00Z", phasing),
        ("2025-06-03T09:00:00Z", phasing),
        // The patch update's window has ended, the minor one's has not.
        ("2025-06-04T09:00:00Z", phasing),
        ("2025-06-16T08:59:59.999999999Z", phasing),
        ("2025-06-16T09:00:00Z", listed),
        ("2025-07-01T00:00:00Z", listed),
    ] {
        let expected = vec![
            ("4.17.9+amd64".to_owned(), both.to_owned(), None),
            ("4.18.1+amd64".to_owned(), both.to_owned(), None),
            (
                "4.18.2+amd64".to_owned(),
                channels.to_owned(),
                rollouts.map(str::to_owned),
            ),
        ];
        assert_eq!(
            membership_at(&data, three_releases(), at(now)),
            expected,
            "at {now}"
        );
    }
}

/// When a phased release is listed in its channel depends on the kinds of
/// update into it from the releases the channel lists before it, each with
/// its rule's duration (the kind's, else the default, else zero):
/// (older releases listed, rules, the moment it is listed).
#[test]
fn the_longest_window_of_the_updates_the_channel_has_decides_the_listing() {
    let start = "2025-06-02T09:00:00Z";
    for (older, rules, listed_from) in [
        // Patch updates only: the patch rule, not the longer default.
        (
            "[4.18.1]",
            "[{duration: P14D}, {duration: P2D, fromVersion: patch}]",
            "2025-06-04T09:00:00Z",
        ),
        // A minor update too: the default, P14D.
        (
            "[4.17.9, 4.18.1]",
            "[{duration: P14D}, {duration: P2D, fromVersion: patch}]",
            "2025-06-16T09:00:00Z",
        ),
        // A minor rule longer than the default.
        (
            "[4.17.9, 4.18.1]",
            "[{duration: P1D}, {duration: P1M, fromVersion: minor}]",
            "2025-07-02T09:00:00Z",
        ),
        // No default: a minor update takes zero, the patch one P2D.
        (
            "[4.17.9, 4.18.1]",
            "[{duration: P2D, fromVersion: patch}]",
            "2025-06-04T09:00:00Z",
        ),
        // Only a rule for updates the channel does not have: listed at start.
        ("[4.18.1]", "[{duration: P1M, fromVersion: minor}]", start),
        // Nothing listed before it: no update into it in the channel.
        ("[]", "[{duration: P14D}]", start),
    ] {
        let channel = format!("name: stable-4.18\nversions: {older}\nphasedRollouts: {rules}\n");
        let mut data = phased_channel(&channel);
        data.versions.push(openshift_graph_data::ChannelVersion {
            name: openshift_graph_data::ReleaseName::parse("4.18.2").unwrap(),
            line: 1,
            start: Some(at(start)),
            locked: false,
        });
        let entry = data.versions.last().unwrap();
        let just_before = at(listed_from) - jiff::SignedDuration::from_nanos(1);
        let is_member = |now| data.standing(entry, now) == Standing::Member;
        assert!(
            !is_member(just_before) && is_member(at(listed_from)),
            "{older} with {rules}: listed from {listed_from}"
        );
    }
}

/// The moments a graph built at `now` goes out of date: the next `start`
/// or the end of a release's longest window, across channels; never `now`
/// itself, and none once everything is listed.
#[test]
fn the_next_phase_change_is_the_next_start_or_listing_after_now() {
    let data = loaded(&files(&[
        ("version", "2.0.0\n"),
        ("raw/metadata.json", "{}"),
        (CHANNEL_PATH, STABLE_PHASED),
        (
            "channels/fast-4.18.yaml",
            "name: fast-4.18\nversions:\n- 4.18.1\n- {name: 4.18.2, start: 2025-06-10T00:00:00Z}\n",
        ),
    ]))
    .0;
    for (now, next) in [
        ("2025-01-01T00:00:00Z", Some("2025-06-02T09:00:00Z")),
        ("2025-06-02T08:59:59Z", Some("2025-06-02T09:00:00Z")),
        // At a boundary, the next one: the patch window's end is none (the
        // graph does not change then), fast-4.18's start is.
        ("2025-06-02T09:00:00Z", Some("2025-06-10T00:00:00Z")),
        ("2025-06-10T00:00:00Z", Some("2025-06-16T09:00:00Z")),
        ("2025-06-16T09:00:00Z", None),
        ("2030-01-01T00:00:00Z", None),
    ] {
        assert_eq!(data.next_phase_change(at(now)), next.map(at), "at {now}");
    }
    assert_eq!(
        loaded(&graph_data("2.0.0\n", "name: stable-4.18\nversions: [4.18.1]\n"))
            .0
            .next_phase_change(at("2025-01-01T00:00:00Z")),
        None,
        "nothing phased"
    );
}

/// The key is graph-data's alone: a value a release brings (from its
/// image's metadata) is taken off, or it would put the release in a
/// channel for the engines that phase.
#[test]
fn a_release_s_own_phased_rollouts_value_is_replaced_by_graph_data_s() {
    let data = stable_phased_fast_not();
    let mut releases = three_releases();
    let forged = r#"{"stable-4.18":{"start":"2020-01-01T00:00:00Z"}}"#;
    let ids: Vec<_> = releases.releases().map(|(id, _)| id).collect();
    for id in ids {
        let metadata = releases.metadata_mut(id).unwrap();
        metadata.insert(keys::PHASED_ROLLOUTS, forged);
    }
    let rollouts: Vec<_> = membership_at(&data, releases, at("2025-06-03T00:00:00Z"))
        .into_iter()
        .map(|(version, _, rollouts)| (version, rollouts))
        .collect();
    assert_eq!(
        rollouts,
        [
            ("4.17.9+amd64".to_owned(), None),
            ("4.18.1+amd64".to_owned(), None),
            ("4.18.2+amd64".to_owned(), Some(STABLE_ROLLOUT.to_owned())),
        ]
    );
}

/// What an engine reads back from the graph is the rollout graph-data
/// declares: the same window for every update into the release.
#[test]
fn the_published_rollout_gives_the_windows_graph_data_declares() {
    let data = stable_phased_fast_not();
    let stable = &data.channels()[1];
    assert_eq!(stable.name, "stable-4.18");
    let published = PhasedChannels::parse(STABLE_ROLLOUT).unwrap();
    let rollout = published.get("stable-4.18").unwrap();
    for from in ["4.17.9+amd64", "4.18.1+amd64", "3.11.0+amd64"] {
        let (from, to) = (v(from), v("4.18.2+amd64"));
        assert_eq!(
            Some(rollout.window(&from, &to)),
            stable.phased_window(&from, &to),
            "{from}"
        );
    }
}

/// The updates a channel phases are those the graph has into its phasing
/// release, recommended or conditional, from the releases it lists: not
/// from a release outside it, and none in a channel that does not phase.
#[test]
fn the_phased_updates_are_the_graph_s_updates_from_the_channel_s_releases() {
    let data = stable_phased_fast_not();
    let mut releases = graph(
        &["4.16.0+amd64", "4.17.9+amd64", "4.18.1+amd64", "4.18.2+amd64"],
        &[("4.16.0+amd64", "4.18.2+amd64"), ("4.18.1+amd64", "4.18.2+amd64")],
    );
    releases.conditional_edges_mut().push(ConditionalEdge {
        edges: vec![EdgeEndpoints::new(v("4.17.9+amd64"), v("4.18.2+amd64"))],
        risks: Vec::new(),
    });
    let version = |id| releases.release(id).unwrap().version.to_string();
    let phased: Vec<_> = data
        .phased_updates(&releases)
        .into_iter()
        .map(|update| {
            (
                update.channel.name.as_str(),
                version(update.from),
                version(update.to),
                UpdateKind::name_of(update.kind),
                update.duration.map(|duration| duration.to_string()),
                update.window.end.to_string(),
            )
        })
        .collect();
    let update = |from: &str, kind, duration: &str, end: &str| {
        (
            "stable-4.18",
            format!("{from}+amd64"),
            "4.18.2+amd64".to_owned(),
            kind,
            Some(duration.to_owned()),
            end.to_owned(),
        )
    };
    assert_eq!(
        phased,
        [
            update("4.17.9", "minor", "P14D", "2025-06-16T09:00:00Z"),
            update("4.18.1", "patch", "P2D", "2025-06-04T09:00:00Z"),
        ]
    );
}

/// A channel whose 4.18.2 rolls out over two days from 2025-06-02 09:00,
/// with its `versions` entry for 4.18.2 and its rules replaced.
fn rolling_out(entry: &str, rules: &str) -> GraphData {
    let channel = format!("name: stable-4.18\nversions:\n- 4.18.1\n{entry}phasedRollouts:\n{rules}");
    loaded(&graph_data("2.0.0\n", &channel)).0
}

const ENTRY: &str = "- {name: 4.18.2, start: 2025-06-02T09:00:00Z}\n";
const RULES: &str = "- {duration: P2D, fromVersion: patch}\n";

/// What a change may do to a rollout, by where the rollout is at `now`:
/// (what, changed entry, changed rules, now, refused).
#[test]
fn a_rollout_under_way_or_over_does_not_move_unless_locked() {
    let previous = rolling_out(ENTRY, RULES);
    let moved = "- {name: 4.18.2, start: 2025-06-03T09:00:00Z}\n";
    for (what, entry, rules, now, refused) in [
        (
            "start moved while under way",
            moved,
            RULES,
            "2025-06-03T00:00:00Z",
            true,
        ),
        (
            "duration changed while under way",
            ENTRY,
            "- {duration: P3D, fromVersion: patch}\n",
            "2025-06-03T00:00:00Z",
            true,
        ),
        (
            "duration changed at the window's very end",
            ENTRY,
            "- {duration: P3D, fromVersion: patch}\n",
            "2025-06-04T09:00:00Z",
            true,
        ),
        (
            "start moved while under way, locked",
            "- {name: 4.18.2, start: 2025-06-03T09:00:00Z, locked: true}\n",
            RULES,
            "2025-06-03T00:00:00Z",
            false,
        ),
        (
            "start moved before it starts",
            moved,
            RULES,
            "2025-06-01T00:00:00Z",
            false,
        ),
        (
            "duration shortened once over",
            ENTRY,
            "- {duration: P1D, fromVersion: patch}\n",
            "2025-06-10T00:00:00Z",
            false,
        ),
        (
            "start moved past now once over",
            "- {name: 4.18.2, start: 2025-06-20T00:00:00Z}\n",
            RULES,
            "2025-06-10T00:00:00Z",
            true,
        ),
        (
            "window reopened once over",
            "- {name: 4.18.2, start: 2025-06-09T00:00:00Z}\n",
            RULES,
            "2025-06-10T00:00:00Z",
            true,
        ),
        (
            "release taken out while under way",
            "",
            RULES,
            "2025-06-03T00:00:00Z",
            false,
        ),
        (
            "a rule for updates it has none of",
            ENTRY,
            "- {duration: P2D, fromVersion: patch}\n- {duration: P1M, fromVersion: minor}\n",
            "2025-06-03T00:00:00Z",
            false,
        ),
        (
            "start given to a release in the channel from the beginning",
            &format!("{ENTRY}- {{name: 4.18.1, start: 2025-07-01T00:00:00Z}}\n"),
            RULES,
            "2025-06-10T00:00:00Z",
            true,
        ),
    ] {
        let channel = format!("name: stable-4.18\nversions:\n{entry}phasedRollouts:\n{rules}");
        let channel = if entry.contains("4.18.1") {
            channel
        } else {
            channel.replace("versions:\n", "versions:\n- 4.18.1\n")
        };
        let changed = loaded(&graph_data("2.0.0\n", &channel)).0;
        let found = moved_rollouts(&previous, &changed, at(now));
        assert_eq!(!found.is_empty(), refused, "{what}: {found:#?}");
        assert!(
            found
                .iter()
                .all(|error| error.kind == DiagnosticKind::MovedRollout && error.severity == Severity::Error),
            "{found:?}"
        );
    }
}

#[test]
fn a_moved_rollout_is_reported_at_its_entry_with_both_windows() {
    let previous = rolling_out(ENTRY, RULES);
    let changed = rolling_out("- name: 4.18.2\n  start: 2025-06-03T09:00:00Z\n", RULES);
    let found = moved_rollouts(&previous, &changed, at("2025-06-03T00:00:00Z"));
    assert_eq!(
        rendered(&found),
        [
            "channels/stable-4.18.yaml:4: error[moved_rollout]: the rollout of patch updates into 4.18.2 in \
          channel stable-4.18 is under way (from 2025-06-02T09:00:00Z to 2025-06-04T09:00:00Z); this change \
          makes it from 2025-06-03T09:00:00Z to 2025-06-05T09:00:00Z: add `locked: true` to the entry if \
          this is deliberate"
        ]
    );
}
