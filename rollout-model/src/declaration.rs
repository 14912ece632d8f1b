//! What a rollout is declared to be (in the policy file, or by
//! graph-data's phased rollouts): its
//! target, its schedule, when it may newly offer (office hours), its gates
//! and what halts it. A declaration never changes at run time; what
//! operators and automation do is [`crate::control`], what the fleet lets
//! through is [`crate::gates`].

use std::fmt;

use semver::Version;

use crate::office_hours::OfficeHours;
use crate::place::Place;
use crate::time::{SignedDuration, Timestamp};

/// Rollouts in one policy: a policy class keeps one bit per rollout.
pub const MAX_ROLLOUTS: usize = 64;

/// A declared rollout of one target release.
#[derive(Debug, Clone)]
pub struct Declaration {
    pub target: Version,
    /// Where it is declared, for people.
    pub origin: Origin,
    pub schedule: Schedule,
    /// When it may newly offer its target; always when `None`.
    pub office_hours: Option<OfficeHours>,
    pub gates: Gates,
    pub halts: Halts,
    /// A pause made by Alertmanager's alerts ends when every alert holding
    /// it has resolved (see [`crate::control`]).
    pub auto_resume: bool,
}

impl Declaration {
    /// A rollout of `target` on `schedule`, declared at `origin`, always
    /// newly offering, without gates or halts.
    pub fn new(target: Version, origin: Origin, schedule: Schedule) -> Self {
        Self {
            target,
            origin,
            schedule,
            office_hours: None,
            gates: Gates::default(),
            halts: Halts::default(),
            auto_resume: false,
        }
    }
}

/// Where a rollout is declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A policy file's `rollouts`, at this line.
    PolicyFile { line: u64 },
    /// graph-data's phased rollouts: its target phasing into these
    /// channels, its schedule the span of their windows.
    GraphData { channels: Vec<String> },
}

impl Origin {
    /// The policy file's line it is declared at, if declared there.
    pub fn line(&self) -> Option<u64> {
        match self {
            Self::PolicyFile { line } => Some(*line),
            Self::GraphData { .. } => None,
        }
    }

    /// The channels it phases into, if declared in graph-data.
    pub fn phased_in(&self) -> &[String] {
        match self {
            Self::PolicyFile { .. } => &[],
            Self::GraphData { channels } => channels,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PolicyFile { line } => write!(f, "the policy file (line {line})"),
            Self::GraphData { channels } => write!(f, "graph-data (phased into {})", channels.join(", ")),
        }
    }
}

/// A rollout's schedule: 0 before `start`, then `starting_percentage`
/// rising linearly to 100 over `duration`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    pub start: Timestamp,
    pub duration: SignedDuration,
    /// The share offered at `start`, in percent.
    pub starting_percentage: f64,
}

impl Schedule {
    /// The progress (percent) the schedule gives when its clock reads
    /// `clock`.
    pub fn progress_at(&self, clock: Timestamp) -> f64 {
        if clock < self.start {
            return 0.0;
        }
        if !self.duration.is_positive() {
            return 100.0;
        }
        let elapsed = clock.duration_since(self.start).as_secs_f64();
        let fraction = (elapsed / self.duration.as_secs_f64()).min(1.0);
        self.starting_percentage + (100.0 - self.starting_percentage) * fraction
    }

    /// The first millisecond its clock lets `place` in: from then on the
    /// progress is above the place (at the start for places below the
    /// starting percentage; at the end, the last). Found from the formula,
    /// then checked against [`Schedule::progress_at`] itself, so the two
    /// never disagree by a rounding.
    pub fn reaches(&self, place: Place) -> Timestamp {
        let percent = place.percent();
        // (At 100% from the start, the fraction below would be 0/0.)
        if percent < self.starting_percentage
            || self.starting_percentage >= 100.0
            || !self.duration.is_positive()
        {
            return self.start;
        }
        let fraction = ((percent - self.starting_percentage) / (100.0 - self.starting_percentage)).min(1.0);
        let reached = self.start + self.duration.mul_f64(fraction);
        let ceiling = jiff::TimestampRound::new()
            .smallest(jiff::Unit::Millisecond)
            .mode(jiff::RoundMode::Ceil);
        let mut first = reached.round(ceiling).unwrap_or(reached);
        while !place.is_below(self.progress_at(first)) && first < self.end() {
            first += SignedDuration::from_millis(1);
        }
        first.min(self.end())
    }

