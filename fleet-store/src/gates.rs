//! Rollout gates, as stored (schema version 6): each gated rollout's
//! canaries (chosen once, each one's arrival) and every cluster its rate
//! admitted (once, with its period), and the questions a gate round asks
//! of the fleet: the candidates, in the rollout's order of lots, and the
//! records of its canaries. Times are Unix milliseconds; clusters are
//! named as the fleet stores them, their lots computed from the names.

use std::collections::BTreeMap;

use rollout_model::Lot;
use rollout_model::control::{Action, Actor, Audited, GATE};
use rollout_model::evidence::ClusterRecord;
use rollout_model::gates::{Canaries, Canary, GateState, RateState};
use rollout_model::place::Lots;
use rollout_model::rounds::Candidate;
use rollout_model::time::{SignedDuration, Timestamp, from_millis, from_seconds, millis};
use sqlx::any::AnyRow;
use sqlx::{Any, AssertSqlSafe, Executor, Row as _, Transaction};

use crate::changes::{Changes, audit};
use crate::store::{FleetStore, StoreError, failed};

/// The columns [`gate_row`] reads, in its order.
const GATE_COLUMNS: &str = "target, lot_offset, judged_at_ms, canaries_at_ms, canaries_arrived_at_ms, \
     canaries_paused_ms, rate_origin_ms, rate_period, rate_in_period, rate_admitted, rate_before, \
     legacy_threshold, waiting";

/// Where a gate round looks for candidates.
#[derive(Debug, Clone, Copy)]
pub struct Pool<'a> {
    /// The (channel, arch, version) of the clusters that can take the
    /// target.
    pub versions: &'a [(String, String, String)],
    /// Unix seconds: active means seen since.
    pub active_since: i64,
    /// Places (percent) below this only.
    pub below: f64,
}

impl FleetStore {
    /// Up to `limit` established clusters of `pool` that the rollout of
    /// `target` has not admitted, first in its order of lots (rotated by
    /// `offset`, see `rollout_model::place::Lot::rank`).
    pub async fn candidates(
        &self,
        target: &str,
        pool: Pool<'_>,
        offset: u64,
        limit: u32,
    ) -> Result<Vec<Candidate>, StoreError> {
        let what = "listing a gate's candidates";
        let established_after = self.evidence().established_after.as_secs();
        let start = Lot::from_bits(offset).to_stored();
        let mut found = Vec::new();
        for (channel, arch, version) in pool.versions {
            // From the offset up, then from the lowest lot (the rotation).
            for from_offset in [true, false] {
                let side = if from_offset { "lot >= $6" } else { "lot < $6" };
                let rows = sqlx::query(AssertSqlSafe(format!(
                    "SELECT id, lot, place FROM fleet_clusters \
                     WHERE channel = $1 AND arch = $2 AND version = $3 AND last_seen >= $4 \
                     AND last_seen - first_seen >= $5 AND {side} AND place < $7 \
                     AND NOT EXISTS (SELECT 1 FROM rollout_admissions a WHERE a.target = $8 AND a.cluster = id) \
                     ORDER BY lot LIMIT $9"
                )))
                .bind(channel)
                .bind(arch)
                .bind(version)
                .bind(pool.active_since)
                .bind(established_after)
                .bind(start)
                .bind(pool.below)
                .bind(target)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await
                .map_err(failed(what))?;
                found.extend(
                    rows.iter()
                        .map(candidate_row)
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(failed(what))?,
                );
            }
        }
        found.sort_by_key(|candidate| candidate.lot.rank(offset));
        found.dedup_by(|a, b| a.cluster == b.cluster);
        found.truncate(limit as usize);
        Ok(found)
    }

    /// Every cluster of `pool` (established or not): those a rollout under
    /// way had offered its target to when its rate is first counted.
    pub async fn offered_before(&self, pool: Pool<'_>) -> Result<Vec<Candidate>, StoreError> {
        let what = "listing the clusters a rollout offered before its rate";
        let mut found = Vec::new();
        for (channel, arch, version) in pool.versions {
            let rows = sqlx::query(
                "SELECT id, lot, place FROM fleet_clusters WHERE channel = $1 AND arch = $2 AND version = $3 \
                 AND last_seen >= $4 AND place < $5 AND lot IS NOT NULL",
            )
            .bind(channel)
            .bind(arch)
            .bind(version)
            .bind(pool.active_since)
            .bind(pool.below)
            .fetch_all(&self.pool)
            .await
            .map_err(failed(what))?;
            found.extend(
                rows.iter()
                    .map(candidate_row)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(failed(what))?,
            );
        }
        Ok(found)
    }

