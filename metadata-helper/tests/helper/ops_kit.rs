//! The operations kit (deploy/kubernetes/base/monitoring: the
//! PrometheusRule's alerts, their promtool tests, the Grafana dashboard)
//! names only metrics the metadata-helper registers: a renamed metric fails
//! here until the kit follows. The rule for what is a name is in
//! deploy/check/kit_metrics.rs; the other services' twins are their
//! `ops_kit.rs` tests.

#[path = "../../../deploy/check/kit_metrics.rs"]
mod kit_metrics;

#[tokio::test]
async fn the_operations_kit_names_only_metrics_the_metadata_helper_registers() {
    let (helper, _signatures) = crate::support::every_metric::helper_with_every_metric();
    kit_metrics::assert_registered("cincinnati_mh_", &helper.metrics().described());
}
