//! What rollout control may offer, written from `docs/policy-engine.md`
//! ("Rollouts under run-time control", "What rollout control guarantees",
//! "Where a rollout is", "Alertmanager pauses a rollout") and nothing else:
//! not from the rollout model's code, so that a rule misread there is not
//! misread here too.
//!
//! The rules, as the documentation states them:
//!
//! 1. A rollout's progress is 0 before its start, then its starting
//!    percentage rising linearly to 100 over its duration. A cluster is
//!    inside once its place is below the progress.
//! 2. A pause stops the rollout's clock: it keeps the progress it had at
//!    the instant of the pause, and pausing a paused rollout keeps the
//!    first pause. A resume starts the clock where it stopped: the
//!    schedule runs later by the time it stood still.
//! 3. A hold fixes the progress at a percentage whatever the schedule; a
//!    release lets the schedule decide again.
//! 4. An alert is its fingerprint. Firing, it is remembered on the rollout
//!    it names, and the first pauses a running rollout; firing again after
//!    an operator resumed over it, it does nothing. Resolved, it is
//!    forgotten, and when it was the last firing alert on a rollout an
//!    alert paused, a rollout with `auto_resume` resumes.
//! 5. An engine applies the state it read at the instant it read it
//!    (`min(now, asOf)`); one that has not read it offers the target to
//!    nobody.
//! 6. A pause or a firing alert the store cannot take is in force at once
//!    on the engine asked, and only there, until the store takes it.
//! 7. Each change an operator's request makes is audited once, and so is
//!    the pause and the resume an alert makes, however many engines the
//!    alert reaches.
//!
//! Where the documentation can be read two ways, the oracle allows both:
//! a rollout paused while held and then released while still paused keeps
//! either the progress held at the pause (rule 2, "the progress it had")
//! or its schedule's at the pause (rule 3, "the schedule decides").
//!
//! Real time passes between a request and its answer, so no instant is
//! known exactly: a change was decided within a [`Span`] (from just before
//! its request to just after its answer), taken by the store within
//! another, and an engine read the store at some instant of a window. The
//! oracle answers with [`Bounds`]: the least and the most progress the
//! rules allow over every instant the spans leave open.

use std::collections::BTreeSet;

/// The stores keep instants to the millisecond: spans are widened by one
/// on either side.
const STORED: f64 = 0.001;
/// Places and progress are compared as floating point numbers computed two
/// ways: a cluster this close to a bound is asserted nothing about.
const CLOSE: f64 = 1e-9;

/// Seconds since the Unix epoch.
pub fn secs(at: jiff::Timestamp) -> f64 {
    at.as_nanosecond() as f64 / 1e9
}

/// An instant known to lie within `early..=late`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub early: f64,
    pub late: f64,
}

impl Span {
    /// Between a request sent at `sent` and its answer received at
    /// `answered`.
    pub fn between(sent: jiff::Timestamp, answered: jiff::Timestamp) -> Self {
        Self {
            early: secs(sent) - STORED,
            late: secs(answered) + STORED,
        }
    }

    /// Before anything the test does.
    const ALWAYS: Self = Self {
        early: f64::NEG_INFINITY,
        late: f64::NEG_INFINITY,
    };
}

/// A declared schedule (rule 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Seconds since the Unix epoch.
    pub start: f64,
    pub duration_secs: f64,
    pub starting_percentage: f64,
}

impl Schedule {
    pub fn progress(&self, at: f64) -> f64 {
        if at < self.start {
            return 0.0;
        }
        let risen = (100.0 - self.starting_percentage) * (at - self.start) / self.duration_secs;
        (self.starting_percentage + risen).min(100.0)
    }
}

/// What is asked of a rollout.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    Pause,
    Resume,
    Hold(f64),
    Release,
    Firing(Alert),
    Resolved(Alert),
}

impl Ask {
    /// Whether the store may be without it for a while (rule 6).
    pub fn brakes(&self) -> bool {
        matches!(self, Self::Pause | Self::Firing(_))
    }
}

/// An alert: its fingerprint, and its name (the audit's actor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Alert {
    pub fingerprint: &'static str,
    pub name: &'static str,
}

/// Who made a change, as the audit names it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum By {
    Operator,
    Alert(&'static str),
}

/// What deciding a request did: the outcome Alertmanager's webhook names,
/// and the audit entry it makes (its action), if any.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decided {
    pub outcome: &'static str,
    pub audited: Option<(&'static str, By)>,
}

/// The least and most progress allowed; clusters placed at or above
/// `most` must not be offered the target, those below `least` must be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub least: f64,
    pub most: f64,
}

impl Bounds {
    /// An engine that has not read the state: nobody (rule 5).
    pub const NOBODY: Self = Self {
        least: 0.0,
        most: 0.0,
    };

