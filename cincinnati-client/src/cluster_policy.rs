//! A policy-engine's explanation of what one cluster sees
//! (`{prefix}/v1/explain-cluster` on its status port; the document is described in
//! docs/policy-engine.md): the one definition of the document, which the
//! engine writes and `cincinnati explain --id` reads, and where that
//! endpoint is by convention.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::rollout::RolloutView;

/// The explanation (schema 2: camelCase keys, rollouts as
/// [`RolloutView`]s). Unknown fields are ignored, so clients and engines
/// of other versions agree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicy {
    /// The policy file the engine serves, as configured: its lines are
    /// the ones named below.
    #[serde(default)]
    pub policy_file: Option<String>,
    /// The cluster id as the engine read it; none when it is not a UUID.
    pub id: Option<String>,
    pub place_percent: Option<f64>,
    pub groups: Vec<String>,
    /// The rules the groups add up to, as the policy file writes them
    /// (`deferral_days`, `max_version`).
    pub rules: Map<String, Value>,
    /// RFC 3339: releases built after it are deferred.
    #[serde(default)]
    pub deferral_cutoff: Option<String>,
    pub rollouts: Vec<RolloutPlace>,
    /// When the cluster's class changes next.
    #[serde(default)]
    pub valid_for_secs: Option<u64>,
    #[serde(default)]
    pub channel: Option<String>,
    #[serde(default)]
    pub arch: Option<String>,
    /// The channels whose releases make the cluster's view.
    #[serde(default)]
    pub view_channels: Vec<String>,
    /// Every release of the channel withheld from the cluster, with the
    /// first rule that withholds it.
    #[serde(default)]
    pub withheld: Vec<Removal>,
    /// What the cluster's groups' blocked edges did.
    #[serde(default)]
    pub edges: Vec<EdgeChange>,
    /// With a version: the updates from it, offered and removed.
    pub updates: Option<PolicyUpdates>,
    /// With a version: the updates from it that graph-data's phased
    /// rollouts (`phasedRollouts`) offer this cluster at its own moment.
    #[serde(default)]
    pub phased: Vec<PhasedOffer>,
}

/// An update phased by a rollout declared in graph-data, as this cluster
/// sees it: the rollout, and the moment of its window the cluster is
/// offered the update (a request without an id: the end of the release's
/// longest window).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhasedOffer {
    pub channel: String,
    pub from: String,
    pub to: String,
    /// ISO 8601, as the channel declares it for the update's kind; none:
    /// no rule for it, the update is offered to everyone at `start`.
    pub duration: Option<String>,
    /// RFC 3339: the rollout's start.
    pub start: String,
    /// RFC 3339: `start` + `duration`.
    pub end: String,
    /// RFC 3339: from when this cluster is offered the update.
    pub offered_from: String,
    /// Whether it is offered now.
    pub offered: bool,
    /// What run-time control does to the rollout, when it holds it back
    /// ("paused at 31.0% by ops since ..."): `offeredFrom` is then as if
    /// it were resumed now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<String>,
}

impl PhasedOffer {
    /// `offered to this cluster from <time> (phased rollout of 4.18.52 in
    /// stable-4.18, P2D from <start>)`, in the future tense until then.
    pub fn said(&self) -> String {
        let when = if self.offered {
            "offered to this cluster from"
        } else {
            "to be offered to this cluster from"
        };
        let control = self
            .control
            .as_ref()
            .map_or_else(String::new, |control| format!("; the rollout is {control}"));
        format!(
            "{when} {} (phased rollout of {} in {}, {} from {}){control}",
            self.offered_from,
            self.to,
            self.channel,
            self.duration.as_deref().unwrap_or("no duration"),
            self.start
        )
    }
}

/// What a blocked edge of the cluster's groups did to one update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EdgeChange {
    pub from: String,
    pub to: String,
    /// The line of the blocked edge in the policy file.
    pub line: u64,
    /// `None`: the update is removed; a risk's name: it is conditional on it.
    pub risk: Option<String>,
}

/// A phased rollout as the cluster sees it now: the rollout, and where
/// this cluster is in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutPlace {
    #[serde(flatten)]
    pub rollout: RolloutView,
    /// Whether the cluster is offered the target.
    pub offered: bool,
    /// RFC 3339: when its schedule lets this cluster in (in the past once
    /// it has); absent when an operator or the fleet decides (paused,
    /// held, gated, state unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inside_from: Option<String>,
    /// Whether this cluster is one of its canaries.
    #[serde(default)]
    pub canary: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyUpdates {
    pub from: String,
    pub offered: Vec<String>,
    pub removed: Vec<Removal>,
}

/// A release (or the update to it) the policy removed: its target, the
/// rule, and the rule's details (`max_version`, `deferral_days` and
/// `created`, `rollout`, a blocked edge's `line`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Removal {
    pub release: String,
    pub rule: String,
    #[serde(flatten)]
    pub details: Map<String, Value>,
}

impl ClusterPolicy {
    /// Why the policy removed the update to `to`, if it did.
    pub fn removal_of(&self, to: &str) -> Option<&Removal> {
        self.updates
            .as_ref()?
            .removed
            .iter()
            .find(|removal| removal.release == to)
    }

