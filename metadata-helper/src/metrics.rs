//! The helper's metrics, registered in a registry prefixed `cincinnati_mh`.
//!
//! Upstream's two serving metrics keep their names after the prefix
//! (`signatures_incoming_requests_total{uri_path}`,
//! `signatures_serve_duration_seconds`). `uri_path` is the route's pattern,
//! not the request's path: one series per digest would be unbounded;
//! upstream's own prefix has a character Prometheus refuses, so ours is
//! `cincinnati_mh_` like `cincinnati_pe_` and `cincinnati_gb_`. The source
//! gauges are ours: they say which set is served and whether its source is
//! failing.

use std::time::Instant;

use prometheus::{Gauge, Histogram, HistogramOpts, IntCounterVec, IntGauge, IntGaugeVec, Opts};
use service_kit::metrics::MetricRegistry;

use crate::status::Signatures;

/// Serving times are tens of microseconds for a file in the page cache;
/// the buckets go from there to a second.
const SERVE_BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

/// What the signature route counts and times.
#[derive(Clone)]
pub struct ServeMetrics {
    requests: IntCounterVec,
    duration: Histogram,
}

impl ServeMetrics {
    pub fn register(registry: &MetricRegistry) -> prometheus::Result<Self> {
        let requests = registry.add(IntCounterVec::new(
            Opts::new(
                "signatures_incoming_requests_total",
                "Requests to the signature route, answered or refused, by route pattern",
            ),
            &["uri_path"],
        )?)?;
        let duration = registry.add(Histogram::with_opts(
            HistogramOpts::new(
                "signatures_serve_duration_seconds",
                "Time to answer a request to the signature route",
            )
            .buckets(SERVE_BUCKETS.to_vec()),
        )?)?;
        Ok(Self { requests, duration })
    }

    /// Counts a request to the route `pattern`; the returned guard times it
    /// until it is dropped.
    pub fn start(&self, pattern: &str) -> ServeTimer<'_> {
        self.requests.with_label_values(&[pattern]).inc();
        ServeTimer {
            histogram: &self.duration,
            started: Instant::now(),
        }
    }

    /// Requests counted for the route `pattern`.
    pub fn requests(&self, pattern: &str) -> u64 {
        self.requests.with_label_values(&[pattern]).get()
    }
}

/// Observes the time since [`ServeMetrics::start`] when dropped.
pub struct ServeTimer<'a> {
    histogram: &'a Histogram,
    started: Instant,
}

impl Drop for ServeTimer<'_> {
    fn drop(&mut self) {
        self.histogram.observe(self.started.elapsed().as_secs_f64());
    }
}

/// The signature set in service and its source's health, as gauges set
/// from [`Signatures::status`] before each scrape.
#[derive(Clone)]
pub struct SourceMetrics {
    signatures: IntGauge,
    digests: IntGauge,
    misplaced: IntGauge,
    age: Gauge,
    failing: IntGauge,
    revision: IntGaugeVec,
}

impl SourceMetrics {
    pub fn register(registry: &MetricRegistry) -> prometheus::Result<Self> {
        let gauge = |name: &str, help: &str| registry.add(IntGauge::new(name, help)?);
        let metrics = Self {
            signatures: gauge("signatures_served", "Signature files in the set in service")?,
            digests: gauge(
                "signatures_digests",
                "Release digests with at least one signature in the set in service",
            )?,
            misplaced: gauge(
                "signatures_misplaced",
                "Entries of the signature tree in service that are not served",
            )?,
            age: registry.add(Gauge::new(
                "signatures_age_seconds",
                "Seconds since the set in service was loaded",
            )?)?,
            failing: gauge(
                "signatures_refresh_failing",
                "1 while the last refresh of the source failed (the last good set is served)",
            )?,
            revision: registry.add(IntGaugeVec::new(
                Opts::new(
                    "signatures_revision_info",
                    "1 for the revision of the set in service (a graph-data tarball's entity tag)",
                ),
                &["revision"],
            )?)?,
        };
        Ok(metrics)
    }

    /// Sets the gauges from the source's status as of now.
    pub fn update(&self, signatures: &Signatures) {
        let status = signatures.status();
        let count = |value: usize| i64::try_from(value).unwrap_or(i64::MAX);
        self.signatures.set(count(status.signatures));
        self.digests.set(count(status.digests));
        self.misplaced.set(count(status.misplaced));
        self.age.set(status.age_seconds.unwrap_or(0.0));
        self.failing.set(i64::from(status.freshness.is_stale()));
        self.revision.reset();
        if let Some(revision) = &status.revision {
            self.revision.with_label_values(&[revision.as_str()]).set(1);
        }
    }
}
