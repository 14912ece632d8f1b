//! The schema: refused stores, and a store of schema 5 migrated to the
//! newest with what it held (a pause in force, the audit, a gated
//! rollout's canaries and rate).

use std::collections::BTreeMap;

use fleet_store::FleetStore;
use rollout_model::control::Action;
use rollout_model::time::SignedDuration;
use sqlx::any::{AnyPoolOptions, install_default_drivers};

use crate::support::at;

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

#[tokio::test]
async fn a_store_of_schema_5_keeps_its_rollouts_through_the_migration() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("fleet.db").display());
    install_default_drivers();
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .unwrap();
    let mut migrator = sqlx::migrate!("./migrations");
    migrator.migrations = migrator
        .migrations
        .iter()
        .filter(|migration| migration.version <= 5)
        .cloned()
        .collect::<Vec<_>>()
        .into();
    migrator.run(&pool).await.unwrap();
    for statement in [
        "INSERT INTO rollout_state (target, paused_at, paused_seconds, held_progress, actor, reason, changed_at, \
         paused_progress) VALUES ('4.18.52', 1000, 60, NULL, 'ops', 'storage alarms', 1000, 30.5)",
        "INSERT INTO rollout_audit (id, target, action, actor, reason, held_progress, at) \
         VALUES ('x', '4.18.52', 'pause', 'ops', 'storage alarms', NULL, 1000)",
        "INSERT INTO rollout_gates (target, canaries_at, canaries_arrived_at, canaries_paused_seconds, period_start, \
         period_base, allowed, reason, changed_at) VALUES ('4.19.1', 500, NULL, 0, 600, 0, 12.5, 'r', 700)",
        "INSERT INTO rollout_canaries (target, cluster, place) VALUES ('4.19.1', 'canary-1', 0.5)",
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    pool.close().await;

    let store = FleetStore::open(&url, &url).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), 7);
    let run_time = store.run_time(&[], &BTreeMap::new()).await.unwrap();
    let control = &run_time.controls["4.18.52"];
    let pause = control.pause.as_ref().unwrap();
    assert_eq!(
        (pause.at, pause.progress, pause.by.as_str()),
        (at(1000), 30.5, "ops")
    );
    assert_eq!(control.stood_still, SignedDuration::from_secs(60));
    // Not known to have run without a rate until an engine runs it so.
    assert_eq!(control.unrated_since, None);
    let gates = &run_time.gates["4.19.1"];
    let canaries = gates.canaries.as_ref().unwrap();
    assert_eq!(canaries.chosen_at, at(500));
    assert_eq!(
        canaries.members[0].lot,
        store.lot("canary-1"),
        "lots computed from the names"
    );
    assert_eq!(gates.rate, None, "a rate is counted anew");
    assert_eq!(
        gates.before_rate_threshold,
        Some(12.5),
        "with what the old one let in"
    );
    let audit = store.rollout_audit(None, 10).await.unwrap();
    assert_eq!(
        (audit[0].audited.action, audit[0].audited.at),
        (Action::Pause, at(1000))
    );
}
