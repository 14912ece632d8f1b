//! Rollout gates (schema version 5): how far a rollout whose policy file
//! entry says `canary` or `max_offered_per_period` may offer its target, as
//! the engines sharing the store computed it from the fleet. Times are Unix
//! seconds, progress and places in percent.

use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row as _};

use crate::questions::{ClusterRow, Scope};
use crate::rollouts::{Audited, audit};
use crate::store::{FleetStore, StoreError, failed};

/// One of a rollout's canaries: a cluster as stored, and its place.
#[derive(Debug, Clone, PartialEq)]
pub struct Canary {
    pub cluster: String,
    pub place: f64,
}

/// A rollout's rate gate: the current period, and how far it may go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateState {
    pub period_start: i64,
    /// The progress offered when the period started.
    pub base: f64,
    /// The most progress the period allows.
    pub allowed: f64,
}

/// A gated rollout as stored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GateState {
    pub target: String,
    /// Its canaries, lowest place first; empty until chosen.
    pub canaries: Vec<Canary>,
    /// When they were chosen (and offered the target).
    pub canaries_at: Option<i64>,
    /// When the last of them arrived.
    pub canaries_arrived_at: Option<i64>,
    /// How long the rollout had been paused by then.
    pub canaries_paused_seconds: i64,
    pub rate: Option<RateState>,
    /// What the gates say, in words.
    pub reason: String,
    pub changed_at: i64,
}

/// What a gate round changes of a rollout's gates.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GateUpdate {
    /// Choose these canaries (only when none are chosen yet).
    pub choose: Vec<Canary>,
    /// Every canary arrived, the rollout having been paused this long
    /// (seconds) by then (kept once).
    pub canaries_arrived: Option<i64>,
    pub rate: Option<RateState>,
    pub reason: String,
    /// An audit entry's action and reason: choosing canaries and their
    /// arrival are audited, the rate's steps are not.
    pub audit: Option<(&'static str, String)>,
}

/// Who the audit says made a gate's changes.
pub const GATE_ACTOR: &str = "gate";

