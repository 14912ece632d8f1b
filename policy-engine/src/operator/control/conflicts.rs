//! Where the declarations (the policy file's, graph-data's phased
//! rollouts) and run-time control disagree. A declaration is the base and
//! a run-time change overrides it, so an edit that the override hides, or
//! run-time state kept for a rollout no longer declared, would otherwise
//! go unnoticed; so would a target both the policy file and graph-data
//! declare (both apply: a cluster is offered it only when both offer it).
//! Each is reported (in `/status`, a gauge and the log), never resolved
//! silently. The run-time state stays in force until someone resumes or
//! releases it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rollout_model::declaration::Schedule;
use rollout_model::{Control, Declaration};

/// The conflicts standing, and what the file declared when last checked.
#[derive(Debug, Default)]
pub struct Conflicts {
    declared: BTreeMap<String, Schedule>,
    /// Why each target conflicts.
    found: BTreeMap<String, String>,
    /// The targets declared twice when last checked (their conflict ends
    /// as soon as one declaration goes).
    doubly_declared: BTreeSet<String>,
}

fn override_named(control: &Control) -> String {
    let what = match (&control.pause, control.held) {
        (Some(pause), _) => format!("paused by {}", pause.by),
        (None, Some(held)) => format!("held at {held}%"),
        (None, None) => "running".to_owned(),
    };
    match &control.last {
        Some(last) => format!("{what} ({}: {})", last.by, last.reason),
        None => what,
    }
}

