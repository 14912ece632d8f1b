//! Graph-data sources: where OpenShift graph-data comes from.
//!
//! - a local directory (`data_directory` of `openshift-secondary-metadata-parse`,
//!   what the OpenShift Update Service operator's init container provides);
//! - `graph-data-tarball`: a gzip tarball at a path or URL, the format
//!   `{prefix}/graph-data` serves, so one update service can feed another;
//! - `dkrv2-secondary-metadata-scrape`: a container image in a registry,
//!   re-read only when its layer digests change.
//!
//! Each fetch returns the files, or `None` when the source can tell cheaply
//! that nothing changed (same layers, HTTP 304). Validation happens after.
//!
//! Between fetches, [`GraphDataSource::changed`] looks at a source as cheaply
//! as it can: a directory's or a file's metadata (a stat of each entry, no
//! read), an image's manifest digest (one HEAD). A URL has nothing cheaper
//! than its conditional GET, so it always says "maybe", and the fetch asks.
//! Metadata can miss a change that keeps a file's size, time and inode (a
//! copy that preserves times): the fetch every `graph_data_pause_secs`
//! reads everything regardless.

use std::path::PathBuf;
use std::time::Duration;

use http_fetch::{ClientSettings, ExtraRoots, HttpClient, Request, StatusCode, Url};
use image_signature::TrustedKeys;
use image_signature::store::SignatureStore;
use openshift_graph_data::GraphDataFiles;
use openshift_graph_data::MAX_TARBALL_BYTES;
use openshift_graph_data::signature::verify_image;
use registry_client::manifest::Manifest;
use registry_client::{RegistryClient, RetryPolicy};
use serde::{Deserialize, Serialize};
use service_kit::secret::{RedactedUrl, Secret};

use super::default_root_certificate_dir;

