//! Rollout gates (Nebraska's safe mode and updates per period), declared
//! per rollout in the policy file and opened by the fleet: every
//! `rollouts.halt_check_secs`, each engine sharing the store brings each
//! gated rollout's gates up to date from the fleet store and keeps them
//! there (`fleet_store::gates`), so that every engine offers the same.
//!
//! - `canary: {clusters: K}`: at the first check once the rollout has
//!   started (on its schedule), the K lowest-placed active clusters that
//!   can take the target (offered an update to it in their channel) are
//!   chosen, audited, and offered it; nobody else is. Once every canary
//!   runs the target (or a later version) the gate opens, audited, and the
//!   schedule starts then, from its starting percentage. A canary that has
//!   not arrived `arrival_timeout_hours` after its offer (or after the
//!   rollout's last run-time change, when it is running again) halts the
//!   rollout as `canary`, the late count as the reason.
//! - `max_offered_per_period: {clusters: N, period_hours: P}`: periods of
//!   P hours from the first check; in each, the progress may rise from
//!   where the period began to just above the N-th cluster placed from
//!   there that can take the target or arrived at it: at most N newly
//!   offered a period. The first period begins where the schedule is when
//!   first judged (a rollout under way keeps what it offered), each next
//!   one where the last stopped.
//!
//! Until its gates are first judged a gated rollout offers its target to
//! nobody (a gate that cannot be judged does not let updates through);
//! within a period, a rate only widens.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use cincinnati_core::{ApiError, Version};
use fleet_store::gates::{GateState, GateUpdate, RateState};
use service_kit::timestamp::rfc3339;

use super::{Control, at};
use crate::cluster_policy::policy::{MaxOffered, Rollout};
use crate::fleet::takers::Takers;
use crate::fleet::unix_seconds;
use crate::upstream::feeds::Feeds;

/// Who the audit says paused a rollout whose canary did not arrive.
pub const CANARY_ACTOR: &str = "canary";

impl Control {
    /// Brings every gated rollout's gates up to date from the fleet at
    /// `now` (the update graphs from `feeds`); a failure is logged and the
    /// gates stay as stored.
    pub async fn check_gates(&self, feeds: &Arc<Feeds>, now: SystemTime) {
        let rollouts = self.policy.current().rollouts();
        if !rollouts.iter().any(|rollout| rollout.gates.any()) {
            return;
        }
        let stored = match self.stored(async |store| store.rollout_gates().await).await {
            Ok(stored) => stored,
            Err(error) => {
                tracing::warn!(error = %error.value, "the rollouts' gates cannot be read; they stay as they were");
                return;
            }
        };
        for rollout in rollouts.iter().filter(|rollout| rollout.gates.any()) {
            let target = rollout.target.to_string();
            let before = stored
                .iter()
                .find(|gate| gate.target == target)
                .cloned()
                .unwrap_or_default();
            if let Err(error) = self.check_gate(rollout, &rollouts, &before, feeds, now).await {
                tracing::warn!(target, error = %error.value, "a rollout's gates cannot be judged; they stay as they were");
            }
        }
        self.refresh().await;
    }

    /// One rollout's gates, `before` as stored when the round began: its
    /// canaries until they arrived, then its rate. Stored only if another
    /// engine did not change them meanwhile (it judged the same fleet).
    async fn check_gate(
        &self,
        rollout: &Rollout,
        rollouts: &[Rollout],
        before: &GateState,
        feeds: &Arc<Feeds>,
        now: SystemTime,
    ) -> Result<(), ApiError> {
        let takers = self.fleet.takers(rollout, rollouts, feeds, now).await?;
        let update = match (rollout.gates.canary, rollout.gates.max_offered) {
            (Some(count), _) if before.canaries_arrived_at.is_none() => {
                self.canary_round(rollout, count, before, &takers, now).await?
            }
            (_, Some(rate)) => self.rate_round(rollout, rate, before, &takers, now).await?,
            _ => return Ok(()),
        };
        if !changes(before, &update) {
            return Ok(());
        }
        let target = rollout.target.to_string();
        self.stored(async |store| {
            store
                .update_gates(&target, unix_seconds(now), |current| {
                    unchanged_since(current, before).then_some(update)
                })
                .await
        })
        .await?;
        Ok(())
    }

