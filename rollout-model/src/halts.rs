//! When the fleet's signals halt a rollout (`halt_when`), from figures the
//! fleet store counts under the evidence rules ([`crate::evidence`]):
//!
//! - **silent**: of the established clusters that arrived at the target
//!   after their offer, the share not seen for the silent window;
//! - **stuck**: of the established clusters offered the target more than
//!   `after` ago (and seen before their offer), the share that have not
//!   taken it.
//!
//! Evidence counts from the rollout's last resume on: a halt an operator
//! resumed does not fire again on what it fired on. Arrivals are counted
//! from the resume, and every cluster offered before it has `after` from
//! the resume to move.

use crate::declaration::{SilentHalt, StuckHalt};
use crate::position::Rollout;
use crate::time::{Timestamp, hours_said};

/// The silent criterion's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SilentFigures {
    /// Established clusters that arrived after their offer (and after the
    /// last resume).
    pub arrived: u64,
    /// Of those, on the target and not seen for the silent window.
    pub silent: u64,
}

/// The stuck criterion's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StuckFigures {
    /// Established active clusters offered the target by the cutoff.
    pub offered: u64,
    /// Of those, not on the target (or later).
    pub not_arrived: u64,
}

impl StuckFigures {
    pub fn percent(&self) -> f64 {
        percent(self.not_arrived, self.offered)
    }
}

impl SilentFigures {
    pub fn percent(&self) -> f64 {
        percent(self.silent, self.arrived)
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// From when evidence counts for `rollout`: its last resume.
pub fn evidence_since(rollout: &Rollout) -> Timestamp {
    rollout.control().resumed_at.unwrap_or(Timestamp::MIN)
}

/// The moment a stuck criterion looks back to at `now` (clusters offered
/// by then count): `after` ago, none while the last resume is more recent.
pub fn stuck_cutoff(rollout: &Rollout, stuck: &StuckHalt, now: Timestamp) -> Option<Timestamp> {
    let cutoff = now.checked_sub(stuck.after).ok()?;
    (evidence_since(rollout) <= cutoff).then_some(cutoff)
}

/// Why the silent figures halt `rollout`, if they do.
pub fn silent_halt(rollout: &Rollout, halt: &SilentHalt, figures: SilentFigures) -> Option<String> {
    let percent = figures.percent();
    (figures.arrived >= halt.min_arrived && percent >= halt.percent).then(|| {
        format!(
            "halted: {percent:.1}% of the {} clusters that arrived at {} went silent (halt_when: {}% of at least {})",
            figures.arrived, rollout.declaration().target, halt.percent, halt.min_arrived
        )
    })
}

/// Why the stuck figures halt `rollout`, if they do.
pub fn stuck_halt(rollout: &Rollout, halt: &StuckHalt, figures: StuckFigures) -> Option<String> {
    let percent = figures.percent();
    (figures.offered >= halt.min_offered && percent >= halt.percent).then(|| {
        format!(
            "halted: {percent:.1}% of the {} clusters offered {} more than {} ago have not taken it \
             (halt_when: stuck_percent {} of at least {})",
            figures.offered,
            rollout.declaration().target,
            hours_said(halt.after),
            halt.percent,
            halt.min_offered
        )
    })
}
