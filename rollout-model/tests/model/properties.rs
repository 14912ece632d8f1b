//! The invariants the documentation promises, as properties over random
//! rollouts and times: progress never falls without a control action; a
//! pause never lets a new cluster in and never takes one out; a resume adds
//! nobody at once; a state never read, or gates never judged, offer
//! nobody; a cluster is inside from the instant `offered_from` says; a
//! reading of the clock offers whom the position offers; an alert counts
//! once, and only the last one resolving resumes.

use std::sync::Arc;

use proptest::prelude::*;
use rollout_model::change::{Outcome, Request, decide};
use rollout_model::control::{Actor, AlertId};
use rollout_model::declaration::{CanaryGate, RateGate};
use rollout_model::gates::{Canaries, Canary, GateState};
use rollout_model::office_hours::OfficeHours;
use rollout_model::rounds::before_rate;
use rollout_model::time::{SignedDuration, Timestamp};
use rollout_model::{Control, Declaration, Lot, Place, Reading, Rollout, RunState, Who};

use crate::support::{at, declaration, read};

/// The start of every generated schedule.
fn origin() -> Timestamp {
    at("2026-11-23T00:00:00Z")
}

/// Milliseconds from the origin, within two weeks.
fn offset() -> impl Strategy<Value = i64> {
    0_i64..14 * 24 * 3_600_000
}

fn when(offset: i64) -> Timestamp {
    origin() + SignedDuration::from_millis(offset)
}

/// Random schedules: a start within the week, an hour to ten days, any
/// starting percentage, with or without office hours.
fn declarations() -> impl Strategy<Value = Declaration> {
    (offset(), 1.0_f64..240.0, 0.0_f64..=100.0, any::<bool>()).prop_map(|(start, hours, starting, office)| {
        let mut declared = declaration(when(start / 2), hours, starting);
        if office {
            let days: Vec<String> = ["mon", "tue", "wed", "thu", "fri"].map(str::to_owned).to_vec();
            declared.office_hours = Some(OfficeHours::new(&days, "09:00", "17:00", "Europe/Berlin").unwrap());
        }
        declared
    })
}

fn places() -> impl Strategy<Value = Option<Place>> {
    prop_oneof![
        9 => (0.0_f64..100.0).prop_map(|percent| Some(Place::from_percent(percent))),
        1 => Just(None),
    ]
}

fn who(place: Option<Place>) -> Who {
    Who { place, lot: None }
}

/// `declaration` with `control`, its state read at `as_of`.
fn controlled(declaration: &Arc<Declaration>, control: &Control, as_of: Timestamp) -> Rollout {
    read(declaration, control.clone(), None, as_of)
}

/// `control` after `request` by an operator at `at`.
fn changed(declaration: &Arc<Declaration>, control: &Control, request: Request, at: Timestamp) -> Control {
    decide(
        declaration,
        (control, None),
        &request,
        (&Actor::operator("ops"), "test"),
        at,
    )
    .control
}

/// Operators' requests, each some time after the one before.
fn requests() -> impl Strategy<Value = Vec<(Request, i64)>> {
    let request = prop_oneof![
        Just(Request::Pause),
        Just(Request::Resume),
        (0.0_f64..=100.0).prop_map(Request::Hold),
        Just(Request::Release),
    ];
    prop::collection::vec((request, 0_i64..3_600_000 * 24), 0..5)
}

