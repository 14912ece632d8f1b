//! Why a cluster sees what it sees: `GET {prefix}/v1/explain-cluster` on the status
//! port, with a graph request's parameters (`channel`, `arch`, `id`,
//! `version`). The answer ([`Explanation`], JSON):
//!
//! ```json
//! {
//!   "policy_file": "/etc/cincinnati/policy.yaml",
//!   "id": "0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60",
//!   "place_percent": 12.5,
//!   "groups": ["production"],
//!   "rules": {"deferral_days": 14, "max_version": "4.18.5"},
//!   "deferral_cutoff": "2026-11-11T10:00:00Z",
//!   "rollouts": [{"target": "4.18.7", "progress_percent": 37.5, "offered": false,
//!                 "line": 9, "start": "2026-11-20T00:00:00Z", "starting_percentage": 5.0,
//!                 "complete": "2026-11-27T00:00:00Z", "inside_from": "2026-11-21T00:41:17Z"}],
//!   "valid_for_secs": 3300,
//!   "channel": "stable-4.18", "arch": "amd64",
//!   "view_channels": ["stable-4.18", "hotfix-acme-4.18"],
//!   "withheld": [{"release": "4.18.7", "rule": "rollout", "rollout": 0}],
//!   "edges": [{"from": "4.17.9", "to": "4.18.4", "line": 12, "risk": null}],
//!   "updates": {"from": "4.18.1",
//!               "offered": ["4.18.2"],
//!               "removed": [{"release": "4.18.7", "rule": "rollout", "rollout": 0}]}
//! }
//! ```
//!
//! `id` is null without a valid id (the default policy, last in every
//! rollout); `withheld` lists every release of the channel the policy
//! withholds from this cluster, with the first rule that does
//! (`max_version`, `rollout`, `deferral`); `view_channels`, the channels
//! whose releases make its view (scoped channels joined, or none for a
//! scoped channel it may not see); `edges`, what its groups' blocked edges
//! did (`risk` null: removed; a name: made conditional on that risk, `line`
//! the blocked edge's in the policy file); `updates` (with `version`) splits
//! the updates from that version in the graph without the policy into
//! those offered and those the policy removed. `rollouts[].offered` says
//! whether the cluster is inside each rollout, `line` where the rollout is
//! written in the policy file, `start`, `starting_percentage` and
//! `complete` its schedule, and `inside_from` the first second the cluster
//! is inside at that schedule (in the past once it is; none while paused,
//! held or gated), `gate` the rollout's gate that withholds its target from
//! this cluster now (`canary` or `max_offered_per_period`, what it says and
//! when it lets more in by itself); `valid_for_secs`, when the cluster's
//! class changes next.

use std::time::{Duration, SystemTime};

use cincinnati_client::cluster_policy::{
    ClusterPolicy, EdgeChange, PolicyUpdates, Removal, RolloutGateFacts, RolloutPlace,
};
use cincinnati_core::release::same_release;
use cincinnati_core::{Graph, Version};
use service_kit::timestamp::rfc3339;

use super::apply::{Applied, Withheld};
use super::id::Place;
use super::policy::{PolicyClass, Rollout, RolloutControl};

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
}

