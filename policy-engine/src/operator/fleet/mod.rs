//! The fleet view: who runs what and who took which update, from the update
//! checks themselves (`fleet.store`).
//!
//! Every graph request answered with a valid cluster id is an update check:
//! the cluster's channel, architecture and version, now. The engine notes
//! it without waiting ([`recorder`]) and a supervised round writes the
//! checks to the fleet store (the `fleet-store` crate: a SQLite file, or a
//! PostgreSQL several engines share). Requests without an id, or with one
//! that is not a UUID, are counted, not stored; a channel or architecture
//! the upstream does not serve is recorded as `other`, a version that is
//! no release of its graph as `other`, so made-up values cost nothing
//! (no feed, no graph, no metric series of their own); questions asked by
//! operators' tools (`Cincinnati-Question`) are not checks. The store's
//! growth is bounded (`fleet.max_clusters`, `fleet.new_clusters_per_hour`);
//! no cluster id is ever a metric label or in a log line.
//!
//! The engine uses it through one façade, [`Fleet`]: note, write, prune,
//! gauges, status, and the questions ([`answers`]) the status port's
//! `{prefix}/v1/fleet/...` routes ask.
//!
//! - [`keys`]: a cluster's name in the store (its id or a keyed hash).
//! - [`recorder`]: the queue and the writing round; [`store`]: the store,
//!   opened once.
//! - [`count`]: what a question asks, and the fleet counted for it in one
//!   scan (kept every `fleet.count_interval_secs`), with how each rollout's
//!   target arrived; [`answers`]: the fleet documents, from the count, the
//!   store and the graph; [`graphs`]: that graph, as the upstream serves
//!   it; [`rollout_facts`]: what the fleet shows of each rollout (who can
//!   take its target, who arrived, who went silent), for its gates and halts.
//! - [`metrics`]: the fleet's metrics.

pub mod answers;
pub mod count;
pub mod graphs;
pub mod keys;
pub mod metrics;
pub mod recorder;
pub mod rollout_facts;
pub mod store;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;

use fleet_store::{Check, FleetStore};
use rollout_model::evidence::Evidence;
use rollout_model::{ClusterId, Lot};
use service_kit::periodic::Every;
use service_kit::secret::RedactedUrl;

use self::count::Counted;
use self::keys::ClusterKeys;
use self::metrics::FleetMetrics;
use self::recorder::{Recorder, RecorderStatus, WRITE_TIMEOUT};
use self::store::StoreHandle;
use crate::client::CheckSink;
use crate::client::Served;
use crate::client::query::ClientQuery;
use crate::operator::OperatorError;

/// What a check records for a channel, architecture or version the
/// upstream does not serve.
pub const OTHER: &str = "other";

/// Bytes a stored channel, architecture or version has at most: longer
/// ones are no release's, and are counted as invalid.
const MAX_FIELD_BYTES: usize = 64;

/// How the fleet is recorded and what its answers look back on.
#[derive(Debug, Clone)]
pub struct FleetPlan {
    pub store: RedactedUrl,
    /// Where the store's password is, if not in `store`.
    pub password_file: Option<PathBuf>,
    pub keys: ClusterKeys,
    pub queue_capacity: usize,
    pub batch_size: usize,
    /// Time between writing rounds.
    pub flush_interval: Duration,
    /// See [`fleet_store::FleetStore::with_seen_step`].
    pub seen_step: Duration,
    /// Time between counts of the fleet ([`count`]); zero: counted at each
    /// question.
    pub count_interval: Duration,
    /// Clusters not seen and changes older than this are pruned; `None`:
    /// kept for ever.
    pub retention: Option<Duration>,
    pub windows: Windows,
    /// What a cluster's record must show before it steers a rollout.
    pub evidence: Evidence,
    pub bounds: Bounds,
}

/// How far a flood of new ids can grow the store.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub max_clusters: u64,
    /// New clusters recorded an hour at most, by this engine.
    pub new_per_hour: u64,
}

/// What the answers count as recent, silent and stuck.
#[derive(Debug, Clone, Copy)]
pub struct Windows {
    /// Clusters seen within this are active (the default of the answers).
    pub active: Duration,
    /// Arrived at a rollout's target and not seen for this: silent.
    pub silent: Duration,
    /// On a version with an update offered for this long: stuck.
    pub stuck: Duration,
}

pub struct Fleet {
    keys: ClusterKeys,
    store: Arc<StoreHandle>,
    recorder: Recorder,
    metrics: FleetMetrics,
    flush_interval: Duration,
    count_interval: Duration,
    /// The last count of the whole fleet.
    counted: ArcSwapOption<Counted>,
    retention: Option<Duration>,
    windows: Windows,
    evidence: Evidence,
}

