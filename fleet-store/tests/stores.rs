//! The same questions asked of both stores: a SQLite file in a temporary
//! directory and a throw-away PostgreSQL server.

use fleet_store::gates::{Canary, GateUpdate, RateState};
use fleet_store::questions::{Change, HourCount, Scope};
use fleet_store::rollouts::Change as RolloutChange;
use fleet_store::{Check, FleetStore, Recorded};
use postgres_testkit::PostgresServer;

const HOUR: i64 = 3600;

fn check(cluster: &str, version: &str, place: f64, at: i64) -> Check {
    Check {
        cluster: cluster.into(),
        channel: "stable-4.18".into(),
        arch: "amd64".into(),
        version: version.into(),
        place,
        at,
    }
}

fn everyone() -> Scope<'static> {
    Scope::default()
}

/// Two handles on one store, as two engines sharing it have.
async fn exercise(first: FleetStore, second: FleetStore) {
    assert_eq!(first.schema_version().await.unwrap(), 5);

    // a and b on 4.18.1; a moves to 4.18.2 within the same batch.
    let recorded = first
        .record(&[
            check("a", "4.18.1", 10.0, 100),
            check("b", "4.18.1", 60.0, 110),
            check("a", "4.18.2", 10.0, 10 * HOUR + 5),
        ])
        .await
        .unwrap();
    assert_eq!(
        recorded,
        Recorded {
            clusters: 2,
            new_clusters: 2,
            changes: 1,
            unchanged: 0
        }
    );

    // Both engines see b move to 4.18.2 (it asked each once): one change.
    for store in [&first, &second] {
        store
            .record(&[check("b", "4.18.2", 60.0, 11 * HOUR)])
            .await
            .unwrap();
    }
    // c seen once, long ago.
    second.record(&[check("c", "4.17.9", 90.0, 50)]).await.unwrap();

    let versions = first
        .versions(&everyone(), &[50.0, 70.0], 11 * HOUR)
        .await
        .unwrap();
    let summary: Vec<(&str, u64, &[u64], u64)> = versions
        .iter()
        .map(|count| {
            (
                count.version.as_str(),
                count.clusters,
                count.below_places.as_slice(),
                count.settled,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [("4.17.9", 1, &[0, 0][..], 1), ("4.18.2", 2, &[1, 2][..], 1)],
        "below each place; on the version since before 11h"
    );
    let active = Scope {
        active_since: HOUR,
        ..everyone()
    };
    let versions = second.versions(&active, &[], 0).await.unwrap();
    assert_eq!(versions.len(), 1, "c is not active within the window");
    assert_eq!(versions[0].oldest_since, 10 * HOUR + 5);
    let elsewhere = Scope {
        channel: Some("fast-4.18"),
        ..everyone()
    };
    assert!(first.versions(&elsewhere, &[], 0).await.unwrap().is_empty());

    assert_eq!(
        first.adoption("4.18.2", 0).await.unwrap(),
        [
            HourCount {
                hour: 10 * HOUR,
                clusters: 1
            },
            HourCount {
                hour: 11 * HOUR,
                clusters: 1
            }
        ]
    );

    let (a, changes) = second.history("a").await.unwrap().expect("a is stored");
    assert_eq!(
        (a.first_seen, a.last_seen, a.version_since),
        (100, 10 * HOUR + 5, 10 * HOUR + 5)
    );
    assert_eq!(
        changes,
        [Change {
            from: "4.18.1".into(),
            to: "4.18.2".into(),
            at: 10 * HOUR + 5
        }]
    );
    assert!(second.history("nobody").await.unwrap().is_none());

    let mut arrivals = first.arrivals("4.18.2").await.unwrap();
    arrivals.sort_by_key(|arrival| arrival.at);
    let places: Vec<f64> = arrivals.iter().map(|arrival| arrival.place).collect();
    assert_eq!(places, [10.0, 60.0]);

    // A repeated check keeps the time the cluster came to its version.
    first
        .record(&[check("a", "4.18.2", 10.0, 20 * HOUR)])
        .await
        .unwrap();
    let stuck = first
        .unmoved(
            &Scope {
                channel: Some("stable-4.18"),
                arch: Some("amd64"),
                ..everyone()
            },
            "4.18.2",
            11 * HOUR,
            10,
        )
        .await
        .unwrap();
    let stuck: Vec<&str> = stuck.iter().map(|row| row.cluster.as_str()).collect();
    assert_eq!(stuck, ["a"], "b came to 4.18.2 at 11h, a at 10h");

    // A check older than the store's (an engine that wrote late) changes
    // nothing: d left 4.18.1 for 4.18.2 at 300; 4.18.1 at 250 comes after.
    first.record(&[check("d", "4.18.1", 5.0, 100)]).await.unwrap();
    second.record(&[check("d", "4.18.2", 5.0, 300)]).await.unwrap();
    let late = first
        .record(&[check("d", "4.18.1", 5.0, 250), check("d", "4.18.1", 5.0, 260)])
        .await
        .unwrap();
    assert_eq!((late.clusters, late.changes), (0, 0));
    let (d, changes) = first.history("d").await.unwrap().unwrap();
    assert_eq!(
        (d.version.as_str(), d.last_seen, d.version_since),
        ("4.18.2", 300, 300)
    );
    assert_eq!(changes.len(), 1, "no way back recorded");
    // A batch reaching past the store's: only what is newer counts.
    second
        .record(&[check("d", "4.18.1", 5.0, 280), check("d", "4.18.3", 5.0, 400)])
        .await
        .unwrap();
    let (d, changes) = first.history("d").await.unwrap().unwrap();
    assert_eq!(d.version, "4.18.3");
    let moves: Vec<(&str, &str)> = changes
        .iter()
        .map(|change| (change.from.as_str(), change.to.as_str()))
        .collect();
    assert_eq!(moves, [("4.18.1", "4.18.2"), ("4.18.2", "4.18.3")]);

    // A pause made through one handle is the other's state; audited.
    let paused = first
        .change_rollout(
            "4.18.52",
            RolloutChange::Pause,
            ("ops", "storage alarms"),
            (1_000, 30.0),
        )
        .await
        .unwrap();
    assert_eq!(
        (paused.paused_at, paused.paused_progress),
        (Some(1_000), Some(30.0))
    );
    let states = second.rollout_states().await.unwrap();
    assert_eq!(states[0].paused_progress, Some(30.0), "kept with the state");
    second
        .change_rollout(
            "4.18.52",
            RolloutChange::Resume,
            ("alertmanager", "resolved"),
            (1_600, 30.0),
        )
        .await
        .unwrap();
    let states = first.rollout_states().await.unwrap();
    assert_eq!(states.len(), 1);
    assert_eq!((states[0].paused_at, states[0].paused_seconds), (None, 600));
    assert_eq!(
        (states[0].actor.as_str(), states[0].reason.as_str()),
        ("alertmanager", "resolved")
    );
    let audit = second.rollout_audit(Some("4.18.52"), 10).await.unwrap();
    let actions: Vec<(&str, &str)> = audit
        .iter()
        .map(|entry| (entry.action.as_str(), entry.actor.as_str()))
        .collect();
    assert_eq!(actions, [("pause", "ops"), ("resume", "alertmanager")]);
    assert!(first.rollout_audit(Some("4.19.1"), 10).await.unwrap().is_empty());

    // Optional numbers NULL in one change and numbers in the next, through
    // one handle (PostgreSQL refused a number where a statement it kept
    // prepared had a NULL).
    for change in [
        RolloutChange::Resume,
        RolloutChange::Pause,
        RolloutChange::Resume,
        RolloutChange::Hold(25.0),
        RolloutChange::Release,
        RolloutChange::Hold(75.0),
    ] {
        first
            .change_rollout("4.19.2", change, ("ops", "steps"), (1_700, 10.0))
            .await
            .unwrap();
    }
    let audit = second.rollout_audit(Some("4.19.2"), 10).await.unwrap();
    let holds: Vec<Option<f64>> = audit.iter().map(|entry| entry.held_progress).collect();
    assert_eq!(holds, [None, None, None, Some(25.0), None, Some(75.0)]);

    // Two engines halting one rollout at once: it is paused, and audited,
    // once; a halt of a paused rollout changes nothing.
    let halt = |store: &FleetStore| {
        let store = store.clone();
        async move {
            store
                .halt_rollout("4.19.1", ("fleet-signal", "silent"), (2_000, 40.0))
                .await
                .unwrap()
        }
    };
    let (one, other) = tokio::join!(halt(&first), halt(&second));
    assert_eq!(
        [one.is_some(), other.is_some()]
            .iter()
            .filter(|made| **made)
            .count(),
        1,
        "{one:?} {other:?}"
    );
    assert!(halt(&second).await.is_none(), "paused already");
    let audit = first.rollout_audit(Some("4.19.1"), 10).await.unwrap();
    assert_eq!(audit.len(), 1, "{audit:?}");

    gates(&first, &second).await;

    // c and d were last seen, and d's two changes made, before the first hour.
    let pruned = second.prune(HOUR).await.unwrap();
    assert_eq!((pruned.clusters, pruned.changes), (2, 2));
    assert!(first.history("c").await.unwrap().is_none());
}

/// Two engines choosing a rollout's canaries at once: one choice is kept
/// and audited, the other engine decides on it; the rate's steps are kept
/// unaudited; the clusters placed next are listed from the versions asked.
async fn gates(first: &FleetStore, second: &FleetStore) {
    let canary = |cluster: &str, place| Canary {
        cluster: cluster.into(),
        place,
    };
    let choose = |store: &FleetStore, cluster: &'static str| {
        let store = store.clone();
        async move {
            store
                .update_gates("4.20.1", 3_000, |stored| {
                    stored.canaries_at.is_none().then(|| GateUpdate {
                        choose: vec![canary(cluster, 1.5)],
                        reason: format!("canary {cluster}"),
                        audit: Some(("canaries", format!("chose {cluster}"))),
                        ..GateUpdate::default()
                    })
                })
                .await
                .unwrap()
        }
    };
    let (one, other) = tokio::join!(choose(first, "a"), choose(second, "b"));
    assert_eq!(one.canaries, other.canaries, "both keep the one choice");
    assert_eq!(one.canaries_at, Some(3_000));
    let rate = RateState {
        period_start: 3_000,
        base: 0.0,
        allowed: 12.5,
    };
    second
        .update_gates("4.20.1", 3_100, |_| {
            Some(GateUpdate {
                canaries_arrived: Some(600),
                rate: Some(rate),
                reason: "arrived".into(),
                audit: Some(("canaries-arrived", "all arrived".into())),
                ..GateUpdate::default()
            })
        })
        .await
        .unwrap();
    let gates = first.rollout_gates().await.unwrap();
    assert_eq!(gates.len(), 1);
    assert_eq!(
        (
            gates[0].canaries.len(),
            gates[0].canaries_arrived_at,
            gates[0].rate
        ),
        (1, Some(3_100), Some(rate))
    );
    let audit = first.rollout_audit(Some("4.20.1"), 10).await.unwrap();
    let actions: Vec<(&str, &str)> = audit
        .iter()
        .map(|entry| (entry.action.as_str(), entry.actor.as_str()))
        .collect();
    assert_eq!(actions, [("canaries", "gate"), ("canaries-arrived", "gate")]);

    // a and b are on 4.18.2, placed at 10 and 60.
    let versions = [("stable-4.18".to_owned(), "amd64".to_owned(), "4.18.2".to_owned())];
    let next = first
        .lowest_places(&everyone(), &versions, 20.0, 5)
        .await
        .unwrap();
    assert_eq!(next, [canary("b", 60.0)]);
    let rows = second.clusters(&["a".into(), "gone".into()]).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].version, "4.18.2");
}

