//! Rollouts under run-time control (`rollouts.token_file`, with a fleet
//! store and a policy file).
//!
//! The policy file declares each rollout; operators and automation pause
//! it (its clock stops: nobody new is offered its target), resume it (its
//! clock starts again where it stopped) or hold its progress, through the
//! status port's `{prefix}/v1/rollouts` with a bearer token. Each change is
//! written to the fleet store with its audit entry (who, what, when, why),
//! so every engine sharing the store takes it: each reads the store's state
//! every `rollouts.refresh_ms` and gives it to the per-cluster policy
//! ([`crate::cluster_policy::ClusterPolicy::set_controls`]), off the
//! request path. The engine that made a change takes it at once.
//!
//! A rollout whose file entry says `halt_when` is paused by the fleet's
//! signal (actor `fleet-signal`, the measured figure as the reason) when
//! the share of its arrived clusters that went silent, or of the clusters
//! offered it long ago that have not taken it, reaches the threshold:
//! checked every `rollouts.halt_check_secs`.
//!
//! A rollout whose file entry says `canary` or `max_offered_per_period`
//! offers its target only as far as its gates allow ([`gates`]), judged
//! from the fleet on the same interval.
//!
//! - [`tokens`]: the bearer tokens, read again when their file changes.
//! - [`conflicts`]: where the file and run-time control disagree.
//! - [`queries`]: `halt_when: {promql, above}`, asked of Prometheus.
//! - [`alerts`]: Alertmanager's notifications, pausing the rollouts their
//!   alerts name (and resuming those that say `auto_resume`).

pub mod alerts;
pub mod conflicts;
pub mod gates;
pub mod queries;
pub mod tokens;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cincinnati_client::fleet::Header;
use cincinnati_client::rollout_control::{AuditEntry, ControlledRollout, Rollouts};
use cincinnati_core::{ApiError, ErrorKind};
use fleet_store::FleetStore;
use fleet_store::gates::GateState;
use fleet_store::rollouts::{Change, RolloutState};
use parking_lot::Mutex;
use prometheus::{IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts};
use service_kit::freshness::Freshness;
use service_kit::metrics::MetricRegistry;
use service_kit::periodic::Every;
use service_kit::timestamp::rfc3339;

use self::conflicts::Conflicts;
use self::queries::Prometheus;
use self::tokens::Tokens;
use crate::cluster_policy::ClusterPolicy;
use crate::cluster_policy::policy::{Controls, GateStatus, HaltWhen, Rollout, RolloutControl};
use crate::fleet::store::StoreHandle;
use crate::fleet::{Fleet, unix_seconds};
use crate::upstream::feeds::Feeds;

/// Who the audit says paused a rollout its `halt_when` halted.
pub const HALT_ACTOR: &str = "fleet-signal";

/// How often control reads the store, and checks the halt criteria.
#[derive(Debug, Clone, Copy)]
pub struct Intervals {
    pub refresh: Duration,
    pub halt_check: Duration,
}

/// Audit entries `GET {prefix}/v1/rollouts` shows, the last ones.
const HISTORY: u32 = 100;
/// How long a read or a change of the store may take.
const STORE_TIMEOUT: Duration = Duration::from_secs(10);

/// What control is set up with.
#[derive(Debug)]
pub struct ControlPlan {
    pub tokens: Tokens,
    pub intervals: Intervals,
    pub prometheus: Option<Prometheus>,
}

pub struct Control {
    fleet: Arc<Fleet>,
    store: Arc<StoreHandle>,
    policy: Arc<ClusterPolicy>,
    tokens: Tokens,
    intervals: Intervals,
    prometheus: Option<Prometheus>,
    freshness: Mutex<Freshness>,
    conflicts: Mutex<Conflicts>,
    /// One refresh at a time: one that read the store before a change must
    /// not give the policy its older state after the change's own refresh.
    refreshing: tokio::sync::Mutex<()>,
    metrics: ControlMetrics,
}

/// Rollout control's metrics (registered only with control).
#[derive(Clone)]
pub struct ControlMetrics {
    /// 1 while a rollout is paused, by target (the file's rollouts only).
    pub paused: IntGaugeVec,
    /// Reads and changes of the store that failed.
    pub store_errors: IntCounter,
    /// Rollouts whose run-time state and policy file disagree.
    pub conflicts: IntGauge,
    /// Alertmanager's alerts taken, by what they did.
    pub alerts: IntCounterVec,
}