    /// The canaries' round: choose them once the rollout has started, see
    /// who arrived, open the gate once all have, halt the rollout once one
    /// is late.
    async fn canary_round(
        &self,
        rollout: &Rollout,
        count: u32,
        before: &GateState,
        takers: &Takers,
        now: SystemTime,
    ) -> Result<GateUpdate, ApiError> {
        let target = &rollout.target;
        let Some(chosen_at) = before.canaries_at else {
            if !rollout.is_on_schedule() || rollout.ungated_progress(now) <= 0.0 {
                return Ok(reason_only(format!(
                    "canary: its {count} canaries are chosen once the rollout has started ({}) and is not paused or held",
                    rfc3339(rollout.start)
                )));
            }
            let chosen = self.fleet.waiting(takers, 0.0, count).await?;
            if chosen.is_empty() {
                return Ok(reason_only(format!(
                    "canary: no active cluster can take {target} yet; its {count} canaries are chosen once one can"
                )));
            }
            let places: Vec<String> = chosen
                .iter()
                .map(|canary| format!("{:.4}%", canary.place))
                .collect();
            let audit = format!(
                "chose {} canaries, the first offered {target} (placed at {})",
                chosen.len(),
                places.join(", ")
            );
            return Ok(GateUpdate {
                reason: format!(
                    "canary: 0 of its {} canaries have arrived at {target}; nobody else is offered it until all have",
                    chosen.len()
                ),
                choose: chosen,
                audit: Some(("canaries", audit)),
                ..GateUpdate::default()
            });
        };
        let ids: Vec<String> = before
            .canaries
            .iter()
            .map(|canary| canary.cluster.clone())
            .collect();
        let rows = self.fleet.clusters(&ids).await?;
        let arrived = rows.iter().filter(|row| at_or_past(&row.version, target)).count();
        let total = before.canaries.len();
        if arrived == total {
            let reason = format!(
                "canary: all {total} canaries arrived at {target}; the schedule started at {}",
                rfc3339(now)
            );
            return Ok(GateUpdate {
                canaries_arrived: Some(paused_seconds(rollout, now)),
                audit: Some(("canaries-arrived", reason.clone())),
                reason,
                ..GateUpdate::default()
            });
        }
        // A rollout running again after a run-time change (a resume) gives
        // its canaries the timeout afresh.
        let restarted = rollout
            .control
            .as_ref()
            .filter(|control| control.paused_at.is_none())
            .map(|control| control.changed_at);
        let offered = restarted.map_or(at(chosen_at), |restarted| restarted.max(at(chosen_at)));
        let timeout = rollout.gates.arrival_timeout;
        let deadline = offered + timeout;
        if now >= deadline {
            let reason = format!(
                "halted: {} of the {total} canaries have not arrived at {target} within {} of their offer \
                 (canary: {count}, arrival_timeout_hours: {})",
                total - arrived,
                hours(timeout),
                timeout.as_secs_f64() / 3600.0
            );
            self.halt(rollout, CANARY_ACTOR, &reason, now).await;
        }
        Ok(reason_only(format!(
            "canary: {arrived} of its {total} canaries have arrived at {target}; nobody else is offered it \
             until all have (by {})",
            rfc3339(deadline)
        )))
    }

    /// The rate's round: the period now, and how far it lets the rollout go.
    async fn rate_round(
        &self,
        rollout: &Rollout,
        rate: MaxOffered,
        before: &GateState,
        takers: &Takers,
        now: SystemTime,
    ) -> Result<GateUpdate, ApiError> {
        let period_secs = i64::try_from(rate.period.as_secs().max(1)).unwrap_or(i64::MAX);
        let (period_start, base, kept) = match before.rate {
            Some(state) if unix_seconds(now) < state.period_start + period_secs => {
                (state.period_start, state.base, Some(state.allowed))
            }
            // The next period starts where the last one stopped: what
            // the schedule gives, no more than the store says was allowed.
            Some(state) => {
                let periods = (unix_seconds(now) - state.period_start) / period_secs;
                let start = state.period_start + periods * period_secs;
                (start, rollout.ungated_progress(now).min(state.allowed), None)
            }
            // The first counts from where the schedule is when the rate is
            // first judged: 0 for a rollout that has not started, and a
            // rollout under way keeps what it offered.
            None => (unix_seconds(now), rollout.ungated_progress(now), None),
        };
        let limit = u32::try_from(rate.clusters).unwrap_or(u32::MAX);
        let mut places: Vec<f64> = self
            .fleet
            .waiting(takers, base, limit)
            .await?
            .into_iter()
            .map(|canary| canary.place)
            .collect();
        places.extend(takers.arrived.iter().filter(|place| **place >= base));
        places.sort_by(f64::total_cmp);
        let allowed = allowed_by_rate(&places, rate.clusters, base, kept);
        let scheduled = rollout.ungated_progress(now);
        let used = places
            .iter()
            .filter(|place| **place < scheduled.min(allowed))
            .count();
        let end = rfc3339(at(period_start + period_secs));
        let waiting = if scheduled > allowed {
            "; the rest wait for the next period"
        } else {
            ""
        };
        Ok(GateUpdate {
            rate: Some(RateState {
                period_start,
                base,
                allowed,
            }),
            reason: format!(
                "max_offered_per_period: {used} of at most {} clusters offered {} in the period from {} to {end}{waiting}",
                rate.clusters,
                rollout.target,
                rfc3339(at(period_start))
            ),
            ..GateUpdate::default()
        })
    }
}

