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
    Directory(PathBuf),
    TarballFile(PathBuf),
    TarballUrl(Box<TarballUrl>),
    Image(Box<ImageSource>),
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
    /// When set, an image is used only with a valid signature of its digest.
    verification: Option<SignatureCheck>,
}

/// Where signatures are fetched from and the keys they must be made with.
pub struct SignatureCheck {
    store: SignatureStore,
    keys: TrustedKeys,
}

impl GraphDataSource {
    pub fn tarball(settings: &TarballSettings) -> Result<Self, String> {
        match (&settings.path, &settings.url) {
            (Some(path), None) => Ok(Self::TarballFile(path.clone())),
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
            verification,
        })))
    }

    pub fn describe(&self) -> String {
        match self {
            Self::Directory(path) => format!("graph-data directory {}", path.display()),
            Self::TarballFile(path) => format!("graph-data tarball {}", path.display()),
            Self::TarballUrl(source) => format!("graph-data tarball {}", source.url),
            Self::Image(source) => format!(
                "graph-data image {}/{}:{}",
                source.client.address(),
                source.client.repository(),
                source.tag
            ),
        }
    }

    /// The graph-data now, or `None` when it cheaply proved unchanged.
    pub async fn fetch(&mut self) -> Result<Option<FetchedGraphData>, GraphDataSourceError> {
        let files = match self {
            Self::Directory(path) => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || GraphDataFiles::from_dir(&path))
                    .await
                    .expect("reading files does not panic")?
            }
            Self::TarballFile(path) => {
                let bytes = std::fs::read(&*path).map_err(|source| GraphDataSourceError::Read {
                    path: path.clone(),
                    source,
                })?;
                GraphDataFiles::from_tar_gz(bytes.as_slice())?
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
