//! How far a gated rollout's gates let it go, as the engines sharing the
//! fleet store judged it from the fleet ([`crate::rounds`]) and kept it:
//! its canaries (chosen once, each one's confirmed arrival) and the
//! clusters its rate admitted, by period. Clusters are named here by their
//! [`Lot`]s, so a request is checked against them without the store.

use crate::place::{Lot, Lots};
use crate::time::{Periods, SignedDuration, Timestamp};

/// A gated rollout's gates as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct GateState {
    /// The rollout's own rotation of lots: who comes first differs from
    /// rollout to rollout, and nobody outside the store knows it.
    pub offset: u64,
    /// When its gates were first judged.
    pub judged_at: Timestamp,
    pub canaries: Option<Canaries>,
    pub rate: Option<RateState>,
    /// Clusters the last round found waiting to be admitted (or able to
    /// be canaries), for people.
    pub waiting: u64,
    /// A rate counted by an earlier version of the engine (schema 5) let
    /// the clusters placed below this in: the first round that counts the
    /// rate admits them as offered before it.
    pub before_rate_threshold: Option<f64>,
}

/// A rollout's canaries, once chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Canaries {
    /// When they were chosen and offered the target.
    pub chosen_at: Timestamp,
    pub members: Vec<Canary>,
    /// When the last of them arrived: the schedule starts then.
    pub arrived_at: Option<Timestamp>,
    /// How long the rollout had been paused by then (its schedule starts
    /// when they arrived; pauses before are not counted twice).
    pub paused_before_arrival: SignedDuration,
}

/// One canary.
#[derive(Debug, Clone, PartialEq)]
pub struct Canary {
    /// The cluster as the store names it (its id or the keyed hash of it).
    pub cluster: String,
    pub lot: Lot,
    /// Its place (percent), for people.
    pub place: f64,
    /// When its arrival was confirmed.
    pub arrived_at: Option<Timestamp>,
}

impl Canaries {
    pub fn arrived(&self) -> usize {
        self.members
            .iter()
            .filter(|canary| canary.arrived_at.is_some())
            .count()
    }

    pub fn lots(&self) -> impl Iterator<Item = Lot> + '_ {
        self.members.iter().map(|canary| canary.lot)
    }
}

/// A rate's admissions: who it let in, and how many in the period the
/// store counted last.
#[derive(Debug, Clone, PartialEq)]
pub struct RateState {
    /// When its first period started.
    pub origin: Timestamp,
    /// The clusters it offered the target to (those offered before the
    /// rate was counted included), by lot. (Left out of the state a
    /// round decides on: it needs only the counts.)
    pub admitted: Lots,
    /// How many it admitted in all.
    pub total: u64,
    /// The period last counted, and how many it admitted.
    pub period: i64,
    pub in_period: u64,
    /// Of `admitted`, those offered before the rate was counted (a
    /// rollout under way keeps what it offered): not counted in any
    /// period.
    pub before_rate: u64,
}

impl RateState {
    /// The rate's periods of `length`.
    pub fn periods(&self, length: SignedDuration) -> Periods {
        Periods::new(self.origin, length)
    }

    /// How many it admitted in the period `at` is in (of `length`), as far
    /// as the state read tells.
    pub fn admitted_in(&self, length: SignedDuration, at: Timestamp) -> u64 {
        if self.periods(length).index(at) == self.period {
            self.in_period
        } else {
            0
        }
    }
}

impl GateState {
    /// Every cluster its gates name (canaries, admitted), sorted.
    pub fn named(&self) -> Lots {
        let canaries = self.canaries.iter().flat_map(Canaries::lots);
        match &self.rate {
            Some(rate) => rate.admitted.with(canaries),
            None => Lots::new(canaries.collect()),
        }
    }

    /// Whether its canaries all arrived.
    pub fn canaries_arrived(&self) -> bool {
        self.canaries
            .as_ref()
            .is_some_and(|canaries| canaries.arrived_at.is_some())
    }
}
