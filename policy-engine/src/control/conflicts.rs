//! Where the policy file and run-time control disagree. The file is the
//! declarative base and a run-time change overrides it, so an edit of the
//! file that the override hides, or run-time state kept for a rollout the
//! file no longer declares, would otherwise go unnoticed: each is reported
//! (in `/status`, a gauge and the log), never resolved silently. The
//! run-time state stays in force until someone resumes or releases it.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use fleet_store::rollouts::RolloutState;

use crate::cluster_policy::policy::Rollout;

/// A rollout's schedule as the file declares it.
#[derive(Debug, Clone, PartialEq)]
struct Schedule {
    start: SystemTime,
    duration: Duration,
    starting_percentage: f64,
}

impl Schedule {
    fn of(rollout: &Rollout) -> Self {
        Self {
            start: rollout.start,
            duration: rollout.duration,
            starting_percentage: rollout.starting_percentage,
        }
    }
}

/// The conflicts standing, and what the file declared when last checked.
#[derive(Debug, Default)]
pub struct Conflicts {
    declared: BTreeMap<String, Schedule>,
    /// Why each target conflicts.
    found: BTreeMap<String, String>,
}

/// Whether a stored state overrides the file: paused or held.
fn overrides(state: &RolloutState) -> bool {
    state.paused_at.is_some() || state.held_progress.is_some()
}

fn override_named(state: &RolloutState) -> String {
    let what = match (state.paused_at, state.held_progress) {
        (Some(_), _) => "paused".to_owned(),
        (None, Some(held)) => format!("held at {held}%"),
        (None, None) => "running".to_owned(),
    };
    format!("{what} by {} ({})", state.actor, state.reason)
}

impl Conflicts {
    /// Compares the file's `rollouts` with what it declared at the last
    /// check and with the store's `states`; the conflicts found since (to
    /// log), as (target, why).
    pub fn check(&mut self, rollouts: &[Rollout], states: &[RolloutState]) -> Vec<(String, String)> {
        let by_target: BTreeMap<&str, &RolloutState> = states
            .iter()
            .filter(|state| overrides(state))
            .map(|state| (state.target.as_str(), state))
            .collect();
        let mut standing = BTreeMap::new();
        for (target, state) in &by_target {
            if !rollouts
                .iter()
                .any(|rollout| rollout.target.to_string() == *target)
            {
                standing.insert(
                    (*target).to_owned(),
                    format!(
                        "{}, but the policy file no longer declares this rollout: the state is kept and applies \
                         again if the file declares it; resume or release it to clear",
                        override_named(state)
                    ),
                );
            }
        }
        for rollout in rollouts {
            let target = rollout.target.to_string();
            let schedule = Schedule::of(rollout);
            let Some(state) = by_target.get(target.as_str()) else {
                continue;
            };
            let edited = self
                .declared
                .get(&target)
                .is_some_and(|declared| *declared != schedule);
            if let Some(standing_why) = self.found.get(&target).filter(|_| !edited) {
                standing.insert(target, standing_why.clone());
            } else if edited {
                standing.insert(
                    target,
                    format!(
                        "the policy file's schedule (line {}) was edited while the rollout is {}: the run-time \
                         state still decides its progress; resume or release it for the file's schedule to take over",
                        rollout.line,
                        override_named(state)
                    ),
                );
            }
        }
        self.declared = rollouts
            .iter()
            .map(|rollout| (rollout.target.to_string(), Schedule::of(rollout)))
            .collect();
        let new = standing
            .iter()
            .filter(|(target, why)| self.found.get(*target) != Some(why))
            .map(|(target, why)| (target.clone(), why.clone()))
            .collect();
        self.found = standing;
        new
    }

    /// The conflicts standing, as `target: why`.
    pub fn standing(&self) -> Vec<String> {
        self.found
            .iter()
            .map(|(target, why)| format!("{target}: {why}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    fn rollout(target: &str, hours: u64) -> Rollout {
        Rollout {
            target: target.parse().unwrap(),
            start: UNIX_EPOCH + Duration::from_secs(1_000),
            duration: Duration::from_secs(hours * 3600),
            starting_percentage: 10.0,
            line: 3,
            halt_when: None,
            halt_query: None,
            auto_resume: false,
            office_hours: None,
            gates: Default::default(),
            gate_status: None,
            control: None,
        }
    }

    fn paused(target: &str) -> RolloutState {
        RolloutState {
            target: target.to_owned(),
            paused_at: Some(2_000),
            paused_seconds: 0,
            held_progress: None,
            paused_progress: Some(20.0),
            actor: "ops".into(),
            reason: "alarms".into(),
            changed_at: 2_000,
        }
    }

    #[test]
    fn an_edit_hidden_by_a_pause_is_reported_until_the_pause_ends() {
        let mut conflicts = Conflicts::default();
        let states = [paused("4.18.52")];
        assert!(conflicts.check(&[rollout("4.18.52", 10)], &states).is_empty());
        assert!(
            conflicts.check(&[rollout("4.18.52", 10)], &states).is_empty(),
            "nothing edited"
        );
        let found = conflicts.check(&[rollout("4.18.52", 20)], &states);
        assert_eq!(found.len(), 1);
        assert!(
            found[0]
                .1
                .contains("line 3) was edited while the rollout is paused by ops (alarms)"),
            "{found:?}"
        );
        assert!(
            conflicts.check(&[rollout("4.18.52", 20)], &states).is_empty(),
            "reported once"
        );
        assert_eq!(conflicts.standing().len(), 1, "standing while paused");
        conflicts.check(&[rollout("4.18.52", 20)], &[]);
        assert!(conflicts.standing().is_empty(), "resumed: the file decides again");
    }

    #[test]
    fn run_time_state_of_a_rollout_the_file_no_longer_declares_is_reported() {
        let mut conflicts = Conflicts::default();
        let states = [paused("4.18.52")];
        conflicts.check(&[rollout("4.18.52", 10)], &states);
        let found = conflicts.check(&[rollout("4.19.1", 10)], &states);
        assert_eq!(found.len(), 1);
        assert!(found[0].1.contains("no longer declares"), "{found:?}");
        let running = RolloutState {
            paused_at: None,
            paused_progress: None,
            ..paused("4.18.52")
        };
        conflicts.check(&[rollout("4.19.1", 10)], &[running]);
        assert!(
            conflicts.standing().is_empty(),
            "a running state overrides nothing"
        );
    }
}