    /// The records of the clusters stored as `clusters` that the store has.
    pub async fn records(&self, clusters: &[String]) -> Result<Vec<ClusterRecord>, StoreError> {
        Ok(self
            .clusters_on(clusters)
            .await?
            .into_iter()
            .map(|row| ClusterRecord {
                cluster: row.cluster,
                version: row.version,
                place: row.place,
                first_seen: from_seconds(row.first_seen),
                last_seen: from_seconds(row.last_seen),
                version_since: from_seconds(row.version_since),
            })
            .collect())
    }
}

fn candidate_row(row: &AnyRow) -> Result<Candidate, sqlx::Error> {
    Ok(Candidate {
        cluster: row.try_get(0)?,
        lot: Lot::from_stored(row.try_get(1)?),
        place: row.try_get(2)?,
    })
}

/// Every gated rollout's gates, the admissions since `known` read.
pub(crate) async fn gate_states(
    store: &FleetStore,
    known: &BTreeMap<String, GateState>,
) -> Result<BTreeMap<String, GateState>, StoreError> {
    let what = "reading the rollouts' gates";
    let rows = sqlx::query(AssertSqlSafe(format!(
        "SELECT {GATE_COLUMNS} FROM rollout_gate_state ORDER BY target"
    )))
    .fetch_all(&store.pool)
    .await
    .map_err(failed(what))?;
    let canaries = sqlx::query(
        "SELECT target, cluster, place, arrived_at_ms FROM rollout_gate_canaries ORDER BY target, cluster",
    )
    .fetch_all(&store.pool)
    .await
    .map_err(failed(what))?;
    let mut gates = BTreeMap::new();
    for row in &rows {
        let (target, mut state, admitted) = gate_row(row).map_err(failed(what))?;
        let members: Vec<Canary> = canaries
            .iter()
            .filter(|canary| canary.try_get::<String, _>(0).is_ok_and(|of| of == target))
            .map(|row| canary_row(store, row))
            .collect::<Result<_, _>>()
            .map_err(failed(what))?;
        if let Some(canaries) = &mut state.canaries {
            canaries.members = members;
        }
        if let Some(rate) = &mut state.rate {
            let before = known
                .get(&target)
                .and_then(|known| known.rate.as_ref())
                .filter(|known| known.origin == rate.origin && known.total <= admitted);
            let (lots, read) = before.map_or((Lots::default(), 0), |known| {
                (known.admitted.clone(), known.total)
            });
            rate.admitted = if read == admitted {
                lots
            } else {
                lots.with(admissions_after(store, &target, read).await?)
            };
        }
        gates.insert(target, state);
    }
    Ok(gates)
}

/// The lots of the admissions of `target` numbered above `read`.
async fn admissions_after(store: &FleetStore, target: &str, read: u64) -> Result<Vec<Lot>, StoreError> {
    let rows = sqlx::query("SELECT cluster FROM rollout_admissions WHERE target = $1 AND seq > $2")
        .bind(target)
        .bind(i64::try_from(read).unwrap_or(i64::MAX))
        .fetch_all(&store.pool)
        .await
        .map_err(failed("reading a rate's admissions"))?;
    rows.iter()
        .map(|row| row.try_get::<String, _>(0).map(|cluster| store.lot(&cluster)))
        .collect::<Result<_, _>>()
        .map_err(failed("reading a rate's admissions"))
}

/// The gates of `target` with its row locked (by the control row's lock):
/// its canaries and its rate's counts (not its admitted lots: a round
/// needs only the counts, and an admission made already is skipped when
/// written).
pub(crate) async fn locked_gates(
    store: &FleetStore,
    transaction: &mut Transaction<'_, Any>,
    target: &str,
) -> Result<Option<GateState>, StoreError> {
    let what = "reading a rollout's gates";
    let row = sqlx::query(AssertSqlSafe(format!(
        "SELECT {GATE_COLUMNS} FROM rollout_gate_state WHERE target = $1"
    )))
    .bind(target)
    .fetch_optional(&mut **transaction)
    .await
    .map_err(failed(what))?;
    let Some(row) = row else { return Ok(None) };
    let (_, mut state, _) = gate_row(&row).map_err(failed(what))?;
    if let Some(canaries) = &mut state.canaries {
        let rows = sqlx::query(
            "SELECT target, cluster, place, arrived_at_ms FROM rollout_gate_canaries WHERE target = $1",
        )
        .bind(target)
        .fetch_all(&mut **transaction)
        .await
        .map_err(failed(what))?;
        canaries.members = rows
            .iter()
            .map(|row| canary_row(store, row))
            .collect::<Result<_, _>>()
            .map_err(failed(what))?;
    }
    Ok(Some(state))
}

