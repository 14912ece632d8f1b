//! How a request changes a rollout's run-time control: the one place the
//! rules of pause, resume, hold, halts and Alertmanager's alerts are
//! written. The store calls [`decide`] on the state as stored, with the
//! rollout's row locked, so engines sharing a store take turns and each
//! decides on the other's result: a change is made, and audited, once.
//!
//! - A pause stops the rollout's clock at the instant it is decided,
//!   keeping the progress it had then (to the millisecond: a pause never
//!   withdraws an offer); a resume starts the clock where it stopped (the
//!   schedule runs later by the time it stood still: a resume never adds
//!   at once). Pausing a paused rollout keeps the first pause: the one
//!   asked first, even when written later (a brake an engine kept while
//!   the store could not take it).
//! - A hold fixes the progress whatever the schedule (gates still apply);
//!   a release returns it to the schedule.
//! - A halt (a criterion met: the fleet's signals, a late canary, a
//!   Prometheus query) pauses a rollout that is not paused, else nothing.
//! - An alert that fires on a rollout is remembered by its identity; the
//!   first one pauses a running rollout. The same alert again (a repeat,
//!   the other Alertmanager of a pair, a retry) changes nothing. An alert
//!   that resolves is forgotten; when the last alert holding a pause that
//!   an alert made resolves and the rollout says `auto_resume`, it is
//!   resumed. A pause made by anyone else is left for an operator, and an
//!   alert an operator resumed over pauses again only when it fires anew.

use crate::control::{Action, Actor, ActorKind, AlertId, Audited, Control, MAX_ALERTS, Pause};
use crate::declaration::Declaration;
use crate::gates::GateState;
use crate::position::{Known, Rollout, RunState};
use crate::text::{REASON_CHARS, clean};
use crate::time::Timestamp;

use std::sync::Arc;

/// What is asked of a rollout.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Pause,
    Resume,
    /// Hold the progress at this percentage (0 to 100).
    Hold(f64),
    Release,
    /// A halt criterion is met.
    Halt,
    AlertFiring {
        alert: AlertId,
        name: String,
    },
    AlertResolved {
        alert: AlertId,
    },
}

impl Request {
    /// Whether it is a brake: one that only ever offers less (an engine
    /// keeps a brake in force while the store cannot take it).
    pub fn is_brake(&self) -> bool {
        matches!(self, Self::Pause | Self::Halt | Self::AlertFiring { .. })
    }

    /// A hold at `percent`, if it is one (a finite number from 0 to 100).
    pub fn hold(percent: f64) -> Option<Self> {
        (percent.is_finite() && (0.0..=100.0).contains(&percent)).then_some(Self::Hold(percent))
    }
}

/// What a request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Paused,
    /// Paused already: the first pause kept.
    AlreadyPaused,
    Resumed,
    /// Not paused: nothing to resume (or an alert resolved on a running
    /// rollout).
    NotPaused,
    /// An alert resolved, but the pause is not (only) its to end.
    LeftPaused,
    /// An alert fired again on a rollout an operator resumed over it.
    Overridden,
    Held,
    Released,
}

impl Outcome {
    pub const ALL: [Self; 8] = [
        Self::Paused,
        Self::AlreadyPaused,
        Self::Resumed,
        Self::NotPaused,
        Self::LeftPaused,
        Self::Overridden,
        Self::Held,
        Self::Released,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Paused => "paused",
            Self::AlreadyPaused => "already-paused",
            Self::Resumed => "resumed",
            Self::NotPaused => "not-paused",
            Self::LeftPaused => "left-paused",
            Self::Overridden => "overridden",
            Self::Held => "held",
            Self::Released => "released",
        }
    }
}

/// A request's result: the control after it, what it did, and what the
/// audit keeps of it (nothing for what changes nothing worth keeping).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub control: Control,
    pub outcome: Outcome,
    pub audit: Option<Audited>,
}