/// Graph-data as read from a source.
#[derive(Debug)]
pub struct FetchedGraphData {
    pub files: GraphDataFiles,
    /// The image digest, when the graph-data came from an image.
    pub image_digest: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum GraphDataSourceError {
    #[error(transparent)]
    Files(#[from] openshift_graph_data::FilesError),
    #[error(transparent)]
    Registry(#[from] registry_client::RegistryError),
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    /// Unreachable, or a tarball over [`MAX_TARBALL_BYTES`].
    #[error(transparent)]
    Fetch(#[from] http_fetch::FetchError),
    #[error("GET {url}: status {status}")]
    Status { url: Url, status: StatusCode },
    #[error("graph-data image {reference}: {reason}")]
    Image { reference: String, reason: String },
}

/// `graph-data-tarball`: exactly one of `path` and `url`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TarballSettings {
    #[serde(default)]
    pub path: Option<PathBuf>,
    #[serde(default)]
    pub url: Option<RedactedUrl>,
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// CAs trusted besides the system's, for an HTTPS `url`.
    #[serde(default = "default_root_certificate_dir")]
    pub root_certificate_dir: PathBuf,
}

fn default_timeout_secs() -> u64 {
    30
}

/// `dkrv2-secondary-metadata-scrape`, with upstream's keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageSettings {
    pub registry: String,
    pub repository: String,
    #[serde(default = "default_tag")]
    pub tag: String,
    /// Upstream unpacked the image here; graph-data is kept in memory now.
    /// Accepted so existing configurations load.
    #[serde(default)]
    pub output_directory: Option<PathBuf>,
    /// Accepted for compatibility: the graph-data root is found by its
    /// `version` file wherever it is in the image.
    #[serde(default)]
    pub graph_data_path: Option<String>,
    /// Accepted for compatibility: only graph-data files are ever read.
    #[serde(default)]
    pub output_allowlist: Option<Vec<String>>,
    #[serde(default)]
    pub username: Option<String>,
    #[serde(default)]
    pub password: Option<Secret>,
    #[serde(default)]
    pub credentials_path: Option<PathBuf>,
    #[serde(default = "default_root_certificate_dir")]
    pub root_certificate_dir: PathBuf,
    #[serde(default)]
    pub verify_signature: bool,
    #[serde(default = "default_signature_baseurl")]
    pub signature_baseurl: RedactedUrl,
    #[serde(default)]
    pub public_keys_path: Option<PathBuf>,
}

fn default_tag() -> String {
    "latest".to_owned()
}
fn default_signature_baseurl() -> RedactedUrl {
    SignatureStore::DEFAULT_BASE_URL
        .parse()
        .expect("the default signature store URL is valid")
}

pub enum GraphDataSource {
    Directory(WatchedPath),
    TarballFile(WatchedPath),
    TarballUrl(Box<TarballUrl>),
    Image(Box<ImageSource>),
}

/// A local directory or file, and a digest of its metadata as of the last
/// read.
pub struct WatchedPath {
    path: PathBuf,
    seen: Option<u64>,
}

impl WatchedPath {
    pub fn new(path: PathBuf) -> Self {
        Self { path, seen: None }
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Reads the path with `read`, remembering its metadata as of before the
    /// read: a change made during the read is seen by the next check. A
    /// failed read is remembered too: it is tried again when the path
    /// changes (or at the next full refresh), not at every check.
    async fn read<T: Send + 'static>(
        &mut self,
        read: impl FnOnce(&std::path::Path) -> Result<T, GraphDataSourceError> + Send + 'static,
    ) -> Result<T, GraphDataSourceError> {
        let path = self.path.clone();
        let (seen, read) = tokio::task::spawn_blocking(move || (metadata_digest(&path), read(&path)))
            .await
            .expect("reading files does not panic");
        self.seen = Some(seen);
        read
    }

    /// Whether the metadata differs from the last read's (or nothing was
    /// read yet).
    async fn changed(&self) -> bool {
        let path = self.path.clone();
        let now = tokio::task::spawn_blocking(move || metadata_digest(&path))
            .await
            .expect("reading metadata does not panic");
        self.seen != Some(now)
    }
}

/// How deep [`metadata_digest`] descends: graph-data is two levels deep,
/// signatures four.
const MAX_DEPTH: usize = 8;

/// A digest of the names under `path` and the sizes, modification times
/// and inodes of its files (links followed: a Kubernetes volume swaps a link to publish new
/// content), without reading a file. Entries whose name starts with a dot
/// are skipped (`.git`, a volume's `..data`: the links into it are
/// followed anyway). What cannot be read counts as a value of its own, so
/// it changes when it becomes readable.
pub fn metadata_digest(path: &std::path::Path) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    fn visit(path: &std::path::Path, depth: usize, hasher: &mut std::hash::DefaultHasher) {
        let Ok(metadata) = std::fs::metadata(path) else {
            0xdead_u16.hash(hasher);
            return;
        };
        // A directory is its entries: its own times change with entries
        // skipped here.
        if !metadata.is_dir() {
            metadata.len().hash(hasher);
            metadata.modified().ok().hash(hasher);
            #[cfg(unix)]
            std::os::unix::fs::MetadataExt::ino(&metadata).hash(hasher);
            return;
        }
        if depth == MAX_DEPTH {
            return;
        }
        let Ok(entries) = std::fs::read_dir(path) else {
            0xbeef_u16.hash(hasher);
            return;
        };
        let mut names: Vec<_> = entries
            .filter_map(|entry| entry.ok().map(|entry| entry.file_name()))
            .filter(|name| !name.as_encoded_bytes().starts_with(b"."))
            .collect();
        names.sort();
        for name in names {
            name.hash(hasher);
            visit(&path.join(&name), depth + 1, hasher);
        }
    }
    let mut hasher = std::hash::DefaultHasher::new();
    visit(path, 0, &mut hasher);
    hasher.finish()
}

pub struct TarballUrl {
    client: HttpClient,
    url: Url,
    etag: Option<String>,
}

pub struct ImageSource {
    client: RegistryClient,
    tag: String,
    /// The layers last read, to skip an unchanged image.
    layers: Option<Vec<String>>,
    /// The manifest digest last read, for the cheap check.
    digest: Option<String>,
    /// When set, an image is used only with a valid signature of its digest.
    verification: Option<SignatureCheck>,
}

/// Where signatures are fetched from and the keys they must be made with.
pub struct SignatureCheck {
    store: SignatureStore,
    keys: TrustedKeys,
}

impl GraphDataSource {
    pub fn directory(path: PathBuf) -> Self {
        Self::Directory(WatchedPath::new(path))
    }

