//! Builders every test of the model uses: one way to write a rollout.

use std::sync::Arc;

use rollout_model::declaration::{Origin, Schedule};
use rollout_model::time::{SignedDuration, Timestamp};
use rollout_model::{Control, Declaration, GateState, Known, Rollout, RunState};

pub fn at(text: &str) -> Timestamp {
    text.parse()
        .unwrap_or_else(|error| panic!("{text:?} is not an RFC 3339 time: {error}"))
}

/// A rollout of 4.18.52 from `start`, over `hours`, from `starting`
/// percent.
pub fn declaration(start: Timestamp, hours: f64, starting: f64) -> Declaration {
    Declaration::new(
        "4.18.52".parse().unwrap(),
        Origin::PolicyFile { line: 1 },
        Schedule {
            start,
            duration: SignedDuration::from_secs_f64(hours * 3600.0),
            starting_percentage: starting,
        },
    )
}

/// `declaration` with its state as read at `as_of`.
pub fn read(
    declaration: &Arc<Declaration>,
    control: Control,
    gates: Option<GateState>,
    as_of: Timestamp,
) -> Rollout {
    Rollout::new(
        declaration.clone(),
        RunState::Read(Arc::new(Known::new(control, gates, as_of))),
    )
}
