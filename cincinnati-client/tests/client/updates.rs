//! What a cluster on a channel is offered, by the CVO's rules, from full
//! graphs and from answers for single channels.

use cincinnati_client::{Cluster, Coverage, UpdateGraph, VersionNotFound};
use serde_json::json;

use crate::support::{Fixture, served_document, v};

fn cluster(version: &str) -> Cluster {
    Cluster {
        version: v(version),
        arch: "amd64".into(),
    }
}

fn versions(releases: &[cincinnati_core::Release]) -> Vec<String> {
    releases
        .iter()
        .map(|release| release.version.to_string())
        .collect()
}

/// 4.16.0 → 4.16.1, 4.16.2 (recommended), 4.16.3 (conditional); 4.16.3 is
/// only in fast.
fn fixture() -> Fixture {
    Fixture::new()
        .releases("4.16", 2, &["fast-4.16", "stable-4.16"])
        .release("4.16.3", &["fast-4.16"])
        .release_of("arm64", "4.16.0", &["stable-4.16"])
        .updates(&["4.16.0"], &["4.16.1", "4.16.2"])
        .update("4.16.1", "4.16.2")
        .risky("4.16.0", "4.16.3", "Flaky")
}

#[test]
fn recommended_updates_come_newest_first_and_conditional_ones_apart() {
    let graph = fixture().graph();
    let fast = graph.channel("fast-4.16").unwrap();
    let updates = fast.updates_for(&cluster("4.16.0")).unwrap();
    assert_eq!(versions(&updates.recommended), ["4.16.2", "4.16.1"]);
    assert_eq!(updates.conditional.len(), 1);
    assert_eq!(updates.conditional[0].release.version, v("4.16.3"));
    assert_eq!(updates.conditional[0].risks[0].name, "Flaky");

    let stable = graph.channel("stable-4.16").unwrap();
    let updates = stable.updates_for(&cluster("4.16.0")).unwrap();
    assert!(updates.conditional.is_empty(), "4.16.3 is not in stable");
}

#[test]
fn a_version_outside_the_channel_is_not_found() {
    let graph = fixture().graph();
    let stable = graph.channel("stable-4.16").unwrap();
    assert_eq!(
        stable.updates_for(&cluster("4.16.3")),
        Err(VersionNotFound {
            version: v("4.16.3"),
            channel: "stable-4.16".into()
        })
    );
}

#[test]
fn only_the_architecture_asked_for_is_read() {
    let graph = fixture().graph();
    assert_eq!(graph.release_count(), 4);
    assert_eq!(graph.archs_of(&v("4.16.0")), ["amd64", "arm64"]);
    assert_eq!(graph.archs_of(&v("4.16.3")), ["amd64"]);
    assert_eq!(*graph.coverage(), Coverage::Everything);
}

#[test]
fn the_cvo_drops_updates_listed_twice_and_risks_it_cannot_evaluate() {
    let graph = fixture()
        .release("4.16.4", &["fast-4.16"])
        .release("4.16.5", &["fast-4.16"])
        .update("4.16.0", "4.16.4")
        .risky("4.16.0", "4.16.4", "Twice")
        .risky("4.16.0", "4.16.4", "Again")
        .conditional_entry(&[("4.16.0", "4.16.5")], "Unknown", json!([{"type": "Future"}]))
        .graph();
    let fast = graph.channel("fast-4.16").unwrap();
    let updates = fast.updates_for(&cluster("4.16.0")).unwrap();
    let offered: Vec<String> = updates
        .conditional
        .iter()
        .map(|update| update.release.version.to_string())
        .collect();
    assert_eq!(
        offered,
        ["4.16.3"],
        "4.16.4 is listed twice, 4.16.5 has no usable rule"
    );
    assert_eq!(
        versions(&updates.recommended),
        ["4.16.2", "4.16.1"],
        "4.16.4 is also conditional, so not recommended"
    );
    let (from, to) = (
        graph.find(&v("4.16.0")).unwrap(),
        graph.find(&v("4.16.5")).unwrap(),
    );
    assert!(graph.dropped(from, to).is_some());
}

#[test]
fn a_single_arch_cluster_asking_the_multi_graph_is_offered_its_own_version() {
    let fixture = Fixture::new()
        .release_of("multi", "4.16.0", &["stable-4.16"])
        .release_of("multi", "4.16.1", &["stable-4.16"]);
    let graph = UpdateGraph::build("multi", &[fixture.document()]);
    let stable = graph.channel("stable-4.16").unwrap();
    let migrating = stable.updates_for(&cluster("4.16.0")).unwrap();
    assert_eq!(versions(&migrating.recommended), ["4.16.0"]);
    let multi = Cluster {
        version: v("4.16.0"),
        arch: "multi".into(),
    };
    assert!(stable.updates_for(&multi).unwrap().recommended.is_empty());
}

#[test]
fn answers_for_single_channels_merge_into_the_same_graph() {
    let fixture = fixture();
    let full = fixture.graph();
    let json = fixture.json();
    let merged = UpdateGraph::build(
        "amd64",
        &[
            served_document(&json, "stable-4.16"),
            served_document(&json, "fast-4.16"),
        ],
    );
    assert_eq!(
        *merged.coverage(),
        Coverage::Channels(["fast-4.16".to_owned(), "stable-4.16".to_owned()].into())
    );
    for channel in ["stable-4.16", "fast-4.16"] {
        for release in ["4.16.0", "4.16.1", "4.16.3"] {
            let asked = |graph: &UpdateGraph| graph.channel(channel).unwrap().updates_for(&cluster(release));
            assert_eq!(asked(&merged), asked(&full), "{release} on {channel}");
        }
    }
}

#[test]
fn reachable_releases_follow_the_channel() {
    let graph = fixture().graph();
    let reached = |channel: &str| -> Vec<String> {
        let view = graph.channel(channel).unwrap();
        view.reachable_from(graph.find(&v("4.16.1")).unwrap())
            .into_iter()
            .map(|release| graph.version(release).to_string())
            .collect()
    };
    assert_eq!(reached("stable-4.16"), ["4.16.1", "4.16.2"]);
}
