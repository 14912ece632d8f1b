//! A stack without a registry: a graph-builder on a release file and a
//! graph-data directory (the bundled demo's data by default), and engines A
//! and B chained behind it. For tests of clients of the services.

use std::path::Path;

use crate::graph_builder::{self, PATH_PREFIX};
use crate::policy_engine::{self, EngineChain};
use crate::process::ServiceProcess;
use crate::workdir::Workdir;

pub struct OfflineStack {
    pub graph_builder: ServiceProcess,
    pub engines: EngineChain,
    /// Last: the processes stop before their files go.
    workdir: Workdir,
}

impl OfflineStack {
    /// Starts the graph-builder on `releases` and `graph_data`, then the
    /// engines, each once the previous one is ready.
    pub async fn start(releases: &Path, graph_data: &Path) -> anyhow::Result<Self> {
        let workdir = Workdir::new()?;
        let graph_builder = graph_builder::start_offline(workdir.path(), releases, graph_data).await?;
        let engines = EngineChain::start(workdir.path(), &policy_engine::graph_url(&graph_builder)).await?;
        Ok(Self {
            graph_builder,
            engines,
            workdir,
        })
    }

    /// The graph-builder's full graph: `http://…/api/upgrades_info/graph`.
    pub fn full_graph_url(&self) -> String {
        policy_engine::graph_url(&self.graph_builder)
    }

    /// The graph-data the graph-builder publishes (its public port).
    pub fn graph_data_url(&self) -> String {
        self.graph_builder
            .public_url(&format!("{PATH_PREFIX}/graph-data"))
            .expect("the graph-builder has a public port")
    }

    pub fn workdir(&self) -> &Path {
        self.workdir.path()
    }
}
