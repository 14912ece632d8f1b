//! The metric names the operations kit uses, for each service's `ops_kit.rs`
//! test (included there with `#[path]`): the expressions of the
//! PrometheusRule (`deploy/kubernetes/base/monitoring/prometheusrule.yaml`),
//! the series and expressions of its unit tests (`alerts.test.yaml`, beside
//! this file) and the expressions of the Grafana dashboard
//! (`cincinnati-dashboard.json`). Each service's test asserts that every name
//! with its prefix is a metric it registers, so a renamed metric fails the
//! build until the alerts, their tests and the dashboard follow it.
//! `ops_kit.py` (check-deploy) checks the same files against
//! docs/operations.md's metric tables and the names of other exporters.
//!
//! The rule for a name: every identifier (`[A-Za-z_:][A-Za-z0-9_:]*`) of an
//! expression, a series or a template query that starts with the service's
//! prefix (`cincinnati_gb_`, `cincinnati_pe_`, `cincinnati_mh_`) or with
//! `process_`, wherever it stands. PromQL has no function, keyword or label
//! name that starts so, and the kit selects no metric by `__name__`, so each
//! such identifier is a metric name. A histogram's `_bucket`, `_sum` and
//! `_count` series are its own name.

use std::collections::BTreeSet;

use serde_json::Value;
use service_kit::metrics::{Described, MetricKind};

const RULE: &str = include_str!("../kubernetes/base/monitoring/prometheusrule.yaml");
const RULE_TESTS: &str = include_str!("alerts.test.yaml");
const DASHBOARD: &str = include_str!("../kubernetes/base/monitoring/cincinnati-dashboard.json");

/// The keys whose string values are PromQL or series: expressions (rules,
/// tests, panels), input series, template variable queries.
const QUERY_KEYS: [&str; 4] = ["expr", "series", "query", "definition"];

/// The names with `prefix` the kit uses, by where: (rules and their tests,
/// dashboard).
pub struct Used {
    pub alerts: BTreeSet<String>,
    pub dashboard: BTreeSet<String>,
}

/// Asserts that every metric with `prefix` (or `process_`) the kit names is
/// one of `registered`; returns what it names.
pub fn assert_registered(prefix: &str, registered: &[Described]) -> Used {
    let rule: Value = openshift_graph_data::yaml::parse(RULE).expect("prometheusrule.yaml is YAML");
    let tests: Value = openshift_graph_data::yaml::parse(RULE_TESTS).expect("alerts.test.yaml is YAML");
    let dashboard: Value = serde_json::from_str(DASHBOARD).expect("cincinnati-dashboard.json is JSON");
    let used = Used {
        alerts: [names(&rule, prefix), names(&tests, prefix)]
            .concat()
            .into_iter()
            .collect(),
        dashboard: names(&dashboard, prefix).into_iter().collect(),
    };
    assert!(
        !used.alerts.is_empty() && !used.dashboard.is_empty(),
        "the alerts and the dashboard name no {prefix} metric: is the rule above still right?"
    );
    let unknown: Vec<&String> = used
        .alerts
        .iter()
        .chain(&used.dashboard)
        .filter(|name| !is_registered(name, registered))
        .collect();
    assert!(
        unknown.is_empty(),
        "the operations kit (prometheusrule.yaml, alerts.test.yaml, cincinnati-dashboard.json) names metrics \
         the service does not register: {unknown:?}"
    );
    used
}

/// The names with `prefix` in the query strings anywhere in `document`.
fn names(document: &Value, prefix: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![document];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    match value {
                        Value::String(text) if QUERY_KEYS.contains(&key.as_str()) => found.extend(
                            identifiers(text)
                                .filter(|name| name.starts_with(prefix) || name.starts_with("process_")),
                        ),
                        _ => stack.push(value),
                    }
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    found
}

/// The identifiers of a PromQL text, numbers left out.
fn identifiers(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|word| word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == ':'))
        .map(str::to_owned)
}

fn is_registered(name: &str, registered: &[Described]) -> bool {
    registered.iter().any(|metric| {
        metric.name == name
            || metric.kind == MetricKind::Histogram
                && ["_bucket", "_sum", "_count"]
                    .iter()
                    .any(|suffix| name.strip_suffix(suffix) == Some(metric.name.as_str()))
    })
}