/// Whom a reading offers, as a consumer with the declared schedule as its
/// only window judges it.
fn offered_by_reading(reading: Reading, declared: &Declaration, place: Option<Place>) -> bool {
    let progress = match reading {
        Reading::Nobody => return false,
        Reading::Held(progress) => progress,
        Reading::At { clock, at_most } => declared.schedule.progress_at(clock).min(at_most),
    };
    place.map_or(progress >= 100.0, |place| place.is_below(progress))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn a_reading_of_the_clock_offers_whom_the_position_offers(
        declared in declarations(), first in offset(), asked in requests(), read_after in 0_i64..3_600_000,
        later in 0_i64..3_600_000 * 48, place in places(),
    ) {
        let mut declared = declared;
        declared.office_hours = None;
        let declared = Arc::new(declared);
        let mut at = when(first);
        let mut control = Control::default();
        let ever_held = asked.iter().any(|(request, _)| matches!(request, Request::Hold(_)));
        for (request, gap) in asked {
            at += SignedDuration::from_millis(gap);
            control = changed(&declared, &control, request, at);
        }
        let as_of = at + SignedDuration::from_millis(read_after);
        let now = as_of + SignedDuration::from_millis(later) - SignedDuration::from_millis(read_after);
        let rollout = controlled(&declared, &control, as_of);
        prop_assert_eq!(
            offered_by_reading(rollout.reading(now), &declared, place),
            rollout.position(now).offers(who(place)),
            "{:?} at {}", rollout.reading(now), now
        );
        if let (Reading::At { at_most, .. }, false) = (rollout.reading(now), ever_held) {
            prop_assert_eq!(at_most, 100.0, "a pause alone only stops the clock");
        }
        let unknown = Rollout::new(declared.clone(), RunState::Unknown);
        prop_assert_eq!(unknown.reading(now), Reading::Nobody);
    }

    #[test]
    fn progress_never_falls_while_nobody_changes_the_rollout(
        declared in declarations(), first in offset(), later in 0_i64..3_600_000 * 48,
    ) {
        let declared = Arc::new(declared);
        let (earlier, later) = (when(first), when(first) + SignedDuration::from_millis(later));
        // Fresh state each time, and a state read once then never again.
        let fresh = |now| controlled(&declared, &Control::default(), now).position(now).threshold;
        prop_assert!(fresh(earlier) <= fresh(later));
        let stale = controlled(&declared, &Control::default(), earlier);
        prop_assert!(stale.position(earlier).threshold <= stale.position(later).threshold);
        // A state read once stops the clock where the declaration alone
        // stood when it was read.
        let declared_alone = Rollout::new(declared.clone(), RunState::Declared).position(earlier).threshold;
        prop_assert_eq!(stale.position(later).threshold, declared_alone, "a stale state stops the clock");
    }

    #[test]
    fn a_pause_never_lets_a_new_cluster_in_nor_takes_one_out(
        declared in declarations(), paused in offset(), before in 1_i64..3_600_000, after in 0_i64..3_600_000 * 72,
        place in places(),
    ) {
        let declared = Arc::new(declared);
        let pause_at = when(paused);
        let just_before = pause_at - SignedDuration::from_millis(before);
        let control = changed(&declared, &Control::default(), Request::Pause, pause_at);
        let later = pause_at + SignedDuration::from_millis(after);
        let was_inside = controlled(&declared, &Control::default(), just_before)
            .position(just_before)
            .offers(who(place));
        let inside_at_pause = controlled(&declared, &Control::default(), pause_at).position(pause_at).offers(who(place));
        let inside_later = controlled(&declared, &control, later).position(later).offers(who(place));
        prop_assert!(!was_inside || inside_later, "a cluster inside before the pause keeps its offer");
        prop_assert!(!inside_later || inside_at_pause, "nobody comes in while paused");
    }

    #[test]
    fn brakes_written_in_any_order_pause_where_the_first_asked_did(
        declared in declarations(), first in offset(), gap in 1_i64..3_600_000 * 24, alert_first in any::<bool>(),
        place in places(),
    ) {
        // An operator's pause and an alert's, kept by two engines while the
        // store could not take them, reach it in either order.
        let declared = Arc::new(declared);
        let (first_at, second_at) = (when(first), when(first) + SignedDuration::from_millis(gap));
        let firing = Request::AlertFiring { alert: AlertId::stored("0f1a".to_owned()), name: "Firing".to_owned() };
        let (first_asked, second_asked) = if alert_first {
            ((firing.clone(), Actor::alert("am", "Firing")), (Request::Pause, Actor::operator("ops")))
        } else {
            ((Request::Pause, Actor::operator("ops")), (firing, Actor::alert("am", "Firing")))
        };
        let apply = |control: &Control, (request, by): &(Request, Actor), at| {
            decide(&declared, (control, None), request, (by, "test"), at).control
        };
        let in_order = apply(&apply(&Control::default(), &first_asked, first_at), &second_asked, second_at);
        let reversed = apply(&apply(&Control::default(), &second_asked, second_at), &first_asked, first_at);
        let paused = |control: &Control| control.pause.clone().expect("paused");
        prop_assert_eq!(paused(&reversed).at, first_at);
        prop_assert_eq!(paused(&reversed).progress, paused(&in_order).progress);
        let later = second_at + SignedDuration::from_millis(gap);
        let offers = |control: &Control| controlled(&declared, control, later).position(later).offers(who(place));
        prop_assert_eq!(offers(&reversed), offers(&in_order));
    }

    #[test]
    fn a_resume_adds_nobody_at_once(
        declared in declarations(), paused in offset(), stood in 0_i64..3_600_000 * 48, place in places(),
    ) {
        let declared = Arc::new(declared);
        let (pause_at, resume_at) = (when(paused), when(paused) + SignedDuration::from_millis(stood));
        let control = changed(&declared, &Control::default(), Request::Pause, pause_at);
        let resumed = changed(&declared, &control, Request::Resume, resume_at);
        let offers = |control: &Control| controlled(&declared, control, resume_at).position(resume_at).offers(who(place));
        let (while_paused, resumed_now) = (offers(&control), offers(&resumed));
        if declared.office_hours.is_none() {
            prop_assert_eq!(while_paused, resumed_now);
        } else {
            // A resume at a window's opening lets in what the closed window
            // held back, never what the pause did.
            prop_assert!(!while_paused || resumed_now, "a resume withdraws nothing");
            prop_assert!(!resumed_now || offers(&Control::default()), "nor offers more than never pausing");
        }
        prop_assert_eq!(resumed.stood_still, SignedDuration::from_millis(stood));
    }

    #[test]
    fn a_state_never_read_or_gates_never_judged_offer_nobody(
        declared in declarations(), now in offset(), place in places(), lot in any::<u64>(), gated in any::<bool>(),
    ) {
        let mut declared = declared;
        let who = Who { place, lot: Some(Lot::from_bits(lot)) };
        let unknown = Rollout::new(Arc::new(declared.clone()), RunState::Unknown);
        prop_assert!(!unknown.position(when(now)).offers(who));
        if gated {
            declared.gates.canary = Some(CanaryGate { clusters: 3, group: None });
        } else {
            declared.gates.rate = Some(RateGate { clusters: 3, period: SignedDuration::from_hours(24) });
        }
        let declared = Arc::new(declared);
        let unjudged = controlled(&declared, &Control::default(), when(now));
        prop_assert!(!unjudged.position(when(now)).offers(who));
        let declared_alone = Rollout::new(declared, RunState::Declared);
        prop_assert!(!declared_alone.position(when(now)).offers(who));
    }

    #[test]
    fn a_cluster_is_inside_from_the_instant_offered_from_says(declared in declarations(), place in places()) {
        let rollout = Rollout::new(Arc::new(declared), RunState::Declared);
        let from = rollout.offered_from(who(place)).expect("on its schedule");
        prop_assert!(rollout.position(from).offers(who(place)), "inside at {}", from);
        let start = rollout.declaration().schedule.start;
        if from > start {
            let before = from - SignedDuration::from_millis(1);
            prop_assert!(!rollout.position(before).offers(who(place)), "outside at {}", before);
        }
    }
}

