//! The policy-engine's metrics. Upstream's names are kept exactly
//! (`cincinnati_pe_` + name); the staleness and cache metrics are new. The
//! skeleton registers the ones every service has (`build_info`, error
//! answers, task restarts, connections).

use prometheus::{Gauge, GaugeVec, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts};
use service_kit::metrics::{MetricRegistry, ServiceMetrics};

/// Every metric of the engine's own.
#[derive(Clone)]
pub struct EngineMetrics {
    pub incoming_requests: IntCounterVec,
    pub serve_duration: Histogram,
    pub answers_at_hand: IntCounter,
    pub upstream_requests: IntCounter,
    pub upstream_errors: IntCounter,
    pub graph_age_seconds: Gauge,
    pub last_successful_refresh: Gauge,
    pub upstream_stale: IntGauge,
    pub upstream_last_error_timestamp: Gauge,
    pub cache_hits: IntCounter,
    pub cache_misses: IntCounter,
    pub cache_hit_ratio: Gauge,
    pub cache_evictions: IntCounter,
    pub identity_cache_bytes: IntGauge,
    pub policy_reloads: IntCounter,
    pub policy_reload_errors: IntCounter,
    pub policy_stale: IntGauge,
    pub lookups: IntCounter,
    pub lookup_errors: IntCounter,
    pub lookup_fallbacks: IntCounter,
    pub lookup_breaker_open: IntGauge,
    pub phased_update_rollout: GaugeVec,
}

impl ServiceMetrics for EngineMetrics {
    fn register(registry: &MetricRegistry) -> prometheus::Result<Self> {
        Ok(Self {
            incoming_requests: registry.add(IntCounterVec::new(
                Opts::new(
                    "graph_incoming_requests_total",
                    "Graph requests received, by path",
                ),
                &["uri_path"],
            )?)?,
            serve_duration: registry.add(Histogram::with_opts(
                HistogramOpts::new("graph_serve_duration_seconds", "Time to answer a graph request").buckets(
                    vec![0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 5.0],
                ),
            )?)?,
            answers_at_hand: registry.add(IntCounter::new(
                "graph_answers_at_hand_total",
                "Graph requests answered at hand, from their head, beside the app's routing and middleware",
            )?)?,
            upstream_requests: registry.add(IntCounter::new(
                "http_upstream_requests_total",
                "Upstream graph fetches",
            )?)?,
            upstream_errors: registry.add(IntCounter::new(
                "http_upstream_errors_total",
                "Upstream graph fetches that failed",
            )?)?,
            graph_age_seconds: registry.add(Gauge::new(
                "graph_age_seconds",
                "Age of the oldest upstream graph served, since it was last confirmed by upstream",
            )?)?,
            last_successful_refresh: registry.add(Gauge::new(
                "graph_last_successful_refresh_timestamp",
                "Unix time of the oldest last successful upstream fetch among served graphs",
            )?)?,
            upstream_stale: registry.add(IntGauge::new(
                "upstream_stale",
                "1 while the most recent upstream fetch of a served graph failed",
            )?)?,
            upstream_last_error_timestamp: registry.add(Gauge::new(
                "upstream_last_error_timestamp_seconds",
                "Unix time of the most recent upstream fetch error (0: none)",
            )?)?,
            cache_hits: registry.add(IntCounter::new(
                "graph_cache_hits_total",
                "Graph answers served from precomputed bytes",
            )?)?,
            cache_misses: registry.add(IntCounter::new(
                "graph_cache_misses_total",
                "Graph answers computed for a request",
            )?)?,
            cache_hit_ratio: registry.add(Gauge::new(
                "graph_cache_hit_ratio",
                "Hits over all lookups of the answer cache",
            )?)?,
            cache_evictions: registry.add(IntCounter::new(
                "graph_cache_evictions_total",
                "Answers dropped from the cache to make room (least recently used first)",
            )?)?,
            policy_reloads: registry.add(IntCounter::new(
                "cluster_policy_reloads_total",
                "Changed policy files taken",
            )?)?,
            policy_reload_errors: registry.add(IntCounter::new(
                "cluster_policy_reload_errors_total",
                "Policy file reads refused (the last good policy is kept)",
            )?)?,
            policy_stale: registry.add(IntGauge::new(
                "cluster_policy_stale",
                "1 while the policy file is refused and the last good policy is served",
            )?)?,
            lookups: registry.add(IntCounter::new(
                "cluster_lookups_total",
                "Requests sent to the cluster group lookup service",
            )?)?,
            lookup_errors: registry.add(IntCounter::new(
                "cluster_lookup_errors_total",
                "Cluster group lookups that failed (error, timeout, garbage)",
            )?)?,
            lookup_fallbacks: registry.add(IntCounter::new(
                "cluster_lookup_fallbacks_total",
                "Requests answered without fresh groups from the lookup service (last known groups or the file's)",
            )?)?,
            lookup_breaker_open: registry.add(IntGauge::new(
                "cluster_lookup_breaker_open",
                "1 while the lookup service's circuit breaker is open (no lookups sent)",
            )?)?,
            phased_update_rollout: registry.add(GaugeVec::new(
                Opts::new(
                    "phased_update_rollout",
                    "Share of clusters offered an update phased by graph-data, while its window runs or run-time control holds it back (0 to 1)",
                ),
                &["channel", "from", "to"],
            )?)?,
            identity_cache_bytes: registry.add(IntGauge::new(
                "identity_cache_bytes",
                "Bytes of identity answers kept for clients without gzip (answers are kept compressed)",
            )?)?,
        })
    }
}

impl EngineMetrics {
    /// Recomputes the derived ratio; called before each scrape.
    pub fn update_cache_ratio(&self) {
        let (hits, misses) = (self.cache_hits.get(), self.cache_misses.get());
        if hits + misses > 0 {
            self.cache_hit_ratio.set(hits as f64 / (hits + misses) as f64);
        }
    }
}
