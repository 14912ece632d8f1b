//! Per-cluster policy: what a cluster is offered depends on who it is.
//!
//! A request's `id` (the cluster's UUID, which the CVO sends) selects its
//! groups in the policy file and/or from a lookup service; the groups' rules
//! (deferral, pins) and the rollouts in flight decide which releases are
//! withheld from it, the groups' blocked edges which updates are removed or
//! made conditional, and the policy's scoped channels which channels its
//! view is made of. All of that is a [`PolicyClass`], computed per request
//! from the id and the time without touching the graph; answers are
//! computed once per (channel, arch, class) and cached like every answer. A
//! request without an id, or with one that is not a UUID, gets the default
//! rules and is last in every rollout: never an error.
//!
//! The engine classifies, explains, reloads and counts through
//! [`ClusterPolicy`]; the filters, settings and the operator plane also
//! take the few types this module re-exports (its submodules are private).
//!
//! - [`file`]: the policy file, validated with file:line errors.
//! - [`policy`]: the validated policy and the classes of requests.
//! - [`apply`]: what a class does to a view (the `cluster-policy` filter
//!   applies it: `crate::client::filters::cluster_policy`).
//! - [`edges`]: a class's own blocked edges and risks, applied to its view.
//! - [`source`]: the file as served, reloaded when it changes.
//! - [`lookup`]: the lookup service that adds groups to the file's.
//! - [`explain`]: why a cluster sees what it sees (the status port's
//!   `{prefix}/v1/explain-cluster`); [`view`]: a rollout as every document
//!   shows it.

mod apply;
mod edges;
mod explain;
mod file;
mod lookup;
mod policy;
mod source;
mod view;

pub(crate) use apply::Applied;
pub(crate) use explain::{Asked, Explanation, phased_offers, without_policy};
#[cfg(test)]
pub(crate) use file::parse as parse_policy_file;
pub use lookup::LookupStatus;
pub(crate) use lookup::{GroupLookup, LookupSettings};
pub(crate) use source::{PolicyStatus, SourceError};
pub(crate) use view::{audit_entry, rollout_view, shown};

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use cincinnati_core::Graph;
pub use policy::{Policy, PolicyClass};
use rollout_model::{ClusterId, Knowledge, Lot, Placed, Rollout};
use service_kit::periodic::Every;
pub use source::PolicySource;

use self::lookup::Outcome;
use self::source::Reload;
use crate::metrics::EngineMetrics;

/// The per-cluster policy as the engine serves it: the file (reloaded on
/// its interval), the lookup service, and the metrics they feed.
pub struct ClusterPolicy {
    source: Arc<PolicySource>,
    reload_interval: Duration,
    metrics: EngineMetrics,
}

impl ClusterPolicy {
    pub fn new(source: Arc<PolicySource>, reload_interval: Duration, metrics: EngineMetrics) -> Self {
        Self {
            source,
            reload_interval,
            metrics,
        }
    }

    /// The policy served now.
    pub fn current(&self) -> Arc<Policy> {
        self.source.current()
    }

    /// The class of a request from `cluster` (none: without a valid id) at
    /// `now` (`lot_of`: a cluster's lot, asked only when a rollout names
    /// clusters). A lookup that fell back to the file's groups is counted.
    pub async fn classify(
        &self,
        cluster: Option<Placed>,
        lot_of: impl FnOnce(&ClusterId) -> Option<Lot>,
        now: SystemTime,
    ) -> PolicyClass {
        let now = rollout_model::time::from_system(now);
        let (class, lookup) = self.source.classify(cluster, lot_of, now).await;
        if lookup == Some(Outcome::Fallback) {
            self.metrics.lookup_fallbacks.inc();
        }
        class
    }

    /// Why a cluster of `class` sees what it sees at `now`, from the graph
    /// its request gets without the class's rules and what they do to it.
    pub fn explain(
        &self,
        class: &PolicyClass,
        asked: Asked<'_>,
        base: &Graph,
        applied: &Applied,
        now: SystemTime,
    ) -> Explanation {
        let now = rollout_model::time::from_system(now);
        Explanation {
            policy_file: Some(self.source.path().display().to_string()),
            ..explain::explain(class, asked, base, applied, now)
        }
    }

    /// [`ClusterPolicy::classify`] when it asks no lookup service (see
    /// [`PolicySource::classify_at_hand`]); `None` when it would.
    pub fn classify_at_hand(
        &self,
        cluster: Option<Placed>,
        lot_of: impl FnOnce(&ClusterId) -> Option<Lot>,
        now: SystemTime,
    ) -> Option<PolicyClass> {
        self.source
            .classify_at_hand(cluster, lot_of, rollout_model::time::from_system(now))
    }

    /// When [`ClusterPolicy::reload`] runs: on the reload interval, the
    /// first a pause after start-up (which read the file). Liveness does not
    /// depend on it: a bad file keeps the last good policy, and says so.
    pub fn reload_schedule(&self) -> Every {
        Every::new("policy reload", self.reload_interval)
            .first_after_a_pause()
            .unwatched()
    }