/// With a seen step of an hour, checks saying nothing new within it are
/// not written; anything new is, at once.
async fn seen_step(store: FleetStore) {
    let store = store.with_seen_step(std::time::Duration::from_secs(HOUR as u64));
    let written = |recorded: Recorded| (recorded.clusters, recorded.unchanged);
    let record = |checks: Vec<Check>| {
        let store = store.clone();
        async move { store.record(&checks).await.unwrap() }
    };
    assert_eq!(
        written(record(vec![check("s", "4.18.1", 1.0, 100)]).await),
        (1, 0)
    );
    assert_eq!(
        written(record(vec![check("s", "4.18.1", 1.0, 200)]).await),
        (0, 1),
        "still here, within the hour"
    );
    let last_seen = |store: FleetStore| async move { store.history("s").await.unwrap().unwrap().0.last_seen };
    assert_eq!(last_seen(store.clone()).await, 100);
    assert_eq!(
        written(record(vec![check("s", "4.18.1", 1.0, 100 + HOUR)]).await),
        (1, 0),
        "an hour on"
    );
    assert_eq!(last_seen(store.clone()).await, 100 + HOUR);
    let moved = record(vec![check("s", "4.18.2", 1.0, 110 + HOUR)]).await;
    assert_eq!((moved.clusters, moved.changes), (1, 1), "a new version at once");
    let mut elsewhere = check("s", "4.18.2", 1.0, 120 + HOUR);
    elsewhere.channel = "fast-4.18".into();
    assert_eq!(
        written(record(vec![elsewhere]).await),
        (1, 0),
        "a new channel at once"
    );
    let (row, changes) = store.history("s").await.unwrap().unwrap();
    assert_eq!(
        (
            row.channel.as_str(),
            row.version.as_str(),
            row.last_seen,
            changes.len()
        ),
        ("fast-4.18", "4.18.2", 120 + HOUR, 1)
    );
}