    /// When its clock reaches 100%.
    pub fn end(&self) -> Timestamp {
        self.start + self.duration.max(SignedDuration::ZERO)
    }

    /// When its clock first offers every cluster (requests without an id
    /// too): its start when it starts at 100%, else its end.
    pub fn complete_at(&self) -> Timestamp {
        if self.starting_percentage >= 100.0 {
            self.start
        } else {
            self.end()
        }
    }
}

/// A rollout's gates (Nebraska's safe mode and updates per period): with
/// neither, its schedule alone decides.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gates {
    /// Clusters that must arrive at the target before anyone else is
    /// offered it; the schedule starts then.
    pub canary: Option<CanaryGate>,
    /// At most this many clusters newly offered the target per period.
    pub rate: Option<RateGate>,
    /// A canary that has not arrived this long after its offer halts the
    /// rollout (and `halt_when`'s stuck criterion counts from it).
    pub arrival_timeout: SignedDuration,
}

impl Gates {
    pub fn any(&self) -> bool {
        self.canary.is_some() || self.rate.is_some()
    }
}

/// `canary`: how many canaries, and where they come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanaryGate {
    pub clusters: u32,
    /// Chosen among the clusters the policy file puts in this group (named
    /// by an operator: no evidence asked of them); else among the fleet's
    /// established clusters, by their lots.
    pub group: Option<String>,
}

/// `max_offered_per_period`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateGate {
    pub clusters: u64,
    pub period: SignedDuration,
}

/// What halts a rollout (pauses it by itself); any of them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Halts {
    pub silent: Option<SilentHalt>,
    pub stuck: Option<StuckHalt>,
    pub query: Option<QueryHalt>,
}

/// The share (percent) of the clusters that arrived at the target and then
/// went silent, judged once at least `min_arrived` arrived.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SilentHalt {
    pub percent: f64,
    pub min_arrived: u64,
}

/// The share (percent) of the clusters offered the target more than
/// `after` ago that have not taken it, judged once at least `min_offered`
/// were offered that long.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StuckHalt {
    pub percent: f64,
    pub after: SignedDuration,
    pub min_offered: u64,
}

/// The value of `promql` (the largest sample of a vector) above `above`.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryHalt {
    pub promql: String,
    pub above: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(starting_percentage: f64) -> Schedule {
        Schedule {
            start: "2026-11-20T00:00:00Z".parse().unwrap(),
            duration: SignedDuration::from_hours(10),
            starting_percentage,
        }
    }

    #[test]
    fn a_schedule_rises_from_its_starting_percentage_to_100() {
        let schedule = schedule(20.0);
        let at = |hours: i64| schedule.start + SignedDuration::from_hours(hours);
        assert_eq!(schedule.progress_at(at(0) - SignedDuration::from_millis(1)), 0.0);
        assert_eq!(schedule.progress_at(at(0)), 20.0);
        assert_eq!(schedule.progress_at(at(5)), 60.0);
        assert_eq!(schedule.progress_at(at(10)), 100.0);
        assert_eq!(schedule.progress_at(at(99)), 100.0);
        assert_eq!(
            schedule.reaches(Place::from_percent(60.0)),
            at(5) + SignedDuration::from_millis(1),
            "at 60% on the dot a place of 60% is not below it yet"
        );
        assert_eq!(schedule.reaches(Place::from_percent(10.0)), at(0));
        assert_eq!(schedule.end(), at(10));
    }

    #[test]
    fn a_schedule_without_duration_is_complete_from_its_start() {
        let instant = Schedule {
            duration: SignedDuration::ZERO,
            ..schedule(0.0)
        };
        assert_eq!(instant.progress_at(instant.start), 100.0);
        assert_eq!(instant.reaches(Place::from_percent(99.0)), instant.start);
        let full = schedule(100.0);
        assert_eq!(full.reaches(Place::from_percent(99.9)), full.start);
    }
}
