//! A per-service Prometheus registry. Metric names are what upstream's
//! dashboards and alerts query, so they are spelled out exactly: the registry
//! adds the service prefix (`cincinnati_pe`, `cincinnati_gb`) and nothing else.
//!
//! Every metric is registered where it is made, through [`MetricRegistry::add`],
//! which also records its name, type and labels: the operations doc is
//! checked against that record, labelled metrics without samples included.

use std::sync::Arc;

use parking_lot::Mutex;

use prometheus::core::Collector;
use prometheus::{
    Encoder, Gauge, GaugeVec, Histogram, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec,
    Opts, Registry, TextEncoder,
};
use serde::Serialize;

/// The registry of one service: its metrics, and what each is.
#[derive(Clone)]
pub struct MetricRegistry {
    registry: Registry,
    prefix: String,
    described: Arc<Mutex<Vec<Described>>>,
}

/// One registered metric as the operations doc lists it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Described {
    /// With the service prefix: `cincinnati_gb_graph_final_releases`.
    pub name: String,
    pub kind: MetricKind,
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricKind {
    Counter,
    Gauge,
    Histogram,
}

/// A metric type [`MetricRegistry::add`] takes.
pub trait Metric: Collector + Clone + 'static {
    const KIND: MetricKind;
}

macro_rules! metric_kinds {
    ($($kind:ident: $($metric:ty),+;)+) => {
        $($(impl Metric for $metric {
            const KIND: MetricKind = MetricKind::$kind;
        })+)+
    };
}

metric_kinds! {
    Counter: IntCounter, IntCounterVec;
    Gauge: IntGauge, IntGaugeVec, Gauge, GaugeVec;
    Histogram: Histogram, HistogramVec;
}

impl MetricRegistry {
    /// A registry whose metric names all start with `{prefix}_`.
    pub fn new(prefix: &str) -> prometheus::Result<Self> {
        Ok(Self {
            registry: Registry::new_custom(Some(prefix.to_owned()), None)?,
            prefix: prefix.to_owned(),
            described: Arc::default(),
        })
    }

    /// Registers `metric` and returns it, for the struct that keeps it.
    pub fn add<M: Metric>(&self, metric: M) -> prometheus::Result<M> {
        self.registry.register(Box::new(metric.clone()))?;
        let mut described = self.described.lock();
        described.extend(metric.desc().into_iter().map(|desc| Described {
            name: format!("{}_{}", self.prefix, desc.fq_name),
            kind: M::KIND,
            labels: desc.variable_labels.clone(),
        }));
        Ok(metric)
    }

    /// Every metric registered, sorted by name.
    pub fn described(&self) -> Vec<Described> {
        let mut described = self.described.lock().clone();
        described.sort();
        described
    }

    pub fn prometheus(&self) -> &Registry {
        &self.registry
    }

    /// The registry in the Prometheus text format (version 0.0.4).
    pub fn encode(&self) -> Vec<u8> {
        let mut text = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut text)
            .expect("encoding gathered metrics into memory cannot fail");
        text
    }

    /// `build_info{git_commit}`, a counter set to 1 as upstream does.
    pub fn add_build_info(&self, git_commit: &str) -> prometheus::Result<()> {
        let build_info = self.add(IntCounterVec::new(
            Opts::new("build_info", "Build information of this service"),
            &["git_commit"],
        )?)?;
        build_info.with_label_values(&[git_commit]).inc();
        Ok(())
    }
}

/// A service's own metrics, made and registered in one place.
pub trait ServiceMetrics: Clone + Send + Sync + 'static {
    fn register(registry: &MetricRegistry) -> prometheus::Result<Self>;
}

/// The content type of [`MetricRegistry::encode`]'s output.
pub const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_prefix_exactly_and_every_metric_is_described() {
        let registry = MetricRegistry::new("cincinnati_pe").unwrap();
        registry.add_build_info("abc123").unwrap();
        registry
            .add(IntGaugeVec::new(Opts::new("source_up", "up"), &["source"]).unwrap())
            .unwrap();
        let text = String::from_utf8(registry.encode()).unwrap();
        assert!(
            text.contains("cincinnati_pe_build_info{git_commit=\"abc123\"} 1"),
            "{text}"
        );
        assert!(!text.contains("source_up"), "no sample yet: {text}");
        assert_eq!(
            registry.described(),
            [
                Described {
                    name: "cincinnati_pe_build_info".to_owned(),
                    kind: MetricKind::Counter,
                    labels: vec!["git_commit".to_owned()],
                },
                Described {
                    name: "cincinnati_pe_source_up".to_owned(),
                    kind: MetricKind::Gauge,
                    labels: vec!["source".to_owned()],
                },
            ]
        );
    }

    #[test]
    fn a_name_registered_twice_is_refused() {
        let registry = MetricRegistry::new("cincinnati_test").unwrap();
        registry
            .add(IntCounter::new("requests_total", "a").unwrap())
            .unwrap();
        assert!(
            registry
                .add(IntCounter::new("requests_total", "b").unwrap())
                .is_err()
        );
    }
}
