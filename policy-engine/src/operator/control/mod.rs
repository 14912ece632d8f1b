//! Rollouts under run-time control (`rollouts.token_file`, with a fleet
//! store and a policy file), through one façade, [`Control`].
//!
//! The policy file declares rollouts, and so do graph-data's phased
//! rollouts (a rollout per release phasing, read from the upstream's full
//! graph: [`GraphDataRollouts`]); operators and automation pause
//! it, resume it or hold its progress (the status port's
//! `{prefix}/v1/rollouts`, Alertmanager's webhook, the halts of
//! `halt_when`, a late canary). What a change does is the rollout model's
//! (`rollout_model::change`); every change goes through
//! [`FleetStore::change_rollout`] (the rollout's row locked, the decision
//! made on what is stored, audited in the same transaction), so engines
//! sharing the store make it once. Each engine reads the state every
//! `rollouts.refresh_ms` into the per-cluster policy, off the request path.
//!
//! Failing closed, by one rule (the model's): until the state was read
//! once, no rollout's target is offered to anyone; state read at `as_of`
//! is applied at `min(now, as_of)`, so a store that can no longer be read
//! stops every rollout's clock where it was last known. The engine turns
//! ready once its first read was attempted (see [`Control::is_ready`]). A
//! pause (or a firing alert, or a halt) the store cannot take is kept here,
//! in force at once on this engine, and written when the store takes it
//! ([`pending`]).
//!
//! - [`tokens`]: the bearer tokens and their scopes.
//! - [`conflicts`]: where the file and run-time control disagree.
//! - [`alerts`]: Alertmanager's notifications.
//! - [`halts`]: `halt_when`'s fleet signals; [`queries`]: its Prometheus
//!   query.
//! - [`gates`]: canaries and rates, judged from the fleet.
//! - [`pending`]: brakes the store has not taken yet.

pub mod alerts;
pub mod conflicts;
pub mod gates;
pub mod halts;
pub mod pending;
pub mod queries;
pub mod tokens;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use cincinnati_client::header::Header;
use cincinnati_client::rollout::{KnowledgeView, RolloutView, Rollouts};
use cincinnati_client::tokens::Scope;
use cincinnati_core::{ApiError, ErrorKind};
use fleet_store::FleetStore;
use fleet_store::changes::Changes;
use fleet_store::control::{Declared, Locked, RunTime};
use parking_lot::Mutex;
use prometheus::{IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts};
use rollout_model::change::{self, Outcome, Request};
use rollout_model::control::Actor;
use rollout_model::time::{Timestamp, from_system};
use rollout_model::{Declaration, Knowledge};
use service_kit::freshness::Freshness;
use service_kit::metrics::MetricRegistry;
use service_kit::periodic::Every;
use service_kit::timestamp::rfc3339;

use self::conflicts::Conflicts;
use self::pending::{Pending, PendingBrakes};
use self::queries::Prometheus;
use self::tokens::{Bearer, Tokens};
use crate::cluster_policy::ClusterPolicy;
use crate::cluster_policy::{audit_entry, rollout_view, shown};
use crate::operator::Fleet;
use crate::operator::OperatorError;
use crate::operator::fleet::store::StoreHandle;

/// How often control reads the store, and checks the halt criteria and
/// gates.
#[derive(Debug, Clone, Copy)]
pub struct Intervals {
    pub refresh: Duration,
    pub halt_check: Duration,
}

/// Audit entries `GET {prefix}/v1/rollouts` shows, the last ones.
const HISTORY: u32 = 100;
/// How long a read or a change of the store may take.
const STORE_TIMEOUT: Duration = Duration::from_secs(10);