/// The fleet part of `/status`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetStatus {
    /// The store, without its password.
    pub store: String,
    /// Whether it has been opened (and its schema migrated).
    pub open: bool,
    pub hashed_ids: bool,
    pub retention_days: Option<u64>,
    pub recorder: RecorderStatus,
}

impl Fleet {
    pub fn new(plan: FleetPlan, metrics: FleetMetrics) -> Self {
        let store = Arc::new(StoreHandle::new(
            plan.store,
            plan.password_file,
            (plan.seen_step, plan.evidence),
        ));
        Self {
            keys: plan.keys,
            recorder: Recorder::new(
                store.clone(),
                (plan.queue_capacity, plan.batch_size),
                plan.bounds,
                metrics.clone(),
            ),
            store,
            metrics,
            flush_interval: plan.flush_interval,
            count_interval: plan.count_interval,
            counted: ArcSwapOption::empty(),
            retention: plan.retention,
            windows: plan.windows,
            evidence: plan.evidence,
        }
    }

    pub fn evidence(&self) -> Evidence {
        self.evidence
    }

    pub fn keys(&self) -> &ClusterKeys {
        &self.keys
    }

    /// The store, for what else keeps its state there.
    pub fn store_handle(&self) -> &Arc<StoreHandle> {
        &self.store
    }

    pub fn windows(&self) -> Windows {
        self.windows
    }

    /// The update check of an answered request for `query` (architecture
    /// `arch`) made at `now`, what of it the upstream serves being
    /// `served`; or why it is not one (the outcome it is counted under).
    pub fn check_of(
        &self,
        query: &ClientQuery,
        arch: &str,
        served: Served,
        now: SystemTime,
    ) -> Result<Check, &'static str> {
        query.id.as_ref().ok_or("without_id")?;
        let cluster = query.cluster().ok_or("invalid")?;
        let channel = query.channel.as_ref().map(|channel| channel.as_str());
        let version = query
            .version
            .as_deref()
            .filter(|version| semver::Version::parse(version).is_ok());
        let (Some(channel), Some(version)) = (channel, version) else {
            return Err("invalid");
        };
        if [channel, arch, version]
            .iter()
            .any(|field| field.len() > MAX_FIELD_BYTES)
        {
            return Err("invalid");
        }
        let (channel, arch) = if served.channel {
            (channel, arch)
        } else {
            (OTHER, OTHER)
        };
        Ok(Check {
            cluster: self.keys.key(&cluster.id),
            channel: channel.to_owned(),
            arch: arch.to_owned(),
            version: if served.version { version } else { OTHER }.to_owned(),
            place: cluster.place.percent(),
            at: unix_seconds(now),
        })
    }

    /// When [`Fleet::write_queued`] runs. Watched: a round ends after one
    /// failed write, so only a hung round stalls it.
    pub fn recording_schedule(&self) -> Every {
        Every::new("fleet recording", self.flush_interval).allowing(WRITE_TIMEOUT * 2)
    }

    /// When the fleet is counted again ([`Fleet::count`]); without a
    /// count interval, every minute for the per-version gauges.
    pub fn count_schedule(&self) -> Every {
        let interval = if self.count_interval.is_zero() {
            Duration::from_secs(60)
        } else {
            self.count_interval
        };
        Every::new("fleet count", interval).unwatched()
    }

    pub async fn write_queued(&self) {
        self.recorder.write_queued().await;
    }

    /// When [`Fleet::prune`] runs, if anything is pruned.
    pub fn prune_schedule(&self) -> Option<Every> {
        self.retention?;
        Some(
            Every::new("fleet pruning", Duration::from_secs(3600))
                .first_after_a_pause()
                .unwatched(),
        )
    }

    /// Removes the clusters not seen within the retention and the changes
    /// older than it.
    pub async fn prune(&self) {
        let Some(retention) = self.retention else { return };
        let before = unix_seconds(SystemTime::now() - retention);
        let pruned = match self.store.get().await {
            Ok(store) => store.prune(before, unix_seconds(SystemTime::now())).await,
            Err(error) => Err(error),
        };
        match pruned {
            Ok(pruned) => tracing::info!(
                clusters = pruned.clusters,
                changes = pruned.changes,
                "fleet store pruned"
            ),
            Err(error) => {
                self.metrics.store_errors.inc();
                tracing::warn!(error = %anyhow::Error::new(error), "pruning the fleet store failed");
            }
        }
    }

    /// The store, for a question or a round, while it can be reached.
    pub async fn store(&self) -> Result<Arc<FleetStore>, OperatorError> {
        self.store.get().await.map_err(|error| {
            self.metrics.store_errors.inc();
            OperatorError::Store(anyhow::Error::new(error).context("the fleet store cannot answer"))
        })
    }

    /// What the store could not give, counted.
    pub fn failed(&self, error: fleet_store::StoreError) -> OperatorError {
        self.metrics.store_errors.inc();
        OperatorError::Store(anyhow::Error::new(error).context("the fleet store cannot answer"))
    }

    pub fn metrics(&self) -> &FleetMetrics {
        &self.metrics
    }

    /// Brings the queue gauge up to date, before a scrape.
    pub fn update_gauges(&self) {
        self.metrics.queue_depth.set(self.recorder.queued() as i64);
    }

    pub fn status(&self) -> FleetStatus {
        FleetStatus {
            store: self.store.shown(),
            open: self.store.current().is_some(),
            hashed_ids: matches!(self.keys, ClusterKeys::Hashed(_)),
            retention_days: self.retention.map(|retention| retention.as_secs() / 86_400),
            recorder: self.recorder.status(),
        }
    }
}

