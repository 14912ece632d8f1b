//! Where a rollout is now ([`Rollout::position`]) and whether a cluster is
//! inside ([`Position::offers`]): the two questions every answer, halt,
//! gate and page asks, answered here only.
//!
//! The rules, in order:
//!
//! 1. A rollout under run-time control whose state was never read offers
//!    its target to nobody ([`RunState::Unknown`]): the engine cannot know
//!    whether it is paused or held.
//! 2. Run-time state read at `as_of` is applied at `min(now, as_of)`: an
//!    engine never offers more than the state it read gave at the moment
//!    it read it, so a change made on another engine after that moment
//!    (a pause) is never overtaken, and a state that can no longer be read
//!    stops the clock where it was last known.
//! 3. The schedule's progress at that clock: held, a held progress;
//!    else the declared schedule read at the rollout's own clock (stopped
//!    while paused; outside office hours, at the last window's close;
//!    later by the time it stood still and the wait for its canaries), no
//!    more than its progress when paused.
//! 4. Gates on top: a gated rollout whose gates were never judged offers
//!    nobody; while its canaries are awaited only they are offered; a
//!    rate offers only the clusters it admitted. Canaries keep their
//!    offer whatever happens after.
//! 5. A cluster is inside when its place is below the threshold (or the
//!    threshold is 100: everyone, requests without an id too) or its lot
//!    is named by the gates.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::control::Control;
use crate::declaration::Declaration;
use crate::gates::GateState;
use crate::place::{Lot, Lots, Place};
use crate::time::{SignedDuration, Timestamp};

/// A rollout: its declaration and what is known of its run-time state.
#[derive(Debug, Clone)]
pub struct Rollout {
    declaration: Arc<Declaration>,
    state: RunState,
    /// With a state read, its position when it was read: by rule 2 its
    /// position at every later time too, so the requests made with this
    /// state (every answer asks each rollout) share one.
    as_read: Option<Position>,
}

/// What an engine knows of a rollout's run-time state.
#[derive(Debug, Clone)]
pub enum RunState {
    /// No run-time control is configured: the declaration alone.
    Declared,
    /// Run-time control is configured and its state was never read.
    Unknown,
    /// As read from the store.
    Read(Arc<Known>),
}

/// What an engine knows of every rollout's run-time state, by target as
/// written (`4.18.52`).
#[derive(Debug, Clone, PartialEq)]
pub enum Knowledge {
    /// No run-time control is configured: declarations alone.
    Declared,
    /// Run-time control is configured and its state was never read.
    Unknown,
    /// As read at `as_of` (a rollout without an entry was never changed).
    Read {
        as_of: Timestamp,
        controls: BTreeMap<String, Control>,
        gates: BTreeMap<String, GateState>,
    },
}

impl Knowledge {
    /// The rollouts of `declarations` with what is known of them.
    pub fn rollouts(&self, declarations: &[Arc<Declaration>]) -> Vec<Rollout> {
        declarations
            .iter()
            .map(|declaration| {
                let state = match self {
                    Self::Declared => RunState::Declared,
                    Self::Unknown => RunState::Unknown,
                    Self::Read {
                        as_of,
                        controls,
                        gates,
                    } => {
                        let target = declaration.target.to_string();
                        RunState::Read(Arc::new(Known::new(
                            controls.get(&target).cloned().unwrap_or_default(),
                            gates.get(&target).cloned(),
                            *as_of,
                        )))
                    }
                };
                Rollout::new(declaration.clone(), state)
            })
            .collect()
    }
}

/// A rollout's run-time state as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Known {
    pub control: Control,
    pub gates: Option<GateState>,
    /// When the read that gave it began.
    pub as_of: Timestamp,
}

impl Known {
    pub fn new(control: Control, gates: Option<GateState>, as_of: Timestamp) -> Self {
        Self {
            control,
            gates,
            as_of,
        }
    }
}

/// Who asks: a cluster's place (none without an id: last in every
/// rollout) and its lot (none when no rollout names clusters, or without
/// an id).
#[derive(Debug, Clone, Copy, Default)]
pub struct Who {
    pub place: Option<Place>,
    pub lot: Option<Lot>,
}

