//! Why an update is offered or not, from the graph and from graph-data.

use cincinnati_client::cluster_policy::ClusterPolicy;
use cincinnati_client::cvo::DropReason;
use cincinnati_client::explain::{DeclarationKind, ExplainGraphData, ExplainQuery, Verdict, explain};
use cincinnati_client::reasons::{Layer, Reason};
use openshift_graph_data::{GraphData, GraphDataFiles, Strictness};
use serde_json::json;

use crate::support::{Fixture, v};

const REMOVE_REGEX: &str = "io.openshift.upgrades.graph.previous.remove_regex";

fn fixture() -> Fixture {
    Fixture::new()
        .releases("4.16", 4, &["fast-4.16", "stable-4.16"])
        .release("4.16.5", &["fast-4.16"])
        .release("4.16.6", &["stable-4.16"])
        .release_of("arm64", "4.16.9", &["stable-4.16"])
        .update("4.16.0", "4.16.1")
        .risky("4.16.0", "4.16.2", "Flaky")
        .conditional_entry(&[("4.16.0", "4.16.3")], "Unknown", json!([{"type": "Future"}]))
        .metadata("4.16.4", REMOVE_REGEX, "4[.]16[.]0[+]")
        .release("4.16.7", &["stable-4.16"])
        .metadata("4.16.7", REMOVE_REGEX, r"4\.16\.0\+.*")
}

fn query(channel: &str, from: &str, to: &str) -> ExplainQuery {
    ExplainQuery {
        channel: channel.into(),
        from: v(from),
        to: v(to),
    }
}

fn summary(channel: &str, from: &str, to: &str) -> String {
    explain(&fixture().graph(), &query(channel, from, to), None).summary()
}

#[test]
fn offered_updates_are_recommended_or_conditional_with_their_risks() {
    let graph = fixture().graph();
    let explanation = explain(&graph, &query("stable-4.16", "4.16.0", "4.16.1"), None);
    assert_eq!(explanation.verdict, Verdict::Recommended);
    assert!(explanation.verdict.offered());
    let explanation = explain(&graph, &query("stable-4.16", "4.16.0", "4.16.2"), None);
    assert!(matches!(explanation.verdict, Verdict::Conditional { risks } if risks[0].name == "Flaky"));
    // In the cluster-version operator's words, not "offered".
    assert_eq!(
        explanation.summary(),
        "4.16.0 → 4.16.2 is a conditional update on stable-4.16: not recommended, its risk Flaky applies \
         to every cluster (Recommended=False, reason Flaky)"
    );
}

#[test]
fn updates_that_are_not_offered_say_why() {
    for ((channel, from, to), why) in [
        (
            ("stable-4.16", "4.16.0", "4.16.5"),
            "not in stable-4.16: 4.16.5 is in fast-4.16",
        ),
        (
            ("stable-4.16", "4.16.1", "4.16.0"),
            "4.16.0 is not newer than 4.16.1: clusters do not downgrade",
        ),
        (
            ("stable-4.16", "4.16.0", "4.16.9"),
            "4.16.9 is not released for amd64 (only for arm64)",
        ),
        (
            ("stable-4.16", "4.16.0", "4.16.99"),
            "4.16.99 is not a release (of any architecture seen)",
        ),
        (
            ("stable-4.99", "4.16.0", "4.16.1"),
            "no release is in channel stable-4.99",
        ),
        (
            ("stable-4.16", "4.16.1", "4.16.6"),
            "there is no update from 4.16.1 to 4.16.6 in this answer, and no release metadata removes one: \
             asked without a cluster id, a per-cluster policy (a phased rollout, a deferral, a pin) may withhold it",
        ),
        (
            ("stable-4.16", "4.16.0", "4.16.7"),
            // As written: one backslash, not the two of a debug string.
            "there is no update from 4.16.0 to 4.16.7: 4.16.7 removes updates from releases matching \
             `4\\.16\\.0\\+.*` (graph-data's blocked edges)",
        ),
    ] {
        assert_eq!(summary(channel, from, to), why);
    }
}

#[test]
fn a_conditional_update_the_cvo_cannot_evaluate_is_dropped() {
    let graph = fixture().graph();
    let explanation = explain(&graph, &query("stable-4.16", "4.16.0", "4.16.3"), None);
    assert_eq!(
        explanation.verdict,
        Verdict::Dropped(DropReason::UnevaluableRisk {
            risk: "Unknown".into()
        })
    );
    assert!(!explanation.verdict.offered());
}

