//! What changes between two graphs, channel by channel.

use cincinnati_client::UpdateGraph;
use cincinnati_client::diff::{UpdateChange, diff};

use crate::support::{Fixture, served_document, v};

fn base() -> Fixture {
    Fixture::new()
        .releases("4.16", 2, &["fast-4.16", "stable-4.16"])
        .release("4.16.3", &["fast-4.16"])
        .updates(&["4.16.0"], &["4.16.1", "4.16.2"])
        .update("4.16.2", "4.16.3")
}

fn change(from: &str, to: &str, risks: &[&str]) -> UpdateChange {
    UpdateChange {
        from: v(from),
        to: v(to),
        risks: risks.iter().map(|risk| (*risk).to_owned()).collect(),
    }
}

#[test]
fn equal_graphs_differ_in_nothing() {
    assert!(diff(&base().graph(), &base().graph()).is_empty());
}

#[test]
fn each_channel_shows_what_its_clusters_see_differently() {
    // 4.16.3 is promoted to stable; 4.16.0 → 4.16.2 becomes conditional.
    let old = base();
    let new = Fixture::new()
        .releases("4.16", 3, &["fast-4.16", "stable-4.16"])
        .update("4.16.0", "4.16.1")
        .risky("4.16.0", "4.16.2", "Flaky")
        .update("4.16.2", "4.16.3");
    let changes = diff(&old.graph(), &new.graph());
    let channels: Vec<&str> = changes
        .channels
        .iter()
        .map(|change| change.channel.as_str())
        .collect();
    assert_eq!(channels, ["fast-4.16", "stable-4.16"]);
    let [fast, stable] = changes.channels.as_slice() else {
        unreachable!()
    };
    assert_eq!(fast.risks_added, [change("4.16.0", "4.16.2", &["Flaky"])]);
    assert!(fast.releases_added.is_empty() && fast.updates_added.is_empty());
    assert_eq!(stable.releases_added, [v("4.16.3")]);
    assert_eq!(stable.updates_added, [change("4.16.2", "4.16.3", &[])]);
    assert_eq!(stable.risks_added, [change("4.16.0", "4.16.2", &["Flaky"])]);

    let back = diff(&new.graph(), &old.graph());
    assert_eq!(back.channels[1].releases_removed, [v("4.16.3")]);
    assert_eq!(
        back.channels[1].updates_removed,
        [change("4.16.2", "4.16.3", &[])]
    );
    assert_eq!(
        back.channels[1].risks_removed,
        [change("4.16.0", "4.16.2", &["Flaky"])]
    );
}

#[test]
fn only_channels_both_graphs_hold_whole_are_compared() {
    let old = base();
    let json = old.json();
    let stable_only = UpdateGraph::build("amd64", &[served_document(&json, "stable-4.16")]);
    assert!(diff(&old.graph(), &stable_only).is_empty());
    let new = base().release("4.16.4", &["fast-4.16", "stable-4.16"]);
    let changes = diff(&stable_only, &new.graph());
    assert_eq!(changes.channels.len(), 1);
    assert_eq!(changes.channels[0].channel, "stable-4.16");
    assert_eq!(changes.channels[0].releases_added, [v("4.16.4")]);
}
