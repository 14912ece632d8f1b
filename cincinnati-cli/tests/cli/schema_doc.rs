//! docs/cli.md's JSON schema table, held to what the command prints: the
//! golden JSON documents (which golden.rs checks against the binary) have
//! exactly the fields the table lists for their kind, so the documented
//! schema cannot drift from the code.

use std::collections::BTreeSet;

use cincinnati_client::json::ChannelGraphJson;
use cincinnati_client::{Document, Shape, UpdateGraph};

use crate::support::golden::golden_json;
use crate::support::{EVERY_DOCUMENT, documented_fields, keys};

/// Each kind with a golden JSON document of it (`Preview` has none:
/// phased_preview.rs holds it to the table). The fleet's and the
/// rollouts' are the engine's documents, which `fleet -o json` and
/// `rollout -o json` print as received (fleet.rs and rollout.rs check
/// that).
const GOLDEN: [(&str, &str); 12] = [
    ("Updates", "updates-not-recommended.json"),
    ("Path", "path-fast-all.json"),
    ("Explanation", "explain-blocked.json"),
    ("Channels", "channels-version.json"),
    ("Diff", "diff.json"),
    ("GraphDataCheck", "check-broken.json"),
    ("FleetVersions", "fleet-versions.json"),
    ("FleetAdoption", "fleet-adoption.json"),
    ("FleetRollouts", "fleet-rollouts.json"),
    ("FleetStuck", "fleet-stuck.json"),
    ("FleetCluster", "fleet-cluster.json"),
    ("Rollouts", "rollouts.json"),
];

#[test]
fn every_documented_kind_lists_exactly_the_fields_printed() {
    for (kind, file) in GOLDEN {
        let printed = golden_json(file);
        assert_eq!(printed["kind"], kind, "{file}");
        let mut documented = documented_fields(&format!("`{kind}`"));
        documented.extend(EVERY_DOCUMENT.map(str::to_owned));
        assert_eq!(
            keys(&printed),
            documented,
            "docs/cli.md's fields of {kind} vs {file}"
        );
    }
}

#[test]
fn a_hop_a_break_and_a_plan_with_risks_have_the_documented_fields() {
    let found = golden_json("path-fast-all.json");
    assert_eq!(keys(&found["plan"]["hops"][0]), documented_fields("— hop"));
    let none = golden_json("path-eus-no-path.json");
    assert_eq!(keys(&none["break"]), documented_fields("— `break`"));
    assert_eq!(
        keys(&none["planWithRisks"]),
        BTreeSet::from(["risks".to_owned(), "hops".to_owned()]),
        "docs/cli.md: `planWithRisks` (`{{risks, hops}}`)"
    );
}

/// The keys of every object of `array` (each rollout has the fields that
/// apply to it; the golden documents hold one of each between them).
fn every_key(array: &serde_json::Value) -> BTreeSet<String> {
    let objects = array.as_array().expect("an array");
    objects.iter().flat_map(keys).collect()
}

#[test]
fn a_fleet_rollout_and_a_version_not_moving_have_the_documented_fields() {
    let rollouts = golden_json("fleet-rollouts.json");
    let mut documented = documented_fields("— a rollout");
    documented.extend(documented_fields("— fleet rollout"));
    assert_eq!(every_key(&rollouts["rollouts"]), documented);
    let stuck = golden_json("fleet-stuck.json");
    assert_eq!(keys(&stuck["notMoving"][0]), documented_fields("— not moving"));
}

#[test]
fn a_rollout_its_gates_its_control_and_a_change_have_the_documented_fields() {
    let document = golden_json("rollouts.json");
    let rollouts = &document["rollouts"];
    assert_eq!(every_key(rollouts), documented_fields("— a rollout"));
    assert_eq!(keys(&document["state"]), documented_fields("— what is known"));
    let part = |name: &str| {
        let parts: Vec<serde_json::Value> = rollouts
            .as_array()
            .expect("an array")
            .iter()
            .filter_map(|rollout| rollout.get(name).cloned())
            .collect();
        every_key(&serde_json::Value::Array(parts))
    };
    assert_eq!(part("canaries"), documented_fields("— canaries"));
    assert_eq!(part("rate"), documented_fields("— rate"));
    assert_eq!(part("control"), documented_fields("— rollout control"));
    assert_eq!(
        every_key(&document["history"]),
        documented_fields("— rollout change")
    );
}

/// The document a policy-engine answers at `/v1/channel` (no command
/// prints it; the explorer page draws it), with a release phasing into the
/// channel: held to the table as the printed ones are.
#[test]
fn the_channel_document_with_a_phasing_release_has_the_documented_fields() {
    let full = br#"{"nodes": [
        {"version": "4.18.1+amd64", "payload": "p1", "metadata": {
          "io.openshift.upgrades.graph.release.arch": "amd64",
          "io.openshift.upgrades.graph.release.channels": "stable-4.18"}},
        {"version": "4.18.2+amd64", "payload": "p2", "metadata": {
          "io.openshift.upgrades.graph.release.arch": "amd64",
          "io.openshift.upgrades.graph.release.channels": "fast-4.18",
          "io.openshift.upgrades.graph.release.phased_rollouts": "{\"stable-4.18\":{\"start\":\"2025-06-02T09:00:00Z\",\"patch\":\"P2D\"}}"}}
      ], "edges": [[0, 1]]}"#;
    let graph = cincinnati_core::wire::parse(full).unwrap().graph;
    let graph = UpdateGraph::build(
        "amd64",
        &[Document {
            graph,
            shape: Shape::Full,
        }],
    );
    let now = "2025-06-03T09:00:00Z".parse().unwrap();
    let document =
        serde_json::to_value(ChannelGraphJson::new(&graph.channel_at("stable-4.18", now))).unwrap();
    let mut documented = documented_fields("`ChannelGraph`");
    documented.extend(EVERY_DOCUMENT.map(str::to_owned));
    assert_eq!(keys(&document), documented, "{document}");
    let update = &document["releases"][0]["updates"][0];
    assert_eq!(keys(update), documented_fields("— channel update"));
    assert_eq!(
        keys(&update["phased"]),
        ["start", "end", "duration", "share"].map(str::to_owned).into(),
        "docs/cli.md: `phased` (`{{start, end, duration, share}}`)"
    );
    assert_eq!(
        keys(&document["releases"][1]["phasing"]),
        documented_fields("— `phasing`")
    );
}
