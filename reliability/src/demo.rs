//! A graph-builder serving the bundled demo data (5,743 releases and the
//! 2026 graph-data; the e2e harness's offline graph-builder), and the chain
//! of engines behind it, for scenarios that need present-day-sized answers
//! rather than the e2e scenario's.

use std::path::{Path, PathBuf};

use e2e::policy_engine;
use e2e::process::ServiceProcess;

/// The repository's `testdata/`.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

/// The view clients of the demo ask most: 176 KB of JSON.
pub const CHANNEL: &str = "stable-4.18";

/// Starts a graph-builder on the demo releases and the graph-data in
/// `graph_data` (re-read every second, so a scenario can change it), with
/// its configuration and log in `workdir`, and waits until it is ready.
pub async fn graph_builder(workdir: &Path, graph_data: &Path) -> anyhow::Result<ServiceProcess> {
    let releases = testdata().join("demo/releases.json.gz");
    e2e::graph_builder::start_offline(workdir, &releases, graph_data).await
}

/// A graph-builder on the demo data, engine A on it and engine B on A: the
/// production chain, clients asking B.
pub struct Chain {
    pub graph_builder: ServiceProcess,
    pub engine_a: ServiceProcess,
    pub engine_b: ServiceProcess,
}

impl Chain {
    /// Starts the chain in `workdir` with the graph-data in `graph_data`.
    pub async fn start(workdir: &Path, graph_data: &Path) -> anyhow::Result<Self> {
        Self::start_with(workdir, graph_data, &[]).await
    }

    /// [`Chain::start`], with more command-line flags for engine B.
    pub async fn start_with(workdir: &Path, graph_data: &Path, b_flags: &[&str]) -> anyhow::Result<Self> {
        let graph_builder = graph_builder(workdir, graph_data).await?;
        let engine_a = policy_engine::start(workdir, "a", &policy_engine::graph_url(&graph_builder)).await?;
        let engine_b =
            policy_engine::start_with(workdir, "b", &policy_engine::graph_url(&engine_a), b_flags).await?;
        Ok(Self {
            graph_builder,
            engine_a,
            engine_b,
        })
    }
}

/// `{engine}/api/upgrades_info/graph?channel=…&arch=amd64`.
pub fn answer_url(engine: &ServiceProcess, channel: &str) -> String {
    format!(
        "{}?channel={channel}&arch=amd64",
        e2e::policy_engine::graph_url(engine)
    )
}