fn gate_row(row: &AnyRow) -> Result<(String, GateState, u64), sqlx::Error> {
    let count = |index: usize| {
        row.try_get::<i64, _>(index)
            .map(|value| u64::try_from(value).unwrap_or_default())
    };
    let canaries_at: Option<i64> = row.try_get(3)?;
    let arrived_at: Option<i64> = row.try_get(4)?;
    let rate_origin: Option<i64> = row.try_get(6)?;
    let admitted = count(9)?;
    let state = GateState {
        offset: Lot::from_stored(row.try_get(1)?).bits(),
        judged_at: from_millis(row.try_get(2)?),
        canaries: canaries_at.map(|chosen| Canaries {
            chosen_at: from_millis(chosen),
            members: Vec::new(),
            arrived_at: arrived_at.map(from_millis),
            paused_before_arrival: SignedDuration::from_millis(row.try_get::<i64, _>(5).unwrap_or_default()),
        }),
        rate: rate_origin
            .map(|origin| -> Result<RateState, sqlx::Error> {
                Ok(RateState {
                    origin: from_millis(origin),
                    admitted: Lots::default(),
                    total: admitted,
                    period: row.try_get(7)?,
                    in_period: count(8)?,
                    before_rate: count(10)?,
                })
            })
            .transpose()?,
        waiting: count(12)?,
        before_rate_threshold: row.try_get(11)?,
    };
    Ok((row.try_get(0)?, state, admitted))
}

fn canary_row(store: &FleetStore, row: &AnyRow) -> Result<Canary, sqlx::Error> {
    let cluster: String = row.try_get(1)?;
    Ok(Canary {
        lot: store.lot(&cluster),
        cluster,
        place: row.try_get(2)?,
        arrived_at: row.try_get::<Option<i64>, _>(3)?.map(from_millis),
    })
}

