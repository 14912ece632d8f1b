//! What a change of a rollout writes, and its audit entry: shared by the
//! operators' and alerts' changes ([`crate::control`]) and the gate rounds
//! ([`crate::gates`]), which write in the same locked transaction.

use std::sync::atomic::{AtomicU64, Ordering};

use rollout_model::Control;
use rollout_model::control::Audited;
use rollout_model::rounds::GateChange;
use rollout_model::time::{Timestamp, millis};
use sqlx::{Any, Transaction};

use crate::store::{StoreError, failed};

/// What a decision writes.
#[derive(Debug, Default)]
pub struct Changes {
    /// The rollout's control after the change.
    pub control: Option<Control>,
    /// Make its gates' row if missing (a gated rollout's first round).
    pub open_gates: bool,
    /// What a gate round changes.
    pub gates: Option<GateChange>,
    /// What the audit keeps (gate changes' entries are the round's own).
    pub audit: Vec<Audited>,
}

/// Writes `audited` to the audit of `target`, within `transaction`.
pub(crate) async fn audit(
    transaction: &mut Transaction<'_, Any>,
    target: &str,
    audited: &Audited,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO rollout_audit (id, target, action, actor, reason, held_progress, at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    // held_progress is NULL but for holds: prepared each time (see above).
    .persistent(false)
    .bind(audit_id())
    .bind(target)
    .bind(audited.action.as_str())
    .bind(audited.by.as_str())
    .bind(&audited.reason)
    .bind(audited.held)
    .bind(millis(audited.at))
    .execute(&mut **transaction)
    .await
    .map_err(failed("auditing a rollout's change"))?;
    Ok(())
}

/// An audit entry's key: the time in nanoseconds, the process and a
/// counter, so that engines sharing a store never make the same one.
fn audit_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = Timestamp::now().as_nanosecond();
    format!(
        "{nanos:x}-{:x}-{:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}