    pub fn tarball(settings: &TarballSettings) -> Result<Self, String> {
        match (&settings.path, &settings.url) {
            (Some(path), None) => Ok(Self::TarballFile(WatchedPath::new(path.clone()))),
            (None, Some(url)) => {
                let url = url.expose();
                let client = HttpClient::new(ClientSettings {
                    user_agent: crate::USER_AGENT.to_owned(),
                    timeout: Duration::from_secs(settings.timeout_secs.max(1)),
                    roots: ExtraRoots::from_dir(&settings.root_certificate_dir),
                    gzip: false,
                })
                .map_err(|error| error.to_string())?;
                Ok(Self::TarballUrl(Box::new(TarballUrl {
                    client,
                    url,
                    etag: None,
                })))
            }
            _ => Err("give exactly one of `path` and `url`".to_owned()),
        }
    }

    /// The image source; its registry client and signature store trust the
    /// same `root_certificate_dir`, and credentials follow
    /// `registry_client::setup`'s rule.
    pub fn image(settings: &ImageSettings) -> Result<Self, String> {
        let roots = ExtraRoots::from_dir(&settings.root_certificate_dir);
        let verification = if settings.verify_signature {
            let keys_dir = settings
                .public_keys_path
                .as_ref()
                .ok_or("verify_signature needs public_keys_path")?;
            let keys = TrustedKeys::from_dir(keys_dir).map_err(|error| error.to_string())?;
            let store = SignatureStore::new(
                settings.signature_baseurl.expose().as_str(),
                roots.clone(),
                crate::USER_AGENT,
            )
            .map_err(|error| error.to_string())?;
            Some(SignatureCheck { store, keys })
        } else {
            None
        };
        let client = settings
            .access(&roots)
            .client(RetryPolicy::default(), crate::USER_AGENT)
            .map_err(|error| error.to_string())?;
        Ok(Self::Image(Box::new(ImageSource {
            client,
            tag: settings.tag.clone(),
            layers: None,
            digest: None,
            verification,
        })))
    }

    pub fn describe(&self) -> String {
        match self {
            Self::Directory(watched) => format!("graph-data directory {}", watched.path().display()),
            Self::TarballFile(watched) => format!("graph-data tarball {}", watched.path().display()),
            Self::TarballUrl(source) => format!("graph-data tarball {}", source.url),
            Self::Image(source) => format!(
                "graph-data image {}/{}:{}",
                source.client.address(),
                source.client.repository(),
                source.tag
            ),
        }
    }

    /// Whether the source may have changed since the last fetch, looked at
    /// as cheaply as the source allows (see the module documentation).
    pub async fn changed(&mut self) -> Result<bool, GraphDataSourceError> {
        match self {
            Self::Directory(watched) | Self::TarballFile(watched) => Ok(watched.changed().await),
            Self::TarballUrl(_) => Ok(true),
            Self::Image(source) => {
                let digest = source.client.manifest_digest(&source.tag).await?;
                Ok(source.digest.as_ref() != Some(&digest))
            }
        }
    }

