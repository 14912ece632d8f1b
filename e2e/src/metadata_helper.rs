//! Metadata-helper processes, configured as an operator would: signatures
//! followed from the graph-builder's graph-data tarball, or read from a
//! graph-data directory's `signatures/` (upstream's shape).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::graph_builder::{PATH_PREFIX, REFRESH_INTERVAL_SECS};
use crate::process::{ServiceCommand, ServiceProcess};

/// Where a helper takes its signatures from.
#[derive(Debug, Clone)]
pub enum SignatureSource {
    /// `{prefix}/graph-data` of this graph-builder, followed every refresh
    /// interval.
    GraphDataTarball(String),
    /// A signature tree on disk.
    Directory(PathBuf),
}

impl SignatureSource {
    /// The graph-data tarball `graph_builder` publishes.
    pub fn tarball_of(graph_builder: &ServiceProcess) -> anyhow::Result<Self> {
        let url = graph_builder
            .public_url(&format!("{PATH_PREFIX}/graph-data"))
            .context("the graph-builder has no graph-data port")?;
        Ok(Self::GraphDataTarball(url))
    }

    fn toml(&self, work_dir: &Path) -> String {
        match self {
            SignatureSource::GraphDataTarball(url) => format!(
                "graph_data_url = \"{url}\"\ninterval_secs = {REFRESH_INTERVAL_SECS}\nwork_dir = \"{}\"\n",
                work_dir.display()
            ),
            SignatureSource::Directory(dir) => format!("dir = \"{}\"\n", dir.display()),
        }
    }
}

/// Writes `metadata-helper-<id>.toml` and starts the helper with it, once
/// it has a signature set.
pub async fn start(workdir: &Path, id: &str, source: &SignatureSource) -> anyhow::Result<ServiceProcess> {
    let unpacked = workdir.join(format!("metadata-helper-{id}"));
    let config = config_toml(&source.toml(&unpacked));
    let command = ServiceCommand::configured(
        workdir,
        "metadata-helper",
        id,
        format!("metadata-helper {id}"),
        &config,
    )?;
    ServiceProcess::start(command).await
}

/// The signature store URL a cluster is configured with.
pub fn store_url(helper: &ServiceProcess) -> String {
    helper.api_url(&format!("{PATH_PREFIX}/signatures"))
}

fn config_toml(signatures: &str) -> String {
    format!(
        r#"verbosity = "v"

[service]
address = "127.0.0.1"
port = 0
path_prefix = "{PATH_PREFIX}"

[status]
address = "127.0.0.1"
port = 0

[signatures]
{signatures}"#
    )
}