    /// Whether offering (or not) the target to a cluster at `place` is
    /// within the bounds; `lower` asks for the least to be checked too.
    pub fn allow(&self, place: f64, offered: bool, lower: bool) -> bool {
        if offered {
            place < self.most + CLOSE
        } else {
            !lower || place >= self.least - CLOSE
        }
    }
}

/// What an engine knows of one rollout when it answers.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// It read the store at some instant of this window (its `asOf`);
    /// `None`: it has not read it since it started.
    pub read: Option<(f64, f64)>,
    /// It read every change up to this one (a change's number, see
    /// [`Timeline::take`]).
    pub floor: usize,
    /// Its brakes the store has not taken, in the order asked.
    pub pending: &'a [(Ask, Span)],
}

/// A rollout's run-time control.
#[derive(Debug, Clone, Default, PartialEq)]
struct Control {
    held: Option<f64>,
    pause: Option<Pause>,
    /// The time its clock stood still in pauses ended: at least, at most.
    stood_still: (f64, f64),
    /// The fingerprints of the alerts firing on it.
    alerts: BTreeSet<&'static str>,
}

#[derive(Debug, Clone, PartialEq)]
struct Pause {
    at: Span,
    /// The progress it was held at when paused, if it was.
    held_then: Option<f64>,
    by_alert: bool,
}

/// One state of a rollout's control in the store.
#[derive(Debug, Clone)]
struct Version {
    /// When the store took it.
    taken: Span,
    /// The change that made it.
    change: usize,
    control: Control,
}

/// A rollout: its schedule and every state its control had in the store.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub target: &'static str,
    schedule: Schedule,
    auto_resume: bool,
    versions: Vec<Version>,
}

impl Timeline {
    pub fn new(target: &'static str, schedule: Schedule, auto_resume: bool) -> Self {
        Self {
            target,
            schedule,
            auto_resume,
            versions: vec![Version {
                taken: Span::ALWAYS,
                change: 0,
                control: Control::default(),
            }],
        }
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// What `ask`, decided within `at`, does to the rollout as the store
    /// has it; the store took the result within `taken`, as change number
    /// `change` (numbers grow with every change the test makes).
    pub fn take(&mut self, ask: &Ask, at: Span, taken: Span, change: usize) -> Decided {
        let current = &self.versions.last().expect("a first version").control;
        let (control, decided) = self.decide(current, ask, at);
        if control != *current {
            self.versions.push(Version {
                taken,
                change,
                control,
            });
        }
        decided
    }

    /// Rules 2 to 4.
    fn decide(&self, control: &Control, ask: &Ask, at: Span) -> (Control, Decided) {
        let mut after = control.clone();
        let decided = |outcome, audited| Decided { outcome, audited };
        let decision = match ask {
            Ask::Pause if control.pause.is_some() => decided("already-paused", Some(("pause", By::Operator))),
            Ask::Pause => {
                after.pause = Some(Pause {
                    at,
                    held_then: control.held,
                    by_alert: false,
                });
                decided("paused", Some(("pause", By::Operator)))
            }
            Ask::Resume => {
                let outcome = if resume(&mut after, at) {
                    "resumed"
                } else {
                    "not-paused"
                };
                decided(outcome, Some(("resume", By::Operator)))
            }
            Ask::Hold(percent) => {
                after.held = Some(*percent);
                decided("held", Some(("hold", By::Operator)))
            }
            Ask::Release => {
                after.held = None;
                decided("released", Some(("release", By::Operator)))
            }
            Ask::Firing(alert) if control.alerts.contains(alert.fingerprint) => {
                if control.pause.is_some() {
                    decided("already-paused", None)
                } else {
                    decided("overridden", None)
                }
            }
            Ask::Firing(alert) => {
                after.alerts.insert(alert.fingerprint);
                if control.pause.is_some() {
                    decided("already-paused", None)
                } else {
                    after.pause = Some(Pause {
                        at,
                        held_then: control.held,
                        by_alert: true,
                    });
                    decided("paused", Some(("pause", By::Alert(alert.name))))
                }
            }
            Ask::Resolved(alert) => {
                let was_firing = after.alerts.remove(alert.fingerprint);
                match &control.pause {
                    None => decided("not-paused", None),
                    Some(pause)
                        if was_firing && pause.by_alert && after.alerts.is_empty() && self.auto_resume =>
                    {
                        resume(&mut after, at);
                        decided("resumed", Some(("resume", By::Alert(alert.name))))
                    }
                    Some(_) => decided("left-paused", None),
                }
            }
        };
        (after, decision)
    }

    /// The states of the rollout an engine with `view` may answer with:
    /// each state of the store it may have read, its pending brakes on
    /// top.
    fn possible(&self, view: &View, (from, to): (f64, f64)) -> Vec<Control> {
        let first = self
            .versions
            .iter()
            .rposition(|version| version.change <= view.floor)
            .unwrap_or(0);
        (first..self.versions.len())
            .filter(|&index| {
                let taken_by_then = index == first || self.versions[index].taken.early <= to;
                let superseded = self
                    .versions
                    .get(index + 1)
                    .is_some_and(|next| next.taken.late < from);
                taken_by_then && !superseded
            })
            .map(|index| {
                view.pending
                    .iter()
                    .fold(self.versions[index].control.clone(), |control, (ask, at)| {
                        self.decide(&control, ask, *at).0
                    })
            })
            .collect()
    }

    /// The least and most progress an engine with `view` may offer.
    pub fn bounds(&self, view: &View) -> Bounds {
        let Some(window) = view.read else {
            return Bounds::NOBODY;
        };
        self.possible(view, window).iter().fold(
            Bounds {
                least: f64::INFINITY,
                most: f64::NEG_INFINITY,
            },
            |bounds, control| Bounds {
                least: bounds.least.min(self.least(control, window.0)),
                most: bounds.most.max(self.most(control, window.1)),
            },
        )
    }

    /// The `state` "Where a rollout is" names for an engine with `view`,
    /// when every state it may have gives the same one.
    pub fn state(&self, view: &View) -> Option<&'static str> {
        let Some(window) = view.read else {
            return Some("unknown");
        };
        let states: BTreeSet<&str> = self
            .possible(view, window)
            .iter()
            .map(|control| {
                if control.held.is_some() {
                    "held"
                } else if control.pause.is_some() {
                    "paused"
                } else if self.least(control, window.0) >= 100.0 {
                    "complete"
                } else if self.most(control, window.1) < 100.0 && window.0 >= self.schedule.start {
                    "on-schedule"
                } else {
                    "either"
                }
            })
            .collect();
        match states.into_iter().collect::<Vec<_>>()[..] {
            [state] if state != "either" => Some(state),
            _ => None,
        }
    }

