//! The graph-builder's metrics: upstream's names (`cincinnati_gb_…`), which
//! dashboards and alerts query, plus what operators lacked: the graph's age,
//! releases dropped by reason, graph-data revision, cache hits, registry
//! requests, per-route latency. The skeleton registers the ones every
//! service has (`build_info`, error answers, task restarts).

use std::sync::atomic::Ordering;

use prometheus::{
    Gauge, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
};
use registry_client::RequestCounts;
use service_kit::metrics::{MetricRegistry, ServiceMetrics};

#[derive(Clone)]
pub struct Metrics {
    /// Upstream's names.
    pub final_releases: IntGauge,
    pub last_successful_refresh: Gauge,
    pub upstream_errors: IntCounter,
    pub upstream_scrapes: IntCounter,
    pub scrape_duration: Histogram,
    pub initial_scrape_duration: Gauge,
    pub raw_releases: IntGauge,
    pub incoming_requests: IntCounterVec,
    /// Ours.
    pub graph_age: Gauge,
    pub final_edges: IntGauge,
    pub final_conditional_edges: IntGauge,
    pub dropped: IntGaugeVec,
    pub source_up: IntGaugeVec,
    pub graph_data_revision: IntGaugeVec,
    pub graph_data_errors: IntCounter,
    pub build_errors: IntCounter,
    pub cache_hits: IntCounter,
    pub cache_misses: IntCounter,
    pub registry_requests: IntCounterVec,
    pub request_duration: HistogramVec,
    pub change_checks: IntCounterVec,
    pub change_check_errors: IntCounterVec,
    pub change_to_serve: HistogramVec,
}

impl ServiceMetrics for Metrics {
    fn register(registry: &MetricRegistry) -> prometheus::Result<Self> {
        Ok(Self {
            final_releases: registry.add(IntGauge::new(
                "graph_final_releases",
                "Releases in the served graph",
            )?)?,
            last_successful_refresh: registry.add(Gauge::new(
                "graph_last_successful_refresh_timestamp",
                "Unix time of the last graph built successfully",
            )?)?,
            upstream_errors: registry.add(IntCounter::new(
                "graph_upstream_errors_total",
                "Failed refreshes of any source",
            )?)?,
            upstream_scrapes: registry.add(IntCounter::new(
                "graph_upstream_scrapes_total",
                "Registry scrapes started",
            )?)?,
            scrape_duration: registry.add(Histogram::with_opts(
                HistogramOpts::new(
                    "graph_upstream_scrapes_duration",
                    "Registry scrape duration in seconds",
                )
                .buckets(vec![
                    0.5, 1.0, 2.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0, 30.0, 60.0,
                ]),
            )?)?,
            initial_scrape_duration: registry.add(Gauge::new(
                "graph_initial_upstream_scrape_duration",
                "Duration of the first registry scrape in seconds",
            )?)?,
            raw_releases: registry.add(IntGauge::new(
                "graph_upstream_raw_releases",
                "Release images seen by the last scrape",
            )?)?,
            incoming_requests: registry.add(IntCounterVec::new(
                Opts::new("graph_incoming_requests_total", "Graph requests by path"),
                &["uri_path"],
            )?)?,
            graph_age: registry.add(Gauge::new(
                "graph_age_seconds",
                "Seconds since the served graph was built",
            )?)?,
            final_edges: registry.add(IntGauge::new("graph_final_edges", "Edges in the served graph")?)?,
            final_conditional_edges: registry.add(IntGauge::new(
                "graph_final_conditional_edges",
                "Conditional edges in the served graph",
            )?)?,
            dropped: registry.add(IntGaugeVec::new(
                Opts::new(
                    "graph_releases_dropped",
                    "Images or edges left out of the graph, by reason",
                ),
                &["reason"],
            )?)?,
            source_up: registry.add(IntGaugeVec::new(
                Opts::new("graph_source_up", "1 when the source's last refresh succeeded"),
                &["source"],
            )?)?,
            graph_data_revision: registry.add(IntGaugeVec::new(
                Opts::new("graph_data_revision_info", "The graph-data in use (value 1)"),
                &["revision", "image_digest"],
            )?)?,
            graph_data_errors: registry.add(IntCounter::new(
                "graph_data_errors_total",
                "Refused or failed graph-data refreshes",
            )?)?,
            build_errors: registry.add(IntCounter::new(
                "graph_build_errors_total",
                "Graphs that could not be built",
            )?)?,
            cache_hits: registry.add(IntCounter::new(
                "graph_scrape_cache_hits_total",
                "Release images answered from the cache",
            )?)?,
            cache_misses: registry.add(IntCounter::new(
                "graph_scrape_cache_misses_total",
                "Release images that had to be downloaded",
            )?)?,
            registry_requests: registry.add(IntCounterVec::new(
                Opts::new(
                    "registry_requests",
                    "Requests sent to the registry since start, by kind",
                ),
                &["kind"],
            )?)?,
            request_duration: registry.add(HistogramVec::new(
                HistogramOpts::new(
                    "http_request_duration_seconds",
                    "Time to answer a request, by route",
                )
                .buckets(vec![
                    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
                ]),
                &["route"],
            )?)?,
            change_checks: registry.add(IntCounterVec::new(
                Opts::new(
                    "graph_change_checks_total",
                    "Cheap looks at a source for a change between refreshes, by source",
                ),
                &["source"],
            )?)?,
            change_check_errors: registry.add(IntCounterVec::new(
                Opts::new(
                    "graph_change_check_errors_total",
                    "Change checks that failed, by source",
                ),
                &["source"],
            )?)?,
            change_to_serve: registry.add(HistogramVec::new(
                HistogramOpts::new(
                    "graph_change_to_serve_seconds",
                    "Seconds from a source bringing something new to a graph built from it being served, by source",
                )
                .buckets(vec![0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0]),
                &["source"],
            )?)?,
        })
    }
}

impl Metrics {
    /// Brings the registry request counters up to the registry client's
    /// counts (which count from the client's start, as these do).
    pub fn observe_registry_requests(&self, counts: &RequestCounts) {
        for (kind, counter) in [
            ("tag_list", &counts.tag_pages),
            ("manifest", &counts.manifests),
            ("manifest_head", &counts.manifest_heads),
            ("blob", &counts.blobs),
        ] {
            let metric = self.registry_requests.with_label_values(&[kind]);
            let sent = counter.load(Ordering::Relaxed);
            metric.inc_by(sent.saturating_sub(metric.get()));
        }
    }
}
