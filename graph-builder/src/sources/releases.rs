//! Release sources: where the releases of the graph come from.
//!
//! - `release-scrape-dockerv2`: a registry repository of release images.
//! - `release-graph-file`: a Graph API document (what a graph-builder serves,
//!   or printed with `--once`), plain or gzip-compressed; for disconnected
//!   sites and the bundled demo.
//! - `release-metadata-directory`: a directory of JSON files, each
//!   `{"payload", "arch", "release-metadata": {cincinnati-metadata-v0}}`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cincinnati_core::metadata_document::ReleaseMetadataDocument;
use cincinnati_core::wire;
use serde::{Deserialize, Serialize};
use service_kit::secret::Secret;

use http_fetch::ExtraRoots;
use registry_client::{RequestCounts, RetryPolicy};

use super::default_root_certificate_dir;
use crate::assemble::assemble;
use crate::found::{Arch, DropReason, Dropped, FoundRelease, Payload};
use crate::packed::PackedGraph;
use crate::scrape::{Scrape, ScrapeReport, ScrapeSettings, Scraper};

/// What a release source delivered: the graph of releases, before graph-data.
#[derive(Debug)]
pub struct ReleaseSnapshot {
    pub graph: PackedGraph,
    /// Images and edges left out, with the reason.
    pub dropped: Vec<Dropped>,
    /// Release images seen (tags or files), for `graph_upstream_raw_releases`.
    pub raw_releases: usize,
    /// Images whose content had to be downloaded (cache misses).
    pub downloaded: usize,
}

/// What one fetch of a release source brought.
#[derive(Debug)]
pub enum Fetched {
    /// The same releases and problems as the previous fetch, from
    /// `raw_releases` images; nothing to rebuild.
    Unchanged {
        raw_releases: usize,
    },
    New(Box<ReleaseSnapshot>),
}

impl Fetched {
    /// The releases, if the fetch brought them.
    pub fn into_new(self) -> Option<ReleaseSnapshot> {
        match self {
            Self::New(snapshot) => Some(*snapshot),
            Self::Unchanged { .. } => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(transparent)]
    Registry(#[from] registry_client::RegistryError),
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: {source}")]
    Graph { path: PathBuf, source: wire::WireError },
    #[error("abandoned after {0:?} (service.scrape_timeout_secs)")]
    TimedOut(Duration),
}

/// `release-scrape-dockerv2`, with upstream's keys and defaults.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryScrapeSettings {
    #[serde(default = "default_registry")]
    pub registry: String,
    #[serde(default = "default_repository")]
    pub repository: String,
    /// Only upstream's default key is supported; kept so configurations load.
    #[serde(default)]
    pub manifestref_key: Option<String>,
    #[serde(default = "default_fetch_concurrency")]
    pub fetch_concurrency: usize,
    #[serde(default)]
    pub username: Option<String>,
    #[serde(default)]
    pub password: Option<Secret>,
    /// A Docker `config.json`; an empty path means none.
    #[serde(default)]
    pub credentials_path: Option<PathBuf>,
    #[serde(default = "default_root_certificate_dir")]
    pub root_certificate_dir: PathBuf,
    /// Where the scrape cache is kept across restarts; none keeps it in memory.
    #[serde(default)]
    pub cache_path: Option<PathBuf>,
    /// Seconds between re-checks of every known tag's digest (retags).
    #[serde(default = "default_digest_recheck_secs")]
    pub digest_recheck_secs: u64,
    /// Seconds one registry request may take.
    #[serde(default = "default_request_timeout_secs")]
    pub request_timeout_secs: u64,
}

fn default_registry() -> String {
    "quay.io".to_owned()
}
fn default_repository() -> String {
    "openshift-release-dev/ocp-release".to_owned()
}
fn default_fetch_concurrency() -> usize {
    16
}
fn default_digest_recheck_secs() -> u64 {
    3600
}
fn default_request_timeout_secs() -> u64 {
    30
}

/// `release-graph-file` and `release-metadata-directory`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSettings {
    pub path: PathBuf,
}

/// A configured release source, ready to be asked for releases.
pub enum ReleaseSource {
    Registry(Box<Scraper>),
    GraphFile(PathBuf),
    MetadataDirectory(PathBuf),
}