/// Writes what a decision changes of the gates of `target` (`before`, as
/// read with the row locked) at `now`: the row made if missing (with a
/// fresh rotation of lots), canaries chosen once, arrivals once, the
/// rate's start once, admissions until the period's cap.
pub(crate) async fn apply_gate_change(
    transaction: &mut Transaction<'_, Any>,
    target: &str,
    before: Option<&GateState>,
    changes: &Changes,
    now: Timestamp,
) -> Result<(), StoreError> {
    let what = "changing a rollout's gates";
    if before.is_none() {
        let offset = getrandom::u64().map_err(|error| StoreError::Secret(error.to_string()))?;
        sqlx::query(
            "INSERT INTO rollout_gate_state (target, lot_offset, judged_at_ms, canaries_paused_ms, rate_period, \
             rate_in_period, rate_admitted, rate_before, waiting, changed_at_ms) \
             VALUES ($1, $2, $3, 0, 0, 0, 0, 0, 0, $3) ON CONFLICT (target) DO NOTHING",
        )
        .bind(target)
        .bind(Lot::from_bits(offset).to_stored())
        .bind(millis(now))
        .execute(&mut **transaction)
        .await
        .map_err(failed(what))?;
    }
    let Some(change) = &changes.gates else {
        return Ok(());
    };
    let canaries = before.and_then(|gates| gates.canaries.as_ref());
    if canaries.is_none() && !change.choose.is_empty() {
        for canary in &change.choose {
            execute(
                &mut **transaction,
                sqlx::query("INSERT INTO rollout_gate_canaries (target, cluster, place) VALUES ($1, $2, $3)")
                    .bind(target)
                    .bind(&canary.cluster)
                    .bind(canary.place),
                what,
            )
            .await?;
        }
        execute(
            &mut **transaction,
            sqlx::query("UPDATE rollout_gate_state SET canaries_at_ms = $2 WHERE target = $1")
                .bind(target)
                .bind(millis(now)),
            what,
        )
        .await?;
    }
    for (cluster, at) in &change.arrivals {
        execute(
            &mut **transaction,
            sqlx::query(
                "UPDATE rollout_gate_canaries SET arrived_at_ms = $3 \
                 WHERE target = $1 AND cluster = $2 AND arrived_at_ms IS NULL",
            )
            .persistent(false)
            .bind(target)
            .bind(cluster)
            .bind(millis(*at)),
            what,
        )
        .await?;
    }
    if let (Some((at, paused)), Some(canaries)) = (change.open, canaries)
        && canaries.arrived_at.is_none()
    {
        execute(
            &mut **transaction,
            sqlx::query(
                "UPDATE rollout_gate_state SET canaries_arrived_at_ms = $2, canaries_paused_ms = $3 WHERE target = $1",
            )
            .persistent(false)
            .bind(target)
            .bind(millis(at))
            .bind(i64::try_from(paused.as_millis()).unwrap_or(i64::MAX)),
            what,
        )
        .await?;
    }
    let rate = before.and_then(|gates| gates.rate.as_ref());
    let mut admitted = rate.map_or(0, |rate| rate.total);
    let mut before_rate = rate.map_or(0, |rate| rate.before_rate);
    let mut origin = rate.map(|rate| rate.origin);
    if let (Some((at, offered)), None) = (&change.start_rate, rate) {
        origin = Some(*at);
        for candidate in offered {
            if admit(transaction, target, candidate, -1, (*at, admitted + 1)).await? {
                admitted += 1;
                before_rate += 1;
            }
        }
    }
    let (mut period, mut in_period) = rate.map_or((0, 0), |rate| (rate.period, rate.in_period));
    if let (Some(admission), Some(_)) = (&change.admit, origin) {
        if admission.period != period {
            (period, in_period) = (admission.period, 0);
        }
        let mut newly = 0;
        for candidate in &admission.candidates {
            if in_period >= admission.cap {
                break;
            }
            if admit(transaction, target, candidate, period, (now, admitted + 1)).await? {
                admitted += 1;
                in_period += 1;
                newly += 1;
            }
        }
        if newly > 0 {
            let audited = Audited {
                action: Action::Admitted,
                by: Actor::automation(GATE),
                reason: admission.said(newly, in_period),
                at: now,
                held: None,
            };
            audit(transaction, target, &audited).await?;
        }
    }
    execute(
        &mut **transaction,
        sqlx::query(
            "UPDATE rollout_gate_state SET rate_origin_ms = $2, rate_period = $3, rate_in_period = $4, \
             rate_admitted = $5, rate_before = $6, waiting = $7, changed_at_ms = $8 WHERE target = $1",
        )
        .persistent(false)
        .bind(target)
        .bind(origin.map(millis))
        .bind(period)
        .bind(i64::try_from(in_period).unwrap_or(i64::MAX))
        .bind(i64::try_from(admitted).unwrap_or(i64::MAX))
        .bind(i64::try_from(before_rate).unwrap_or(i64::MAX))
        .bind(i64::try_from(change.waiting).unwrap_or(i64::MAX))
        .bind(millis(now)),
        what,
    )
    .await?;
    for (action, reason) in &change.audit {
        let audited = Audited {
            action: *action,
            by: Actor::automation(GATE),
            reason: reason.clone(),
            at: now,
            held: None,
        };
        audit(transaction, target, &audited).await?;
    }
    Ok(())
}

/// Admits `candidate` to the rate of `target` in `period`, at `at` as
/// admission number `seq`, unless it was admitted already; whether it was
/// admitted now.
async fn admit(
    transaction: &mut Transaction<'_, Any>,
    target: &str,
    candidate: &Candidate,
    period: i64,
    (at, seq): (Timestamp, u64),
) -> Result<bool, StoreError> {
    let inserted = sqlx::query(
        "INSERT INTO rollout_admissions (target, cluster, period, at_ms, seq) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (target, cluster) DO NOTHING",
    )
    .bind(target)
    .bind(&candidate.cluster)
    .bind(period)
    .bind(millis(at))
    .bind(i64::try_from(seq).unwrap_or(i64::MAX))
    .execute(&mut **transaction)
    .await
    .map_err(failed("admitting a cluster"))?
    .rows_affected();
    Ok(inserted == 1)
}

async fn execute<'e>(
    executor: impl Executor<'e, Database = Any>,
    query: sqlx::query::Query<'e, Any, sqlx::any::AnyArguments>,
    what: &'static str,
) -> Result<(), StoreError> {
    query.execute(executor).await.map_err(failed(what))?;
    Ok(())
}
