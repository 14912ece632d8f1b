//! The policy-engine's metrics. Upstream's names are kept exactly
//! (`cincinnati_pe_` + name); the staleness and cache metrics are new.

use prometheus::{Gauge, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts, Registry};
use service_kit::errors::ResponseErrors;
use service_kit::metrics;

pub const PREFIX: &str = "cincinnati_pe";

/// Every metric of the service, registered in its own registry.
#[derive(Clone)]
pub struct EngineMetrics {
    pub registry: Registry,
    pub incoming_requests: IntCounterVec,
    pub serve_duration: Histogram,
    pub response_errors: ResponseErrors,
    pub upstream_requests: IntCounter,
    pub upstream_errors: IntCounter,
    pub graph_age_seconds: Gauge,
    pub last_successful_refresh: Gauge,
    pub upstream_stale: IntGauge,
    pub upstream_last_error_timestamp: Gauge,
    pub cache_hits: IntCounter,
    pub cache_misses: IntCounter,
    pub cache_hit_ratio: Gauge,
    pub identity_cache_bytes: IntGauge,
}

impl EngineMetrics {
    pub fn new(git_commit: &str) -> prometheus::Result<Self> {
        let registry = metrics::registry(PREFIX)?;
        metrics::register_build_info(&registry, git_commit)?;
        let counter = |name: &str, help: &str| -> prometheus::Result<IntCounter> {
            let counter = IntCounter::new(name, help)?;
            registry.register(Box::new(counter.clone()))?;
            Ok(counter)
        };
        let gauge = |name: &str, help: &str| -> prometheus::Result<Gauge> {
            let gauge = Gauge::new(name, help)?;
            registry.register(Box::new(gauge.clone()))?;
            Ok(gauge)
        };
        let incoming_requests = IntCounterVec::new(
            Opts::new(
                "graph_incoming_requests_total",
                "Graph requests received, by path",
            ),
            &["uri_path"],
        )?;
        registry.register(Box::new(incoming_requests.clone()))?;
        let serve_duration = Histogram::with_opts(
            HistogramOpts::new("graph_serve_duration_seconds", "Time to answer a graph request").buckets(
                vec![0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 5.0],
            ),
        )?;
        registry.register(Box::new(serve_duration.clone()))?;
        let upstream_stale = IntGauge::new(
            "upstream_stale",
            "1 while the most recent upstream fetch of a served graph failed",
        )?;
        registry.register(Box::new(upstream_stale.clone()))?;
        let identity_cache_bytes = IntGauge::new(
            "identity_cache_bytes",
            "Bytes of identity answers kept for clients without gzip (answers are kept compressed)",
        )?;
        registry.register(Box::new(identity_cache_bytes.clone()))?;
        Ok(Self {
            response_errors: ResponseErrors::register(&registry)?,
            upstream_requests: counter("http_upstream_requests_total", "Upstream graph fetches")?,
            upstream_errors: counter("http_upstream_errors_total", "Upstream graph fetches that failed")?,
            graph_age_seconds: gauge(
                "graph_age_seconds",
                "Age of the oldest upstream graph served, since it was last confirmed by upstream",
            )?,
            last_successful_refresh: gauge(
                "graph_last_successful_refresh_timestamp",
                "Unix time of the oldest last successful upstream fetch among served graphs",
            )?,
            upstream_last_error_timestamp: gauge(
                "upstream_last_error_timestamp_seconds",
                "Unix time of the most recent upstream fetch error (0: none)",
            )?,
            cache_hits: counter(
                "graph_cache_hits_total",
                "Graph answers served from precomputed bytes",
            )?,
            cache_misses: counter("graph_cache_misses_total", "Graph answers computed for a request")?,
            cache_hit_ratio: gauge(
                "graph_cache_hit_ratio",
                "Hits over all lookups of the answer cache",
            )?,
            incoming_requests,
            serve_duration,
            upstream_stale,
            identity_cache_bytes,
            registry,
        })
    }

    /// Recomputes the derived ratio; called before each scrape.
    pub fn update_cache_ratio(&self) {
        let (hits, misses) = (self.cache_hits.get(), self.cache_misses.get());
        if hits + misses > 0 {
            self.cache_hit_ratio.set(hits as f64 / (hits + misses) as f64);
        }
    }
}