/// The rollouts graph-data's phased rollouts declare now: none while the
/// upstream's graph is not read, or phasing is off.
pub type GraphDataRollouts = Box<dyn Fn() -> Vec<Arc<Declaration>> + Send + Sync>;

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
    graph_data: GraphDataRollouts,
    tokens: Tokens,
    intervals: Intervals,
    prometheus: Option<Prometheus>,
    /// The last state read, and when the read began.
    read: Mutex<Option<(Timestamp, RunTime)>>,
    /// Whether a first read was attempted (the engine is ready then).
    attempted: AtomicBool,
    freshness: Mutex<Freshness>,
    conflicts: Mutex<Conflicts>,
    pending: PendingBrakes,
    /// One read or change at a time: a read that began before a change
    /// must not give the policy its older state after the change's own;
    /// and on SQLite (one engine) no read interleaves with a change.
    turn: tokio::sync::Mutex<()>,
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
    /// 1 once the run-time state was read (until then no rollout's target
    /// is offered).
    pub known: IntGauge,
    /// Seconds since the state in force was read.
    pub age: IntGauge,
    /// Brakes (pauses, alerts, halts) in force here the store has not
    /// taken yet.
    pub pending: IntGauge,
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
                "Reads and changes of the rollouts' run-time state that failed (the last state stays in force, its clock stopped)",
            )?)?,
            conflicts: registry.add(IntGauge::new(
                "rollout_control_conflicts",
                "Rollouts whose run-time state hides an edit of their declaration, or that are no longer declared, or that both the policy file and graph-data declare",
            )?)?,
            alerts: {
                let alerts = registry.add(IntCounterVec::new(
                    Opts::new(
                        "rollout_alerts_total",
                        "Alertmanager alerts taken by the webhook, by what each did to the rollout it names",
                    ),
                    &["outcome"],
                )?)?;
                for outcome in alerts::OUTCOMES {
                    alerts.with_label_values(&[outcome]);
                }
                alerts
            },
            known: registry.add(IntGauge::new(
                "rollout_state_known",
                "1 once the rollouts' run-time state was read; until then no rollout's target is offered to anyone",
            )?)?,
            age: registry.add(IntGauge::new(
                "rollout_state_age_seconds",
                "Seconds since the rollouts' run-time state in force was read (rollouts do not move past that moment)",
            )?)?,
            pending: registry.add(IntGauge::new(
                "rollout_control_pending",
                "Pauses, alerts and halts in force on this engine that the store has not taken yet",
            )?)?,
        })
    }
}

/// What `/status` shows of the rollouts' control.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ControlStatus {
    /// Whether the run-time state was read; until then no rollout's target
    /// is offered to anyone.
    pub known: bool,
    /// When the state in force was read (RFC 3339).
    #[serde(default)]
    pub as_of: Option<String>,
    /// Rollouts changed at run time, by target.
    pub controlled: Vec<String>,
    /// Where run-time state and the policy file disagree (`target: why`).
    pub conflicts: Vec<String>,
    /// Brakes in force here that the store has not taken yet
    /// (`target: what`).
    #[serde(default)]
    pub pending: Vec<String>,
    /// When the store's state was last read, and the failure since.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// With `rollouts.prometheus_url`: when a halt query last succeeded, and
    /// the failure since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<Freshness>,
}

/// What a change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed {
    Made(Outcome),
    /// A brake the store could not take: in force here, written when the
    /// store takes it.
    Pending,
}

impl Control {
    /// Control over `policy`'s rollouts and `graph_data`'s: until its
    /// first read they offer their targets to nobody.
    pub fn new(
        fleet: Arc<Fleet>,
        (policy, graph_data): (Arc<ClusterPolicy>, GraphDataRollouts),
        plan: ControlPlan,
        metrics: ControlMetrics,
    ) -> Self {
        let ControlPlan {
            tokens,
            intervals,
            prometheus,
        } = plan;
        policy.set_knowledge(Knowledge::Unknown);
        Self {
            store: fleet.store_handle().clone(),
            fleet,
            policy,
            graph_data,
            tokens,
            intervals,
            prometheus,
            read: Mutex::new(None),
            attempted: AtomicBool::new(false),
            freshness: Mutex::new(Freshness::default()),
            conflicts: Mutex::new(Conflicts::default()),
            pending: PendingBrakes::default(),
            turn: tokio::sync::Mutex::new(()),
            metrics,
        }
    }

