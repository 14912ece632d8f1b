//! An engine with every metric registered: with a fleet store and rollout
//! control, whose metrics exist only with them. Shared by the tests that
//! check the metrics against docs/operations.md and the operations kit.

use policy_engine::Application;
use policy_engine::settings::Settings;

/// The engine (built, not running) and the directory its files are in.
pub fn engine_with_every_metric() -> (Application, tempfile::TempDir) {
    let mut settings = Settings::default();
    settings.service.api.port = 0;
    settings.status.port = 0;
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
    (Application::build(&settings).unwrap(), dir)
}