#[test]
fn an_update_removed_by_graph_data_names_the_instruction_or_the_file() {
    let graph = fixture().graph();
    let asked = query("stable-4.16", "4.16.0", "4.16.4");
    let explanation = explain(&graph, &asked, None);
    assert_eq!(
        explanation.verdict,
        Verdict::NoUpdate {
            removed_by: Some("4[.]16[.]0[+]".into())
        }
    );

    let mut files = GraphDataFiles::default();
    for (path, text) in [
        ("version", "1.1.0\n"),
        ("raw/metadata.json", "{}"),
        ("channels/stable-4.16.yaml", "name: stable-4.16\nversions: []\n"),
        (
            "blocked-edges/4.16.4-etcd.yaml",
            "to: 4.16.4\nfrom: 4[.]16[.]0[+]\nfixedIn: 4.16.5\n# etcd loses data, see https://issues.example.com/1.\n#\n# Backups help.\n",
        ),
    ] {
        files.insert(path, text.as_bytes().to_vec());
    }
    let rules = GraphData::load(&files, &Strictness::default())
        .unwrap()
        .graph_data;
    let data = ExplainGraphData { rules, files };
    let explanation = explain(&graph, &asked, Some(&data));
    let [declaration] = explanation.declarations.as_slice() else {
        panic!("{:?}", explanation.declarations);
    };
    assert_eq!(
        (declaration.file, declaration.line),
        ("blocked-edges/4.16.4-etcd.yaml", 1)
    );
    assert_eq!(
        declaration.kind,
        DeclarationKind::Block {
            reason: Some("etcd loses data, see https://issues.example.com/1. Backups help.".into()),
            url: Some("https://issues.example.com/1".into()),
        }
    );
    assert_eq!(
        declaration.reasons,
        [
            "etcd loses data, see https://issues.example.com/1.",
            "Backups help."
        ]
    );
    assert_eq!(declaration.fixed_in.as_deref(), Some("4.16.5"));
    // The reasons are in the list below it, not in the one-line answer.
    assert_eq!(
        explanation.summary(),
        "there is no update from 4.16.0 to 4.16.4: graph-data blocks it (blocked-edges/4.16.4-etcd.yaml:1)"
    );
    let reasons = explanation.reasons();
    let shown = layers_kinds_decides(&reasons);
    assert_eq!(
        shown,
        [
            (Layer::GraphData, "block", true),
            (Layer::ReleaseMetadata, "removeRegex", false)
        ],
        "graph-data decides; the release metadata the graph-builder wrote from it follows"
    );
    assert_eq!(
        reasons[0].details,
        [
            "etcd loses data, see https://issues.example.com/1.",
            "Backups help.",
            "fixed in 4.16.5 (fixedIn)"
        ],
        "each reason once, on its own line"
    );
}

fn layers_kinds_decides(reasons: &[Reason]) -> Vec<(Layer, &str, bool)> {
    reasons
        .iter()
        .map(|reason| (reason.layer, reason.kind, reason.decides))
        .collect()
}

fn cluster_policy(json: serde_json::Value) -> ClusterPolicy {
    serde_json::from_value(json).unwrap()
}

/// A cluster outside the rollout of 4.16.1 asks: the graph it gets has no
/// 4.16.0 → 4.16.1, and the engine says the rollout withheld it.
#[test]
fn a_rollout_that_withholds_the_target_decides_before_graph_data_and_metadata() {
    let asked_as_cluster = Fixture::new().releases("4.16", 1, &["stable-4.16"]).graph();
    let policy = cluster_policy(json!({
        "id": "c0ffee00-0001-4a11-8b22-0123456789ab", "placePercent": 71.3, "groups": [], "rules": {},
        "rollouts": [{"target": "4.16.1", "line": 9, "start": "2026-01-01T00:00:00Z",
                      "complete": "2035-12-30T00:00:00Z", "startingPercentage": 50.0,
                      "state": "on-schedule", "said": "on schedule at 54.5%, complete at 2035-12-30 00:00:00 UTC",
                      "progress": 54.49, "scheduledProgress": 54.49, "declaredProgress": 54.49,
                      "offered": false, "insideFrom": "2030-04-05T06:07:08Z"}],
        "updates": {"from": "4.16.0", "offered": [],
                    "removed": [{"release": "4.16.1", "rule": "rollout", "rollout": 0}]}
    }));
    let explanation = explain(&asked_as_cluster, &query("stable-4.16", "4.16.0", "4.16.1"), None);
    assert!(
        explanation
            .summary()
            .ends_with("a per-cluster policy (a phased rollout, a deferral, a pin) may withhold it"),
        "without the engine's explanation: {}",
        explanation.summary()
    );
    let explanation = explanation.with_cluster_policy(&policy);
    assert_eq!(
        explanation.summary(),
        "4.16.0 → 4.16.1 is withheld from this cluster (policy file line 9): the phased rollout of 4.16.1 does not offer \
         it to this cluster yet (its place is 71.30%; at its schedule it is inside from 2030-04-05T06:07:08Z): on schedule \
         at 54.5%, complete at 2035-12-30 00:00:00 UTC"
    );
    let reasons = explanation.reasons();
    let shown = layers_kinds_decides(&reasons);
    assert_eq!(
        shown,
        [(Layer::ClusterPolicy, "rollout", true)],
        "the graph without the policy has the update: graph-data and metadata did not remove it"
    );
    assert_eq!((reasons[0].file.as_deref(), reasons[0].line), (None, Some(9)));
}