#[tokio::test]
async fn a_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("fleet.db").display());
    let first = FleetStore::open(&url, &url).await.unwrap();
    let second = FleetStore::open(&url, &url).await.unwrap();
    exercise(first, second).await;
    // Reopened: migrations already applied, data kept.
    let again = FleetStore::open(&url, &url).await.unwrap();
    assert_eq!(again.schema_version().await.unwrap(), 5);
    assert!(again.history("a").await.unwrap().is_some());
    seen_step(again).await;
}

#[tokio::test]
async fn a_postgresql_server_shared_by_two_engines() {
    let server = PostgresServer::start().await.unwrap();
    let url = server.url();
    let first = FleetStore::open(&url, &url).await.unwrap();
    let second = FleetStore::open(&url, &url).await.unwrap();
    exercise(first, second.clone()).await;
    seen_step(second).await;
}

#[tokio::test]
async fn a_big_batch_is_split_into_statements() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("fleet.db").display());
    let store = FleetStore::open(&url, &url).await.unwrap();
    let checks: Vec<Check> = (0..2_500)
        .map(|number| check(&format!("cluster-{number}"), "4.18.1", 1.0, 1))
        .collect();
    assert_eq!(store.record(&checks).await.unwrap().clusters, 2_500);
    let moved: Vec<Check> = checks
        .iter()
        .map(|check| Check {
            version: "4.18.2".into(),
            at: 2,
            ..check.clone()
        })
        .collect();
    assert_eq!(store.record(&moved).await.unwrap().changes, 2_500);
}

#[tokio::test]
async fn a_store_of_another_kind_is_refused_by_name() {
    let error = FleetStore::open("mysql://fleet", "mysql://fleet")
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "fleet store mysql://fleet: not a sqlite: or postgres:// URL"
    );
}