/// What `request`, by `by` for `reason` at `at`, does to a rollout of
/// `declaration` whose control and gates are stored as given (see the
/// module).
pub fn decide(
    declaration: &Arc<Declaration>,
    (control, gates): (&Control, Option<&GateState>),
    request: &Request,
    (by, reason): (&Actor, &str),
    at: Timestamp,
) -> Decision {
    let reason = clean(reason, REASON_CHARS);
    let mut after = control.clone();
    let audit = |action: Action, reason: &str| {
        Some(Audited {
            action,
            by: by.clone(),
            reason: reason.to_owned(),
            at,
            held: match request {
                Request::Hold(percent) => Some(*percent),
                _ => None,
            },
        })
    };
    let (outcome, audited) = match request {
        Request::Pause | Request::Halt if control.pause.is_some() => {
            let audited = (by.kind() == ActorKind::Operator)
                .then(|| audit(Action::Pause, &reason))
                .flatten();
            (Outcome::AlreadyPaused, audited)
        }
        Request::Pause | Request::Halt => {
            after.pause = Some(pause(declaration, control, gates, by, at));
            (Outcome::Paused, audit(Action::Pause, &reason))
        }
        Request::Resume => {
            let outcome = resume(&mut after, at);
            (outcome, audit(Action::Resume, &reason))
        }
        Request::Hold(percent) => {
            after.held = Some(*percent);
            (Outcome::Held, audit(Action::Hold, &reason))
        }
        Request::Release => {
            after.held = None;
            (Outcome::Released, audit(Action::Release, &reason))
        }
        Request::AlertFiring { alert, name } => {
            if control.alerts.contains_key(alert) {
                let outcome = if control.pause.is_some() {
                    Outcome::AlreadyPaused
                } else {
                    Outcome::Overridden
                };
                (outcome, None)
            } else {
                if after.alerts.len() < MAX_ALERTS {
                    after
                        .alerts
                        .insert(alert.clone(), clean(name, crate::text::ACTOR_CHARS));
                }
                if control.pause.is_some() {
                    (Outcome::AlreadyPaused, None)
                } else {
                    after.pause = Some(pause(declaration, control, gates, by, at));
                    (Outcome::Paused, audit(Action::Pause, &reason))
                }
            }
        }
        Request::AlertResolved { alert } => {
            let was_firing = after.alerts.remove(alert).is_some();
            let made_by_alerts = control
                .pause
                .as_ref()
                .is_some_and(|pause| pause.by.kind() == ActorKind::Alert);
            match &control.pause {
                None => (Outcome::NotPaused, None),
                Some(_)
                    if was_firing && made_by_alerts && after.alerts.is_empty() && declaration.auto_resume =>
                {
                    resume(&mut after, at);
                    (
                        Outcome::Resumed,
                        audit(Action::Resume, &format!("resolved: {reason}")),
                    )
                }
                Some(_) => (Outcome::LeftPaused, None),
            }
        }
    };
    // A brake asked before the pause in force (kept by an engine while the
    // store could not take it, and written after another engine's later
    // one) moves the pause back to when it was asked: the engine that held
    // it in force offered no more since, so neither may the store.
    if request.is_brake() && control.pause.as_ref().is_some_and(|kept| at < kept.at) {
        let unpaused = Control {
            pause: None,
            ..control.clone()
        };
        after.pause = Some(pause(declaration, &unpaused, gates, by, at));
    }
    if let Some(audited) = &audited {
        after.last = Some(audited.clone());
    }
    Decision {
        control: after,
        outcome,
        audit: audited,
    }
}

/// The pause of a rollout stopped at `at`: the progress it has then.
fn pause(
    declaration: &Arc<Declaration>,
    control: &Control,
    gates: Option<&GateState>,
    by: &Actor,
    at: Timestamp,
) -> Pause {
    let rollout = Rollout::new(
        declaration.clone(),
        RunState::Read(Arc::new(Known::new(control.clone(), gates.cloned(), at))),
    );
    Pause {
        at,
        progress: rollout.position(at).scheduled,
        by: by.clone(),
    }
}

/// Starts `control`'s clock again at `at`, if stopped.
fn resume(control: &mut Control, at: Timestamp) -> Outcome {
    match control.pause.take() {
        Some(pause) => {
            control.stood_still += at.duration_since(pause.at).max(crate::time::SignedDuration::ZERO);
            control.resumed_from = Some(pause.at);
            control.resumed_at = Some(at);
            Outcome::Resumed
        }
        None => Outcome::NotPaused,
    }
}
