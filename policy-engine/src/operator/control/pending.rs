//! Brakes the store has not taken yet: a pause, a firing alert or a halt
//! asked while the store cannot take a change (down, full, slow). A brake
//! must not wait for the store: it is in force on this engine at once
//! (applied to the state read, at the time it was asked), answered as
//! pending, and written each time the state is read until the store takes
//! it (decided then on the stored state at the time it was asked, so a
//! rollout paused meanwhile by another engine is paused once). Kept in
//! memory: an engine restarted before the store takes a brake loses it,
//! and another engine does not see it until the store has it.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use rollout_model::change::{self, Request};
use rollout_model::control::Actor;
use rollout_model::time::Timestamp;
use rollout_model::{Control, Declaration, GateState};

/// Brakes pending at most: more are refused (503) like any change the
/// store cannot take.
const MAX_PENDING: usize = 256;

/// One brake asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub target: String,
    pub request: Request,
    pub by: Actor,
    pub reason: String,
    pub at: Timestamp,
}

#[derive(Debug, Default)]
pub struct PendingBrakes(Mutex<Vec<Pending>>);

impl PendingBrakes {
    /// Keeps `brake`, unless as many are kept as may be (it is then lost:
    /// the caller answers it as any change the store cannot take).
    pub fn add(&self, brake: Pending) -> bool {
        let mut pending = self.0.lock();
        if pending.len() >= MAX_PENDING {
            return false;
        }
        pending.push(brake);
        true
    }

    pub fn all(&self) -> Vec<Pending> {
        self.0.lock().clone()
    }

    pub fn remove(&self, brake: &Pending) {
        self.0.lock().retain(|kept| kept != brake);
    }

    pub fn count(&self) -> usize {
        self.0.lock().len()
    }

    /// `target: what by whom at when`, each.
    pub fn said(&self) -> Vec<String> {
        self.0
            .lock()
            .iter()
            .map(|brake| {
                format!(
                    "{}: {:?} by {} at {}",
                    brake.target, brake.request, brake.by, brake.at
                )
            })
            .collect()
    }

    /// `controls` (as read) with each pending brake applied at the time it
    /// was asked.
    pub fn apply(
        &self,
        declared: &[Arc<Declaration>],
        controls: &mut BTreeMap<String, Control>,
        gates: &BTreeMap<String, GateState>,
    ) {
        for brake in self.0.lock().iter() {
            let Some(declaration) = declared
                .iter()
                .find(|declaration| declaration.target.to_string() == brake.target)
            else {
                continue;
            };
            let control = controls.entry(brake.target.clone()).or_default();
            let decision = change::decide(
                declaration,
                (control, gates.get(&brake.target)),
                &brake.request,
                (&brake.by, &brake.reason),
                brake.at,
            );
            *control = decision.control;
        }
    }
}
