//! A channel at a moment, with the releases phasing into it: its document
//! (the explorer's `/v1/channel`) before a release's `start` (not in the
//! channel), inside its windows (in it, the updates into it phased, with
//! the share of clusters offered each), and once the graph lists it (a
//! release like the others).

use cincinnati_client::json::ChannelGraphJson;
use cincinnati_core::release::keys;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::support::Fixture;

const STABLE: &str = "stable-4.18";
const START: &str = "2025-06-02T09:00:00Z";
const DAY: SignedDuration = SignedDuration::from_hours(24);

fn start() -> Timestamp {
    START.parse().unwrap()
}

/// stable-4.18 lists 4.17.9 and 4.18.1; 4.18.2 (in fast-4.18) phases into
/// it from [`START`], patch updates over two days, others over fourteen;
/// 4.18.3 phases into it ten days later. 4.18.1 → 4.18.2 is conditional.
fn phasing_fixture() -> Fixture {
    let rollout = |start: Timestamp| {
        json!({STABLE: {"start": start.to_string(), "patch": "P2D", "default": "P14D"}}).to_string()
    };
    Fixture::new()
        .release("4.17.9", &["fast-4.18", STABLE])
        .release("4.18.1", &["fast-4.18", STABLE])
        .release("4.18.2", &["fast-4.18"])
        .release("4.18.3", &["fast-4.18"])
        .metadata("4.18.2", keys::PHASED_ROLLOUTS, &rollout(start()))
        .metadata("4.18.3", keys::PHASED_ROLLOUTS, &rollout(start() + 10 * DAY))
        .updates(&["4.17.9", "4.18.1"], &["4.18.3"])
        .update("4.17.9", "4.18.1")
        .update("4.17.9", "4.18.2")
        .update("4.18.2", "4.18.3")
        .risky("4.18.1", "4.18.2", "Flaky")
}

/// The document of stable-4.18 at `now`.
fn at(fixture: &Fixture, now: Timestamp) -> Value {
    let graph = fixture.graph();
    serde_json::to_value(ChannelGraphJson::new(&graph.channel_at(STABLE, now))).unwrap()
}

fn release<'d>(document: &'d Value, version: &str) -> Option<&'d Value> {
    document["releases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|release| release["version"] == version)
}

fn versions(document: &Value) -> Vec<&str> {
    document["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|release| release["version"].as_str().unwrap())
        .collect()
}

fn update<'d>(document: &'d Value, from: &str, to: &str) -> &'d Value {
    release(document, from).unwrap()["updates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|update| update["to"] == to)
        .unwrap_or_else(|| panic!("no update {from} → {to} in {document}"))
}

/// No release phasing, no update phased, and the document says so.
fn assert_nothing_phases(document: &Value) {
    assert_eq!(document["phasedCount"], 0);
    for release in document["releases"].as_array().unwrap() {
        assert!(release.get("phasing").is_none(), "{release}");
        for update in release["updates"].as_array().unwrap() {
            assert!(update.get("phased").is_none(), "{update}");
        }
    }
}