    /// Reads the policy file again, taking it if it changed and is valid.
    pub async fn reload(&self) {
        // Reading and hashing the file must not hold a worker that answers
        // clients.
        let source = self.source.clone();
        let reloaded = tokio::task::spawn_blocking(move || source.reload())
            .await
            .expect("a policy reload does not panic");
        match reloaded {
            Reload::Unchanged => {}
            Reload::Loaded { .. } => self.metrics.policy_reloads.inc(),
            Reload::Failed(_) => self.metrics.policy_reload_errors.inc(),
        }
    }

    /// Gives the rollouts what is known of their run-time state (see
    /// `crate::operator::control`).
    pub fn set_knowledge(&self, knowledge: Knowledge) {
        self.source.set_knowledge(knowledge);
    }

    /// The rollouts now, with what is known of their run-time state.
    pub fn rollouts(&self) -> Arc<Vec<Rollout>> {
        self.source.rollouts()
    }

    /// What is known of the rollouts' run-time state now (graph-data's
    /// phased rollouts read it per request).
    pub fn knowledge(&self) -> Arc<Knowledge> {
        self.source.knowledge()
    }

    pub fn status(&self, now: SystemTime) -> PolicyStatus {
        self.source.status(now)
    }

    /// Brings the policy's gauges and the lookup service's counters up to
    /// date, before a scrape.
    pub fn update_gauges(&self) {
        let metrics = &self.metrics;
        metrics.policy_stale.set(i64::from(self.source.is_stale()));
        if let Some(lookup) = self.source.lookup() {
            let counters = lookup.sent_and_failed();
            // Counted by the lookups; brought up to date for the scrape.
            // Saturating: two scrapes at once may both have added the difference.
            metrics
                .lookups
                .inc_by(counters.sent.saturating_sub(metrics.lookups.get()));
            metrics
                .lookup_errors
                .inc_by(counters.failed.saturating_sub(metrics.lookup_errors.get()));
            metrics.lookup_breaker_open.set(i64::from(lookup.is_open()));
        }
    }
}

#[cfg(test)]
mod tests {
    use registry_testkit::poll;
    use service_kit::metrics::{MetricRegistry, ServiceMetrics as _};
    use service_kit::supervisor::{Backoff, Supervisor};

    use super::*;

    const ID: &str = "0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60";

    fn served(text: &str) -> (tempfile::TempDir, std::path::PathBuf, Arc<ClusterPolicy>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.yaml");
        std::fs::write(&path, text).unwrap();
        let source = Arc::new(
            PolicySource::open(&path, rollout_model::time::SignedDuration::from_hours(1), None).unwrap(),
        );
        let metrics = EngineMetrics::register(&MetricRegistry::new("test").unwrap()).unwrap();
        let policy = Arc::new(ClusterPolicy::new(source, Duration::from_millis(20), metrics));
        (dir, path, policy)
    }

    #[tokio::test]
    async fn classes_follow_the_file_as_it_is_reloaded_and_refused() {
        let (_dir, path, policy) = served(&format!(
            "groups: {{prod: {{deferral_days: 3}}}}\nclusters: {{{ID}: [prod]}}\n"
        ));
        let class = policy
            .classify(
                ClusterId::parse(ID).map(ClusterId::placed),
                |_| None,
                SystemTime::now(),
            )
            .await;
        assert_eq!(class.id, ClusterId::parse(ID));
        assert_eq!(class.groups.names, ["prod"]);
        assert_eq!(policy.current().generation(), 0);
        let mut supervisor =
            Supervisor::new(&MetricRegistry::new("test").unwrap(), Backoff::default()).unwrap();
        let reloader = policy.clone();
        supervisor.spawn_every(policy.reload_schedule(), move || {
            let reloader = reloader.clone();
            async move { reloader.reload().await }
        });

        std::fs::write(
            &path,
            format!("groups: {{canary: {{}}}}\nclusters: {{{ID}: [canary]}}\n"),
        )
        .unwrap();
        poll::eventually("the edit served", Duration::from_secs(10), || {
            let policy = policy.clone();
            async move {
                policy
                    .classify(
                        ClusterId::parse(ID).map(ClusterId::placed),
                        |_| None,
                        SystemTime::now(),
                    )
                    .await
                    .groups
                    .names
                    == ["canary"]
            }
        })
        .await;
        assert_eq!(policy.metrics.policy_reloads.get(), 1);

        std::fs::write(&path, "groups: [not, a, map]\n").unwrap();
        poll::eventually("the bad edit refused", Duration::from_secs(10), || {
            let refused = policy.metrics.policy_reload_errors.get();
            async move { refused == 1 }
        })
        .await;
        policy.update_gauges();
        assert_eq!(policy.metrics.policy_stale.get(), 1);
        assert!(policy.status(SystemTime::now()).freshness.is_stale());
        let still = policy
            .classify(
                ClusterId::parse(ID).map(ClusterId::placed),
                |_| None,
                SystemTime::now(),
            )
            .await;
        assert_eq!(still.groups.names, ["canary"], "the last good policy kept");
        supervisor.shutdown().await;
    }
}