#[test]
fn the_same_alert_pauses_once_and_only_the_last_to_resolve_resumes() {
    let mut declared = declaration(at("2026-11-20T00:00:00Z"), 10.0, 0.0);
    declared.auto_resume = true;
    let declared = Arc::new(declared);
    let (first, second) = (AlertId::from_fingerprint("a1"), AlertId::from_fingerprint("b2"));
    let by = Actor::alert("am", "Degraded");
    let ask = |control: &Control, request: Request| {
        decide(
            &declared,
            (control, None),
            &request,
            (&by, "Degraded: 5 clusters"),
            at("2026-11-20T05:00:00Z"),
        )
    };
    let firing = |alert: &AlertId| Request::AlertFiring {
        alert: alert.clone(),
        name: "Degraded".into(),
    };
    let paused = ask(&Control::default(), firing(&first));
    assert_eq!(paused.outcome, Outcome::Paused);
    assert!(paused.audit.is_some());
    let again = ask(&paused.control, firing(&first));
    assert_eq!(
        (again.outcome, again.audit.is_some()),
        (Outcome::AlreadyPaused, false)
    );
    assert_eq!(again.control, paused.control, "a repeat changes nothing");
    let both = ask(&paused.control, firing(&second)).control;
    let one_resolved = ask(&both, Request::AlertResolved { alert: first.clone() });
    assert_eq!(one_resolved.outcome, Outcome::LeftPaused, "the other still fires");
    let resumed = ask(&one_resolved.control, Request::AlertResolved { alert: second });
    assert_eq!(resumed.outcome, Outcome::Resumed);
    assert!(resumed.control.pause.is_none() && resumed.control.alerts.is_empty());
}

#[test]
fn an_alert_an_operator_resumed_over_pauses_again_only_when_it_fires_anew() {
    let declared = Arc::new(declaration(at("2026-11-20T00:00:00Z"), 10.0, 0.0));
    let alert = AlertId::from_fingerprint("a1");
    let now = at("2026-11-20T05:00:00Z");
    let (am, ops) = (Actor::alert("am", "Degraded"), Actor::operator("ops"));
    let firing = Request::AlertFiring {
        alert: alert.clone(),
        name: "Degraded".into(),
    };
    let paused = decide(&declared, (&Control::default(), None), &firing, (&am, "x"), now).control;
    let resumed = decide(
        &declared,
        (&paused, None),
        &Request::Resume,
        (&ops, "false alarm"),
        now,
    )
    .control;
    let repeated = decide(&declared, (&resumed, None), &firing, (&am, "x"), now);
    assert_eq!(repeated.outcome, Outcome::Overridden);
    assert!(repeated.control.pause.is_none());
    let resolved = decide(
        &declared,
        (&resumed, None),
        &Request::AlertResolved { alert },
        (&am, "x"),
        now,
    )
    .control;
    let anew = decide(&declared, (&resolved, None), &firing, (&am, "x"), now);
    assert_eq!(anew.outcome, Outcome::Paused);
}