impl Conflicts {
    /// Compares the declared `rollouts` (the file's, then graph-data's)
    /// with what was declared at the last check and with the store's
    /// `controls`; the conflicts found since (to log), as (target, why).
    pub fn check(
        &mut self,
        rollouts: &[Arc<Declaration>],
        controls: &BTreeMap<String, Control>,
    ) -> Vec<(String, String)> {
        let by_target: BTreeMap<&str, &Control> = controls
            .iter()
            .filter(|(_, control)| control.overrides())
            .map(|(target, control)| (target.as_str(), control))
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
                        "{}, but this rollout is no longer declared (not in the policy file, not phasing in \
                         graph-data: a phased release whose window ended is offered to every cluster): the \
                         state is kept and applies again if it is declared again; resume or release it to clear",
                        override_named(state)
                    ),
                );
            }
        }
        let mut doubly_declared = BTreeSet::new();
        for (index, rollout) in rollouts.iter().enumerate() {
            if let Some(first) = rollouts[..index]
                .iter()
                .find(|first| first.target == rollout.target)
            {
                doubly_declared.insert(rollout.target.to_string());
                standing.insert(
                    rollout.target.to_string(),
                    format!(
                        "declared both in {} and in {}: both apply (a cluster is offered it only when both \
                         offer it) and run-time control acts on both; declare it in one place",
                        first.origin, rollout.origin
                    ),
                );
            }
        }
        for rollout in rollouts {
            let target = rollout.target.to_string();
            let schedule = rollout.schedule;
            let Some(state) = by_target
                .get(target.as_str())
                .filter(|_| !standing.contains_key(&target))
            else {
                continue;
            };
            let edited = self
                .declared
                .get(&target)
                .is_some_and(|declared| *declared != schedule);
            let carried = self
                .found
                .get(&target)
                .filter(|_| !edited && !self.doubly_declared.contains(&target));
            if let Some(standing_why) = carried {
                standing.insert(target, standing_why.clone());
            } else if edited {
                standing.insert(
                    target,
                    format!(
                        "the schedule declared in {} was edited while the rollout is {}: the run-time state \
                         still decides its progress; resume or release it for the declared schedule to take over",
                        rollout.origin,
                        override_named(state)
                    ),
                );
            }
        }
        // The first declaration of a target, as run-time control decides by.
        self.declared = rollouts
            .iter()
            .rev()
            .map(|rollout| (rollout.target.to_string(), rollout.schedule))
            .collect();
        let new = standing
            .iter()
            .filter(|(target, why)| self.found.get(*target) != Some(why))
            .map(|(target, why)| (target.clone(), why.clone()))
            .collect();
        self.found = standing;
        self.doubly_declared = doubly_declared;
        new
    }

    /// The conflicts standing, by target.
    pub fn by_target(&self) -> BTreeMap<String, String> {
        self.found.clone()
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
    use rollout_model::control::{Action, Actor, Audited, Pause};
    use rollout_model::declaration::{Gates, Halts, Origin};
    use rollout_model::time::{SignedDuration, Timestamp};

    use super::*;

    fn rollout(target: &str, hours: i64) -> Arc<Declaration> {
        Arc::new(Declaration {
            target: target.parse().unwrap(),
            origin: Origin::PolicyFile { line: 3 },
            schedule: Schedule {
                start: Timestamp::from_second(1_000).unwrap(),
                duration: SignedDuration::from_hours(hours),
                starting_percentage: 10.0,
            },
            office_hours: None,
            gates: Gates::default(),
            halts: Halts::default(),
            auto_resume: false,
        })
    }

    fn paused(target: &str) -> BTreeMap<String, Control> {
        let at = Timestamp::from_second(2_000).unwrap();
        let by = Actor::operator("ops");
        BTreeMap::from([(
            target.to_owned(),
            Control {
                pause: Some(Pause {
                    at,
                    progress: 20.0,
                    by: by.clone(),
                }),
                last: Some(Audited {
                    action: Action::Pause,
                    by,
                    reason: "alarms".into(),
                    at,
                    held: None,
                }),
                ..Control::default()
            },
        )])
    }

    #[test]
    fn an_edit_hidden_by_a_pause_is_reported_until_the_pause_ends() {
        let mut conflicts = Conflicts::default();
        let states = paused("4.18.52");
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
                .contains("line 3) was edited while the rollout is paused by ops (ops: alarms)"),
            "{found:?}"
        );
        assert!(
            conflicts.check(&[rollout("4.18.52", 20)], &states).is_empty(),
            "reported once"
        );
        assert_eq!(conflicts.standing().len(), 1, "standing while paused");
        conflicts.check(&[rollout("4.18.52", 20)], &BTreeMap::new());
        assert!(conflicts.standing().is_empty(), "resumed: the file decides again");
    }

    #[test]
    fn a_target_the_file_and_graph_data_both_declare_is_reported_while_both_do() {
        let mut conflicts = Conflicts::default();
        let mut phased = (*rollout("4.18.52", 48)).clone();
        phased.origin = Origin::GraphData {
            channels: vec!["stable-4.18".to_owned()],
        };
        let both = [rollout("4.18.52", 10), Arc::new(phased)];
        for controls in [BTreeMap::new(), paused("4.18.52")] {
            let found = conflicts.check(&both, &controls);
            assert_eq!(
                conflicts.standing(),
                [
                    "4.18.52: declared both in the policy file (line 3) and in graph-data (phased into \
                  stable-4.18): both apply (a cluster is offered it only when both offer it) and run-time \
                  control acts on both; declare it in one place"
                ],
                "running or paused, never an edit"
            );
            assert!(found.len() <= 1);
        }
        conflicts.check(&both[..1], &paused("4.18.52"));
        assert!(conflicts.standing().is_empty(), "declared once again");
    }

    #[test]
    fn run_time_state_of_a_rollout_the_file_no_longer_declares_is_reported() {
        let mut conflicts = Conflicts::default();
        let states = paused("4.18.52");
        conflicts.check(&[rollout("4.18.52", 10)], &states);
        let found = conflicts.check(&[rollout("4.19.1", 10)], &states);
        assert_eq!(found.len(), 1);
        assert!(found[0].1.contains("no longer declared"), "{found:?}");
        let running = BTreeMap::from([("4.18.52".to_owned(), Control::default())]);
        conflicts.check(&[rollout("4.19.1", 10)], &running);
        assert!(
            conflicts.standing().is_empty(),
            "a running state overrides nothing"
        );
    }
}