impl ControlMetrics {
    pub fn register(registry: &MetricRegistry) -> prometheus::Result<Self> {
        Ok(Self {
            paused: registry.add(IntGaugeVec::new(
                Opts::new("rollout_paused", "1 while a rollout of the policy file is paused at run time"),
                &["target"],
            )?)?,
            store_errors: registry.add(IntCounter::new(
                "rollout_control_errors_total",
                "Reads and changes of the rollouts' run-time state that failed (the last state stays in force)",
            )?)?,
            conflicts: registry.add(IntGauge::new(
                "rollout_control_conflicts",
                "Rollouts whose run-time state hides an edit of the policy file, or that the file no longer declares",
            )?)?,
            alerts: {
                let alerts = registry.add(IntCounterVec::new(
                    Opts::new(
                        "rollout_alerts_total",
                        "Alertmanager alerts taken by the webhook, by what each did to the rollout it names",
                    ),
                    &["outcome"],
                )?)?;
                for outcome in alerts::Outcome::ALL {
                    alerts.with_label_values(&[outcome.as_str()]);
                }
                alerts
            },
        })
    }
}

/// What `/status` shows of the rollouts' control.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ControlStatus {
    /// Rollouts changed at run time, by target.
    pub controlled: Vec<String>,
    /// Where run-time state and the policy file disagree (`target: why`).
    pub conflicts: Vec<String>,
    /// When the store's state was last read, and the failure since.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// With `rollouts.prometheus_url`: when a halt query last succeeded, and
    /// the failure since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<Freshness>,
}

impl Control {
    pub fn new(
        fleet: Arc<Fleet>,
        policy: Arc<ClusterPolicy>,
        plan: ControlPlan,
        metrics: ControlMetrics,
    ) -> Self {
        let ControlPlan {
            tokens,
            intervals,
            prometheus,
        } = plan;
        Self {
            store: fleet.store_handle().clone(),
            fleet,
            policy,
            tokens,
            intervals,
            prometheus,
            freshness: Mutex::new(Freshness::default()),
            conflicts: Mutex::new(Conflicts::default()),
            refreshing: tokio::sync::Mutex::new(()),
            metrics,
        }
    }

    /// When the store's state is read again.
    pub fn refresh_schedule(&self) -> Every {
        Every::new("rollout control", self.intervals.refresh).allowing(STORE_TIMEOUT)
    }

    /// When the rollouts' halt criteria are checked.
    pub fn halt_schedule(&self) -> Every {
        Every::new("rollout halts", self.intervals.halt_check)
            .first_after_a_pause()
            .unwatched()
    }

    /// When the rollouts' Prometheus queries are evaluated; none without
    /// `rollouts.prometheus_url`.
    pub fn query_schedule(&self) -> Option<Every> {
        let prometheus = self.prometheus.as_ref()?;
        Some(
            Every::new("rollout queries", prometheus.interval())
                .first_after_a_pause()
                .unwatched(),
        )
    }

