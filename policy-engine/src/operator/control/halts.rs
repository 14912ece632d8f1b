//! `halt_when`'s fleet signals: every `rollouts.halt_check_secs` each
//! engine sharing the store counts, for each running rollout that declares
//! them, the figures of the rollout model's halts
//! (`rollout_model::halts`, on the fleet store's evidence) and halts the
//! rollout (as `fleet-signal`, the figure as the reason) when they meet
//! its criterion. Every engine checks; the store makes a halt once.

use std::sync::Arc;
use std::time::SystemTime;

use rollout_model::Rollout;
use rollout_model::change::Request;
use rollout_model::control::{Actor, HALT_FLEET};
use rollout_model::halts::{silent_halt, stuck_cutoff, stuck_halt};
use rollout_model::time::from_system;

use super::Control;
use super::queries::is_running;
use crate::client::Feeds;
use crate::operator::OperatorError;

impl Control {
    /// Halts every running rollout whose `halt_when` the fleet's figures
    /// meet at `now` (the update graphs from `feeds`).
    pub async fn check_halts(&self, feeds: &Arc<Feeds>, now: SystemTime) {
        for rollout in self
            .policy
            .rollouts()
            .iter()
            .filter(|rollout| is_running(rollout))
        {
            let halts = &rollout.declaration().halts;
            if halts.silent.is_none() && halts.stuck.is_none() {
                continue;
            }
            let target = rollout.declaration().target.to_string();
            match self.halt_reason(rollout, feeds, now).await {
                Ok(Some(reason)) => {
                    let by = Actor::automation(HALT_FLEET);
                    if let Err(error) = self.change(&target, Request::Halt, (&by, &reason)).await {
                        tracing::warn!(target, error = %error, "a halted rollout could not be paused");
                    }
                }
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(target, error = %error, "a rollout's halt criterion cannot be checked");
                }
            }
        }
    }

    /// Why the fleet's figures halt `rollout` at `now`, if they do.
    async fn halt_reason(
        &self,
        rollout: &Rollout,
        feeds: &Arc<Feeds>,
        now: SystemTime,
    ) -> Result<Option<String>, OperatorError> {
        let halts = &rollout.declaration().halts;
        if let Some(silent) = &halts.silent {
            let figures = self.fleet.silent_figures(rollout, now).await?;
            if let Some(reason) = silent_halt(rollout, silent, figures) {
                return Ok(Some(reason));
            }
        }
        if let Some(stuck) = &halts.stuck
            && let Some(cutoff) = stuck_cutoff(rollout, stuck, from_system(now))
        {
            let takers = self.fleet.takers(rollout, feeds, now).await?;
            let figures = self.fleet.stuck_figures(rollout, &takers, cutoff).await?;
            return Ok(stuck_halt(rollout, stuck, figures));
        }
        Ok(None)
    }
}