    /// When the store's state is read again (the first at once).
    pub fn refresh_schedule(&self) -> Every {
        Every::new("rollout control", self.intervals.refresh).allowing(STORE_TIMEOUT)
    }

    /// When the rollouts' halt criteria and gates are checked.
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

    /// Whether the engine may take traffic as far as rollouts go: once the
    /// first read of their state was attempted. A store that answered
    /// gave every rollout its state; one that did not leaves them offering
    /// their targets to nobody (safe), and readiness does not wait for it:
    /// a store outage must not take every graph answer down with it.
    pub fn is_ready(&self) -> bool {
        self.attempted.load(Ordering::Acquire)
    }

    /// Reads the rollouts' state from the store and gives it to the
    /// policy, with the brakes the store has not taken yet (written now, if
    /// it takes them); a store that cannot be read leaves the last state
    /// in force, its clock stopped where it was read.
    pub async fn refresh(&self) {
        let _turn = self.turn.lock().await;
        self.read_state().await;
    }

    /// [`Control::refresh`], its turn taken. The pending brakes are written
    /// first, so the state read has those the store took (a brake is never
    /// out of force between the two).
    async fn read_state(&self) {
        self.write_pending().await;
        let as_of = Timestamp::now();
        let declarations = self.declared();
        let targets: Vec<String> = declarations
            .iter()
            .map(|rollout| rollout.target.to_string())
            .collect();
        let declared: Vec<Declared<'_>> = declarations
            .iter()
            .zip(&targets)
            .map(|(rollout, target)| Declared {
                target,
                rated: rollout.gates.rate.is_some(),
            })
            .collect();
        let known_gates = self
            .read
            .lock()
            .as_ref()
            .map(|(_, run_time)| run_time.gates.clone())
            .unwrap_or_default();
        let read = self
            .stored(async |store| store.run_time(&declared, &known_gates).await)
            .await;
        match read {
            Ok(run_time) => {
                self.freshness.lock().succeeded(SystemTime::now());
                *self.read.lock() = Some((as_of, run_time));
                self.apply();
            }
            Err(error) => {
                let mut freshness = self.freshness.lock();
                if !freshness.is_stale() {
                    tracing::warn!(error = %error, "the rollouts' run-time state cannot be read; rollouts stay where it was last read");
                }
                freshness.failed(SystemTime::now(), error.to_string());
            }
        }
        // Ready once what was read is in force (a read that failed leaves
        // every rollout unknown: offered to nobody new).
        self.attempted.store(true, Ordering::Release);
    }

    /// Gives the policy the state read, with the pending brakes on it.
    fn apply(&self) {
        let read = self.read.lock();
        let Some((as_of, run_time)) = read.as_ref() else {
            return;
        };
        let declared = self.declared();
        let mut controls = run_time.controls.clone();
        self.pending.apply(&declared, &mut controls, &run_time.gates);
        let mut conflicts = self.conflicts.lock();
        for (target, why) in conflicts.check(&declared, &controls) {
            tracing::warn!(target, conflict = %why, "the policy file and run-time control disagree");
        }
        self.metrics.conflicts.set(conflicts.standing().len() as i64);
        drop(conflicts);
        self.metrics.paused.reset();
        for declaration in declared.iter() {
            let target = declaration.target.to_string();
            let paused = controls
                .get(&target)
                .is_some_and(|control| control.pause.is_some());
            self.metrics
                .paused
                .with_label_values(&[target.as_str()])
                .set(i64::from(paused));
        }
        self.policy.set_knowledge(Knowledge::Read {
            as_of: *as_of,
            controls,
            gates: run_time.gates.clone(),
        });
    }

