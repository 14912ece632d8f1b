//! The operations kit (deploy/kubernetes/base/monitoring: the
//! PrometheusRule's alerts, their promtool tests, the Grafana dashboard)
//! names only metrics the graph-builder registers: a renamed metric fails
//! here until the kit follows. The rule for what is a name is in
//! deploy/check/kit_metrics.rs; the other services' twins are their
//! `ops_kit.rs` tests.

#[path = "../../../deploy/check/kit_metrics.rs"]
mod kit_metrics;

#[tokio::test]
async fn the_operations_kit_names_only_metrics_the_graph_builder_registers() {
    let application = crate::support::every_metric::graph_builder_with_every_metric();
    let used = kit_metrics::assert_registered("cincinnati_gb_", &application.metrics().described());
    // Upstream's SLI dashboard queries it: the dashboard keeps it.
    assert!(
        used.dashboard
            .contains("cincinnati_gb_graph_last_successful_refresh_timestamp")
    );
}