/// How long `rollout` has been paused by `now` (its earlier pauses, and
/// the one it is in).
fn paused_seconds(rollout: &Rollout, now: SystemTime) -> i64 {
    let paused = rollout.control.as_ref().map_or(Duration::ZERO, |control| {
        let current = control
            .paused_at
            .and_then(|paused_at| now.duration_since(paused_at).ok())
            .unwrap_or_default();
        control.stood_still + current
    });
    i64::try_from(paused.as_secs()).unwrap_or(i64::MAX)
}

/// How far a period from `base` may go: just above the `clusters`-th of
/// `places` (sorted, at or above `base`), or all the way with fewer; never
/// less than it already allowed (`kept`), nor than `base`.
fn allowed_by_rate(places: &[f64], clusters: u64, base: f64, kept: Option<f64>) -> f64 {
    let nth = usize::try_from(clusters).unwrap_or(usize::MAX);
    let allowed = match places.get(nth.saturating_sub(1)) {
        Some(place) if nth > 0 => place.next_up(),
        _ => 100.0,
    };
    kept.map_or(allowed, |kept| kept.max(allowed)).max(base)
}

/// Whether a cluster on `version` arrived at `target`: runs it, or a later
/// release.
fn at_or_past(version: &str, target: &Version) -> bool {
    Version::parse(version).is_ok_and(|version| {
        (version.major, version.minor, version.patch) > (target.major, target.minor, target.patch)
            || (version.major, version.minor, version.patch) == (target.major, target.minor, target.patch)
                && version.pre >= target.pre
    })
}

fn reason_only(reason: String) -> GateUpdate {
    GateUpdate {
        reason,
        ..GateUpdate::default()
    }
}

/// Whether `update` would change `before` (a round that finds the same
/// writes nothing).
fn changes(before: &GateState, update: &GateUpdate) -> bool {
    (!update.choose.is_empty() && before.canaries_at.is_none())
        || (update.canaries_arrived.is_some() && before.canaries_arrived_at.is_none())
        || update.rate.is_some_and(|rate| before.rate != Some(rate))
        || update.reason != before.reason
}

/// Whether the gates as stored now are those the round began with.
fn unchanged_since(current: &GateState, before: &GateState) -> bool {
    current.canaries_at == before.canaries_at
        && current.canaries_arrived_at == before.canaries_arrived_at
        && current.rate == before.rate
}

/// `duration` in hours, for a sentence.
fn hours(duration: Duration) -> String {
    let hours = duration.as_secs_f64() / 3600.0;
    if hours.fract() == 0.0 {
        format!("{hours} h")
    } else {
        format!("{hours:.1} h")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_goes_just_past_its_nth_cluster_and_never_back() {
        let places = [1.0, 2.0, 3.0, 4.0];
        let two = allowed_by_rate(&places, 2, 0.5, None);
        assert!(two > 2.0 && two < 2.000_001, "{two}");
        assert_eq!(
            allowed_by_rate(&places, 5, 0.5, None),
            100.0,
            "fewer than the rate"
        );
        assert_eq!(allowed_by_rate(&places, 1, 0.5, Some(3.5)), 3.5, "kept");
        assert_eq!(allowed_by_rate(&[], 3, 40.0, None), 100.0);
        assert_eq!(
            allowed_by_rate(&[41.0], 1, 45.0, None),
            45.0,
            "not below its base"
        );
    }

    #[test]
    fn a_canary_arrived_when_it_runs_the_target_or_a_later_release() {
        let target = Version::parse("4.18.52").unwrap();
        assert!(at_or_past("4.18.52", &target));
        assert!(at_or_past("4.18.53", &target));
        assert!(at_or_past("4.19.0-rc.1", &target));
        assert!(!at_or_past("4.18.51", &target));
        assert!(!at_or_past("4.18.52-rc.0", &target));
        assert!(!at_or_past("not a version", &target));
    }

    #[test]
    fn a_round_that_finds_the_same_writes_nothing() {
        let before = GateState {
            reason: "canary: 0 of its 1 canaries".into(),
            ..GateState::default()
        };
        assert!(!changes(&before, &reason_only(before.reason.clone())));
        assert!(changes(&before, &reason_only("other".into())));
        let rate = RateState {
            period_start: 1,
            base: 0.0,
            allowed: 3.0,
        };
        let with_rate = GateState {
            rate: Some(rate),
            ..before.clone()
        };
        let same_rate = GateUpdate {
            rate: Some(rate),
            reason: before.reason.clone(),
            ..GateUpdate::default()
        };
        assert!(!changes(&with_rate, &same_rate));
        assert!(changes(&before, &same_rate));
        assert!(!unchanged_since(&with_rate, &before), "another engine moved it");
    }
}