/// What mainly holds a rollout where it is, or that it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// Its run-time state was never read: offers nobody.
    Unknown,
    /// Gated, its gates never judged: offers nobody.
    NotJudged,
    /// Its progress held by an operator.
    Held { progress: f64 },
    /// Its clock stopped.
    Paused,
    /// Only its canaries are offered (chosen or not) until they arrived.
    AwaitingCanaries,
    /// Before its start (later by the time it stood still).
    NotStarted { starts: Timestamp },
    /// Outside office hours; the next window opens then.
    OutsideOfficeHours { opens: Timestamp },
    /// Offers only the clusters its rate admitted.
    Rated,
    /// Rising on its schedule.
    OnSchedule,
    /// At 100%.
    Complete,
}

/// How a rollout's schedule is read at one time, by rules 1 to 3: for a
/// consumer with windows of its own on the rollout's clock (graph-data's
/// phased rollouts: a window per kind of update into the target, each
/// read at the same clock).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reading {
    /// It offers nobody by its clock: its run-time state is unknown, or
    /// it is gated (its gates name whom it offers, which no clock says).
    Nobody,
    /// Its progress is held at this share (percent), whatever the time.
    Held(f64),
    /// Its schedule is read at `clock`: `now`, or earlier (stopped at its
    /// pause, at the state's read, at the last office-hours window; less
    /// the time it stood still). `at_most` is below 100 only when a pause
    /// keeps less than the clock gives (it was made while a hold kept the
    /// progress lower): then no window offers more than that share.
    At { clock: Timestamp, at_most: f64 },
}

/// Where a rollout is at one time.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    pub stage: Stage,
    /// Clusters placed below this (percent) are offered the target; at
    /// 100 everyone is, requests without an id too.
    pub threshold: f64,
    /// What its schedule and run-time control give, before its gates:
    /// where a rate admits from, what a pause keeps.
    pub scheduled: f64,
    /// Clusters offered the target by name, whatever their place.
    pub named: Lots,
    /// The time the position was read at (`min(now, as_of)`).
    pub clock: Timestamp,
}

impl Position {
    /// Whether `who` is offered the target.
    pub fn offers(&self, who: Who) -> bool {
        let by_place = match who.place {
            Some(place) => place.is_below(self.threshold),
            None => self.threshold >= 100.0,
        };
        by_place || who.lot.is_some_and(|lot| self.named.contains(lot))
    }

    fn nobody(stage: Stage, clock: Timestamp, scheduled: f64, named: Lots) -> Self {
        Self {
            stage,
            threshold: 0.0,
            scheduled,
            named,
            clock,
        }
    }
}

/// The control of a rollout nobody changed at run time.
static NO_CONTROL: Control = Control {
    pause: None,
    stood_still: SignedDuration::ZERO,
    held: None,
    resumed_at: None,
    resumed_from: None,
    alerts: BTreeMap::new(),
    last: None,
    unrated_since: None,
};

impl Rollout {
    pub fn new(declaration: Arc<Declaration>, state: RunState) -> Self {
        let mut rollout = Self {
            declaration,
            state,
            as_read: None,
        };
        if let RunState::Read(known) = &rollout.state {
            rollout.as_read = Some(rollout.compute_position(known.as_of));
        }
        rollout
    }

    /// What it declares.
    pub fn declaration(&self) -> &Arc<Declaration> {
        &self.declaration
    }

    /// What is known of its run-time state.
    pub fn state(&self) -> &RunState {
        &self.state
    }

    /// Its run-time control, as known (none changed it, if none is known).
    pub fn control(&self) -> &Control {
        match &self.state {
            RunState::Read(known) => &known.control,
            RunState::Declared | RunState::Unknown => &NO_CONTROL,
        }
    }

    /// Whether its gates name clusters (canaries, admitted): a request
    /// must bring its lot to be answered.
    pub fn names_clusters(&self) -> bool {
        self.gates().is_some_and(|gates| {
            gates.canaries.is_some() || gates.rate.as_ref().is_some_and(|rate| rate.total > 0)
        })
    }

