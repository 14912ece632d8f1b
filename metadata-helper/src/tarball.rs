//! Signatures followed from a graph-builder's `{prefix}/graph-data` tarball,
//! so the helper needs no volume shared with the graph-builder and serves
//! the signatures of the graph-data revision the graph-builder serves.
//!
//! Each refresh is a conditional GET (`If-None-Match` with the entity tag
//! of the set in service). A new revision is unpacked (signatures only) into
//! a fresh directory under the work directory and swapped in whole; readers
//! in the middle of a lookup finish on the set they hold, and a retired set's
//! directory is removed once no reader holds it. A failed fetch or a bad
//! tarball leaves the last good set in service and shows in the status.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http_fetch::{ClientSettings, ExtraRoots, HttpClient, Request, StatusCode, Url};
use openshift_graph_data::MAX_TARBALL_BYTES;

use crate::set::SignatureSet;
use crate::status::Signatures;
use crate::unpack::{UnpackError, unpack};

/// Unpacked revisions are directories named so in the work directory.
const REVISION_PREFIX: &str = "revision-";

/// Where to follow a tarball from, and where to unpack it.
#[derive(Debug, Clone)]
pub struct TarballSettings {
    /// `http(s)://<graph-builder>/<prefix>/graph-data`.
    pub url: Url,
    /// Unpacked revisions live here; it is created if missing, and
    /// revisions a previous run left behind are removed.
    pub work_dir: PathBuf,
    /// How long one download may take.
    pub timeout: Duration,
    pub roots: ExtraRoots,
    pub user_agent: String,
}

/// The tarball source, and the [`Signatures`] it keeps in service.
pub struct TarballSource {
    client: HttpClient,
    url: Url,
    work_dir: PathBuf,
    signatures: Signatures,
    /// Sets taken out of service, kept until no reader holds them.
    retired: Vec<Arc<SignatureSet>>,
}

/// What one refresh did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refresh {
    /// 304: the set in service is the tarball's.
    Unchanged,
    /// A new revision is in service.
    Loaded {
        revision: Option<String>,
        signatures: usize,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum TarballError {
    #[error(transparent)]
    Client(#[from] http_fetch::ClientError),
    #[error("cannot prepare the work directory {path}: {source}")]
    WorkDir { path: PathBuf, source: std::io::Error },
    /// Unreachable, or a tarball over [`MAX_TARBALL_BYTES`].
    #[error(transparent)]
    Fetch(#[from] http_fetch::FetchError),
    #[error("GET {url}: HTTP {status}")]
    Status { url: Url, status: u16 },
    #[error("graph-data tarball {url}: {source}")]
    Unpack { url: Url, source: UnpackError },
}

impl TarballSource {
    /// Prepares the work directory (removing what a previous run left in
    /// it) and a client; fetches nothing yet.
    pub fn new(settings: TarballSettings) -> Result<Self, TarballError> {
        let work_dir = settings.work_dir;
        remove_leftovers(&work_dir).map_err(|source| TarballError::WorkDir {
            path: work_dir.clone(),
            source,
        })?;
        let client = HttpClient::new(ClientSettings {
            user_agent: settings.user_agent,
            timeout: settings.timeout,
            roots: settings.roots,
            gzip: false,
        })?;
        let signatures = Signatures::new(format!("graph-data tarball {}", settings.url));
        Ok(Self {
            client,
            url: settings.url,
            work_dir,
            signatures,
            retired: Vec::new(),
        })
    }

    pub fn signatures(&self) -> &Signatures {
        &self.signatures
    }

    /// Fetches the tarball unless it is unchanged, and puts a new revision
    /// in service. The outcome is also recorded in the status.
    pub async fn refresh(&mut self) -> Result<Refresh, TarballError> {
        self.remove_unused().await;
        let refreshed = self.fetch_and_swap().await;
        match &refreshed {
            Ok(_) => self.signatures.succeeded(),
            Err(error) => self.signatures.failed(error),
        }
        refreshed
    }

    /// One round of the periodic refresh: [`TarballSource::refresh`], its
    /// outcome logged (and kept in the status).
    pub async fn round(&mut self) {
        match self.refresh().await {
            Ok(Refresh::Unchanged) => {}
            Ok(Refresh::Loaded { revision, signatures }) => {
                tracing::info!(?revision, signatures, "signatures loaded");
            }
            Err(error) => {
                tracing::warn!(%error, "signature refresh failed; serving the last good signatures");
            }
        }
    }

    async fn fetch_and_swap(&mut self) -> Result<Refresh, TarballError> {
        let current = self.signatures.set();
        let etag = current.as_ref().and_then(|set| set.revision.as_deref());
        let request = Request::get("graph-data", &self.url, MAX_TARBALL_BYTES).if_none_match(etag);
        let response = self.client.send(request).await?;
        if response.status == StatusCode::NOT_MODIFIED && current.is_some() {
            return Ok(Refresh::Unchanged);
        }
        if !response.status.is_success() {
            return Err(TarballError::Status {
                url: response.url,
                status: response.status.as_u16(),
            });
        }
        let work_dir = self.work_dir.clone();
        let revision = response.etag;
        let unpacked = tokio::task::spawn_blocking(move || {
            let dir = tempfile::Builder::new()
                .prefix(REVISION_PREFIX)
                .tempdir_in(&work_dir)
                .map_err(|source| UnpackError::Write {
                    path: work_dir.display().to_string(),
                    source,
                })?;
            let counts = unpack(&response.body, dir.path())?;
            Ok::<_, UnpackError>((dir, counts))
        })
        .await
        .expect("unpacking does not panic");
        let (dir, counts) = unpacked.map_err(|source| TarballError::Unpack {
            url: self.url.clone(),
            source,
        })?;
        let set = SignatureSet::new(dir.path().to_path_buf(), Some(dir), revision.clone(), counts);
        if let Some(old) = self.signatures.swap(set) {
            self.retired.push(old);
        }
        Ok(Refresh::Loaded {
            revision,
            signatures: counts.signatures,
        })
    }

    /// Drops the retired sets no reader holds any more, removing their
    /// directories on a blocking thread (thousands of files).
    async fn remove_unused(&mut self) {
        let (unused, used): (Vec<_>, Vec<_>) = std::mem::take(&mut self.retired)
            .into_iter()
            .partition(|set| Arc::strong_count(set) == 1);
        self.retired = used;
        if !unused.is_empty() {
            tokio::task::spawn_blocking(move || drop(unused))
                .await
                .expect("removing directories does not panic");
        }
    }
}

/// Creates `work_dir` if needed and removes the revisions in it: a previous
/// run's sets, which nothing serves any more.
fn remove_leftovers(work_dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(work_dir)?;
    for entry in std::fs::read_dir(work_dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(REVISION_PREFIX) {
            std::fs::remove_dir_all(entry.path())?;
        }
    }
    Ok(())
}