fn time(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[test]
fn before_its_start_a_release_is_not_in_the_channel() {
    let fixture = phasing_fixture();
    let document = at(&fixture, start() - SignedDuration::from_secs(1));
    assert_eq!(versions(&document), ["4.17.9", "4.18.1"]);
    assert_nothing_phases(&document);
    let graph = fixture.graph();
    assert_eq!(
        graph.channel_at(STABLE, start() - DAY).next_change(),
        Some(start()),
        "it changes when the release enters"
    );
}

#[test]
fn inside_its_windows_a_release_is_in_the_channel_and_the_updates_into_it_are_phased() {
    let fixture = phasing_fixture();
    let document = at(&fixture, start() + DAY);
    assert_eq!(
        versions(&document),
        ["4.17.9", "4.18.1", "4.18.2"],
        "4.18.3 starts later"
    );
    let phasing = release(&document, "4.18.2").unwrap();
    assert_eq!(
        phasing["phasing"],
        json!({"start": START, "end": time(start() + 14 * DAY)}),
        "listed once its longest window (the minor update's) ends"
    );
    assert_eq!(phasing["channels"], json!(["fast-4.18", STABLE]));

    // A patch update: two days, half of them gone; a conditional one stays so.
    let patch = update(&document, "4.18.1", "4.18.2");
    assert_eq!(
        patch["phased"],
        json!({"start": START, "end": time(start() + 2 * DAY), "duration": "P2D", "share": 0.5})
    );
    assert_eq!(
        (&patch["recommended"], &patch["risks"][0]["name"]),
        (&json!(false), &json!("Flaky"))
    );
    // A minor update: the default's fourteen days.
    let minor = update(&document, "4.17.9", "4.18.2");
    assert_eq!(minor["phased"]["duration"], "P14D");
    assert_eq!(minor["phased"]["share"], 1.0 / 14.0);
    // An update between releases the channel lists is not phased.
    assert!(update(&document, "4.17.9", "4.18.1").get("phased").is_none());
    assert!(
        release(&document, "4.18.1").unwrap().get("phasing").is_none(),
        "a listed release is not phasing"
    );
    assert_eq!(
        (
            &document["recommendedCount"],
            &document["conditionalCount"],
            &document["phasedCount"]
        ),
        (&json!(2), &json!(1), &json!(2))
    );

    let graph = fixture.graph();
    let next_change = |now| graph.channel_at(STABLE, now).next_change();
    assert_eq!(
        next_change(start() + DAY),
        Some(start() + 2 * DAY),
        "the patch window's end"
    );
    assert_eq!(
        next_change(start() + 3 * DAY),
        Some(start() + 10 * DAY),
        "4.18.3's start"
    );
}

#[test]
fn a_window_that_has_ended_offers_the_update_to_every_cluster() {
    let document = at(&phasing_fixture(), start() + 3 * DAY);
    assert_eq!(update(&document, "4.18.1", "4.18.2")["phased"]["share"], 1.0);
    assert!(
        update(&document, "4.17.9", "4.18.2")["phased"]["share"]
            .as_f64()
            .unwrap()
            < 1.0
    );
}

#[test]
fn releases_phasing_into_the_channel_update_into_each_other_phased() {
    let document = at(&phasing_fixture(), start() + 11 * DAY);
    assert_eq!(versions(&document), ["4.17.9", "4.18.1", "4.18.2", "4.18.3"]);
    let into_the_later = update(&document, "4.18.2", "4.18.3");
    assert_eq!(
        into_the_later["phased"]["start"],
        time(start() + 10 * DAY),
        "the window of the release updated to"
    );
    assert_eq!(into_the_later["phased"]["duration"], "P2D");
}

#[test]
fn once_the_graph_lists_it_a_release_is_like_the_others() {
    // The graph-builder at the end of the longest window: listed, no key.
    let listed = Fixture::new()
        .release("4.18.1", &[STABLE])
        .release("4.18.2", &[STABLE])
        .update("4.18.1", "4.18.2");
    // A key still naming a channel that lists the release changes nothing.
    let listed_with_a_key = listed.clone().metadata(
        "4.18.2",
        keys::PHASED_ROLLOUTS,
        &json!({STABLE: {"start": START, "patch": "P2D"}}).to_string(),
    );
    for fixture in [listed, listed_with_a_key] {
        let document = at(&fixture, start() + DAY);
        assert_eq!(versions(&document), ["4.18.1", "4.18.2"]);
        assert_nothing_phases(&document);
        assert_eq!(fixture.graph().channel_at(STABLE, start()).next_change(), None);
    }
}

#[test]
fn as_listed_or_with_a_value_that_does_not_read_nothing_phases() {
    let fixture = phasing_fixture();
    let graph = fixture.graph();
    let listed = serde_json::to_value(ChannelGraphJson::new(&graph.channel_as_listed(STABLE))).unwrap();
    assert_eq!(versions(&listed), ["4.17.9", "4.18.1"]);
    assert_eq!(graph.channel_as_listed(STABLE).next_change(), None);

    let unreadable = fixture.metadata(
        "4.18.2",
        keys::PHASED_ROLLOUTS,
        r#"{"stable-4.18":{"begin":"soon"}}"#,
    );
    assert_eq!(versions(&at(&unreadable, start() + DAY)), ["4.17.9", "4.18.1"]);
}