    /// Its gates, as known.
    pub fn gates(&self) -> Option<&GateState> {
        match &self.state {
            RunState::Read(known) => known.gates.as_ref(),
            RunState::Declared | RunState::Unknown => None,
        }
    }

    /// Where the rollout is at `now` (see the module's rules).
    pub fn position(&self, now: Timestamp) -> Cow<'_, Position> {
        match (&self.as_read, &self.state) {
            (Some(as_read), RunState::Read(known)) if now >= known.as_of => Cow::Borrowed(as_read),
            _ => Cow::Owned(self.compute_position(now)),
        }
    }

    fn compute_position(&self, now: Timestamp) -> Position {
        let gated = self.declaration.gates.any();
        let (control, gates, clock) = match &self.state {
            RunState::Unknown => return Position::nobody(Stage::Unknown, now, 0.0, Lots::default()),
            RunState::Declared if gated => {
                return Position::nobody(Stage::NotJudged, now, 0.0, Lots::default());
            }
            RunState::Declared => (&NO_CONTROL, None, now),
            RunState::Read(known) => (&known.control, known.gates.as_ref(), now.min(known.as_of)),
        };
        let scheduled = self.scheduled(control, gates, clock);
        let Some(gates) = gates.filter(|_| gated) else {
            if gated {
                return Position::nobody(Stage::NotJudged, clock, scheduled, Lots::default());
            }
            return self.by_schedule(control, None, clock, scheduled, Lots::default());
        };
        let named = gates.named();
        let declared = &self.declaration.gates;
        if declared.canary.is_some() && !gates.canaries_arrived() {
            return Position::nobody(Stage::AwaitingCanaries, clock, scheduled, named);
        }
        if declared.rate.is_some() {
            let stage = match self
                .by_schedule(control, Some(gates), clock, scheduled, Lots::default())
                .stage
            {
                stage @ (Stage::Held { .. } | Stage::Paused) => stage,
                _ => Stage::Rated,
            };
            return Position::nobody(stage, clock, scheduled, named);
        }
        self.by_schedule(control, Some(gates), clock, scheduled, named)
    }

    /// A position its schedule (and control) alone decides, naming `named`.
    fn by_schedule(
        &self,
        control: &Control,
        gates: Option<&GateState>,
        clock: Timestamp,
        scheduled: f64,
        named: Lots,
    ) -> Position {
        let declaration = &self.declaration;
        let stage = if let Some(progress) = control.held {
            Stage::Held { progress }
        } else if control.pause.is_some() {
            Stage::Paused
        } else if scheduled >= 100.0 {
            Stage::Complete
        } else if clock < self.start(control, gates) {
            Stage::NotStarted {
                starts: self.start(control, gates),
            }
        } else if let Some(opens) = declaration
            .office_hours
            .as_ref()
            .filter(|office| !office.is_open(clock))
            .map(|office| office.next_open(clock))
        {
            Stage::OutsideOfficeHours { opens }
        } else {
            Stage::OnSchedule
        };
        Position {
            stage,
            threshold: scheduled,
            scheduled,
            named,
            clock,
        }
    }

    /// How its schedule is read at `now` (see [`Reading`]).
    pub fn reading(&self, now: Timestamp) -> Reading {
        match &self.state {
            _ if self.declaration.gates.any() => Reading::Nobody,
            RunState::Unknown => Reading::Nobody,
            RunState::Declared => self.read_schedule(&NO_CONTROL, None, now),
            RunState::Read(known) => self.read_schedule(&known.control, None, now.min(known.as_of)),
        }
    }

    /// How its schedule is read at `clock`, given its control (rule 3).
    fn read_schedule(&self, control: &Control, gates: Option<&GateState>, clock: Timestamp) -> Reading {
        if let Some(held) = control.held {
            return Reading::Held(held.clamp(0.0, 100.0));
        }
        let stopped = control.pause.as_ref().map_or(clock, |pause| pause.at.min(clock));
        let open = self
            .declaration
            .office_hours
            .as_ref()
            .map_or(stopped, |office| office.last_open(stopped));
        let shift = control.stood_still_before(open) + self.canary_wait(gates);
        let clock = open.saturating_sub(shift).unwrap_or(Timestamp::MIN);
        let kept = control.pause.as_ref().map_or(100.0, |pause| pause.progress);
        let at_most = if kept < self.declaration.schedule.progress_at(clock) {
            kept
        } else {
            100.0
        };
        Reading::At { clock, at_most }
    }

    /// The progress its schedule and control give at `clock` (rule 3).
    fn scheduled(&self, control: &Control, gates: Option<&GateState>, clock: Timestamp) -> f64 {
        match self.read_schedule(control, gates, clock) {
            Reading::Held(held) => held,
            Reading::Nobody => 0.0,
            Reading::At { clock, at_most } => self.declaration.schedule.progress_at(clock).min(at_most),
        }
    }

    /// How much later than declared its schedule runs: the time its clock
    /// stood still in pauses, and the wait for its canaries.
    fn shift(&self, control: &Control, gates: Option<&GateState>) -> SignedDuration {
        control.stood_still + self.canary_wait(gates)
    }

    /// How much later its schedule runs because it waited for its
    /// canaries: from its start until the last arrived, less the pauses
    /// of then (counted in the time its clock stood still).
    fn canary_wait(&self, gates: Option<&GateState>) -> SignedDuration {
        let Some(canaries) = gates
            .filter(|_| self.declaration.gates.canary.is_some())
            .and_then(|gates| gates.canaries.as_ref())
        else {
            return SignedDuration::ZERO;
        };
        canaries.arrived_at.map_or(SignedDuration::ZERO, |arrived| {
            (arrived.duration_since(self.declaration.schedule.start) - canaries.paused_before_arrival)
                .max(SignedDuration::ZERO)
        })
    }

    /// When its schedule starts, later by its shift.
    fn start(&self, control: &Control, gates: Option<&GateState>) -> Timestamp {
        let start = self.declaration.schedule.start;
        start.saturating_add(self.shift(control, gates)).unwrap_or(start)
    }

    /// When `who` was offered the target: when its rate admitted it
    /// (`admitted`), if it was; for a rollout with a rate, never otherwise;
    /// else as [`Rollout::offered_from`] says.
    pub fn offered_at(&self, who: Who, admitted: Option<Timestamp>) -> Option<Timestamp> {
        match admitted {
            Some(admitted) => Some(admitted),
            None if self.declaration.gates.rate.is_some() => None,
            None => self.offered_from(who),
        }
    }

    /// When `who` is first offered the target by time alone, from what is
    /// known now: a canary when it was chosen; on the schedule, the moment
    /// its progress passes the place (later by its shift, within office
    /// hours). `None` when an operator or the fleet decides (unknown,
    /// paused, held, gated), or never.
    pub fn offered_from(&self, who: Who) -> Option<Timestamp> {
        let (control, gates) = match &self.state {
            RunState::Unknown => return None,
            RunState::Declared if self.declaration.gates.any() => return None,
            RunState::Declared | RunState::Read(_) => (self.control(), self.gates()),
        };
        if let (Some(lot), Some(canaries)) = (who.lot, gates.and_then(|gates| gates.canaries.as_ref()))
            && canaries.lots().any(|canary| canary == lot)
        {
            return Some(canaries.chosen_at);
        }
        let declared = &self.declaration.gates;
        let waits_for_fleet = declared.rate.is_some()
            || (declared.canary.is_some() && !gates.is_some_and(GateState::canaries_arrived))
            || (declared.any() && gates.is_none());
        if waits_for_fleet || !control.is_on_schedule() {
            return None;
        }
        let schedule = &self.declaration.schedule;
        let reached = who
            .place
            .map_or(schedule.complete_at(), |place| schedule.reaches(place));
        let due = reached
            .saturating_add(self.shift(control, gates))
            .unwrap_or(reached);
        Some(
            self.declaration
                .office_hours
                .as_ref()
                .map_or(due, |office| office.next_open(due)),
        )
    }
}