impl ReleaseSource {
    /// The registry scraper for `settings`, its client set up by
    /// `registry_client::setup`'s rule (a credentials file that is absent
    /// means anonymous; one that is broken is refused).
    pub fn registry(settings: &RegistryScrapeSettings) -> Result<Self, String> {
        if let Some(key) = &settings.manifestref_key
            && key != cincinnati_core::release::keys::MANIFESTREF
        {
            return Err(format!(
                "manifestref_key {key:?} is not supported; leave it unset"
            ));
        }
        let roots = ExtraRoots::from_dir(&settings.root_certificate_dir);
        let retry = RetryPolicy {
            attempt_timeout: Duration::from_secs(settings.request_timeout_secs.max(1)),
            ..RetryPolicy::default()
        };
        let client = settings
            .access(&roots)
            .client(retry, crate::USER_AGENT)
            .map_err(|error| error.to_string())?;
        let scraper = Scraper::new(
            Arc::new(client),
            ScrapeSettings {
                fetch_concurrency: settings.fetch_concurrency.max(1),
                digest_recheck_interval: Duration::from_secs(settings.digest_recheck_secs),
                cache_path: settings.cache_path.clone(),
                ..ScrapeSettings::default()
            },
        );
        Ok(Self::Registry(Box::new(scraper)))
    }

    /// After a failed or abandoned fetch: the next one delivers every
    /// release, so none that the lost one found goes unpublished.
    pub fn forget_previous(&mut self) {
        if let Self::Registry(scraper) = self {
            scraper.forget_previous();
        }
    }

    /// Whether [`ReleaseSource::changed`] can tell anything: only a
    /// registry is checked between scrapes; offline sources are read on
    /// their schedule.
    pub fn can_check(&self) -> bool {
        matches!(self, Self::Registry(_))
    }

    /// Whether the releases may have changed since the last fetch: for a
    /// registry, whether its tag list differs (one request).
    pub async fn changed(&self) -> Result<bool, SourceError> {
        match self {
            Self::Registry(scraper) => Ok(scraper.tags_changed().await?),
            Self::GraphFile(_) | Self::MetadataDirectory(_) => Ok(false),
        }
    }

    /// Registry request counters, for metrics; `None` for offline sources.
    pub fn request_counts(&self) -> Option<Arc<RequestCounts>> {
        match self {
            Self::Registry(scraper) => Some(scraper.client().request_counts()),
            Self::GraphFile(_) | Self::MetadataDirectory(_) => None,
        }
    }

    /// A short description for logs and the status document.
    pub fn describe(&self) -> String {
        match self {
            Self::Registry(scraper) => {
                format!(
                    "registry {}/{}",
                    scraper.client().address(),
                    scraper.client().repository()
                )
            }
            Self::GraphFile(path) => format!("graph file {}", path.display()),
            Self::MetadataDirectory(path) => format!("release metadata directory {}", path.display()),
        }
    }

    /// The releases as of now.
    pub async fn fetch(&mut self) -> Result<Fetched, SourceError> {
        let snapshot = match self {
            Self::Registry(scraper) => {
                let report = match scraper.scrape().await? {
                    Scrape::Unchanged { tags } => return Ok(Fetched::Unchanged { raw_releases: tags }),
                    Scrape::Changed(report) => report,
                };
                off_the_runtime(move || Ok(snapshot_of(report))).await
            }
            Self::GraphFile(path) => {
                let path = path.clone();
                off_the_runtime(move || read_graph_file(&path)).await
            }
            Self::MetadataDirectory(path) => {
                let path = path.clone();
                off_the_runtime(move || read_metadata_directory(&path)).await
            }
        };
        snapshot.map(|snapshot| Fetched::New(Box::new(snapshot)))
    }
}

/// Runs `work` (file reads, assembling, packing: up to a few hundred
/// milliseconds) on a blocking thread, not on the threads serving requests.
async fn off_the_runtime<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work)
        .await
        .expect("reading releases does not panic")
}

fn snapshot_of(report: ScrapeReport) -> ReleaseSnapshot {
    let mut assembled = assemble(report.releases);
    assembled.dropped.extend(report.dropped);
    assembled.dropped.sort();
    ReleaseSnapshot {
        graph: PackedGraph::pack(&assembled.graph),
        dropped: assembled.dropped,
        raw_releases: report.tags,
        downloaded: report.downloaded,
    }
}