    /// The most progress `control` gives at any clock up to `clock`.
    fn most(&self, control: &Control, clock: f64) -> f64 {
        if let Some(held) = control.held {
            return held;
        }
        let still = control.stood_still.0;
        match &control.pause {
            None => self.schedule.progress(clock - still),
            Some(pause) => {
                let kept = self.schedule.progress(pause.at.late.min(clock) - still);
                pause.held_then.map_or(kept, |held| kept.max(held))
            }
        }
    }

    /// The least progress `control` gives at any clock from `clock` on.
    fn least(&self, control: &Control, clock: f64) -> f64 {
        if let Some(held) = control.held {
            return held;
        }
        let still = control.stood_still.1;
        match &control.pause {
            None => self.schedule.progress(clock - still),
            Some(pause) => {
                let kept = self.schedule.progress(pause.at.early.min(clock) - still);
                pause.held_then.map_or(kept, |held| kept.min(held))
            }
        }
    }
}

/// Starts `control`'s clock again within `at`, if it stood still.
fn resume(control: &mut Control, at: Span) -> bool {
    let Some(pause) = control.pause.take() else {
        return false;
    };
    let (least, most) = control.stood_still;
    control.stood_still = (
        least + (at.early - pause.at.late).max(0.0),
        most + (at.late - pause.at.early).max(0.0),
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schedule of 100 hours, compressed to seconds: its progress at `t`
    /// is `t`, exact in floating point.
    const HOUR: f64 = 1.0;
    const ALERT: Alert = Alert {
        fingerprint: "0a1",
        name: "UpdatesFailing",
    };

    fn at(instant: f64) -> Span {
        Span {
            early: instant,
            late: instant,
        }
    }

    /// From 0% at 0 to 100% at 100 "hours".
    fn timeline(auto_resume: bool) -> Timeline {
        let schedule = Schedule {
            start: 0.0,
            duration_secs: 100.0 * HOUR,
            starting_percentage: 0.0,
        };
        Timeline::new("4.18.4", schedule, auto_resume)
    }

    fn read_at(instant: f64, floor: usize) -> View<'static> {
        View {
            read: Some((instant, instant)),
            floor,
            pending: &[],
        }
    }

    #[test]
    fn a_schedule_rises_linearly_from_its_starting_percentage() {
        let schedule = Schedule {
            start: 10.0,
            duration_secs: 100.0,
            starting_percentage: 20.0,
        };
        assert_eq!(schedule.progress(9.0), 0.0);
        assert_eq!(schedule.progress(10.0), 20.0);
        assert_eq!(schedule.progress(60.0), 60.0);
        assert_eq!(schedule.progress(500.0), 100.0);
    }

    #[test]
    fn a_pause_keeps_its_progress_and_a_resume_shifts_the_schedule() {
        let mut rollout = timeline(false);
        rollout.take(&Ask::Pause, at(30.0 * HOUR), at(30.0 * HOUR), 1);
        let paused = rollout.bounds(&read_at(50.0 * HOUR, 1));
        assert_eq!((paused.least, paused.most), (30.0, 30.0));
        rollout.take(&Ask::Resume, at(50.0 * HOUR), at(50.0 * HOUR), 2);
        let resumed = rollout.bounds(&read_at(60.0 * HOUR, 2));
        assert_eq!((resumed.least, resumed.most), (40.0, 40.0));
        assert_eq!(rollout.state(&read_at(60.0 * HOUR, 2)), Some("on-schedule"));
    }

    #[test]
    fn an_engine_that_may_not_have_read_a_change_may_offer_either_side_of_it() {
        let mut rollout = timeline(false);
        rollout.take(&Ask::Hold(90.0), at(30.0 * HOUR), at(30.0 * HOUR), 1);
        let before_or_after = View {
            read: Some((29.0 * HOUR, 31.0 * HOUR)),
            floor: 0,
            pending: &[],
        };
        let bounds = rollout.bounds(&before_or_after);
        assert_eq!((bounds.least, bounds.most), (29.0, 90.0));
        assert_eq!(rollout.state(&before_or_after), None);
        assert_eq!(rollout.bounds(&read_at(29.0 * HOUR, 1)).least, 90.0);
    }

    #[test]
    fn an_alert_pauses_once_and_its_resolution_resumes_where_the_rollout_says_so() {
        let mut rollout = timeline(true);
        let fire = Ask::Firing(ALERT);
        assert_eq!(rollout.take(&fire, at(1.0), at(1.0), 1).outcome, "paused");
        let again = rollout.take(&fire, at(1.0), at(1.0), 2);
        assert_eq!((again.outcome, again.audited), ("already-paused", None));
        let resolved = rollout.take(&Ask::Resolved(ALERT), at(2.0), at(2.0), 3);
        assert_eq!(resolved.outcome, "resumed");
        assert_eq!(
            rollout.take(&Ask::Resolved(ALERT), at(2.0), at(2.0), 4).outcome,
            "not-paused"
        );
        let mut manual = timeline(false);
        manual.take(&fire, at(1.0), at(1.0), 1);
        assert_eq!(
            manual.take(&Ask::Resolved(ALERT), at(2.0), at(2.0), 2).outcome,
            "left-paused"
        );
    }

    #[test]
    fn an_alert_an_operator_resumed_over_does_not_pause_again() {
        let mut rollout = timeline(true);
        rollout.take(&Ask::Firing(ALERT), at(1.0), at(1.0), 1);
        rollout.take(&Ask::Resume, at(2.0), at(2.0), 2);
        assert_eq!(
            rollout.take(&Ask::Firing(ALERT), at(3.0), at(3.0), 3).outcome,
            "overridden"
        );
    }

    #[test]
    fn a_pending_pause_is_in_force_on_its_engine_only() {
        let mut rollout = timeline(false);
        let pending = [(Ask::Pause, at(30.0 * HOUR))];
        let asked = View {
            read: Some((40.0 * HOUR, 40.0 * HOUR)),
            floor: 0,
            pending: &pending,
        };
        assert_eq!(rollout.bounds(&asked).most, 30.0);
        assert_eq!(rollout.state(&asked), Some("paused"));
        assert_eq!(rollout.bounds(&read_at(40.0 * HOUR, 0)).most, 40.0);
        rollout.take(&Ask::Hold(50.0), at(41.0 * HOUR), at(41.0 * HOUR), 1);
        assert_eq!(rollout.bounds(&read_at(42.0 * HOUR, 1)).most, 50.0);
    }

    #[test]
    fn a_rollout_released_while_paused_keeps_either_reading_of_its_pause() {
        let mut rollout = timeline(false);
        rollout.take(&Ask::Hold(90.0), at(1.0), at(1.0), 1);
        rollout.take(&Ask::Pause, at(50.0 * HOUR), at(50.0 * HOUR), 2);
        rollout.take(&Ask::Release, at(51.0 * HOUR), at(51.0 * HOUR), 3);
        let bounds = rollout.bounds(&read_at(60.0 * HOUR, 3));
        assert_eq!((bounds.least, bounds.most), (50.0, 90.0));
    }

    #[test]
    fn an_engine_that_has_not_read_the_state_offers_nobody() {
        let unknown = View {
            read: None,
            floor: 0,
            pending: &[],
        };
        assert_eq!(timeline(false).bounds(&unknown), Bounds::NOBODY);
        assert!(!Bounds::NOBODY.allow(0.5, true, true));
        assert!(Bounds::NOBODY.allow(0.5, false, true));
    }
}
