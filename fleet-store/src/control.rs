//! Rollouts under run-time control, as stored: each rollout's
//! [`Control`] (the alerts firing on it included) and [`GateState`], and
//! the audit of every change. Times are Unix milliseconds.
//!
//! Every change, whoever makes it (an operator, an alert, a halt, a gate
//! round), goes through one path, [`FleetStore::change_rollout`]: the
//! rollout's row is locked (made if missing), its control and gates are
//! read as stored, the caller's decision (the rollout model's) is made on
//! them at a time taken after the lock, and what it changes is written
//! with its audit in the same transaction. Engines sharing the store take
//! turns and each decides on the other's result, so a change is made and
//! audited once.

use std::collections::BTreeMap;

use rollout_model::control::{Action, Actor, AlertId, Audited, Pause};
use rollout_model::gates::GateState;
use rollout_model::time::{SignedDuration, Timestamp, from_millis, millis};
use rollout_model::{Control, Lot};
use sqlx::any::AnyRow;
use sqlx::{Any, AssertSqlSafe, Row as _, Transaction};

use crate::changes::{Changes, audit};
use crate::gates::{apply_gate_change, gate_states, locked_gates};
use crate::store::{FleetStore, StoreError, StoreKind, failed};

/// Every rollout's run-time state as read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunTime {
    pub controls: BTreeMap<String, Control>,
    pub gates: BTreeMap<String, GateState>,
}

/// A rollout's state with its row locked, for a decision.
#[derive(Debug)]
pub struct Locked<'a> {
    pub control: &'a Control,
    pub gates: Option<&'a GateState>,
    /// The time the decision is made at: taken after the lock, so any
    /// engine that read the state before the change began reading it
    /// before this time.
    pub now: Timestamp,
}

/// One audited change, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    pub target: String,
    pub audited: Audited,
}

/// The columns [`control_row`] reads, in its order.
const CONTROL_COLUMNS: &str = "target, paused_at_ms, paused_progress, paused_by, stood_still_ms, held_progress, \
     resumed_at_ms, last_action, last_actor, last_reason, last_at_ms, last_held, resumed_from_ms, unrated_since_ms";

/// A rollout declared to the engine reading the run-time state.
#[derive(Debug, Clone, Copy)]
pub struct Declared<'a> {
    pub target: &'a str,
    /// Declared with a rate (`max_offered_per_period`).
    pub rated: bool,
}