#[test]
fn a_pause_made_by_an_operator_is_not_the_alerts_to_end() {
    let mut declared = declaration(at("2026-11-20T00:00:00Z"), 10.0, 0.0);
    declared.auto_resume = true;
    let declared = Arc::new(declared);
    let now = at("2026-11-20T05:00:00Z");
    let alert = AlertId::from_fingerprint("a1");
    let (am, ops) = (Actor::alert("am", "Degraded"), Actor::operator("ops"));
    let paused = decide(
        &declared,
        (&Control::default(), None),
        &Request::Pause,
        (&ops, "storage"),
        now,
    )
    .control;
    let firing = Request::AlertFiring {
        alert: alert.clone(),
        name: "Degraded".into(),
    };
    let also = decide(&declared, (&paused, None), &firing, (&am, "x"), now).control;
    let resolved = decide(
        &declared,
        (&also, None),
        &Request::AlertResolved { alert },
        (&am, "x"),
        now,
    );
    assert_eq!(resolved.outcome, Outcome::LeftPaused);
    assert!(resolved.control.pause.is_some());
}

/// A rollout behind canaries offered nobody else before they arrived, so
/// its rate, first judged then, admits nobody uncounted, even from 100%.
#[test]
fn behind_canaries_the_rate_finds_nobody_offered_before_it() {
    let mut declared = declaration(origin(), 24.0, 100.0);
    declared.gates.canary = Some(CanaryGate {
        clusters: 1,
        group: None,
    });
    declared.gates.rate = Some(RateGate {
        clusters: 20,
        period: SignedDuration::from_hours(24),
    });
    let declared = Arc::new(declared);
    let arrived = origin() + SignedDuration::from_hours(2);
    let lot = Lot::from_bits(7);
    let gates = GateState {
        offset: 0,
        judged_at: arrived,
        canaries: Some(Canaries {
            chosen_at: origin(),
            members: vec![Canary {
                cluster: "canary".to_owned(),
                lot,
                place: 0.0,
                arrived_at: Some(arrived),
            }],
            arrived_at: Some(arrived),
            paused_before_arrival: SignedDuration::ZERO,
        }),
        rate: None,
        waiting: 0,
        before_rate_threshold: None,
    };
    let now = arrived + SignedDuration::from_mins(1);
    // Even when engines ran it without a rate before.
    let control = Control {
        unrated_since: Some(origin()),
        ..Control::default()
    };
    let rollout = read(&declared, control, Some(gates.clone()), now);
    assert_eq!(before_rate(&rollout, &gates, now), Some(0.0));
}

proptest! {
    /// A rate's first judgment finds offered before it the clusters below
    /// the schedule only if engines ran the rollout without a rate; one
    /// declared with its rate offered nobody uncounted, wherever its
    /// schedule is (seen: a rollout declared with its rate half-way through
    /// its schedule let everyone below it in at its first judgment).
    #[test]
    fn a_rate_finds_offered_before_it_only_what_a_rate_free_schedule_offered(
        hours in 1.0f64..100.0,
        starting in 0.0f64..100.0,
        elapsed_mins in 0i64..10_000,
        unrated in any::<bool>(),
    ) {
        let mut declared = declaration(origin(), hours, starting);
        declared.gates.rate = Some(RateGate {
            clusters: 20,
            period: SignedDuration::from_hours(24),
        });
        let declared = Arc::new(declared);
        let now = origin() + SignedDuration::from_mins(elapsed_mins);
        let gates = GateState {
            offset: 0,
            judged_at: now,
            canaries: None,
            rate: None,
            waiting: 0,
            before_rate_threshold: None,
        };
        let control = Control {
            unrated_since: unrated.then(origin),
            ..Control::default()
        };
        let rollout = read(&declared, control, Some(gates.clone()), now);
        // The documented schedule: linear from the starting percentage to
        // 100% over its hours.
        let elapsed_hours = elapsed_mins as f64 / 60.0;
        let scheduled = (starting + (100.0 - starting) * elapsed_hours / hours).min(100.0);
        let expected = if unrated { scheduled } else { 0.0 };
        let found = before_rate(&rollout, &gates, now).unwrap();
        prop_assert!((found - expected).abs() < 1e-6, "{found} against {expected}");
    }
}