    /// Writes the brakes the store has not taken yet, each at the time it
    /// took effect here; those it takes are no longer pending.
    async fn write_pending(&self) {
        if self.pending.count() == 0 {
            return;
        }
        // In the order asked, stopping at the first the store refuses: a
        // later brake written before an earlier one would pause later, at
        // a progress this engine never offered.
        for brake in self.pending.all() {
            let Some(declaration) = self.declaration(&brake.target).ok() else {
                self.pending.remove(&brake);
                continue;
            };
            let written = self
                .stored(async |store| {
                    store
                        .change_rollout(
                            &brake.target,
                            || brake.at,
                            |locked| {
                                decided(&declaration, locked, &brake.request, (&brake.by, &brake.reason))
                            },
                        )
                        .await
                })
                .await;
            if written.is_err() {
                break;
            }
            tracing::info!(target = brake.target, by = %brake.by, "a pending brake was written to the store");
            self.pending.remove(&brake);
        }
        self.metrics.pending.set(self.pending.count() as i64);
    }

    /// Who the `Authorization` header of a request is, if its token's
    /// scope allows `needed`.
    pub fn authorize(&self, authorization: Option<&str>, needed: Scope) -> Result<Bearer, ApiError> {
        self.tokens.authorize(authorization, needed)
    }

    /// Asks `request` of the rollout of `target`, by `by` for `reason`:
    /// decided and audited on the state as stored, shared through the store,
    /// in force here at once. A brake the store cannot take is kept here
    /// ([`Changed::Pending`]); anything else it cannot take is a 503.
    pub async fn change(
        &self,
        target: &str,
        request: Request,
        (by, reason): (&Actor, &str),
    ) -> Result<Changed, ApiError> {
        let declaration = self.declaration(target)?;
        let _turn = self.turn.lock().await;
        let made = self
            .stored(async |store| {
                store
                    .change_rollout(target, Timestamp::now, |locked| {
                        decided(&declaration, locked, &request, (by, reason))
                    })
                    .await
            })
            .await;
        match made {
            Ok(outcome) => {
                tracing::info!(target, outcome = outcome.as_str(), by = %by, reason, "rollout changed at run time");
                self.read_state().await;
                Ok(Changed::Made(outcome))
            }
            Err(error)
                if request.is_brake()
                    && self.pending.add(Pending {
                        target: target.to_owned(),
                        request: request.clone(),
                        by: by.clone(),
                        reason: reason.to_owned(),
                        at: Timestamp::now(),
                    }) =>
            {
                tracing::warn!(target, by = %by, error = %error, "the store cannot take a brake: in force here, written when it can");
                self.metrics.pending.set(self.pending.count() as i64);
                if self.read.lock().is_some() {
                    self.apply();
                }
                Ok(Changed::Pending)
            }
            Err(error) => Err(error.into()),
        }
    }