impl FleetStore {
    /// Every rollout's control and gates. The rows of `declared` targets
    /// are made if missing, so that a change of one locks a row that every
    /// engine reads, and those declared without a rate are marked as run
    /// so (`unrated_since`) the first time; a row that cannot be made or
    /// marked (a store that takes no write: a full disk, a write lock
    /// held) reads as no change, since none was stored, and the state is
    /// read all the same. On PostgreSQL
    /// the control rows are read with a share lock: a change being made is
    /// waited for, not missed. `known` is what the caller read last: only
    /// the admissions made since are read.
    pub async fn run_time(
        &self,
        declared: &[Declared<'_>],
        known: &BTreeMap<String, GateState>,
    ) -> Result<RunTime, StoreError> {
        let what = "reading the rollouts' run-time state";
        let share = match self.kind() {
            StoreKind::Postgres => " FOR SHARE",
            StoreKind::Sqlite => "",
        };
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {CONTROL_COLUMNS} FROM rollout_control ORDER BY target{share}"
        )))
        .fetch_all(&self.pool)
        .await
        .map_err(failed(what))?;
        let mut controls = BTreeMap::new();
        for row in &rows {
            let (target, control) = control_row(row).map_err(failed(what))?;
            controls.insert(target, control);
        }
        // As stored: to the millisecond.
        let now = from_millis(millis(Timestamp::now()));
        for rollout in declared {
            let target = rollout.target;
            let unrated = (!rollout.rated).then_some(now);
            let Some(control) = controls.get_mut(target) else {
                let made = create_control_row(&self.pool, target, unrated).await.is_ok();
                let control = Control {
                    unrated_since: unrated.filter(|_| made),
                    ..Control::default()
                };
                controls.insert(target.to_owned(), control);
                continue;
            };
            if control.unrated_since.is_none()
                && let Some(since) = unrated
                && mark_unrated(&self.pool, target, since).await.is_ok()
            {
                control.unrated_since = Some(since);
            }
        }
        let alerts =
            sqlx::query("SELECT target, alert, alertname FROM rollout_alerts ORDER BY target, alert")
                .fetch_all(&self.pool)
                .await
                .map_err(failed(what))?;
        for row in &alerts {
            let target: String = row.try_get(0).map_err(failed(what))?;
            if let Some(control) = controls.get_mut(&target) {
                control.alerts.insert(
                    AlertId::stored(row.try_get(1).map_err(failed(what))?),
                    row.try_get(2).map_err(failed(what))?,
                );
            }
        }
        let gates = gate_states(self, known).await?;
        Ok(RunTime { controls, gates })
    }

    /// Makes a change to the rollout of `target` (see the module): `decide`
    /// is given its state as stored, with its row locked, at the time
    /// `clock` gives then; what it returns is written with its audit in
    /// the same transaction, and `decide`'s value returned.
    pub async fn change_rollout<T>(
        &self,
        target: &str,
        clock: impl FnOnce() -> Timestamp,
        decide: impl FnOnce(Locked<'_>) -> (Changes, T),
    ) -> Result<T, StoreError> {
        let what = "changing a rollout";
        self.in_transaction(what, async |transaction| {
            create_control_row(&mut **transaction, target, None).await?;
            let row = sqlx::query(AssertSqlSafe(format!(
                "SELECT {CONTROL_COLUMNS} FROM rollout_control WHERE target = $1{}",
                self.row_lock()
            )))
            .bind(target)
            .fetch_one(&mut **transaction)
            .await
            .map_err(failed(what))?;
            let (_, mut control) = control_row(&row).map_err(failed(what))?;
            control.alerts = alerts_of(transaction, target).await?;
            let gates = locked_gates(self, transaction, target).await?;
            let now = clock();
            let (changes, value) = decide(Locked {
                control: &control,
                gates: gates.as_ref(),
                now,
            });
            if let Some(after) = &changes.control {
                write_control(transaction, target, after, &control, now).await?;
            }
            for audited in &changes.audit {
                audit(transaction, target, audited).await?;
            }
            if changes.open_gates || changes.gates.is_some() {
                apply_gate_change(transaction, target, gates.as_ref(), &changes, now).await?;
            }
            Ok(value)
        })
        .await
    }

    /// The audited changes (of `target`, or of every rollout), oldest
    /// first, the last `limit` of them.
    pub async fn rollout_audit(
        &self,
        target: Option<&str>,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let what = "reading the rollouts' audit";
        let rows = sqlx::query(
            "SELECT target, action, actor, reason, held_progress, at_ms FROM rollout_audit \
             WHERE ($1 = '' OR target = $1) ORDER BY at_ms DESC, id DESC LIMIT $2",
        )
        .bind(target.unwrap_or_default())
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(failed(what))?;
        let mut entries = rows
            .iter()
            .map(|row| {
                let action: String = row.try_get(1)?;
                Ok(AuditEntry {
                    target: row.try_get(0)?,
                    audited: Audited {
                        action: Action::parse(&action).unwrap_or(Action::Pause),
                        by: Actor::stored(row.try_get(2)?),
                        reason: row.try_get(3)?,
                        held: row.try_get(4)?,
                        at: from_millis(row.try_get(5)?),
                    },
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(failed(what))?;
        entries.reverse();
        Ok(entries)
    }

    /// The lots of the clusters stored as `clusters`.
    pub fn lots<'a>(&self, clusters: impl IntoIterator<Item = &'a str>) -> Vec<Lot> {
        clusters.into_iter().map(|cluster| self.lot(cluster)).collect()
    }
}

/// Makes the control row of `target` if missing (a rollout nobody changed),
/// run without a rate since `unrated_since` if given.
async fn create_control_row<'e>(
    executor: impl sqlx::Executor<'e, Database = Any>,
    target: &str,
    unrated_since: Option<Timestamp>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO rollout_control (target, stood_still_ms, unrated_since_ms) VALUES ($1, 0, $2) \
         ON CONFLICT (target) DO NOTHING",
    )
    // NULL in one call, a number in the next (see `write_control`).
    .persistent(false)
    .bind(target)
    .bind(unrated_since.map(millis))
    .execute(executor)
    .await
    .map_err(failed("making a rollout's row"))?;
    Ok(())
}

/// Marks `target` as run without a rate since `since`, unless it was.
async fn mark_unrated(pool: &sqlx::AnyPool, target: &str, since: Timestamp) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE rollout_control SET unrated_since_ms = $2 WHERE target = $1 AND unrated_since_ms IS NULL",
    )
    .bind(target)
    .bind(millis(since))
    .execute(pool)
    .await
    .map_err(failed("marking a rollout run without a rate"))?;
    Ok(())
}