    /// Whether the graph without the policy has an update from the version
    /// asked about to `to` (offered or removed); `None` when the engine was
    /// not asked about a version of the channel.
    pub fn has_update_to(&self, to: &str) -> Option<bool> {
        let updates = self.updates.as_ref()?;
        Some(updates.offered.iter().any(|offered| offered == to) || self.removal_of(to).is_some())
    }

    /// The rollout of `target`, if one is scheduled.
    pub fn rollout_of(&self, target: &str) -> Option<&RolloutPlace> {
        self.rollouts.iter().find(|place| place.rollout.target == target)
    }

    /// The phased rollout of the update to `to`, if one phases it.
    pub fn phased_to(&self, to: &str) -> Option<&PhasedOffer> {
        self.phased.iter().find(|offer| offer.to == to)
    }

    /// What the cluster's groups' blocked edges did to `from → to`.
    pub fn edges_on<'a>(&'a self, from: &'a str, to: &'a str) -> impl Iterator<Item = &'a EdgeChange> + 'a {
        self.edges
            .iter()
            .filter(move |change| change.from == from && change.to == to)
    }
}

impl Removal {
    /// `max_version 4.18.45`, `deferral_days 14, created 2026-11-20T00:00:00Z`.
    pub fn details_text(&self) -> String {
        self.details
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => format!("{key} {text}"),
                other => format!("{key} {other}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The explain endpoint of the engine serving `graph_url`, by the ports'
/// convention (the status port is the API port plus 1000: 8081 → 9081) and
/// with `{prefix}/v1/explain-cluster` in place of `{prefix}/graph` or
/// `{prefix}/v1/graph`.
pub fn explain_url_of(graph_url: &http_fetch::Url) -> Option<http_fetch::Url> {
    let mut url = graph_url.clone();
    let port = url.port_or_known_default()?.checked_add(1000)?;
    url.set_port(Some(port)).ok()?;
    let path = url.path();
    let prefix = path
        .strip_suffix("/v1/graph")
        .or_else(|| path.strip_suffix("/graph"))?
        .to_owned();
    url.set_path(&format!("{prefix}/v1/explain-cluster"));
    url.set_query(None);
    Some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_explain_url_is_on_the_status_port_under_the_prefix() {
        let url = |text: &str| explain_url_of(&text.parse().unwrap()).map(|url| url.to_string());
        assert_eq!(
            url("http://127.0.0.1:8082/api/upgrades_info/graph?channel=x").as_deref(),
            Some("http://127.0.0.1:9082/api/upgrades_info/v1/explain-cluster")
        );
        assert_eq!(
            url("http://pe:8081/v1/graph").as_deref(),
            Some("http://pe:9081/v1/explain-cluster")
        );
        assert_eq!(url("http://pe:8081/somewhere"), None);
    }

    #[test]
    fn an_engines_explanation_is_read_and_removals_found() {
        let document = r#"{"id": "5ca1ab1e-0000-4000-8000-00000000d0e5", "placePercent": 28.9,
            "groups": ["production"], "rules": {"deferral_days": 0, "max_version": "4.18.45"},
            "deferralCutoff": null, "rollouts": [], "validForSecs": null,
            "channel": "stable-4.18", "arch": "amd64", "withheld": [],
            "updates": {"from": "4.18.40", "offered": ["4.18.41"],
                        "removed": [{"release": "4.18.46", "rule": "maxVersion", "maxVersion": "4.18.45"}]}}"#;
        let policy: ClusterPolicy = serde_json::from_str(document).unwrap();
        let removal = policy.removal_of("4.18.46").unwrap();
        assert_eq!(removal.rule, "maxVersion");
        assert_eq!(removal.details_text(), "maxVersion 4.18.45");
        assert_eq!(policy.removal_of("4.18.41"), None);
        assert!(policy.phased.is_empty(), "an engine without phasing writes none");
    }

    #[test]
    fn a_phased_offer_is_said_in_the_tense_of_its_moment() {
        let mut offer = PhasedOffer {
            channel: "stable-4.18".to_owned(),
            from: "4.18.51".to_owned(),
            to: "4.18.52".to_owned(),
            duration: Some("P2D".to_owned()),
            start: "2026-06-02T09:00:00Z".to_owned(),
            end: "2026-06-04T09:00:00Z".to_owned(),
            offered_from: "2026-06-03T09:00:00Z".to_owned(),
            offered: true,
            control: None,
        };
        assert_eq!(
            offer.said(),
            "offered to this cluster from 2026-06-03T09:00:00Z (phased rollout of 4.18.52 in stable-4.18, P2D from 2026-06-02T09:00:00Z)"
        );
        offer.offered = false;
        assert!(
            offer
                .said()
                .starts_with("to be offered to this cluster from 2026-06-03T09:00:00Z (")
        );
        offer.control = Some("paused at 31.0% by ops since 2026-06-02T21:00:00Z".to_owned());
        assert!(
            offer
                .said()
                .ends_with("P2D from 2026-06-02T09:00:00Z); the rollout is paused at 31.0% by ops since 2026-06-02T21:00:00Z"),
            "{}",
            offer.said()
        );
    }
}
