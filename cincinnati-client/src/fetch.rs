//! Reading what the rest of the crate computes on: Graph API documents,
//! from an update service (asked as a cluster asks) or from a saved file,
//! and graph-data, from a directory, a tarball or a graph-builder's
//! `{prefix}/graph-data`. The only module that does I/O.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cincinnati_core::Version;
use cincinnati_core::wire::{self, WireError};
use http_fetch::{ClientSettings, ExtraRoots, HttpClient, Request, Url};
use openshift_graph_data::{FilesError, GraphDataFiles, MAX_TARBALL_BYTES};

use crate::cluster_policy::ClusterPolicy;
use crate::document::Document;
use crate::graph::UpdateGraph;
use crate::view::{Cluster, Updates, VersionNotFound};

/// Where documents come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A Graph API endpoint (`…/graph`): a graph-builder, a policy-engine,
    /// or any service answering in their format.
    Url(Url),
    /// A saved document, gzip-compressed or not.
    File(PathBuf),
}

impl Source {
    /// An `http://` or `https://` URL, else a file path.
    pub fn parse(text: &str) -> Result<Self, FetchError> {
        if text.starts_with("http://") || text.starts_with("https://") {
            Url::parse(text)
                .map(Source::Url)
                .map_err(|error| FetchError::InvalidUrl {
                    text: text.to_owned(),
                    reason: error.to_string(),
                })
        } else {
            Ok(Source::File(PathBuf::from(text)))
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Url(url) => write!(f, "{url}"),
            Source::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// What a cluster sends with its request (the CVO sends all four).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query<'a> {
    pub arch: &'a str,
    pub channel: Option<&'a str>,
    /// The cluster's UUID.
    pub id: Option<&'a str>,
    pub version: Option<&'a Version>,
}

impl<'a> Query<'a> {
    /// What a cluster of `arch` sends, without channel, ID or version.
    pub fn arch(arch: &'a str) -> Self {
        Self {
            arch,
            channel: None,
            id: None,
            version: None,
        }
    }
}

impl Query<'_> {
    /// The query string's parameters, those given only, as the CVO sends them.
    fn parameters(&self) -> Vec<(&'static str, String)> {
        let parameters = [
            ("arch", Some(self.arch.to_owned())),
            ("channel", self.channel.map(str::to_owned)),
            ("id", self.id.map(str::to_owned)),
            ("version", self.version.map(Version::to_string)),
        ];
        parameters
            .into_iter()
            .filter_map(|(key, value)| Some((key, value?)))
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{text:?} is not a valid URL: {reason}")]
    InvalidUrl { text: String, reason: String },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{origin} is not a Graph API document: {source}")]
    Invalid {
        origin: String,
        local: bool,
        source: WireError,
    },
    /// Unreachable, or an answer over the limit.
    #[error(transparent)]
    Request(#[from] http_fetch::FetchError),
    #[error("{url} answered {status}: {body}")]
    Status { url: String, status: u16, body: String },
    #[error("{url} is not a policy-engine explanation: {source}")]
    NotAnExplanation { url: String, source: serde_json::Error },
    #[error("{url} is not a policy-engine's list of channels: {source}")]
    NotAChannelList { url: String, source: serde_json::Error },
    #[error("cannot read graph-data {origin}: {source}")]
    GraphData {
        origin: String,
        local: bool,
        source: FilesError,
    },
}

impl FetchError {
    /// Whether the fault is in local input (a file or directory), rather
    /// than a server or the network.
    pub fn is_local(&self) -> bool {
        match self {
            FetchError::InvalidUrl { .. } | FetchError::Read { .. } => true,
            FetchError::Invalid { local, .. } | FetchError::GraphData { local, .. } => *local,
            FetchError::Request(_)
            | FetchError::Status { .. }
            | FetchError::NotAnExplanation { .. }
            | FetchError::NotAChannelList { .. } => false,
        }
    }
}

/// The header an operator's tool sends with every graph request: a
/// policy-engine answers the question as the cluster's own check would be
/// answered, and does not record it as the cluster's check (the fleet, a
/// rollout's canaries and halts stay as the clusters left them). Clusters
/// never send it; an outsider leaving it out gains nothing the fleet
/// store's evidence rules do not already bound.
pub const QUESTION_HEADER: &str = "cincinnati-question";

/// The largest Graph API document read, as the policy-engine's default
/// `upstream.max_body_bytes`: the 2026 graph is about 7 MB.
pub const MAX_DOCUMENT_BYTES: usize = 128 * 1024 * 1024;

/// A client for Graph API documents: gzip asked for (a full graph shrinks
/// twentyfold), the limit applying to the inflated bytes.
pub fn document_client(
    user_agent: &str,
    timeout: Duration,
    roots: ExtraRoots,
) -> Result<HttpClient, http_fetch::ClientError> {
    client(user_agent, timeout, roots, true)
}

/// A client for graph-data tarballs: gzip files themselves, never inflated
/// in transit, whatever a server labels them.
pub fn tarball_client(
    user_agent: &str,
    timeout: Duration,
    roots: ExtraRoots,
) -> Result<HttpClient, http_fetch::ClientError> {
    client(user_agent, timeout, roots, false)
}

fn client(
    user_agent: &str,
    timeout: Duration,
    roots: ExtraRoots,
    gzip: bool,
) -> Result<HttpClient, http_fetch::ClientError> {
    HttpClient::new(ClientSettings {
        user_agent: user_agent.to_owned(),
        timeout,
        roots,
        gzip,
    })
}

/// Reads documents from one source.
#[derive(Debug, Clone)]
pub struct Fetcher {
    source: Source,
    /// For a URL only: setting up TLS takes longer than reading a file.
    http: Option<HttpClient>,
}

impl Fetcher {
    /// Reads from `source`; `http` gives the client to ask a URL with (a
    /// [`document_client`]).
    pub fn new(source: Source, http: impl FnOnce() -> HttpClient) -> Self {
        let http = matches!(source, Source::Url(_)).then(http);
        Self { source, http }
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The document a cluster sending `query` gets (a file is read as it is).
    pub async fn document(&self, query: &Query<'_>) -> Result<Document, FetchError> {
        let graph = match &self.source {
            Source::File(path) => read_graph(path)?,
            Source::Url(url) => self.ask(url, query).await?,
        };
        Ok(Document::classify(graph, query.arch, query.channel))
    }

    /// The documents holding `channels` of `query.arch` (`query.channel`
    /// is ignored): one request per channel, at once, as clusters on them
    /// would ask; a server answering the first with its full graph (a
    /// graph-builder) is asked nothing more. A file is read once, and
    /// taken to be the answer for the channel when one is asked for.
    pub async fn channels(
        &self,
        query: &Query<'_>,
        channels: &[String],
    ) -> Result<Vec<Document>, FetchError> {
        let (first, rest) = match (channels, &self.source) {
            ([single], _) => (Some(single.as_str()), &[][..]),
            (_, Source::File(_)) | ([], _) => (None, &[][..]),
            ([first, rest @ ..], Source::Url(_)) => (Some(first.as_str()), rest),
        };
        let first = self
            .document(&Query {
                channel: first,
                ..*query
            })
            .await?;
        if first.is_full() || rest.is_empty() {
            return Ok(vec![first]);
        }
        let queries: Vec<Query> = rest
            .iter()
            .map(|channel| Query {
                channel: Some(channel),
                ..*query
            })
            .collect();
        let others = futures::future::try_join_all(queries.iter().map(|query| self.document(query))).await?;
        let mut documents = vec![first];
        documents.extend(others);
        Ok(documents)
    }

    /// `GET url?arch=&channel=&id=&version=`, with `Accept: application/json`.
    async fn ask(&self, url: &Url, query: &Query<'_>) -> Result<cincinnati_core::Graph, FetchError> {
        let http = self.http.as_ref().expect("a fetcher of a URL has a client");
        let mut asked = url.clone();
        asked.query_pairs_mut().extend_pairs(query.parameters());
        let response = http
            .send(
                Request::get("graph", &asked, MAX_DOCUMENT_BYTES)
                    .accept("application/json")
                    .header(QUESTION_HEADER, "1"),
            )
            .await?;
        let asked = response.url.to_string();
        let body = successful(response)?;
        wire::parse(&body)
            .map(|document| document.graph)
            .map_err(|source| FetchError::Invalid {
                origin: asked,
                local: false,
                source,
            })
    }

    /// The channels a policy-engine serves `arch` on, from its
    /// `{prefix}/v1/channels` beside `{prefix}/graph`: an engine answers the
    /// graph one channel at a time, and lists its channels there. `None`
    /// for a file, a URL not ending in `/graph`, or a server without that
    /// route (404: upstream's engine, api.openshift.com).
    pub async fn channel_list(&self, arch: &str) -> Result<Option<ChannelList>, FetchError> {
        let Source::Url(graph_url) = &self.source else {
            return Ok(None);
        };
        let Some(prefix) = graph_url.path().strip_suffix("/graph") else {
            return Ok(None);
        };
        let mut asked = graph_url.clone();
        asked.set_path(&format!("{prefix}/v1/channels"));
        asked.set_query(None);
        asked.query_pairs_mut().append_pair("arch", arch);
        let http = self.http.as_ref().expect("a fetcher of a URL has a client");
        let response = http
            .send(Request::get("channels", &asked, MAX_DOCUMENT_BYTES).accept("application/json"))
            .await?;
        if response.status == http_fetch::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let asked = response.url.to_string();
        let body = successful(response)?;
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|source| FetchError::NotAChannelList { url: asked, source })
    }
}

/// A policy-engine's `{prefix}/v1/channels` answer: `cincinnati channels -o
/// json`'s document (`json::ChannelsJson`), read back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct ChannelList {
    pub arch: String,
    pub channels: Vec<ListedChannel>,
}

/// One channel of a [`ChannelList`]; the counts are `null` for a channel
/// known only from the channels releases name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct ListedChannel {
    pub name: String,
    pub releases: Option<usize>,
    pub oldest: Option<String>,
    pub newest: Option<String>,
}

/// A saved Graph API document, gzip-compressed or not.
pub fn read_graph(path: &Path) -> Result<cincinnati_core::Graph, FetchError> {
    let bytes = std::fs::read(path)
        .and_then(wire::inflate_if_gzip)
        .map_err(|source| FetchError::Read {
            path: path.to_owned(),
            source,
        })?;
    wire::parse(&bytes)
        .map(|document| document.graph)
        .map_err(|source| FetchError::Invalid {
            origin: path.display().to_string(),
            local: true,
            source,
        })
}

/// An explanation is a few KB per withheld release; far below this.
const MAX_EXPLANATION_BYTES: usize = 16 * 1024 * 1024;

/// What a policy-engine's explain endpoint (`url`, on its status port) says
/// about the cluster of `query` (its id, channel, arch and version).
pub async fn cluster_policy(
    http: &HttpClient,
    url: &Url,
    query: &Query<'_>,
) -> Result<ClusterPolicy, FetchError> {
    let mut asked = url.clone();
    asked.query_pairs_mut().extend_pairs(query.parameters());
    let response = http
        .send(Request::get("cluster policy", &asked, MAX_EXPLANATION_BYTES).accept("application/json"))
        .await?;
    let asked = response.url.to_string();
    let body = successful(response)?;
    serde_json::from_slice(&body).map_err(|source| FetchError::NotAnExplanation { url: asked, source })
}

/// The body of a successful answer; another is an error naming the status
/// and what the server said.
fn successful(response: http_fetch::Response) -> Result<bytes::Bytes, FetchError> {
    if response.status.is_success() {
        return Ok(response.body);
    }
    Err(FetchError::Status {
        url: response.url.to_string(),
        status: response.status.as_u16(),
        body: one_line(&response.body),
    })
}

/// A server's error body on one line, shortened: JSON errors say what
/// they are in their `value`.
pub fn one_line(body: &[u8]) -> String {
    const LIMIT: usize = 300;
    let text = String::from_utf8_lossy(body);
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Graph-data files from a directory, a gzip tarball, or a URL serving
/// one (a graph-builder's `{prefix}/graph-data`); `http` gives the client
/// to ask a URL with (a [`tarball_client`]).
pub async fn graph_data_files(
    location: &str,
    http: impl FnOnce() -> HttpClient,
) -> Result<GraphDataFiles, FetchError> {
    let failed = |local, source| FetchError::GraphData {
        origin: location.to_owned(),
        local,
        source,
    };
    match Source::parse(location)? {
        Source::File(path) if path.is_dir() => {
            GraphDataFiles::from_dir(&path).map_err(|error| failed(true, error))
        }
        Source::File(path) => {
            let file = std::fs::File::open(&path).map_err(|source| FetchError::Read { path, source })?;
            GraphDataFiles::from_tar_gz(file).map_err(|error| failed(true, error))
        }
        Source::Url(url) => {
            let response = http()
                .send(Request::get("graph-data", &url, MAX_TARBALL_BYTES))
                .await?;
            let body = successful(response)?;
            GraphDataFiles::from_tar_gz(body.as_ref()).map_err(|error| failed(false, error))
        }
    }
}

/// Why a cluster's question got no answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    VersionNotFound(#[from] VersionNotFound),
}

/// Asks the update service at `graph_url` (`…/graph`) exactly as a cluster
/// at `version` on `channel` would, and works out what it is offered.
pub async fn fetch_updates(
    http: &HttpClient,
    graph_url: &str,
    channel: &str,
    arch: &str,
    version: &Version,
    cluster_id: &str,
) -> Result<Updates, ClientError> {
    let fetcher = Fetcher::new(Source::parse(graph_url)?, || http.clone());
    let query = Query {
        arch,
        channel: Some(channel),
        id: Some(cluster_id),
        version: Some(version),
    };
    let document = fetcher.document(&query).await?;
    let graph = UpdateGraph::build(arch, &[document]);
    let cluster = Cluster {
        version: version.clone(),
        arch: arch.to_owned(),
    };
    let not_found = || VersionNotFound {
        version: version.clone(),
        channel: channel.to_owned(),
    };
    let view = graph.channel(channel).ok_or_else(not_found)?;
    Ok(view.updates_for(&cluster)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_sends_arch_channel_id_and_version_when_it_has_them() {
        let version = Version::parse("4.16.3").unwrap();
        let cluster = Query {
            arch: "multi",
            channel: Some("eus-4.16"),
            id: Some("5b6f1e2a-9c3d-4e8f-a1b2-c3d4e5f60718"),
            version: Some(&version),
        };
        let sent: Vec<(&str, String)> = cluster.parameters();
        assert_eq!(
            sent,
            [
                ("arch", "multi".to_owned()),
                ("channel", "eus-4.16".to_owned()),
                ("id", "5b6f1e2a-9c3d-4e8f-a1b2-c3d4e5f60718".to_owned()),
                ("version", "4.16.3".to_owned()),
            ]
        );
        assert_eq!(Query::arch("amd64").parameters(), [("arch", "amd64".to_owned())]);
    }
}
