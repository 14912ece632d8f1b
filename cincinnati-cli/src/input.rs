//! Where commands read from: the service or file the common flags name,
//! other documents named on the command line, and graph-data.

use std::sync::OnceLock;
use std::time::Duration;

use anyhow::anyhow;
use cincinnati_client::explain::ExplainGraphData;
use cincinnati_client::fetch::graph_data_files;
use cincinnati_client::{Fetcher, Query, Source, UpdateGraph};
use openshift_graph_data::{GraphData, Strictness};

use crate::cli::Common;
use crate::outcome::{Failure, FailureKind};

/// Who asks, in every request.
pub const USER_AGENT: &str = concat!("cincinnati/", env!("CARGO_PKG_VERSION"));

/// How long one request may take: a full graph is megabytes.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Input {
    /// Made when a URL is first asked: setting up TLS takes longer than
    /// answering from a file.
    http: OnceLock<reqwest::Client>,
    /// `--graph`, else `--url`.
    pub fetcher: Fetcher,
    pub arch: String,
}

impl Input {
    pub fn new(common: &Common) -> Result<Self, Failure> {
        let source = match &common.graph {
            Some(path) => Source::File(path.clone()),
            None => Source::parse(&common.url)?,
        };
        let http = OnceLock::new();
        let fetcher = Fetcher::new(source, || client(&http));
        Ok(Self {
            http,
            fetcher,
            arch: common.arch.clone(),
        })
    }

    /// A fetcher for a file or URL named on the command line.
    pub fn fetcher_for(&self, location: &str) -> Result<Fetcher, Failure> {
        Ok(Fetcher::new(Source::parse(location)?, || client(&self.http)))
    }

    /// What a cluster of `--arch` sends, without channel, ID or version.
    pub fn query(&self) -> Query<'_> {
        Query::arch(&self.arch)
    }

    /// The graph holding `channels` (a full graph when none are named).
    pub async fn graph(
        &self,
        fetcher: &Fetcher,
        query: &Query<'_>,
        channels: &[String],
    ) -> Result<UpdateGraph, Failure> {
        let documents = fetcher.channels(query, channels).await?;
        Ok(UpdateGraph::build(&self.arch, &documents))
    }

    /// The full graph of `fetcher` (or its `channels`), read on a task of
    /// its own: graphs from files are parsed side by side.
    pub fn graph_in_background(
        &self,
        fetcher: Fetcher,
        channels: Vec<String>,
    ) -> impl Future<Output = Result<UpdateGraph, Failure>> + use<> {
        let arch = self.arch.clone();
        let task = tokio::spawn(async move {
            let query = Query::arch(&arch);
            let documents = fetcher.channels(&query, &channels).await?;
            Ok(UpdateGraph::build(&arch, &documents))
        });
        async move { joined(task.await) }
    }

    /// Validated graph-data from a directory, a tarball or a URL, read on a
    /// task of its own (beside the graph it explains).
    pub fn graph_data_in_background(
        &self,
        location: &str,
    ) -> impl Future<Output = Result<ExplainGraphData, Failure>> + use<> {
        let location = location.to_owned();
        let local = matches!(Source::parse(&location), Ok(Source::File(_)));
        let http = (!local).then(|| client(&self.http));
        let task = tokio::spawn(async move {
            let files = graph_data_files(&location, || http.expect("a client for a URL")).await?;
            GraphData::load(&files, &Strictness::default())
                .map(|loaded| ExplainGraphData {
                    rules: loaded.graph_data,
                    files,
                })
                .map_err(|refused| Failure {
                    kind: if local {
                        FailureKind::Input
                    } else {
                        FailureKind::Service
                    },
                    error: anyhow!("graph-data {location}: {refused}"),
                })
        });
        async move { joined(task.await) }
    }
}

/// The HTTP client, made on first use.
fn client(made: &OnceLock<reqwest::Client>) -> reqwest::Client {
    made.get_or_init(|| {
        reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .timeout(REQUEST_TIMEOUT)
            .build()
            // Fails only when no TLS backend can start, and so would the
            // default client, panicking with the reason.
            .unwrap_or_default()
    })
    .clone()
}

/// What a task returned; a task that panicked panics here too.
pub fn joined<T>(result: Result<T, tokio::task::JoinError>) -> T {
    match result {
        Ok(value) => value,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    }
}
