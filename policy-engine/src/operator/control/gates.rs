//! Rollout gates (Nebraska's safe mode and updates per period), declared
//! per rollout in the policy file and opened by the fleet: every
//! `rollouts.halt_check_secs` each engine sharing the store runs a round
//! of each gated rollout (the rollout model's `rollout_model::rounds`):
//! it gathers the facts from the fleet store (candidates by the rollout's
//! order of lots, its canaries' records), then the model decides on the
//! gates as stored, with the rollout's row locked, and the store keeps the
//! result. A late canary halts the rollout (as `canary`) in the same
//! change.

use std::sync::Arc;
use std::time::SystemTime;

use fleet_store::changes::Changes;
use rollout_model::change::{self, Request};
use rollout_model::control::{Actor, HALT_CANARY};
use rollout_model::rounds::{self, Facts, before_rate};
use rollout_model::time::{Timestamp, from_system};
use rollout_model::{ClusterId, Known, Rollout, RunState};

use super::Control;
use crate::client::Feeds;
use crate::operator::OperatorError;

/// Candidates a round reads beyond a rate's cap, to say how many wait.
const WAITING_SHOWN: u32 = 1_000;

impl Control {
    /// A round of every gated rollout whose state is known, at `now` (the
    /// update graphs from `feeds`); a failure is logged and the gates stay
    /// as stored. The state is read again after.
    pub async fn check_gates(&self, feeds: &Arc<Feeds>, now: SystemTime) {
        let rollouts = self.policy.rollouts();
        let gated = rollouts.iter().filter(|rollout| {
            rollout.declaration().gates.any() && matches!(rollout.state(), RunState::Read(_))
        });
        for rollout in gated {
            if let Err(error) = self.gate_round(rollout, feeds, now).await {
                let target = rollout.declaration().target.to_string();
                tracing::warn!(target, error = %error, "a rollout's gates cannot be judged; they stay as they were");
            }
        }
        self.refresh().await;
    }

    /// One round of `rollout`'s gates.
    async fn gate_round(
        &self,
        rollout: &Rollout,
        feeds: &Arc<Feeds>,
        now: SystemTime,
    ) -> Result<(), OperatorError> {
        let declaration = rollout.declaration().clone();
        let target = declaration.target.to_string();
        let offset = self.gates_opened(&target).await?;
        // A round gathers its facts from gates this engine has read (what a
        // rate finds offered before it depends on them): the first round
        // only opens them, and the state is read again after it.
        let Some(gates) = rollout.gates() else {
            return Ok(());
        };
        let takers = self.fleet.takers(rollout, feeds, now).await?;
        let at = from_system(now);
        let mut facts = Facts::default();
        if let Some(wanted) = &declaration.gates.canary {
            match gates.canaries.as_ref() {
                None => {
                    facts.canary_candidates = match &wanted.group {
                        Some(group) => {
                            let policy = self.policy.current();
                            let members: Vec<ClusterId> = policy.members_of(group).copied().collect();
                            self.fleet.named_candidates(&members, &takers, offset).await?
                        }
                        None => {
                            self.fleet
                                .candidates(&target, &takers, (100.0_f64.next_up(), offset), wanted.clusters)
                                .await?
                        }
                    };
                }
                Some(canaries) if canaries.arrived_at.is_none() => {
                    let names: Vec<String> = canaries
                        .members
                        .iter()
                        .map(|canary| canary.cluster.clone())
                        .collect();
                    facts.canaries = self.fleet.records(&names).await?;
                }
                Some(_) => {}
            }
        }
        if let Some(rate) = declaration.gates.rate {
            if let Some(below) = before_rate(rollout, gates, at) {
                facts.offered_before = self.fleet.offered_before(&takers, below).await?;
            }
            let cap = u32::try_from(rate.clusters).unwrap_or(u32::MAX);
            facts.rate_candidates = self
                .fleet
                .candidates(
                    &target,
                    &takers,
                    (rollout.position(at).scheduled, offset),
                    cap.saturating_add(WAITING_SHOWN),
                )
                .await?;
        }
        let evidence = self.fleet.evidence();
        self.stored(async |store| {
            store
                .change_rollout(&target, Timestamp::now, |locked| {
                    let Some(gates) = locked.gates else {
                        return (Changes::default(), ());
                    };
                    let known = Known::new(locked.control.clone(), Some(gates.clone()), locked.now);
                    let view = Rollout::new(declaration.clone(), RunState::Read(Arc::new(known)));
                    let mut round = rounds::round(&view, gates, &facts, &evidence, locked.now);
                    let halt = round.halt.take().map(|reason| {
                        let by = Actor::automation(HALT_CANARY);
                        change::decide(
                            &declaration,
                            (locked.control, Some(gates)),
                            &Request::Halt,
                            (&by, &reason),
                            locked.now,
                        )
                    });
                    let changes = Changes {
                        control: halt.as_ref().map(|decision| decision.control.clone()),
                        audit: halt.and_then(|decision| decision.audit).into_iter().collect(),
                        gates: Some(round),
                        ..Changes::default()
                    };
                    (changes, ())
                })
                .await
        })
        .await
    }

    /// Makes the gates' row of `target` if missing; the rollout's rotation
    /// of lots.
    async fn gates_opened(&self, target: &str) -> Result<u64, OperatorError> {
        self.stored(async |store| {
            store
                .change_rollout(target, Timestamp::now, |locked| match locked.gates {
                    Some(gates) => (Changes::default(), Some(gates.offset)),
                    None => (
                        Changes {
                            open_gates: true,
                            ..Changes::default()
                        },
                        None,
                    ),
                })
                .await
        })
        .await
        .map(|offset| offset.unwrap_or_default())
    }
}