    /// Pauses every rollout on its schedule whose `halt_when` the fleet's
    /// figures meet at `now` (the update graphs from `feeds`).
    pub async fn check_halts(&self, feeds: &Arc<Feeds>, now: SystemTime) {
        let rollouts = self.policy.current().rollouts();
        for rollout in rollouts.iter().filter(|rollout| rollout.is_on_schedule()) {
            let Some(halt) = rollout.halt_when else { continue };
            match self.halt_reason(rollout, &halt, feeds, now).await {
                Ok(Some(reason)) => self.halt(rollout, HALT_ACTOR, &reason, now).await,
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(target = %rollout.target, error = %error.value, "a rollout's halt criterion cannot be checked");
                }
            }
        }
    }

    /// Why the fleet's figures halt `rollout` at `now`, if they do.
    async fn halt_reason(
        &self,
        rollout: &Rollout,
        halt: &HaltWhen,
        feeds: &Arc<Feeds>,
        now: SystemTime,
    ) -> Result<Option<String>, ApiError> {
        if let Some(threshold) = halt.silent_after_arriving_percent {
            let arrived = self.fleet.arrived(rollout, now).await?;
            let (count, percent) = (arrived.waits.len() as u64, arrived.silent_percent());
            if count >= halt.min_arrived && percent >= threshold {
                return Ok(Some(format!(
                    "halted: {percent:.1}% of the {count} clusters that arrived at {} went silent (halt_when: {threshold}% of at least {})",
                    rollout.target, halt.min_arrived
                )));
            }
        }
        if let Some(stuck) = halt.stuck {
            let unmoved = self.fleet.unmoved(rollout, now - stuck.after, feeds, now).await?;
            let percent = unmoved.percent();
            if unmoved.offered >= stuck.min_offered && percent >= stuck.percent {
                return Ok(Some(format!(
                    "halted: {percent:.1}% of the {} clusters offered {} more than {} h ago have not taken it (halt_when: stuck_percent {} of at least {})",
                    unmoved.offered,
                    rollout.target,
                    stuck.after.as_secs() / 3600,
                    stuck.percent,
                    stuck.min_offered
                )));
            }
        }
        Ok(None)
    }

    /// Pauses `rollout`, which its halt criterion met, by `actor` (which
    /// criterion) for `reason` (the figure), unless it is paused already
    /// (every engine sharing the store checks: one halts it, once); a
    /// failure is logged, and the next check tries again.
    async fn halt(&self, rollout: &Rollout, actor: &str, reason: &str, now: SystemTime) {
        let target = rollout.target.to_string();
        let halted = self
            .stored(async |store| {
                store
                    .halt_rollout(
                        &target,
                        (actor, reason),
                        (unix_seconds(now), rollout.progress(now)),
                    )
                    .await
            })
            .await;
        match halted {
            Ok(Some(_)) => {
                tracing::warn!(target, by = actor, reason, "rollout halted");
                self.refresh().await;
            }
            Ok(None) => self.refresh().await,
            Err(error) => {
                tracing::warn!(target, by = actor, error = %error.value, "a halted rollout could not be paused")
            }
        }
    }

    /// Reads the rollouts' state from the store and gives it to the policy;
    /// a store that cannot be read leaves the last state in force.
    pub async fn refresh(&self) {
        let _turn = self.refreshing.lock().await;
        let read = tokio::time::timeout(STORE_TIMEOUT, async {
            let store = self.store.get().await?;
            Ok::<_, fleet_store::StoreError>((store.rollout_states().await?, store.rollout_gates().await?))
        })
        .await;
        let mut freshness = self.freshness.lock();
        match read {
            Ok(Ok((states, gates))) => {
                let mut conflicts = self.conflicts.lock();
                for (target, why) in conflicts.check(&self.policy.current().rollouts(), &states) {
                    tracing::warn!(target, conflict = %why, "the policy file and run-time control disagree");
                }
                self.metrics.conflicts.set(conflicts.standing().len() as i64);
                drop(conflicts);
                self.policy.set_controls(controls(states, gates));
                freshness.succeeded(SystemTime::now());
                self.metrics.paused.reset();
                for rollout in self.policy.current().rollouts().iter() {
                    let paused = rollout
                        .control
                        .as_ref()
                        .is_some_and(|control| control.paused_at.is_some());
                    self.metrics
                        .paused
                        .with_label_values(&[rollout.target.to_string().as_str()])
                        .set(i64::from(paused));
                }
            }
            failure => {
                self.metrics.store_errors.inc();
                let message = match failure {
                    Ok(Err(error)) => format!("{:#}", anyhow::Error::new(error)),
                    _ => format!("reading took more than {} s", STORE_TIMEOUT.as_secs()),
                };
                if !freshness.is_stale() {
                    tracing::warn!(error = %message, "the rollouts' run-time state cannot be read; the last one stays in force");
                }
                freshness.failed(SystemTime::now(), message);
            }
        }
    }

    /// The name of the token of a request's `Authorization` header.
    pub fn authorize(&self, authorization: Option<&str>) -> Result<String, ApiError> {
        self.tokens.authorize(authorization)
    }

    /// Makes `change` to the rollout of `target` at `now`, by `actor` for
    /// `reason`: audited, shared through the store, in force here at once.
    pub async fn change(
        &self,
        target: &str,
        change: Change,
        (actor, reason): (&str, &str),
        now: SystemTime,
    ) -> Result<(), ApiError> {
        let rollouts = self.policy.current().rollouts();
        let Some(rollout) = rollouts
            .iter()
            .find(|rollout| rollout.target.to_string() == target)
        else {
            return Err(ApiError::new(
                ErrorKind::DoesNotExist,
                format_args!("the policy file declares no rollout of {target}"),
            ));
        };
        let progress = rollout.progress(now);
        if let Change::Hold(percent) = change
            && !(0.0..=100.0).contains(&percent)
        {
            return Err(ApiError::invalid_param(
                "percent",
                &percent.to_string(),
                "0 to 100",
            ));
        }
        if reason.trim().is_empty() {
            return Err(ApiError::missing_params(&["reason"]));
        }
        self.stored(async |store| {
            store
                .change_rollout(target, change, (actor, reason), (unix_seconds(now), progress))
                .await
        })
        .await?;
        tracing::info!(
            target,
            action = change.action(),
            by = actor,
            reason,
            "rollout changed at run time"
        );
        self.refresh().await;
        Ok(())
    }

    /// `write` made on the store, within the store's time; a failure
    /// counted and answered as 503.
    async fn stored<T>(
        &self,
        write: impl AsyncFnOnce(&FleetStore) -> Result<T, fleet_store::StoreError>,
    ) -> Result<T, ApiError> {
        let written = tokio::time::timeout(STORE_TIMEOUT, async {
            let store = self.store.get().await?;
            write(&store).await
        })
        .await;
        let failure = match written {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(error)) => format!("{:#}", anyhow::Error::new(error)),
            Err(_) => "the store took too long".to_owned(),
        };
        self.metrics.store_errors.inc();
        Err(unavailable(&failure))
    }

    /// `GET {prefix}/v1/rollouts`: the rollouts as control leaves them, and
    /// the last changes.
    pub async fn document(&self, now: SystemTime) -> Result<Rollouts, ApiError> {
        let history = tokio::time::timeout(STORE_TIMEOUT, async {
            let store = self.store.get().await?;
            store.rollout_audit(None, HISTORY).await
        })
        .await
        .map_err(|_| unavailable("the store took too long"))?
        .map_err(|error| unavailable(&format!("{:#}", anyhow::Error::new(error))))?;
        let rollouts = self
            .policy
            .current()
            .rollouts()
            .iter()
            .map(|rollout| ControlledRollout {
                target: rollout.target.to_string(),
                line: rollout.line,
                progress: rollout.progress(now),
                scheduled_progress: rollout.scheduled_progress(now),
                on_schedule: rollout.is_on_schedule(),
                control: rollout.control.as_ref().map(RolloutControl::facts),
                gates: rollout.gates_said(),
            })
            .collect();
        Ok(Rollouts {
            header: Header::new("Rollouts", rfc3339(now)),
            rollouts,
            history: history
                .into_iter()
                .map(|entry| AuditEntry {
                    target: entry.target,
                    action: entry.action,
                    by: entry.actor,
                    reason: entry.reason,
                    held_progress: entry.held_progress,
                    at: rfc3339(at(entry.at)),
                })
                .collect(),
        })
    }

    pub fn status(&self) -> ControlStatus {
        ControlStatus {
            controlled: self
                .policy
                .current()
                .rollouts()
                .iter()
                .filter(|rollout| rollout.control.is_some())
                .map(|rollout| rollout.target.to_string())
                .collect(),
            conflicts: self.conflicts.lock().standing(),
            freshness: self.freshness.lock().clone(),
            prometheus: self.prometheus.as_ref().map(Prometheus::freshness),
        }
    }
}