fn control_row(row: &AnyRow) -> Result<(String, Control), sqlx::Error> {
    let paused_at: Option<i64> = row.try_get(1)?;
    let paused_progress: Option<f64> = row.try_get(2)?;
    let paused_by: Option<String> = row.try_get(3)?;
    let pause = paused_at.map(|at| Pause {
        at: from_millis(at),
        progress: paused_progress.unwrap_or(100.0),
        by: Actor::stored(paused_by.unwrap_or_default()),
    });
    let last_action: Option<String> = row.try_get(7)?;
    let last_at: Option<i64> = row.try_get(10)?;
    let last = match (last_action.as_deref().and_then(Action::parse), last_at) {
        (Some(action), Some(at)) => Some(Audited {
            action,
            by: Actor::stored(row.try_get::<Option<String>, _>(8)?.unwrap_or_default()),
            reason: row.try_get::<Option<String>, _>(9)?.unwrap_or_default(),
            at: from_millis(at),
            held: row.try_get(11)?,
        }),
        _ => None,
    };
    let control = Control {
        pause,
        stood_still: SignedDuration::from_millis(row.try_get(4)?),
        held: row.try_get(5)?,
        resumed_at: row.try_get::<Option<i64>, _>(6)?.map(from_millis),
        resumed_from: row.try_get::<Option<i64>, _>(12)?.map(from_millis),
        alerts: BTreeMap::new(),
        last,
        unrated_since: row.try_get::<Option<i64>, _>(13)?.map(from_millis),
    };
    Ok((row.try_get(0)?, control))
}

async fn alerts_of(
    transaction: &mut Transaction<'_, Any>,
    target: &str,
) -> Result<BTreeMap<AlertId, String>, StoreError> {
    let rows = sqlx::query("SELECT alert, alertname FROM rollout_alerts WHERE target = $1")
        .bind(target)
        .fetch_all(&mut **transaction)
        .await
        .map_err(failed("reading a rollout's alerts"))?;
    rows.iter()
        .map(|row| Ok((AlertId::stored(row.try_get(0)?), row.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()
        .map_err(failed("reading a rollout's alerts"))
}

/// Writes `after` as the control of `target` (its alerts as they differ
/// from `before`'s).
async fn write_control(
    transaction: &mut Transaction<'_, Any>,
    target: &str,
    after: &Control,
    before: &Control,
    now: Timestamp,
) -> Result<(), StoreError> {
    let what = "writing a rollout's control";
    let last = after.last.as_ref();
    sqlx::query(
        "UPDATE rollout_control SET paused_at_ms = $2, paused_progress = $3, paused_by = $4, stood_still_ms = $5, \
         held_progress = $6, resumed_at_ms = $7, last_action = $8, last_actor = $9, last_reason = $10, \
         last_at_ms = $11, last_held = $12, resumed_from_ms = $13 WHERE target = $1",
    )
    // Its optional values are NULL in one change and set in the next: a
    // statement PostgreSQL kept prepared from a NULL refuses a number, so
    // it is prepared each time (changes are rare).
    .persistent(false)
    .bind(target)
    .bind(after.pause.as_ref().map(|pause| millis(pause.at)))
    .bind(after.pause.as_ref().map(|pause| pause.progress))
    .bind(after.pause.as_ref().map(|pause| pause.by.as_str().to_owned()))
    .bind(i64::try_from(after.stood_still.as_millis()).unwrap_or(i64::MAX))
    .bind(after.held)
    .bind(after.resumed_at.map(millis))
    .bind(last.map(|last| last.action.as_str()))
    .bind(last.map(|last| last.by.as_str().to_owned()))
    .bind(last.map(|last| last.reason.clone()))
    .bind(last.map(|last| millis(last.at)))
    .bind(last.and_then(|last| last.held))
    .bind(after.resumed_from.map(millis))
    .execute(&mut **transaction)
    .await
    .map_err(failed(what))?;
    for (alert, name) in &after.alerts {
        if !before.alerts.contains_key(alert) {
            sqlx::query(
                "INSERT INTO rollout_alerts (target, alert, alertname, since_ms) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (target, alert) DO NOTHING",
            )
            .bind(target)
            .bind(alert.as_str())
            .bind(name)
            .bind(millis(now))
            .execute(&mut **transaction)
            .await
            .map_err(failed(what))?;
        }
    }
    for alert in before
        .alerts
        .keys()
        .filter(|alert| !after.alerts.contains_key(*alert))
    {
        sqlx::query("DELETE FROM rollout_alerts WHERE target = $1 AND alert = $2")
            .bind(target)
            .bind(alert.as_str())
            .execute(&mut **transaction)
            .await
            .map_err(failed(what))?;
    }
    Ok(())
}
