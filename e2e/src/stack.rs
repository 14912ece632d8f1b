//! The whole system for one test: a registry with the standard scenario
//! pushed, the graph-builder scraping it, and engines A and B chained
//! behind it. Everything stops when the stack is dropped.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use registry_testkit::LocalRegistry;
use release_images::{Image, PushOptions, Pushable, Pusher};

use crate::client_graph::ClientGraph;
use crate::expected;
use crate::graph_builder::{self, GraphBuilderOptions, REFRESH_INTERVAL_SECS};
use crate::graph_data::{GRAPH_DATA_REPOSITORY, GRAPH_DATA_TAG, GraphData};
use crate::policy_engine::{self, EngineChain};
use crate::process::ServiceProcess;
use crate::releases::{self, PushedRelease, RELEASE_REPOSITORY, Release};
use crate::scenario::{self, Published};
use crate::workdir::Workdir;

/// The hops a change travels: registry → graph-builder → A → B.
const HOPS: u64 = 3;

/// One refresh interval per hop: the time after which a change (or a
/// failure) anywhere has reached B.
pub const ONE_REFRESH_PER_HOP: Duration = Duration::from_secs(REFRESH_INTERVAL_SECS * HOPS);

pub struct Stack {
    pub graph_builder: ServiceProcess,
    pub engines: EngineChain,
    pub registry: LocalRegistry,
    pusher: Pusher,
    http: reqwest::Client,
    published: Published,
    graph_data_pushes: usize,
    /// Last: the processes stop before their files go.
    workdir: Workdir,
}

impl Stack {
    /// Starts a registry, pushes the standard scenario, and starts the
    /// graph-builder and both engines, each once the previous one is ready.
    pub async fn start(options: GraphBuilderOptions) -> anyhow::Result<Self> {
        let workdir = Workdir::new()?;
        let registry = LocalRegistry::start().await.context("starting the registry")?;
        let pusher = Pusher::new(&registry.url(), PushOptions::default())?;
        let http = reqwest::Client::new();
        let releases = releases::push(&pusher, &scenario::releases())
            .await
            .context("pushing the standard releases")?;
        let graph_data = scenario::graph_data();
        push_graph_data_image(&pusher, workdir.path(), 0, &graph_data).await?;
        let published = Published { releases, graph_data };

        let graph_builder = graph_builder::start(workdir.path(), &registry.url(), &options).await?;
        let interval = options.pause_secs().to_string();
        let engines = EngineChain::start_with(
            workdir.path(),
            &policy_engine::graph_url(&graph_builder),
            &["--upstream.cincinnati.interval_secs", &interval],
        )
        .await?;
        Ok(Self {
            graph_builder,
            engines,
            registry,
            pusher,
            http,
            published,
            graph_data_pushes: 1,
            workdir,
        })
    }

    pub fn published(&self) -> &Published {
        &self.published
    }

    /// The graph B should serve for `channel` and `arch`, from what was published.
    pub fn expected(&self, channel: &str, arch: &str) -> ClientGraph {
        expected::client_graph(&self.published, channel, arch)
    }

    /// Waits until B serves the expected graph for `channel` and `arch`, and
    /// returns how long that took.
    pub async fn await_expected(&self, channel: &str, arch: &str) -> anyhow::Result<Duration> {
        self.engines
            .await_graph(channel, arch, &self.expected(channel, arch))
            .await
    }

    /// Waits until B serves the expected graph of each `(channel, arch)`.
    pub async fn await_all_expected(&self, views: &[(&str, &str)]) -> anyhow::Result<()> {
        for &(channel, arch) in views {
            self.await_expected(channel, arch).await?;
        }
        Ok(())
    }

    /// Checks, again and again for `window`, that B keeps serving the
    /// expected graph of each `(channel, arch)`.
    pub async fn assert_steady(&self, views: &[(&str, &str)], window: Duration) -> anyhow::Result<()> {
        let expected: Vec<_> = views
            .iter()
            .map(|&(channel, arch)| (channel, arch, self.expected(channel, arch)))
            .collect();
        self.engines.assert_steady(&expected, window).await
    }

    /// Pushes `version` for every architecture and waits until B serves it
    /// in the candidate channel: changes travel the whole chain.
    pub async fn assert_a_new_release_arrives(&mut self, version: &str) -> anyhow::Result<()> {
        self.push_releases(&scenario::new_releases(version, &["4.17.1"]))
            .await?;
        let views = scenario::ARCHITECTURES.map(|arch| (scenario::CANDIDATE, arch));
        self.await_all_expected(&views).await
    }

    /// Pushes releases the services should pick up.
    pub async fn push_releases(&mut self, releases: &[Release]) -> anyhow::Result<Vec<PushedRelease>> {
        let pushed = releases::push(&self.pusher, releases).await?;
        self.published.releases.extend(pushed.iter().cloned());
        Ok(pushed)
    }

    /// Pushes an image to the release repository that is not a release the
    /// services should serve (a broken one, say).
    pub async fn push_non_release(&self, tag: &str, image: impl Into<Pushable>) -> anyhow::Result<()> {
        self.pusher.push(RELEASE_REPOSITORY, tag, image).await?;
        Ok(())
    }

    /// Pushes graph-data the services should apply.
    pub async fn push_graph_data(&mut self, graph_data: &GraphData) -> anyhow::Result<()> {
        self.push_refused_graph_data(graph_data).await?;
        self.published.graph_data = graph_data.clone();
        Ok(())
    }

    /// Pushes graph-data the services should refuse: what they serve is
    /// expected not to change.
    pub async fn push_refused_graph_data(&mut self, graph_data: &GraphData) -> anyhow::Result<()> {
        push_graph_data_image(
            &self.pusher,
            self.workdir.path(),
            self.graph_data_pushes,
            graph_data,
        )
        .await?;
        self.graph_data_pushes += 1;
        Ok(())
    }

    /// The test's directory (configurations, logs, graph-data trees).
    pub fn workdir(&self) -> &Path {
        self.workdir.path()
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }
}

/// Writes `graph_data` to `graph-data-<number>/` in the work directory (kept
/// for a failed test) and pushes that tree as the graph-data image.
async fn push_graph_data_image(
    pusher: &Pusher,
    workdir: &Path,
    number: usize,
    graph_data: &GraphData,
) -> anyhow::Result<()> {
    let directory = workdir.join(format!("graph-data-{number}"));
    graph_data.write_to(&directory)?;
    pusher
        .push(
            GRAPH_DATA_REPOSITORY,
            GRAPH_DATA_TAG,
            Image::graph_data(&directory)?,
        )
        .await
        .context("pushing the graph-data image")?;
    Ok(())
}
