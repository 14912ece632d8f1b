//! The fleet's metrics. No label carries a cluster id; the per-version
//! gauge is bounded ([`MAX_VERSION_SERIES`]).

use prometheus::{IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts};
use service_kit::metrics::MetricRegistry;

/// (channel, version) series of `fleet_clusters` kept, the largest; the
/// clusters of the next as many are counted under `version="other"` of
/// their channel, the rest under `channel="other"`: at most
/// `2 × MAX_VERSION_SERIES + 1` series.
pub const MAX_VERSION_SERIES: usize = 1_000;

#[derive(Clone)]
pub struct FleetMetrics {
    /// Graph requests by what became of their check: `queued`, `dropped`
    /// (queue full), `without_id`, `invalid` (an id that is not a UUID, or
    /// a channel or version that cannot be a release's), `refused_new` (a
    /// cluster the store did not know, beyond the budget of new ones).
    pub checks: IntCounterVec,
    pub written: IntCounter,
    /// Cluster ids the store took for the first time.
    pub new_clusters: IntCounter,
    /// Clusters whose checks said nothing new within `fleet.seen_step_secs`:
    /// left as stored.
    pub unchanged: IntCounter,
    pub store_errors: IntCounter,
    pub queue_depth: IntGauge,
    pub clusters: IntGaugeVec,
    pub rollout_offered: IntGaugeVec,
    pub rollout_arrived: IntGaugeVec,
}

impl FleetMetrics {
    pub fn register(registry: &MetricRegistry) -> prometheus::Result<Self> {
        let checks = registry.add(IntCounterVec::new(
            Opts::new(
                "fleet_checks_total",
                "Graph requests by what became of their update check: queued, dropped (queue full), without_id, invalid, refused_new (a new cluster beyond fleet.new_clusters_per_hour or fleet.max_clusters)",
            ),
            &["outcome"],
        )?)?;
        // From the start, so an alert sees the first refusal as an increase.
        checks.with_label_values(&["refused_new"]);
        Ok(Self {
            checks,
            written: registry.add(IntCounter::new(
                "fleet_checks_written_total",
                "Update checks written to the fleet store",
            )?)?,
            new_clusters: registry.add(IntCounter::new(
                "fleet_new_clusters_total",
                "Cluster ids recorded for the first time (a burst of them is alerted: made-up ids, see docs/reliability.md)",
            )?)?,
            unchanged: registry.add(IntCounter::new(
                "fleet_clusters_unchanged_total",
                "Clusters of written batches left as stored: their checks said nothing new within fleet.seen_step_secs",
            )?)?,
            store_errors: registry.add(IntCounter::new(
                "fleet_store_errors_total",
                "Fleet store operations that failed (opening, writing, pruning, counting)",
            )?)?,
            queue_depth: registry.add(IntGauge::new(
                "fleet_queue_depth",
                "Update checks waiting to be written",
            )?)?,
            clusters: registry.add(IntGaugeVec::new(
                Opts::new(
                    "fleet_clusters",
                    "Clusters seen within the last day, per channel and version (bounded: see docs/fleet.md)",
                ),
                &["channel", "version"],
            )?)?,
            rollout_offered: registry.add(IntGaugeVec::new(
                Opts::new("fleet_rollout_offered", "Active clusters offered a rollout's target"),
                &["target"],
            )?)?,
            rollout_arrived: registry.add(IntGaugeVec::new(
                Opts::new(
                    "fleet_rollout_arrived",
                    "Clusters that reported a rollout's target after it was offered to them",
                ),
                &["target"],
            )?)?,
        })
    }

    /// Sets `fleet_clusters` from (channel, version, clusters), largest
    /// first kept within [`MAX_VERSION_SERIES`].
    pub fn set_clusters(&self, mut counts: Vec<(String, String, u64)>) {
        counts.sort_by_key(|count| std::cmp::Reverse(count.2));
        self.clusters.reset();
        for (series, (channel, version, clusters)) in counts.into_iter().enumerate() {
            let (channel, version) = if series < MAX_VERSION_SERIES {
                (channel, version)
            } else if series < 2 * MAX_VERSION_SERIES {
                (channel, "other".to_owned())
            } else {
                ("other".to_owned(), "other".to_owned())
            };
            self.clusters
                .with_label_values(&[channel.as_str(), version.as_str()])
                .add(clusters as i64);
        }
    }
}
