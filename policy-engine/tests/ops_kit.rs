//! The operations kit (deploy/kubernetes/base/monitoring: the
//! PrometheusRule's alerts, their promtool tests, the Grafana dashboard)
//! names only metrics the policy-engine registers: a renamed metric fails
//! here until the kit follows. The rule for what is a name is in
//! deploy/check/kit_metrics.rs; the other services' twins are their
//! tests/ops_kit.rs.

mod every_metric;
#[path = "../../deploy/check/kit_metrics.rs"]
mod kit_metrics;

#[tokio::test]
async fn the_operations_kit_names_only_metrics_the_policy_engine_registers() {
    let (engine, _dir) = every_metric::engine_with_every_metric();
    let used = kit_metrics::assert_registered("cincinnati_pe_", &engine.metrics().described());
    // Upstream's SLI dashboard queries it: the dashboard keeps it.
    assert!(
        used.dashboard
            .contains("cincinnati_pe_graph_incoming_requests_total")
    );
}