/// The store's states and gates as the policy's controls.
fn controls(states: Vec<RolloutState>, gates: Vec<GateState>) -> Controls {
    let states = states
        .into_iter()
        .map(|state| {
            let control = RolloutControl {
                paused_at: state.paused_at.map(at),
                stood_still: Duration::from_secs(u64::try_from(state.paused_seconds).unwrap_or_default()),
                held_progress: state.held_progress,
                paused_progress: state.paused_progress,
                actor: state.actor,
                reason: state.reason,
                changed_at: at(state.changed_at),
            };
            (state.target, control)
        })
        .collect();
    let gates = gates
        .into_iter()
        .map(|gate| {
            let status = GateStatus {
                canaries: gate.canaries.iter().map(|canary| canary.place).collect(),
                canaries_at: gate.canaries_at.map(at),
                canaries_arrived_at: gate.canaries_arrived_at.map(at),
                paused_before_arrival: Duration::from_secs(
                    u64::try_from(gate.canaries_paused_seconds).unwrap_or_default(),
                ),
                period: gate.rate.map(|rate| (at(rate.period_start), rate.base)),
                allowed: gate.rate.map(|rate| rate.allowed),
                reason: gate.reason,
            };
            (gate.target, status)
        })
        .collect();
    Controls { states, gates }
}

fn at(seconds: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).unwrap_or_default())
}

fn unavailable(why: &str) -> ApiError {
    ApiError::new(
        ErrorKind::ServiceUnavailable,
        format_args!("the rollouts' state cannot be changed or read: {why}"),
    )
}
