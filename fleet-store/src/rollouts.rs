//! Rollouts under run-time control: each changed rollout's state (its
//! clock stopped or not, the time it stood still, a progress held) and
//! every change, audited. Times are Unix seconds, progress in percent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::any::AnyRow;
use sqlx::{Any, AssertSqlSafe, Row as _, Transaction};

use crate::store::{FleetStore, StoreError, failed};

/// A rollout's run-time state.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutState {
    pub target: String,
    /// When its clock stopped; `None`: running.
    pub paused_at: Option<i64>,
    /// How long its clock stood still in earlier pauses.
    pub paused_seconds: i64,
    /// A progress held whatever the schedule.
    pub held_progress: Option<f64>,
    /// While paused, the progress it had when paused: the most it offers
    /// (percent), whatever an edit of the policy file does meanwhile.
    pub paused_progress: Option<f64>,
    /// The last change.
    pub actor: String,
    pub reason: String,
    pub changed_at: i64,
}

impl RolloutState {
    /// This state after `change` at `at`, when the rollout's progress is
    /// `progress`.
    fn changed(mut self, change: Change, at: i64, progress: f64) -> Self {
        match change {
            Change::Pause => {
                if self.paused_at.is_none() {
                    self.paused_at = Some(at);
                    self.paused_progress = Some(progress);
                }
            }
            Change::Resume => {
                if let Some(paused_at) = self.paused_at.take() {
                    self.paused_seconds += (at - paused_at).max(0);
                }
                self.paused_progress = None;
            }
            Change::Hold(progress) => self.held_progress = Some(progress),
            Change::Release => self.held_progress = None,
        }
        self
    }
}

/// What an operator or automation does to a rollout.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// Stop its clock: nobody new is offered its target.
    Pause,
    /// Start its clock again where it stopped.
    Resume,
    /// Hold its progress at this percentage.
    Hold(f64),
    /// Let its progress follow the schedule again.
    Release,
}

impl Change {
    pub fn action(self) -> &'static str {
        match self {
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Hold(_) => "hold",
            Self::Release => "release",
        }
    }
}

/// One audited change.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    pub target: String,
    pub action: String,
    pub actor: String,
    pub reason: String,
    pub held_progress: Option<f64>,
    pub at: i64,
}

