//! Where commands read from: the service or file the common flags name,
//! other documents named on the command line, and graph-data.

use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use cincinnati_client::explain::ExplainGraphData;
use cincinnati_client::fetch::{MAX_DOCUMENT_BYTES, document_client, graph_data_files, tarball_client};
use cincinnati_client::{FetchError, Fetcher, Query, Source, UpdateGraph};
use http_fetch::{ExtraRoots, HttpClient, Method, Request, Response, Url};
use openshift_graph_data::{GraphData, Strictness};

use crate::cli::Common;
use crate::outcome::{Failure, FailureKind};

/// Who asks, in every request.
pub const USER_AGENT: &str = concat!("cincinnati/", env!("CARGO_PKG_VERSION"));

/// How long one request may take: a full graph is megabytes.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Input {
    http: Clients,
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
        let http = Clients::new(extra_roots(common)?);
        let fetcher = Fetcher::new(source, || http.documents());
        Ok(Self {
            http,
            fetcher,
            arch: common.arch.clone(),
        })
    }

    /// A fetcher for a file or URL named on the command line.
    pub fn fetcher_for(&self, location: &str) -> Result<Fetcher, Failure> {
        Ok(Fetcher::new(Source::parse(location)?, || self.http.documents()))
    }

    /// What a cluster of `--arch` sends, without channel, ID or version.
    pub fn query(&self) -> Query<'_> {
        Query::arch(&self.arch)
    }

    /// The documents' HTTP client, for JSON requests beside the graph's.
    pub fn http(&self) -> HttpClient {
        self.http.documents()
    }

    /// `method` `url` (a bodiless GET, POST or PUT) with `bearer` as its
    /// token, the answer whatever its status; `what` names the span.
    pub async fn send_with_token(
        &self,
        what: &'static str,
        method: Method,
        url: &Url,
        bearer: Option<&str>,
    ) -> Result<Response, Failure> {
        let mut request = Request::get(what, url, MAX_DOCUMENT_BYTES)
            .with_method(method)
            .accept("application/json");
        if let Some(token) = bearer {
            request = request.bearer(token);
        }
        Ok(self.http().send(request).await.map_err(FetchError::Request)?)
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
        let http = (!local).then(|| self.http.tarballs());
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

/// `--cacert`: CAs to trust besides the system's.
pub fn extra_roots(common: &Common) -> Result<ExtraRoots, Failure> {
    let Some(path) = &common.cacert else {
        return Ok(ExtraRoots::EMPTY);
    };
    let pem = std::fs::read_to_string(path)
        .with_context(|| format!("reading --cacert {}", path.display()))
        .map_err(Failure::input)?;
    ExtraRoots::from_pem(&path.display().to_string(), &pem).map_err(Failure::input)
}

/// The HTTP clients, each made on first use: setting up TLS takes longer
/// than answering from a file.
struct Clients {
    roots: ExtraRoots,
    documents: OnceLock<HttpClient>,
    tarballs: OnceLock<HttpClient>,
}

impl Clients {
    fn new(roots: ExtraRoots) -> Self {
        Self {
            roots,
            documents: OnceLock::new(),
            tarballs: OnceLock::new(),
        }
    }

    fn documents(&self) -> HttpClient {
        made(&self.documents, || {
            document_client(USER_AGENT, REQUEST_TIMEOUT, self.roots.clone())
        })
    }

    fn tarballs(&self) -> HttpClient {
        made(&self.tarballs, || {
            tarball_client(USER_AGENT, REQUEST_TIMEOUT, self.roots.clone())
        })
    }
}

fn made(
    client: &OnceLock<HttpClient>,
    make: impl FnOnce() -> Result<HttpClient, http_fetch::ClientError>,
) -> HttpClient {
    client
        // Fails only when no TLS backend can start (the certificates were
        // checked when read), and then no request could be made at all.
        .get_or_init(|| make().unwrap_or_else(|error| panic!("{error}")))
        .clone()
}

/// What a task returned; a task that panicked panics here too.
pub fn joined<T>(result: Result<T, tokio::task::JoinError>) -> T {
    match result {
        Ok(value) => value,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    }
}