    /// The graph-data now, or `None` when it cheaply proved unchanged.
    pub async fn fetch(&mut self) -> Result<Option<FetchedGraphData>, GraphDataSourceError> {
        let files = match self {
            Self::Directory(watched) => watched.read(|path| Ok(GraphDataFiles::from_dir(path)?)).await?,
            Self::TarballFile(watched) => {
                watched
                    .read(|path| {
                        let bytes = std::fs::read(path).map_err(|source| GraphDataSourceError::Read {
                            path: path.to_owned(),
                            source,
                        })?;
                        Ok(GraphDataFiles::from_tar_gz(bytes.as_slice())?)
                    })
                    .await?
            }
            Self::TarballUrl(source) => match source.fetch().await? {
                Some(files) => files,
                None => return Ok(None),
            },
            Self::Image(source) => return source.fetch().await,
        };
        Ok(Some(FetchedGraphData {
            files,
            image_digest: None,
        }))
    }
}

impl TarballUrl {
    /// A conditional GET: a 304 means the graph-data did not change.
    async fn fetch(&mut self) -> Result<Option<GraphDataFiles>, GraphDataSourceError> {
        let request =
            Request::get("graph-data", &self.url, MAX_TARBALL_BYTES).if_none_match(self.etag.as_deref());
        let response = self.client.send(request).await?;
        if response.status == StatusCode::NOT_MODIFIED {
            return Ok(None);
        }
        if !response.status.is_success() {
            return Err(GraphDataSourceError::Status {
                url: response.url,
                status: response.status,
            });
        }
        let files = GraphDataFiles::from_tar_gz(response.body.as_ref())?;
        self.etag = response.etag;
        Ok(Some(files))
    }
}

impl ImageSource {
    /// Reads the image when its layers changed. Graph-data images carry the
    /// graph-data in one layer; the top-most layer holding a `version` file wins.
    async fn fetch(&mut self) -> Result<Option<FetchedGraphData>, GraphDataSourceError> {
        let reference = format!("{}:{}", self.client.repository(), self.tag);
        let image_error = |reason: String| GraphDataSourceError::Image {
            reference: reference.clone(),
            reason,
        };
        let (manifest, digest) = self.client.manifest(&self.tag).await?;
        let image = match manifest {
            Manifest::Image(image) => image,
            Manifest::List(_) => return Err(image_error("a manifest list, not an image".to_owned())),
        };
        let layers: Vec<String> = image.layers.iter().map(|layer| layer.digest.clone()).collect();
        if self.layers.as_ref() == Some(&layers) {
            self.digest = Some(digest);
            return Ok(None);
        }
        if let Some(check) = &self.verification {
            verify_image(&check.store, &digest, &check.keys)
                .await
                .map_err(|error| image_error(format!("signature of {digest}: {error}")))?;
        }
        for layer in layers.iter().rev() {
            let bytes = self.client.small_blob(layer, MAX_TARBALL_BYTES).await?;
            match GraphDataFiles::from_tar_gz(bytes.as_slice()) {
                Ok(files) => {
                    self.layers = Some(layers.clone());
                    self.digest = Some(digest.clone());
                    return Ok(Some(FetchedGraphData {
                        files,
                        image_digest: Some(digest),
                    }));
                }
                Err(openshift_graph_data::FilesError::NoVersionFile) => continue,
                Err(error) => return Err(error.into()),
            }
        }
        Err(image_error(
            "no layer holds a graph-data `version` file".to_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_digest_changes_with_names_and_sizes_but_not_with_dot_entries() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("channels")).unwrap();
        std::fs::write(dir.path().join("channels/a.yaml"), "name: a\n").unwrap();
        let first = metadata_digest(dir.path());
        assert_eq!(metadata_digest(dir.path()), first, "nothing touched");

        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref").unwrap();
        assert_eq!(metadata_digest(dir.path()), first, "dot entries are skipped");

        std::fs::write(dir.path().join("channels/a.yaml"), "name: a\nversions: []\n").unwrap();
        let rewritten = metadata_digest(dir.path());
        assert_ne!(rewritten, first);
        std::fs::write(dir.path().join("channels/b.yaml"), "").unwrap();
        assert_ne!(metadata_digest(dir.path()), rewritten, "a new file");
        assert_ne!(
            metadata_digest(&dir.path().join("missing")),
            metadata_digest(dir.path())
        );
    }
}