/// An update graph-data phases: not yet offered to this cluster, the
/// engine says from when it is, and that decides; once offered, it is said
/// beside the verdict.
#[test]
fn a_phased_rollout_from_graph_data_says_when_the_cluster_is_offered_the_update() {
    let offer = |offered| {
        json!({"channel": "stable-4.16", "from": "4.16.0", "to": "4.16.1", "duration": "P2D",
               "start": "2026-06-02T09:00:00Z", "end": "2026-06-04T09:00:00Z",
               "offeredFrom": "2026-06-03T21:00:00Z", "offered": offered})
    };
    let phased = |offered| {
        cluster_policy(json!({
            "id": "c0ffee00-0001-4a11-8b22-0123456789ab", "placePercent": 75.0, "groups": [], "rules": {},
            "rollouts": [], "updates": null, "phased": [offer(offered)]
        }))
    };
    let not_yet = Fixture::new().releases("4.16", 1, &["stable-4.16"]).graph();
    let explanation = explain(&not_yet, &query("stable-4.16", "4.16.0", "4.16.1"), None)
        .with_cluster_policy(&phased(false));
    assert_eq!(
        explanation.summary(),
        "4.16.0 → 4.16.1 is to be offered to this cluster from 2026-06-03T21:00:00Z \
         (phased rollout of 4.16.1 in stable-4.16, P2D from 2026-06-02T09:00:00Z)"
    );
    let reasons = explanation.reasons();
    assert_eq!(
        layers_kinds_decides(&reasons),
        [(Layer::ClusterPolicy, "phasedRollout", true)],
        "the rollout decides: graph-data and metadata did not remove the update"
    );
    assert_eq!(
        reasons[0].details,
        [
            "the window of the rollout: from 2026-06-02T09:00:00Z to 2026-06-04T09:00:00Z, \
          a cluster offered it at its place of the way through (its place is 75.00%)"
        ]
    );
    let offered = Fixture::new()
        .releases("4.16", 1, &["stable-4.16"])
        .update("4.16.0", "4.16.1")
        .graph();
    let explanation =
        explain(&offered, &query("stable-4.16", "4.16.0", "4.16.1"), None).with_cluster_policy(&phased(true));
    assert_eq!(
        explanation.summary(),
        "4.16.0 → 4.16.1 is a recommended update on stable-4.16"
    );
    let reasons = explanation.reasons();
    assert_eq!(
        (reasons[0].kind, reasons[0].decides, reasons[0].sentence.as_str()),
        (
            "phasedRollout",
            false,
            "4.16.0 → 4.16.1 is offered to this cluster from 2026-06-03T21:00:00Z \
             (phased rollout of 4.16.1 in stable-4.16, P2D from 2026-06-02T09:00:00Z)"
        )
    );
}

/// A risk of the cluster's groups is attributed to its line in the policy
/// file, not to graph-data.
#[test]
fn a_risk_of_the_sites_policy_is_attributed_to_its_line() {
    let asked_as_cluster = Fixture::new()
        .releases("4.16", 1, &["stable-4.16"])
        .risky("4.16.0", "4.16.1", "OurStorage")
        .graph();
    let policy = cluster_policy(json!({
        "id": "5ca1ab1e-0000-4000-8000-00000000d0e5", "placePercent": 28.97, "groups": ["production"],
        "rules": {}, "rollouts": [],
        "edges": [{"from": "4.16.0", "to": "4.16.1", "line": 12, "risk": "OurStorage"}],
        "updates": {"from": "4.16.0", "offered": ["4.16.1"], "removed": []}
    }));
    let explanation = explain(&asked_as_cluster, &query("stable-4.16", "4.16.0", "4.16.1"), None)
        .with_cluster_policy(&policy);
    let reasons = explanation.reasons();
    let policy_risk = &reasons[0];
    assert_eq!(
        (
            policy_risk.layer,
            policy_risk.kind,
            policy_risk.decides,
            policy_risk.line
        ),
        (Layer::ClusterPolicy, "policyRisk", true, Some(12))
    );
    assert!(
        policy_risk.sentence.contains("this cluster's groups' own"),
        "{}",
        policy_risk.sentence
    );
}
