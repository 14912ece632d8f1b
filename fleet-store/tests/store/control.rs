//! Rollout control as stored: every change decided by the rollout model on
//! the state as stored, with the rollout's row locked, and audited in the
//! same transaction; engines changing one rollout at once take turns.

use std::collections::BTreeMap;
use std::sync::Arc;

use fleet_store::FleetStore;
use fleet_store::changes::Changes;
use fleet_store::control::{Declared, Locked};
use rollout_model::Declaration;
use rollout_model::change::{Outcome, Request, decide};
use rollout_model::control::{Action, Actor, AlertId, HALT_FLEET};
use rollout_model::time::{SignedDuration, Timestamp};

use crate::support::{Store, at, declared, on_both_stores};

/// What `request` by `by` does to the rollout of 4.18.52 at `now`, made
/// on `store`.
async fn ask(store: &FleetStore, request: Request, by: &Actor, now: Timestamp) -> Outcome {
    let declaration = declared("4.18.52");
    store
        .change_rollout(
            "4.18.52",
            || now,
            |locked| decided(&declaration, locked, &request, by),
        )
        .await
        .unwrap()
}

fn decided(
    declaration: &Arc<Declaration>,
    locked: Locked<'_>,
    request: &Request,
    by: &Actor,
) -> (Changes, Outcome) {
    let decision = decide(
        declaration,
        (locked.control, locked.gates),
        request,
        (by, "because"),
        locked.now,
    );
    let changes = Changes {
        control: Some(decision.control),
        audit: decision.audit.into_iter().collect(),
        ..Changes::default()
    };
    (changes, decision.outcome)
}

on_both_stores!(
    engines_halting_a_rollout_at_once_pause_it_and_audit_it_once,
    async |store: Store| {
        let halt = Actor::automation(HALT_FLEET);
        let (one, other) = tokio::join!(
            ask(&store.first, Request::Halt, &halt, at(5 * 3600)),
            ask(&store.second, Request::Halt, &halt, at(5 * 3600)),
        );
        let mut outcomes = [one, other];
        outcomes.sort_by_key(|outcome| outcome.as_str());
        assert_eq!(outcomes, [Outcome::AlreadyPaused, Outcome::Paused]);
        let audit = store.first.rollout_audit(Some("4.18.52"), 10).await.unwrap();
        assert_eq!(audit.len(), 1, "{audit:?}");
    }
);

on_both_stores!(
    the_same_alert_delivered_to_two_engines_at_once_pauses_once,
    async |store: Store| {
        let alert = Actor::alert("am", "Degraded");
        let firing = || Request::AlertFiring {
            alert: AlertId::from_fingerprint("c0ffee"),
            name: "Degraded".into(),
        };
        let (one, other) = tokio::join!(
            ask(&store.first, firing(), &alert, at(5 * 3600)),
            ask(&store.second, firing(), &alert, at(5 * 3600)),
        );
        let mut outcomes = [one, other];
        outcomes.sort_by_key(|outcome| outcome.as_str());
        assert_eq!(outcomes, [Outcome::AlreadyPaused, Outcome::Paused]);
        let audit = store.second.rollout_audit(None, 10).await.unwrap();
        let actions: Vec<(Action, &str)> = audit
            .iter()
            .map(|entry| (entry.audited.action, entry.audited.by.as_str()))
            .collect();
        assert_eq!(actions, [(Action::Pause, "alertmanager:am/Degraded")]);
        let run_time = store.first.run_time(&[], &BTreeMap::new()).await.unwrap();
        let control = &run_time.controls["4.18.52"];
        assert_eq!(control.alerts.len(), 1, "the alert is remembered, once");
        // Resolved (on the other engine): forgotten; the rollout does not say
        // auto_resume, so it stays paused.
        let resolved = ask(
            &store.second,
            Request::AlertResolved {
                alert: AlertId::from_fingerprint("c0ffee"),
            },
            &alert,
            at(6 * 3600),
        )
        .await;
        assert_eq!(resolved, Outcome::LeftPaused);
        let run_time = store.first.run_time(&[], &BTreeMap::new()).await.unwrap();
        assert!(run_time.controls["4.18.52"].alerts.is_empty());
        assert!(run_time.controls["4.18.52"].pause.is_some());
    }
);

on_both_stores!(
    a_pause_and_a_resume_keep_their_millisecond,
    async |store: Store| {
        let ops = Actor::operator("ops");
        let paused_at = Timestamp::from_millisecond(5 * 3_600_000 + 800).unwrap();
        assert_eq!(
            ask(&store.first, Request::Pause, &ops, paused_at).await,
            Outcome::Paused
        );
        let run_time = store
            .second
            .run_time(
                &[Declared {
                    target: "4.18.52",
                    rated: false,
                }],
                &BTreeMap::new(),
            )
            .await
            .unwrap();
        let pause = run_time.controls["4.18.52"].pause.clone().unwrap();
        assert_eq!(pause.at, paused_at);
        assert!(
            (pause.progress - 50.002_222_222).abs() < 1e-6,
            "{}",
            pause.progress
        );
        let resumed_at = paused_at + SignedDuration::from_millis(3_600_250);
        assert_eq!(
            ask(&store.second, Request::Resume, &ops, resumed_at).await,
            Outcome::Resumed
        );
        let run_time = store.first.run_time(&[], &BTreeMap::new()).await.unwrap();
        let control = &run_time.controls["4.18.52"];
        assert_eq!(control.stood_still, SignedDuration::from_millis(3_600_250));
        assert_eq!(
            (control.resumed_from, control.resumed_at),
            (Some(paused_at), Some(resumed_at))
        );
        let audit = store.first.rollout_audit(Some("4.18.52"), 10).await.unwrap();
        let actions: Vec<(Action, Timestamp)> = audit
            .iter()
            .map(|entry| (entry.audited.action, entry.audited.at))
            .collect();
        assert_eq!(
            actions,
            [(Action::Pause, paused_at), (Action::Resume, resumed_at)],
            "oldest first"
        );
    }
);

on_both_stores!(
    every_declared_rollout_has_a_row_every_engine_locks,
    async |store: Store| {
        let declared = [
            Declared {
                target: "4.18.52",
                rated: false,
            },
            Declared {
                target: "4.19.1",
                rated: true,
            },
        ];
        let run_time = store.first.run_time(&declared, &BTreeMap::new()).await.unwrap();
        assert_eq!(
            run_time.controls.keys().collect::<Vec<_>>(),
            ["4.18.52", "4.19.1"]
        );
        assert!(run_time.controls.values().all(|control| !control.overrides()));
        // Run without a rate: marked once, from the first read on.
        let unrated = run_time.controls["4.18.52"].unrated_since;
        assert!(unrated.is_some());
        assert_eq!(run_time.controls["4.19.1"].unrated_since, None);
        let again = store.second.run_time(&declared, &BTreeMap::new()).await.unwrap();
        assert_eq!(again.controls["4.18.52"].unrated_since, unrated);
        assert_eq!(again.controls["4.19.1"].unrated_since, None);
        // Its rate taken out by another engine's file: marked then.
        let rate_removed = [Declared {
            target: "4.19.1",
            rated: false,
        }];
        let later = store
            .second
            .run_time(&rate_removed, &BTreeMap::new())
            .await
            .unwrap();
        assert!(later.controls["4.19.1"].unrated_since >= unrated && unrated.is_some());
        let read_back = store.first.run_time(&[], &BTreeMap::new()).await.unwrap();
        assert_eq!(read_back.controls, later.controls);
    }
);
