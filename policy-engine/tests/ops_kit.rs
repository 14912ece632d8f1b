//! The operations kit (deploy/kubernetes/base/monitoring: the
//! PrometheusRule's alerts, their promtool tests, the Grafana dashboard)
//! names only metrics the policy-engine registers: a renamed metric fails
//! here until the kit follows. The rule for what is a name is in
//! deploy/check/kit_metrics.rs; the other services' twins are their
//! tests/ops_kit.rs.

#[path = "../../deploy/check/kit_metrics.rs"]
mod kit_metrics;

use policy_engine::Application;
use policy_engine::settings::Settings;

#[tokio::test]
async fn the_operations_kit_names_only_metrics_the_policy_engine_registers() {
    let mut settings = Settings::default();
    settings.service.api.port = 0;
    settings.status.port = 0;
    // With a fleet store and rollout control, so that their metrics are
    // registered too.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.yaml"), "groups: {}\n").unwrap();
    std::fs::write(dir.path().join("tokens"), "ops a-token\n").unwrap();
    settings.cluster_policy.file = Some(dir.path().join("policy.yaml"));
    settings.rollouts.token_file = Some(dir.path().join("tokens"));
    settings.fleet.store = Some(
        format!("sqlite://{}", dir.path().join("fleet.db").display())
            .parse()
            .unwrap(),
    );
    let engine = Application::build(&settings).unwrap();
    let used = kit_metrics::assert_registered("cincinnati_pe_", &engine.metrics().described());
    // Upstream's SLI dashboard queries it: the dashboard keeps it.
    assert!(
        used.dashboard
            .contains("cincinnati_pe_graph_incoming_requests_total")
    );
}