    /// The declaration of the rollout of `target` (the policy file's
    /// first); 404 when none declares one.
    fn declaration(&self, target: &str) -> Result<Arc<Declaration>, ApiError> {
        self.declared()
            .iter()
            .find(|declaration| declaration.target.to_string() == target)
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    ErrorKind::DoesNotExist,
                    format_args!(
                        "no rollout of {target} is declared (not in the policy file, not phasing in graph-data)"
                    ),
                )
            })
    }

    /// The rollouts declared: the policy file's, then graph-data's (a
    /// target may be in both: a conflict).
    fn declared(&self) -> Vec<Arc<Declaration>> {
        let mut declared = self.policy.current().declarations().to_vec();
        declared.extend((self.graph_data)());
        declared
    }

    /// `work` done on the store within the store's time; a failure counted.
    async fn stored<T>(
        &self,
        work: impl AsyncFnOnce(&FleetStore) -> Result<T, fleet_store::StoreError>,
    ) -> Result<T, OperatorError> {
        let done = tokio::time::timeout(STORE_TIMEOUT, async {
            let store = self.store.get().await?;
            work(&store).await
        })
        .await;
        let failure = match done {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(error)) => format!("{:#}", anyhow::Error::new(error)),
            Err(_) => "the store took too long".to_owned(),
        };
        self.metrics.store_errors.inc();
        Err(OperatorError::Store(anyhow::anyhow!(
            "the rollouts' state cannot be changed or read: {failure}"
        )))
    }

    /// Each rollout as the documents show it at `now`, with its conflict.
    pub fn views(&self, now: SystemTime) -> Vec<RolloutView> {
        let now = from_system(now);
        let conflicts = self.conflicts.lock().by_target();
        let graph_data = self.policy.knowledge().rollouts(&(self.graph_data)());
        self.policy
            .rollouts()
            .iter()
            .chain(&graph_data)
            .map(|rollout| {
                let conflict = conflicts.get(&rollout.declaration().target.to_string()).cloned();
                rollout_view(rollout, now, conflict)
            })
            .collect()
    }

    /// `GET {prefix}/v1/rollouts`: the rollouts as control leaves them, and
    /// the last changes (none while the store cannot be read: the state
    /// says so).
    pub async fn document(&self, now: SystemTime) -> Rollouts {
        let history = self
            .stored(async |store| store.rollout_audit(None, HISTORY).await)
            .await;
        Rollouts {
            header: Header::new("Rollouts", rfc3339(now)),
            state: self.knowledge_view(history.as_ref().err()),
            rollouts: self.views(now),
            history: history
                .unwrap_or_default()
                .iter()
                .map(|entry| audit_entry(&entry.target, &entry.audited))
                .collect(),
        }
    }

    fn knowledge_view(&self, error: Option<&OperatorError>) -> KnowledgeView {
        let as_of = self.read.lock().as_ref().map(|(as_of, _)| *as_of);
        KnowledgeView {
            known: if as_of.is_some() { "read" } else { "unknown" }.to_owned(),
            as_of: as_of.map(shown),
            pending: self.pending.said(),
            error: error.map(ToString::to_string).or_else(|| {
                let freshness = self.freshness.lock();
                freshness
                    .last_error()
                    .filter(|_| freshness.is_stale())
                    .map(|failure| failure.message.clone())
            }),
        }
    }

    /// Brings the state's gauges up to date, before a scrape.
    pub fn update_gauges(&self) {
        let as_of = self.read.lock().as_ref().map(|(as_of, _)| *as_of);
        self.metrics.known.set(i64::from(as_of.is_some()));
        let age = as_of.map_or(0, |as_of| Timestamp::now().duration_since(as_of).as_secs());
        self.metrics.age.set(age);
    }

    pub fn status(&self) -> ControlStatus {
        let read = self.read.lock();
        ControlStatus {
            known: read.is_some(),
            as_of: read.as_ref().map(|(as_of, _)| shown(*as_of)),
            controlled: read
                .as_ref()
                .map(|(_, run_time)| {
                    run_time
                        .controls
                        .iter()
                        .filter(|(_, control)| control.overrides())
                        .map(|(target, _)| target.clone())
                        .collect()
                })
                .unwrap_or_default(),
            conflicts: self.conflicts.lock().standing(),
            pending: self.pending.said(),
            freshness: self.freshness.lock().clone(),
            prometheus: self.prometheus.as_ref().map(Prometheus::freshness),
        }
    }
}

/// What `request` does to a rollout of `declaration` as stored
/// (`locked`): the control to write, its audit, and what it did.
fn decided(
    declaration: &Arc<Declaration>,
    locked: Locked<'_>,
    request: &Request,
    by: (&Actor, &str),
) -> (Changes, Outcome) {
    let decision = change::decide(
        declaration,
        (locked.control, locked.gates),
        request,
        by,
        locked.now,
    );
    let changes = Changes {
        control: (decision.control != *locked.control).then(|| decision.control.clone()),
        audit: decision.audit.into_iter().collect(),
        ..Changes::default()
    };
    (changes, decision.outcome)
}
