//! Why a cluster sees what it sees: `GET {prefix}/v1/explain-cluster` on the status
//! port, with a graph request's parameters (`channel`, `arch`, `id`,
//! `version`). The answer ([`Explanation`], JSON):
//!
//! ```json
//! {
//!   "policyFile": "/etc/cincinnati/policy.yaml",
//!   "id": "0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60",
//!   "placePercent": 12.5,
//!   "groups": ["production"],
//!   "rules": {"deferral_days": 14, "max_version": "4.18.5"},
//!   "deferralCutoff": "2026-11-11T10:00:00Z",
//!   "rollouts": [{"target": "4.18.7", "line": 9, "state": "on-schedule",
//!                 "said": "on schedule at 37.5%, complete at 2026-11-27T00:00:00Z",
//!                 "progress": 37.5, "...": "(the rollout's view)",
//!                 "offered": false, "insideFrom": "2026-11-21T00:41:17Z", "canary": false}],
//!   "validForSecs": 3300,
//!   "channel": "stable-4.18", "arch": "amd64",
//!   "viewChannels": ["stable-4.18", "hotfix-acme-4.18"],
//!   "withheld": [{"release": "4.18.7", "rule": "rollout", "rollout": 0}],
//!   "edges": [{"from": "4.17.9", "to": "4.18.4", "line": 12, "risk": null}],
//!   "updates": {"from": "4.18.1",
//!               "offered": ["4.18.2"],
//!               "removed": [{"release": "4.18.7", "rule": "rollout", "rollout": 0}]},
//!   "phased": [{"channel": "stable-4.18", "from": "4.18.1", "to": "4.18.2",
//!               "duration": "P2D", "start": "2026-11-20T09:00:00Z",
//!               "end": "2026-11-22T09:00:00Z",
//!               "offeredFrom": "2026-11-21T02:41:17Z", "offered": true}]
//! }
//! ```
//!
//! `id` is null without a valid id (the default policy, last in every
//! rollout); `withheld` lists every release of the channel the policy
//! withholds from this cluster, with the first rule that does
//! (`maxVersion`, `rollout`, `deferral`); `viewChannels`, the channels
//! whose releases make its view (scoped channels joined, or none for a
//! scoped channel it may not see); `edges`, what its groups' blocked edges
//! did (`risk` null: removed; a name: made conditional on that risk, `line`
//! the blocked edge's in the policy file); `updates` (with `version`) splits
//! the updates from that version in the graph without the policy into
//! those offered and those the policy removed. Each of `rollouts` is the
//! rollout's view (where it is and why, in the rollout model's words) with
//! whether this cluster is offered its target, since when or from when at
//! its schedule (`insideFrom`: none while an operator or the fleet
//! decides), and whether it is a canary; `validForSecs`, when the
//! cluster's class changes next. `phased` (with `version`) lists the
//! updates from that version that graph-data's phased rollouts offer this
//! cluster from its own moment of their window ([`crate::client::phased`]),
//! whether the policy withholds them or not.
//!
//! An engine that phases explains a phased channel without a policy file
//! too: the policy's fields are then empty ([`without_policy`]).

use std::sync::Arc;

use cincinnati_client::cluster_policy::{
    ClusterPolicy, EdgeChange, PhasedOffer, PolicyUpdates, Removal, RolloutPlace,
};
use cincinnati_core::release::same_release;
use cincinnati_core::{Graph, Version};
use rollout_model::time::Timestamp;
use rollout_model::{Knowledge, Placed};

use super::apply::{Applied, Withheld};
use super::policy::PolicyClass;
use super::view::{rollout_view, shown};
use crate::client::phased::PhasedRollouts;

/// The explanation, as the document's one definition types it.
pub type Explanation = ClusterPolicy;

/// What a request is asked about.
#[derive(Debug, Clone)]
pub struct Asked<'a> {
    pub channel: Option<&'a str>,
    pub arch: Option<&'a str>,
    pub version: Option<&'a str>,
    /// The channels of the request's view, as its class sees them.
    pub view_channels: Vec<String>,
    /// The phased updates from `version` for this cluster.
    pub phased: Vec<PhasedOffer>,
}

/// The updates of `phased` (a revision's) from `asked.version` in its
/// channel, for `arch` and a cluster at `cluster` (none: without an id),
/// at `now` with `knowledge` of run-time control.
pub fn phased_offers(
    (phased, knowledge): (&PhasedRollouts, Option<&Arc<Knowledge>>),
    channel: &str,
    arch: &str,
    version: &Version,
    cluster: Option<Placed>,
    now: Timestamp,
) -> Vec<PhasedOffer> {
    let mut offers: Vec<PhasedOffer> = phased
        .updates()
        .iter()
        .filter(|update| {
            update.channel == channel
                && update.arch.as_deref() == Some(arch)
                && same_release(&update.from, version)
        })
        .map(|update| {
            let window = update.window();
            let standing = phased.standing(update, cluster.map(|cluster| cluster.place), now, knowledge);
            PhasedOffer {
                channel: update.channel.clone(),
                from: update.from.to_string(),
                to: update.to.to_string(),
                duration: update.duration.as_ref().map(ToString::to_string),
                start: shown(window.start),
                end: shown(window.end),
                offered_from: shown(standing.from),
                offered: standing.offered,
                control: standing.control,
            }
        })
        .collect();
    offers.sort_by(|a, b| a.to.cmp(&b.to));
    offers
}