fn read_graph_file(path: &Path) -> Result<ReleaseSnapshot, SourceError> {
    let bytes = std::fs::read(path)
        .and_then(wire::inflate_if_gzip)
        .map_err(|source| SourceError::Read {
            path: path.to_owned(),
            source,
        })?;
    let graph = wire::parse(&bytes)
        .map_err(|source| SourceError::Graph {
            path: path.to_owned(),
            source,
        })?
        .graph;
    Ok(ReleaseSnapshot {
        raw_releases: graph.release_count(),
        graph: PackedGraph::pack(&graph),
        dropped: Vec::new(),
        downloaded: 0,
    })
}

/// One file of a release metadata directory.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReleaseFile {
    payload: String,
    arch: String,
    #[serde(rename = "release-metadata")]
    release_metadata: serde_json::Value,
}

fn read_metadata_directory(dir: &Path) -> Result<ReleaseSnapshot, SourceError> {
    let read_error = |source| SourceError::Read {
        path: dir.to_owned(),
        source,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_error)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    let mut releases = Vec::with_capacity(paths.len());
    let mut dropped = Vec::new();
    for path in &paths {
        match read_release_file(path) {
            Ok(release) => releases.push(release),
            Err(reason) => dropped.push(Dropped {
                subject: path.display().to_string(),
                reason,
            }),
        }
    }
    let mut assembled = assemble(releases);
    assembled.dropped.extend(dropped);
    assembled.dropped.sort();
    Ok(ReleaseSnapshot {
        graph: PackedGraph::pack(&assembled.graph),
        dropped: assembled.dropped,
        raw_releases: paths.len(),
        downloaded: 0,
    })
}

fn read_release_file(path: &Path) -> Result<FoundRelease, DropReason> {
    let invalid = |why: String| DropReason::InvalidReleaseMetadata(why);
    let bytes = std::fs::read(path).map_err(|error| DropReason::Unavailable(error.to_string()))?;
    let file: ReleaseFile = serde_json::from_slice(&bytes).map_err(|error| invalid(error.to_string()))?;
    let document = ReleaseMetadataDocument::parse(file.release_metadata.to_string().as_bytes())
        .map_err(|error| invalid(error.to_string()))?;
    Ok(FoundRelease {
        document,
        arch: Arch::new(file.arch),
        payload: Payload::parse(file.payload)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn new_snapshot(mut source: ReleaseSource) -> ReleaseSnapshot {
        match source.fetch().await.unwrap() {
            Fetched::New(snapshot) => *snapshot,
            unchanged @ Fetched::Unchanged { .. } => panic!("a first fetch brings releases: {unchanged:?}"),
        }
    }

    #[tokio::test]
    async fn a_metadata_directory_builds_a_graph_and_reports_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let release = |version: &str, previous: &str| {
            format!(
                r#"{{"payload":"quay.io/ocp/release@sha256:{version}","arch":"amd64",
                    "release-metadata":{{"kind":"cincinnati-metadata-v0","version":"{version}","previous":[{previous}]}}}}"#
            )
        };
        std::fs::write(dir.path().join("a.json"), release("4.1.0", "")).unwrap();
        std::fs::write(dir.path().join("b.json"), release("4.1.1", "\"4.1.0\"")).unwrap();
        std::fs::write(dir.path().join("c.json"), "{\"payload\": 1}").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let snapshot = new_snapshot(ReleaseSource::MetadataDirectory(dir.path().to_owned())).await;
        let graph = snapshot.graph.unpack();
        assert_eq!((graph.release_count(), graph.edge_count()), (2, 1));
        assert_eq!(snapshot.raw_releases, 3);
        assert_eq!(snapshot.dropped.len(), 1);
        assert!(snapshot.dropped[0].subject.ends_with("c.json"));
    }

    #[tokio::test]
    async fn a_graph_file_may_be_gzipped() {
        use std::io::Write;
        let json = br#"{"nodes":[{"version":"1.0.0+amd64","payload":"p","metadata":{}}],"edges":[]}"#;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(json).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in [
            ("plain.json", json.to_vec()),
            ("packed.json.gz", encoder.finish().unwrap()),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let snapshot = new_snapshot(ReleaseSource::GraphFile(path)).await;
            assert_eq!(snapshot.graph.release_count(), 1, "{name}");
        }
    }

    #[tokio::test]
    async fn a_broken_graph_file_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.json");
        std::fs::write(&path, "{\"nodes\": [").unwrap();
        let error = ReleaseSource::GraphFile(path)
            .fetch()
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("graph.json") && error.contains("malformed"),
            "{error}"
        );
    }
}
