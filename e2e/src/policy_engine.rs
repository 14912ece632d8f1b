//! Policy-engine processes: engine A chained to an upstream graph (a
//! graph-builder, or anything serving its format), and engine B — the
//! in-cluster engine clusters ask — chained to A.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, ensure};

use crate::client_graph::ClientGraph;
use crate::graph_builder::{PATH_PREFIX, REFRESH_INTERVAL_SECS};
use crate::http::{self, Answer};
use crate::poll;
use crate::process::{ServiceCommand, ServiceProcess};

/// The media type clusters ask for.
const JSON: &str = "application/json";

/// Two chained engines; clients ask B.
pub struct EngineChain {
    /// Fetches the full graph from the upstream.
    pub engine_a: ServiceProcess,
    /// Fetches each client's (channel, arch) view from A.
    pub engine_b: ServiceProcess,
    http: reqwest::Client,
}

impl EngineChain {
    /// Starts A on `upstream_graph_url`, then B on A, each once ready.
    pub async fn start(workdir: &Path, upstream_graph_url: &str) -> anyhow::Result<Self> {
        Self::start_with(workdir, upstream_graph_url, &[]).await
    }

    /// [`EngineChain::start`], both engines with more flags.
    pub async fn start_with(
        workdir: &Path,
        upstream_graph_url: &str,
        flags: &[&str],
    ) -> anyhow::Result<Self> {
        let engine_a = start_with(workdir, "a", upstream_graph_url, flags).await?;
        let engine_b = start_with(workdir, "b", &graph_url(&engine_a), flags).await?;
        Ok(Self {
            engine_a,
            engine_b,
            http: reqwest::Client::new(),
        })
    }

    /// B's graph URL, the one clusters are configured with.
    pub fn graph_url(&self) -> String {
        graph_url(&self.engine_b)
    }

    /// B's answer to a cluster asking for `channel` and `arch`.
    pub async fn answer(&self, channel: &str, arch: &str, accept: Option<&str>) -> anyhow::Result<Answer> {
        let url = format!("{}?channel={channel}&arch={arch}", self.graph_url());
        http::get(&self.http, &url, accept).await
    }

    /// What B serves a cluster asking for `channel` and `arch`.
    pub async fn served(&self, channel: &str, arch: &str) -> anyhow::Result<ClientGraph> {
        let document = self.answer(channel, arch, Some(JSON)).await?.json()?;
        ClientGraph::from_served(&document).with_context(|| format!("B's graph for {channel}/{arch}"))
    }

    /// Waits until B serves `expected` for `channel` and `arch`, and returns
    /// how long that took.
    pub async fn await_graph(
        &self,
        channel: &str,
        arch: &str,
        expected: &ClientGraph,
    ) -> anyhow::Result<Duration> {
        let what = format!("B to serve the expected {channel}/{arch} graph");
        let (_, elapsed) = poll::until(&what, poll::CHANGE_TIMEOUT, || async {
            let served = self.served(channel, arch).await?;
            ensure!(served == *expected, "{}", served.difference_from(expected));
            Ok(())
        })
        .await?;
        Ok(elapsed)
    }

    /// Checks, again and again for `window`, that B keeps serving each
    /// `(channel, arch, expected graph)`.
    pub async fn assert_steady(
        &self,
        views: &[(&str, &str, ClientGraph)],
        window: Duration,
    ) -> anyhow::Result<()> {
        poll::throughout("B serving the same graphs", window, || async {
            for (channel, arch, expected) in views {
                let served = self.served(channel, arch).await?;
                ensure!(
                    served == *expected,
                    "B's {channel}/{arch} graph changed:\n{}",
                    served.difference_from(expected)
                );
            }
            Ok(())
        })
        .await
    }
}

/// `http://<api>/api/upgrades_info/graph`.
pub fn graph_url(service: &ServiceProcess) -> String {
    service.api_url(&format!("{PATH_PREFIX}/graph"))
}

/// Writes `policy-engine-<id>.toml` in `workdir`, starts an engine with it
/// (fetching `upstream_graph_url` every second) and waits until it is ready.
pub async fn start(workdir: &Path, id: &str, upstream_graph_url: &str) -> anyhow::Result<ServiceProcess> {
    start_with(workdir, id, upstream_graph_url, &[]).await
}

/// [`start`] with more command-line flags (`--upstream.cincinnati.timeout_secs 3`, say).
pub async fn start_with(
    workdir: &Path,
    id: &str,
    upstream_graph_url: &str,
    flags: &[&str],
) -> anyhow::Result<ServiceProcess> {
    ServiceProcess::start(command(workdir, id, upstream_graph_url, flags)?).await
}

/// [`start_with`], running `program` instead of the suite's binary (a
/// build of another commit, to compare side by side).
pub async fn start_program(
    workdir: &Path,
    id: &str,
    upstream_graph_url: &str,
    flags: &[&str],
    program: &Path,
) -> anyhow::Result<ServiceProcess> {
    let command = ServiceCommand {
        program: program.to_owned(),
        ..command(workdir, id, upstream_graph_url, flags)?
    };
    ServiceProcess::start(command).await
}

fn command(
    workdir: &Path,
    id: &str,
    upstream_graph_url: &str,
    flags: &[&str],
) -> anyhow::Result<ServiceCommand> {
    let name = format!("policy-engine {}", id.to_uppercase());
    let mut command = ServiceCommand::configured(
        workdir,
        "policy-engine",
        id,
        name,
        &config_toml(upstream_graph_url),
    )?;
    command.arguments.extend(flags.iter().map(Into::into));
    Ok(command)
}

fn config_toml(upstream_graph_url: &str) -> String {
    format!(
        r#"verbosity = "v"

[service]
address = "127.0.0.1"
port = 0
path_prefix = "{PATH_PREFIX}"
mandatory_client_parameters = ["channel"]

[status]
address = "127.0.0.1"
port = 0

[upstream.cincinnati]
url = "{upstream_graph_url}"
interval_secs = {REFRESH_INTERVAL_SECS}
"#
    )
}
