//! Why an update is offered or not, from the graph and from graph-data.

mod common;

use cincinnati_client::cvo::DropReason;
use cincinnati_client::explain::{DeclarationKind, ExplainGraphData, ExplainQuery, Verdict, explain};
use common::{Fixture, v};
use openshift_graph_data::{GraphData, GraphDataFiles, Strictness};
use serde_json::json;

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
    assert_eq!(
        explanation.summary(),
        "4.16.0 → 4.16.2 is offered on stable-4.16 as a conditional update with risk Flaky"
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
            "there is no update from 4.16.1 to 4.16.6: no release metadata names one",
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
            "to: 4.16.4\nfrom: 4[.]16[.]0[+]\n# etcd loses data, see https://issues.example.com/1.\n",
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
            reason: Some("etcd loses data, see https://issues.example.com/1.".into()),
            url: Some("https://issues.example.com/1".into()),
        }
    );
    assert_eq!(
        explanation.summary(),
        "there is no update from 4.16.0 to 4.16.4: graph-data blocks it \
         (blocked-edges/4.16.4-etcd.yaml: etcd loses data, see https://issues.example.com/1.)"
    );
}