impl CheckSink for Fleet {
    /// Queues the check without waiting (see [`Fleet::check_of`]), or
    /// counts why it is not one.
    fn note(&self, query: &ClientQuery, arch: &str, served: Served, now: SystemTime) {
        match self.check_of(query, arch, served, now) {
            Ok(check) => self.recorder.note(check),
            Err(outcome) => self.metrics.checks.with_label_values(&[outcome]).inc(),
        }
    }

    fn lot(&self, id: &ClusterId) -> Option<Lot> {
        Fleet::lot(self, id)
    }
}

pub fn unix_seconds(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |since| i64::try_from(since.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use service_kit::metrics::MetricRegistry;

    use super::*;
    use crate::client::query::QueryRules;

    const ID: &str = "0F2A9C4E-5B1D-4C3E-8F7A-1B2C3D4E5F60";

    fn fleet() -> Fleet {
        let plan = FleetPlan {
            store: "sqlite:///nowhere/fleet.db".parse().unwrap(),
            password_file: None,
            keys: ClusterKeys::Ids,
            queue_capacity: 10,
            batch_size: 10,
            flush_interval: Duration::from_secs(1),
            seen_step: Duration::ZERO,
            count_interval: Duration::ZERO,
            retention: None,
            windows: Windows {
                active: Duration::from_secs(3600),
                silent: Duration::from_secs(3600),
                stuck: Duration::from_secs(86_400),
            },
            evidence: Evidence::default(),
            bounds: Bounds {
                max_clusters: 100,
                new_per_hour: 100,
            },
        };
        Fleet::new(
            plan,
            FleetMetrics::register(&MetricRegistry::new("test").unwrap()).unwrap(),
        )
    }

    const SERVED: Served = Served {
        channel: true,
        version: true,
    };

    fn check(query: &str) -> Result<Check, &'static str> {
        checked(query, SERVED)
    }

    fn checked(query: &str, served: Served) -> Result<Check, &'static str> {
        let query = ClientQuery::parse(query, &QueryRules::default()).unwrap();
        fleet().check_of(&query, "arm64", served, UNIX_EPOCH + Duration::from_secs(1_000))
    }

    #[test]
    fn a_check_is_a_valid_id_on_a_channel_and_a_release_version() {
        let made = check(&format!("channel=stable-4.18&version=4.18.1&id={ID}")).unwrap();
        assert_eq!(made.cluster, ID.to_lowercase());
        assert_eq!((made.arch.as_str(), made.at), ("arm64", 1_000));
        assert!((made.place - ClusterId::parse(ID).unwrap().place().percent()).abs() < 1e-9);

        assert_eq!(check("channel=stable-4.18&version=4.18.1"), Err("without_id"));
        for invalid in [
            "channel=stable-4.18&version=4.18.1&id=not-a-uuid",
            &format!("channel=stable-4.18&version=banana&id={ID}"),
            &format!("channel=stable-4.18&id={ID}"),
            &format!("version=4.18.1&id={ID}"),
            &format!("channel={}&version=4.18.1&id={ID}", "a".repeat(65)),
        ] {
            assert_eq!(check(invalid), Err("invalid"), "{invalid}");
        }
    }

    #[test]
    fn what_the_upstream_does_not_serve_is_recorded_as_other() {
        let query = format!("channel=made-up&version=4.99.1&id={ID}");
        let unserved = checked(
            &query,
            Served {
                channel: false,
                version: false,
            },
        )
        .unwrap();
        assert_eq!(
            (
                unserved.channel.as_str(),
                unserved.arch.as_str(),
                unserved.version.as_str()
            ),
            (OTHER, OTHER, OTHER)
        );
        let unknown_version = checked(
            &query,
            Served {
                channel: true,
                version: false,
            },
        )
        .unwrap();
        assert_eq!(
            (unknown_version.channel.as_str(), unknown_version.version.as_str()),
            ("made-up", OTHER)
        );
    }
}