impl FleetStore {
    /// Every rollout changed at run time.
    pub async fn rollout_states(&self) -> Result<Vec<RolloutState>, StoreError> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {STATE_COLUMNS} FROM rollout_state ORDER BY target"
        )))
        .fetch_all(&self.pool)
        .await
        .map_err(failed("reading the rollouts' state"))?;
        rows.iter()
            .map(state_row)
            .collect::<Result<_, sqlx::Error>>()
            .map_err(failed("reading the rollouts' state"))
    }

    /// Applies `change` to the rollout of `target` at `at` (when its
    /// progress is `progress`), by `actor` for `reason`, with its audit
    /// entry, in one transaction; the new state.
    pub async fn change_rollout(
        &self,
        target: &str,
        change: Change,
        by: (&str, &str),
        (at, progress): (i64, f64),
    ) -> Result<RolloutState, StoreError> {
        let changed = self
            .change_unless(target, change, by, (at, progress), |_| false)
            .await?;
        Ok(changed.expect("a change made unconditionally is made"))
    }

    /// Pauses the rollout of `target` (at `at`, when its progress is
    /// `progress`) unless it is paused already (an automatic halt, which
    /// several engines sharing the store may make at once: it is made and
    /// audited once); the new state if it paused it.
    pub async fn halt_rollout(
        &self,
        target: &str,
        by: (&str, &str),
        (at, progress): (i64, f64),
    ) -> Result<Option<RolloutState>, StoreError> {
        self.change_unless(target, Change::Pause, by, (at, progress), |state| {
            state.paused_at.is_some()
        })
        .await
    }

    /// [`FleetStore::change_rollout`], left undone (and unaudited) when the
    /// current state is `done_already`. The state's row is locked first
    /// (made if missing), so engines changing one rollout at once take
    /// turns and each sees the other's change.
    async fn change_unless(
        &self,
        target: &str,
        change: Change,
        (actor, reason): (&str, &str),
        (at, progress): (i64, f64),
        done_already: impl Fn(&RolloutState) -> bool,
    ) -> Result<Option<RolloutState>, StoreError> {
        let mut transaction = self
            .pool
            .begin()
            .await
            .map_err(failed("beginning a transaction"))?;
        sqlx::query(
            "INSERT INTO rollout_state \
             (target, paused_at, paused_seconds, held_progress, paused_progress, actor, reason, changed_at) \
             VALUES ($1, NULL, 0, NULL, NULL, '', '', 0) ON CONFLICT (target) DO NOTHING",
        )
        .bind(target)
        .execute(&mut *transaction)
        .await
        .map_err(failed("writing a rollout's state"))?;
        let lock = self.row_lock();
        let current = sqlx::query(AssertSqlSafe(format!(
            "SELECT {STATE_COLUMNS} FROM rollout_state WHERE target = $1{lock}"
        )))
        .bind(target)
        .fetch_one(&mut *transaction)
        .await
        .and_then(|row| state_row(&row))
        .map_err(failed("reading a rollout's state"))?;
        if done_already(&current) {
            return Ok(None);
        }
        let state = RolloutState {
            actor: actor.to_owned(),
            reason: reason.to_owned(),
            changed_at: at,
            ..current.changed(change, at, progress)
        };
        sqlx::query(
            "UPDATE rollout_state SET paused_at = $2, paused_seconds = $3, held_progress = $4, \
             paused_progress = $8, actor = $5, reason = $6, changed_at = $7 WHERE target = $1",
        )
        // Its optional numbers are NULL in one change and a number in the
        // next: a statement PostgreSQL kept prepared from a NULL refuses
        // the number ("incorrect binary data format"), so it is prepared
        // each time (changes are rare).
        .persistent(false)
        .bind(target)
        .bind(state.paused_at)
        .bind(state.paused_seconds)
        .bind(state.held_progress)
        .bind(actor)
        .bind(reason)
        .bind(at)
        .bind(state.paused_progress)
        .execute(&mut *transaction)
        .await
        .map_err(failed("writing a rollout's state"))?;
        audit(
            &mut transaction,
            Audited {
                target,
                action: change.action(),
                by: (actor, reason),
                held_progress: match change {
                    Change::Hold(progress) => Some(progress),
                    _ => None,
                },
                at,
            },
        )
        .await?;
        transaction
            .commit()
            .await
            .map_err(failed("committing a rollout's change"))?;
        Ok(Some(state))
    }

    /// The audited changes (of `target`, or of every rollout), oldest
    /// first, the last `limit` of them.
    pub async fn rollout_audit(
        &self,
        target: Option<&str>,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT target, action, actor, reason, held_progress, at FROM rollout_audit \
             WHERE ($1 = '' OR target = $1) ORDER BY at DESC, id DESC LIMIT $2",
        )
        .bind(target.unwrap_or_default())
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(failed("reading the rollouts' audit"))?;
        let mut entries = rows
            .iter()
            .map(|row| {
                Ok(AuditEntry {
                    target: row.try_get(0)?,
                    action: row.try_get(1)?,
                    actor: row.try_get(2)?,
                    reason: row.try_get(3)?,
                    held_progress: row.try_get(4)?,
                    at: row.try_get(5)?,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(failed("reading the rollouts' audit"))?;
        entries.reverse();
        Ok(entries)
    }
}

/// The columns [`state_row`] reads, in its order.
const STATE_COLUMNS: &str =
    "target, paused_at, paused_seconds, held_progress, actor, reason, changed_at, paused_progress";

fn state_row(row: &AnyRow) -> Result<RolloutState, sqlx::Error> {
    Ok(RolloutState {
        target: row.try_get(0)?,
        paused_at: row.try_get(1)?,
        paused_seconds: row.try_get(2)?,
        held_progress: row.try_get(3)?,
        paused_progress: row.try_get(7)?,
        actor: row.try_get(4)?,
        reason: row.try_get(5)?,
        changed_at: row.try_get(6)?,
    })
}

/// An entry to audit.
pub(crate) struct Audited<'a> {
    pub target: &'a str,
    pub action: &'a str,
    pub by: (&'a str, &'a str),
    pub held_progress: Option<f64>,
    pub at: i64,
}

/// Writes `entry` to the audit, within `transaction`.
pub(crate) async fn audit(
    transaction: &mut Transaction<'_, Any>,
    entry: Audited<'_>,
) -> Result<(), StoreError> {
    let (actor, reason) = entry.by;
    sqlx::query(
        "INSERT INTO rollout_audit (id, target, action, actor, reason, held_progress, at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    // held_progress is NULL but for holds: a statement PostgreSQL kept
    // prepared from a NULL refuses a number, so it is prepared each time.
    .persistent(false)
    .bind(audit_id())
    .bind(entry.target)
    .bind(entry.action)
    .bind(actor)
    .bind(reason)
    .bind(entry.held_progress)
    .bind(entry.at)
    .execute(&mut **transaction)
    .await
    .map_err(failed("auditing a rollout's change"))?;
    Ok(())
}

/// An audit entry's key: the time in nanoseconds, the process and a
/// counter, so that engines sharing a store never make the same one.
fn audit_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!(
        "{nanos:x}-{:x}-{:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_stops_the_clock_and_a_resume_adds_the_time_it_stood_still() {
        let running = RolloutState {
            target: "4.18.52".into(),
            paused_at: None,
            paused_seconds: 0,
            held_progress: None,
            paused_progress: None,
            actor: String::new(),
            reason: String::new(),
            changed_at: 0,
        };
        let state = running.changed(Change::Pause, 100, 30.0);
        assert_eq!((state.paused_at, state.paused_progress), (Some(100), Some(30.0)));
        let again = state.changed(Change::Pause, 150, 31.0);
        assert_eq!(
            (again.paused_at, again.paused_progress),
            (Some(100), Some(30.0)),
            "a second pause keeps the first's time and progress"
        );
        let resumed = again.changed(Change::Resume, 400, 30.0);
        assert_eq!(
            (resumed.paused_at, resumed.paused_seconds, resumed.paused_progress),
            (None, 300, None)
        );
        let twice = resumed.changed(Change::Resume, 500, 30.0);
        assert_eq!(
            twice.paused_seconds, 300,
            "resuming a running rollout changes nothing"
        );
        let held = twice.changed(Change::Hold(12.5), 600, 30.0);
        assert_eq!(held.held_progress, Some(12.5));
        assert_eq!(held.changed(Change::Release, 700, 12.5).held_progress, None);
    }
}