/// The explanation of an engine without a policy file for a request in a
/// channel that phases: who the cluster is and its phased updates.
pub fn without_policy(cluster: Option<Placed>, asked: Asked<'_>, valid_for_secs: Option<u64>) -> Explanation {
    Explanation {
        policy_file: None,
        id: cluster.map(|cluster| cluster.id.to_string()),
        place_percent: cluster.map(|cluster| cluster.place.percent()),
        groups: Vec::new(),
        rules: serde_json::Map::new(),
        deferral_cutoff: None,
        rollouts: Vec::new(),
        valid_for_secs,
        channel: asked.channel.map(str::to_owned),
        arch: asked.arch.map(str::to_owned),
        view_channels: asked.view_channels,
        withheld: Vec::new(),
        edges: Vec::new(),
        updates: None,
        phased: asked.phased,
    }
}

/// The explanation of `class` at `now`, from the graph the request gets
/// without the policy and what the policy does to it.
pub fn explain(
    class: &PolicyClass,
    asked: Asked<'_>,
    base: &Graph,
    applied: &Applied,
    now: Timestamp,
) -> Explanation {
    let withheld: Vec<Removal> = applied.withheld.iter().map(removal).collect();
    Explanation {
        policy_file: None,
        id: class.id.map(|id| id.to_string()),
        place_percent: class.who.place.map(|place| place.percent()),
        groups: class.groups.names.clone(),
        rules: match serde_json::to_value(&class.groups.rules) {
            Ok(serde_json::Value::Object(rules)) => rules,
            _ => serde_json::Map::new(),
        },
        deferral_cutoff: class.deferral_cutoff.map(shown),
        rollouts: class
            .rollouts
            .iter()
            .enumerate()
            .map(|(index, rollout)| RolloutPlace {
                rollout: rollout_view(rollout, now, None),
                offered: class.withheld & (1 << index) == 0,
                inside_from: rollout.offered_from(class.who).map(shown),
                canary: class.who.lot.is_some_and(|lot| {
                    rollout
                        .gates()
                        .and_then(|gates| gates.canaries.as_ref())
                        .is_some_and(|canaries| canaries.lots().any(|canary| canary == lot))
                }),
            })
            .collect(),
        valid_for_secs: class.valid_for(now).map(|valid_for| valid_for.as_secs()),
        channel: asked.channel.map(str::to_owned),
        arch: asked.arch.map(str::to_owned),
        view_channels: asked.view_channels,
        edges: applied.edges.clone(),
        updates: asked
            .version
            .and_then(|version| Version::parse(version).ok())
            .and_then(|version| updates_from(base, &version, &withheld, &applied.edges)),
        withheld,
        phased: asked.phased,
    }
}

fn removal(withheld: &Withheld) -> Removal {
    let mut details = match serde_json::to_value(&withheld.why) {
        Ok(serde_json::Value::Object(fields)) => fields,
        _ => serde_json::Map::new(),
    };
    let rule = details
        .remove("rule")
        .and_then(|rule| rule.as_str().map(str::to_owned))
        .unwrap_or_default();
    Removal {
        release: withheld.release.clone(),
        rule,
        details,
    }
}

/// The updates from `version` in `base`, recommended and conditional, split
/// into those offered and those the policy removed (their target withheld,
/// or a blocked edge of the cluster's groups).
fn updates_from(
    base: &Graph,
    version: &Version,
    withheld: &[Removal],
    edges: &[EdgeChange],
) -> Option<PolicyUpdates> {
    let (from, release) = base
        .releases()
        .find(|(_, release)| same_release(&release.version, version))?;
    let mut targets: Vec<Version> = base
        .children(from)
        .filter_map(|to| Some(base.release(to)?.version.clone()))
        .chain(
            base.conditional_edges()
                .iter()
                .flat_map(|group| &group.edges)
                .filter(|edge| *edge.from == release.version)
                .map(|edge| Version::clone(&edge.to)),
        )
        .collect();
    targets.sort();
    targets.dedup();
    let (removed, offered): (Vec<_>, Vec<_>) = targets
        .into_iter()
        .map(|target| {
            let name = target.to_string();
            let blocked = edges
                .iter()
                .find(|change| {
                    change.risk.is_none() && change.from == release.version.to_string() && change.to == name
                })
                .map(|change| Removal {
                    release: name.clone(),
                    rule: "blockedEdge".to_owned(),
                    details: serde_json::Map::from_iter([("line".to_owned(), change.line.into())]),
                });
            let removal = withheld
                .iter()
                .find(|withheld| withheld.release == name)
                .cloned()
                .or(blocked);
            (target, removal)
        })
        .partition(|(_, removal)| removal.is_some());
    Some(PolicyUpdates {
        from: release.version.to_string(),
        offered: offered
            .into_iter()
            .map(|(target, _)| target.to_string())
            .collect(),
        removed: removed.into_iter().filter_map(|(_, removal)| removal).collect(),
    })
}