/// The explanation of `class` at `now`, from the graph the request gets
/// without the policy and what the policy does to it.
pub fn explain(
    class: &PolicyClass,
    asked: Asked<'_>,
    base: &Graph,
    applied: &Applied,
    now: SystemTime,
) -> Explanation {
    let withheld: Vec<Removal> = applied.withheld.iter().map(shown).collect();
    Explanation {
        policy_file: None,
        id: class.id.map(|id| id.to_string()),
        place_percent: class.id.map(|_| class.place.percent()),
        groups: class.groups.names.clone(),
        rules: match serde_json::to_value(&class.groups.rules) {
            Ok(serde_json::Value::Object(rules)) => rules,
            _ => serde_json::Map::new(),
        },
        deferral_cutoff: class.deferral_cutoff.map(|cutoff| {
            rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_secs(cutoff.max(0) as u64))
        }),
        rollouts: class
            .rollouts
            .iter()
            .enumerate()
            .map(|(index, rollout)| RolloutPlace {
                target: rollout.target.to_string(),
                progress_percent: rollout.progress(now),
                offered: class.withheld & (1 << index) == 0,
                line: Some(rollout.line),
                start: Some(rfc3339(rollout.start)),
                starting_percentage: Some(rollout.starting_percentage),
                complete: Some(rfc3339(rollout.start + rollout.duration)),
                inside_from: rollout
                    .follows_schedule()
                    .then(|| rfc3339(inside_from(rollout, class.place))),
                control: rollout.control.as_ref().map(RolloutControl::facts),
                office_hours: rollout.office_hours.as_ref().map(ToString::to_string),
                gate: gate_facts(rollout, class.place, now),
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
    }
}

/// The first whole second at which a cluster at `place` is inside
/// `rollout` at its schedule (later by the time its clock stood still, and
/// within its office hours).
/// Found by bisection over the rollout's own rule ([`Rollout::includes`],
/// which only grows with time) rather than by inverting its formula a
/// second time here.
fn inside_from(rollout: &Rollout, place: Place) -> SystemTime {
    let stood_still = rollout
        .control
        .as_ref()
        .map_or(Duration::ZERO, |control| control.stood_still);
    let start = rollout.start + stood_still;
    let at = |secs: u64| start + Duration::from_secs(secs);
    if rollout.includes(place, start) {
        return start;
    }
    // Inside at the latest once complete (a second past, for a duration
    // with a fraction of a second).
    let (mut outside, mut inside) = (0, rollout.duration.as_secs() + 1);
    while inside - outside > 1 {
        let middle = outside + (inside - outside) / 2;
        if rollout.includes(place, at(middle)) {
            inside = middle;
        } else {
            outside = middle;
        }
    }
    // Due outside office hours (up to the rollout's end): the next window.
    rollout
        .office_hours
        .as_ref()
        .map_or(at(inside), |office| office.next_open(at(inside)))
}

/// The gate of `rollout` that withholds its target from a cluster at
/// `place` at `now`, if one does: what it says, and when it lets more in
/// by itself.
fn gate_facts(rollout: &Rollout, place: Place, now: SystemTime) -> Option<RolloutGateFacts> {
    let rule = rollout.withholding_gate(place, now)?;
    let status = rollout.gate_status.as_ref();
    let reason = status.map_or_else(
        || {
            format!("{rule}: not judged yet (rollout control judges its gates from the fleet store every rollouts.halt_check_secs)")
        },
        |status| status.reason.clone(),
    );
    let until = match (
        rule,
        rollout.gates.max_offered,
        status.and_then(|status| status.period),
    ) {
        ("max_offered_per_period", Some(rate), Some((period_start, _))) => {
            Some(rfc3339(period_start + rate.period))
        }
        _ => None,
    };
    Some(RolloutGateFacts {
        rule: rule.to_owned(),
        reason,
        until,
    })
}

fn shown(withheld: &Withheld) -> Removal {
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
                .filter(|edge| edge.from == release.version)
                .map(|edge| edge.to.clone()),
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
                    rule: "blocked_edge".to_owned(),
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

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use cincinnati_core::Version;

    use super::*;
    use crate::cluster_policy::id::ClusterId;

    fn rollout(starting_percentage: f64) -> Rollout {
        Rollout {
            target: Version::new(4, 18, 52),
            start: UNIX_EPOCH + Duration::from_secs(1_767_225_600),
            duration: Duration::from_secs(87_600 * 3600),
            starting_percentage,
            line: 27,
            halt_when: None,
            halt_query: None,
            auto_resume: false,
            office_hours: None,
            gates: Default::default(),
            gate_status: None,
            control: None,
        }
    }

    /// For many places: inside at the second found, outside the second
    /// before (the rule only grows with time), whatever the schedule.
    #[test]
    fn a_cluster_is_inside_from_the_first_second_the_rollout_includes_it() {
        let places = (0..200_u32)
            .filter_map(|n| ClusterId::parse(&format!("c0ffee00-{n:04x}-4a11-8b22-0123456789ab")));
        for starting in [0.0, 5.0, 50.0, 99.5] {
            let rollout = rollout(starting);
            for id in places.clone() {
                let place = id.place();
                let at = inside_from(&rollout, place);
                assert!(rollout.includes(place, at), "{starting}% {place:?}");
                if at > rollout.start {
                    assert!(
                        !rollout.includes(place, at - Duration::from_secs(1)),
                        "{starting}% {place:?}: inside a second earlier"
                    );
                } else {
                    assert!(place.percent() < starting, "inside at the start only below it");
                }
            }
        }
    }

    /// With office hours (weekdays, 09:00-17:00 UTC), the first second a
    /// cluster is inside is within a window, and it is outside before.
    #[test]
    fn with_office_hours_a_cluster_is_inside_from_a_window() {
        let days: Vec<String> = ["mon", "tue", "wed", "thu", "fri"].map(str::to_owned).to_vec();
        let office = Rollout {
            office_hours: Some(
                crate::cluster_policy::office_hours::OfficeHours::new(&days, "09:00", "17:00", "UTC")
                    .unwrap(),
            ),
            // A week from Thursday 2026-01-01 00:00 UTC.
            duration: Duration::from_secs(7 * 24 * 3600),
            ..rollout(0.0)
        };
        let places =
            (0..50_u32).filter_map(|n| ClusterId::parse(&format!("c0ffee00-{n:04x}-4a11-8b22-0123456789ab")));
        for place in places.map(|id| id.place()) {
            let at = inside_from(&office, place);
            assert!(office.includes(place, at), "{place:?}");
            assert!(!office.includes(place, at - Duration::from_secs(1)), "{place:?}");
            let hour = rfc3339(at)[11..13].parse::<u32>().unwrap();
            assert!((9..17).contains(&hour), "{place:?} at {}", rfc3339(at));
        }
    }

    #[test]
    fn without_an_id_a_cluster_is_inside_once_the_rollout_is_complete() {
        let rollout = rollout(50.0);
        assert_eq!(
            inside_from(&rollout, Place::LAST),
            rollout.start + rollout.duration
        );
    }

    /// The demo's cluster at 71.3%: (71.3 - 50) / 50 of ten years after
    /// 2026-01-01, as docs/policy-engine.md computes it by hand.
    #[test]
    fn the_demo_cluster_outside_the_rollout_is_inside_in_2030() {
        let id = ClusterId::parse("c0ffee00-0001-4a11-8b22-0123456789ab").unwrap();
        let at = inside_from(&rollout(50.0), id.place());
        let expected = rollout(50.0).start
            + rollout(50.0)
                .duration
                .mul_f64((id.place().percent() - 50.0) / 50.0);
        let off = at
            .duration_since(expected)
            .unwrap_or_else(|error| error.duration());
        assert!(off <= Duration::from_secs(1), "{off:?}");
        assert!(rfc3339(at).starts_with("2030-"), "{}", rfc3339(at));
    }
}