impl FleetStore {
    /// Every gated rollout's gates.
    pub async fn rollout_gates(&self) -> Result<Vec<GateState>, StoreError> {
        let what = "reading the rollouts' gates";
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {GATE_COLUMNS} FROM rollout_gates ORDER BY target"
        )))
        .fetch_all(&self.pool)
        .await
        .map_err(failed(what))?;
        let mut gates = rows
            .iter()
            .map(gate_row)
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(failed(what))?;
        let canaries =
            sqlx::query("SELECT target, cluster, place FROM rollout_canaries ORDER BY target, place")
                .fetch_all(&self.pool)
                .await
                .map_err(failed(what))?;
        for row in &canaries {
            let target: String = row.try_get(0).map_err(failed(what))?;
            let canary = Canary {
                cluster: row.try_get(1).map_err(failed(what))?,
                place: row.try_get(2).map_err(failed(what))?,
            };
            if let Some(gate) = gates.iter_mut().find(|gate| gate.target == target) {
                gate.canaries.push(canary);
            }
        }
        Ok(gates)
    }

    /// Changes the gates of `target` at `at` as `decide` says, given them
    /// as stored now (made empty if missing), in one transaction: the row
    /// is locked first, so engines sharing the store take turns and each
    /// decides on the other's result (canaries are chosen, and their
    /// arrival audited, once). `None` from `decide` changes nothing.
    pub async fn update_gates(
        &self,
        target: &str,
        at: i64,
        decide: impl FnOnce(&GateState) -> Option<GateUpdate>,
    ) -> Result<GateState, StoreError> {
        let what = "changing a rollout's gates";
        let mut transaction = self.pool.begin().await.map_err(failed(what))?;
        sqlx::query(
            "INSERT INTO rollout_gates (target, canaries_at, canaries_arrived_at, canaries_paused_seconds, \
             period_start, period_base, allowed, reason, changed_at) \
             VALUES ($1, NULL, NULL, 0, NULL, NULL, NULL, '', $2) ON CONFLICT (target) DO NOTHING",
        )
        .bind(target)
        .bind(at)
        .execute(&mut *transaction)
        .await
        .map_err(failed(what))?;
        let mut current = sqlx::query(AssertSqlSafe(format!(
            "SELECT {GATE_COLUMNS} FROM rollout_gates WHERE target = $1{}",
            self.row_lock()
        )))
        .bind(target)
        .fetch_one(&mut *transaction)
        .await
        .and_then(|row| gate_row(&row))
        .map_err(failed(what))?;
        current.canaries =
            sqlx::query("SELECT cluster, place FROM rollout_canaries WHERE target = $1 ORDER BY place")
                .bind(target)
                .fetch_all(&mut *transaction)
                .await
                .and_then(|rows| {
                    rows.iter()
                        .map(|row| {
                            Ok(Canary {
                                cluster: row.try_get(0)?,
                                place: row.try_get(1)?,
                            })
                        })
                        .collect()
                })
                .map_err(failed(what))?;
        let Some(update) = decide(&current) else {
            transaction.commit().await.map_err(failed(what))?;
            return Ok(current);
        };
        if current.canaries_at.is_none() && !update.choose.is_empty() {
            for canary in &update.choose {
                sqlx::query("INSERT INTO rollout_canaries (target, cluster, place) VALUES ($1, $2, $3)")
                    .bind(target)
                    .bind(&canary.cluster)
                    .bind(canary.place)
                    .execute(&mut *transaction)
                    .await
                    .map_err(failed(what))?;
            }
            current.canaries = update.choose.clone();
            current.canaries_at = Some(at);
        }
        if let Some(paused_seconds) = update.canaries_arrived
            && current.canaries_arrived_at.is_none()
        {
            current.canaries_arrived_at = Some(at);
            current.canaries_paused_seconds = paused_seconds;
        }
        current.rate = update.rate.or(current.rate);
        current.reason = update.reason;
        current.changed_at = at;
        let rate = current.rate;
        sqlx::query(
            "UPDATE rollout_gates SET canaries_at = $2, canaries_arrived_at = $3, period_start = $4, \
             period_base = $5, allowed = $6, reason = $7, changed_at = $8, canaries_paused_seconds = $9 \
             WHERE target = $1",
        )
        // Its optional values are NULL in one round and set in the next: a
        // statement PostgreSQL kept prepared from a NULL refuses a number.
        .persistent(false)
        .bind(target)
        .bind(current.canaries_at)
        .bind(current.canaries_arrived_at)
        .bind(rate.map(|rate| rate.period_start))
        .bind(rate.map(|rate| rate.base))
        .bind(rate.map(|rate| rate.allowed))
        .bind(&current.reason)
        .bind(at)
        .bind(current.canaries_paused_seconds)
        .execute(&mut *transaction)
        .await
        .map_err(failed(what))?;
        if let Some((action, reason)) = &update.audit {
            let entry = Audited {
                target,
                action,
                by: (GATE_ACTOR, reason),
                held_progress: None,
                at,
            };
            audit(&mut transaction, entry).await?;
        }
        transaction.commit().await.map_err(failed(what))?;
        Ok(current)
    }

    /// Up to `limit` clusters within `scope` on one of `versions` (channel,
    /// arch, version), placed at or above `from`, lowest place first: who
    /// a rollout offers its target to next.
    pub async fn lowest_places(
        &self,
        scope: &Scope<'_>,
        versions: &[(String, String, String)],
        from: f64,
        limit: u32,
    ) -> Result<Vec<Canary>, StoreError> {
        let what = "listing the clusters placed next in a rollout";
        let mut lowest = Vec::new();
        for (channel, arch, version) in versions {
            let rows = sqlx::query(
                "SELECT id, place FROM fleet_clusters WHERE channel = $1 AND arch = $2 AND version = $3 \
                 AND last_seen >= $4 AND place >= $5 ORDER BY place LIMIT $6",
            )
            .bind(channel)
            .bind(arch)
            .bind(version)
            .bind(scope.active_since)
            .bind(from)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(failed(what))?;
            for row in &rows {
                lowest.push(Canary {
                    cluster: row.try_get(0).map_err(failed(what))?,
                    place: row.try_get(1).map_err(failed(what))?,
                });
            }
        }
        lowest.sort_by(|a, b| a.place.total_cmp(&b.place));
        lowest.truncate(limit as usize);
        Ok(lowest)
    }

    /// The stored rows of `clusters` (ids as stored) that the store has.
    pub async fn clusters(&self, clusters: &[String]) -> Result<Vec<ClusterRow>, StoreError> {
        let what = "reading clusters";
        let mut rows = Vec::with_capacity(clusters.len());
        // A statement a few hundred at a time stays within both databases'
        // bound parameters.
        for chunk in clusters.chunks(500) {
            let placeholders: Vec<String> = (1..=chunk.len()).map(|index| format!("${index}")).collect();
            let sql = format!(
                "SELECT {} FROM fleet_clusters WHERE id IN ({})",
                crate::questions::CLUSTER_COLUMNS,
                placeholders.join(", ")
            );
            // Safe: only placeholders are generated; the values are bound.
            let mut query = sqlx::query(AssertSqlSafe(sql));
            for cluster in chunk {
                query = query.bind(cluster);
            }
            let found = query.fetch_all(&self.pool).await.map_err(failed(what))?;
            for row in &found {
                rows.push(crate::questions::cluster_row(row).map_err(failed(what))?);
            }
        }
        Ok(rows)
    }
}

/// The columns [`gate_row`] reads, in its order.
const GATE_COLUMNS: &str = "target, canaries_at, canaries_arrived_at, period_start, period_base, allowed, \
     reason, changed_at, canaries_paused_seconds";

fn gate_row(row: &AnyRow) -> Result<GateState, sqlx::Error> {
    let period_start: Option<i64> = row.try_get(3)?;
    let base: Option<f64> = row.try_get(4)?;
    let allowed: Option<f64> = row.try_get(5)?;
    Ok(GateState {
        target: row.try_get(0)?,
        canaries: Vec::new(),
        canaries_at: row.try_get(1)?,
        canaries_arrived_at: row.try_get(2)?,
        rate: match (period_start, base, allowed) {
            (Some(period_start), Some(base), Some(allowed)) => Some(RateState {
                period_start,
                base,
                allowed,
            }),
            _ => None,
        },
        reason: row.try_get(6)?,
        changed_at: row.try_get(7)?,
        canaries_paused_seconds: row.try_get(8)?,
    })
}
