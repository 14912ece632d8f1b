//! [`RegistryClient`]: one repository of one registry, on oci-client.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use http_fetch::ExtraRoots;
use oci_client::client::{Certificate, CertificateEncoding, ClientConfig};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};
use tokio::sync::OnceCell;

use crate::address::RegistryAddress;
use crate::credentials::Credentials;
use crate::manifest::{self, Manifest, ManifestError};
use crate::retry::{RetryPolicy, Transient};

/// The bearer token sent to a registry that asks for no authentication.
const ANONYMOUS_PLACEHOLDER: &str = "anonymous";

/// Tags asked for per page. Registries that page (quay) honour it;
/// distribution 2.8 ignores it and answers every tag at once.
const TAG_PAGE_SIZE: usize = 100;

/// How to reach one repository.
#[derive(Debug, Clone)]
pub struct RegistrySettings {
    pub address: RegistryAddress,
    pub repository: String,
    pub credentials: Option<Credentials>,
    /// CAs trusted besides the system's (from `root_certificate_dir`).
    pub roots: ExtraRoots,
    pub retry: RetryPolicy,
    /// e.g. `cincinnati-rs-graph-builder/0.1.0`: registries log it.
    pub user_agent: &'static str,
}

/// A failed registry operation, naming what was asked for.
#[derive(Debug, thiserror::Error)]
#[error("{operation}: {cause}")]
pub struct RegistryError {
    pub operation: String,
    pub cause: RegistryFailure,
}

#[derive(Debug, thiserror::Error)]
pub enum RegistryFailure {
    #[error(transparent)]
    Client(#[from] OciDistributionError),
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("blob is larger than the {0} bytes allowed")]
    TooLarge(usize),
    #[error("stream error: {0}")]
    Stream(#[from] std::io::Error),
}

impl Transient for RegistryFailure {
    fn is_transient(&self) -> bool {
        match self {
            RegistryFailure::TimedOut(_) | RegistryFailure::Stream(_) => true,
            RegistryFailure::Client(OciDistributionError::RequestError(_)) => true,
            RegistryFailure::Client(OciDistributionError::ServerError { code, .. }) => {
                *code >= 500 || *code == 429
            }
            _ => false,
        }
    }

    fn timed_out(after: Duration) -> Self {
        RegistryFailure::TimedOut(after)
    }
}

/// Requests sent to the registry, by kind; for metrics and benchmarks.
#[derive(Debug, Default)]
pub struct RequestCounts {
    pub tag_pages: AtomicU64,
    pub manifests: AtomicU64,
    pub manifest_heads: AtomicU64,
    pub blobs: AtomicU64,
}

impl RequestCounts {
    pub fn total(&self) -> u64 {
        [
            &self.tag_pages,
            &self.manifests,
            &self.manifest_heads,
            &self.blobs,
        ]
        .iter()
        .map(|counter| counter.load(Ordering::Relaxed))
        .sum()
    }
}

/// A client for one repository of one registry.
pub struct RegistryClient {
    client: Client,
    /// A second client, used once to learn how the registry authenticates
    /// (see [`RegistryClient::auth`]).
    probe: Client,
    credentials: Option<Credentials>,
    auth: OnceCell<RegistryAuth>,
    settings: RegistrySettings,
    counts: Arc<RequestCounts>,
}

impl std::fmt::Debug for RegistryClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryClient")
            .field("registry", &self.settings.address.to_string())
            .field("repository", &self.settings.repository)
            .finish()
    }
}

impl RegistryClient {
    pub fn new(settings: RegistrySettings) -> Result<Self, RegistryError> {
        let client = Self::oci_client(&settings)?;
        let probe = Self::oci_client(&settings)?;
        Ok(Self {
            client,
            probe,
            credentials: settings.credentials.clone(),
            auth: OnceCell::new(),
            settings,
            counts: Arc::default(),
        })
    }

    fn oci_client(settings: &RegistrySettings) -> Result<Client, RegistryError> {
        let config = ClientConfig {
            protocol: settings.address.protocol(),
            extra_root_certificates: settings
                .roots
                .certificates()
                .iter()
                .map(|certificate| Certificate {
                    encoding: CertificateEncoding::Pem,
                    data: certificate.pem.clone(),
                })
                .collect(),
            connect_timeout: Some(Duration::from_secs(10)),
            read_timeout: Some(settings.retry.attempt_timeout),
            user_agent: settings.user_agent,
            platform_resolver: None,
            ..ClientConfig::default()
        };
        Client::try_from(config).map_err(|error| RegistryError {
            operation: format!("configure client for {}", settings.address),
            cause: error.into(),
        })
    }

    /// How to authenticate, decided on first use.
    ///
    /// With credentials: basic credentials, which oci-client exchanges for a
    /// bearer token when the registry asks for one. Without: anonymous — but
    /// oci-client re-probes `GET /v2/` before every request to a registry that
    /// asks for no authentication at all (it caches no token for it), which
    /// doubles the requests of a scrape. One probe with a separate client tells
    /// such a registry apart; it is then sent a placeholder bearer token, which
    /// oci-client caches and an authentication-free registry ignores.
    async fn auth(&self) -> Result<&RegistryAuth, RegistryFailure> {
        self.auth
            .get_or_try_init(|| async {
                if let Some(credentials) = &self.credentials {
                    return Ok(RegistryAuth::Basic(
                        credentials.username.clone(),
                        credentials.password.clone(),
                    ));
                }
                let reference = self.reference("latest");
                let token = self
                    .probe
                    .auth(&reference, &RegistryAuth::Anonymous, RegistryOperation::Pull)
                    .await?;
                // `None` also for a registry that wants basic credentials we
                // do not have; it refuses every request either way.
                Ok(match token {
                    None => RegistryAuth::Bearer(ANONYMOUS_PLACEHOLDER.to_owned()),
                    Some(_) => RegistryAuth::Anonymous,
                })
            })
            .await
    }

    pub fn address(&self) -> &RegistryAddress {
        &self.settings.address
    }

    pub fn repository(&self) -> &str {
        &self.settings.repository
    }

    pub fn request_counts(&self) -> Arc<RequestCounts> {
        Arc::clone(&self.counts)
    }

    fn reference(&self, tag_or_digest: &str) -> Reference {
        let (host, repository) = (
            self.settings.address.host.clone(),
            self.settings.repository.clone(),
        );
        if tag_or_digest.contains(':') {
            Reference::with_digest(host, repository, tag_or_digest.to_owned())
        } else {
            Reference::with_tag(host, repository, tag_or_digest.to_owned())
        }
    }

    async fn retried<T, F, Fut>(&self, operation: impl Fn() -> String, attempt: F) -> Result<T, RegistryError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, RegistryFailure>>,
    {
        self.settings
            .retry
            .run(attempt)
            .await
            .map_err(|cause| RegistryError {
                operation: operation(),
                cause,
            })
    }

    /// Every tag of the repository. Pages through registries that page, and
    /// stops when a page brings nothing new, so a registry that ignores `last`
    /// cannot loop us forever.
    pub async fn list_tags(&self) -> Result<Vec<String>, RegistryError> {
        let reference = self.reference("latest");
        let mut tags = Vec::new();
        let mut seen = HashSet::new();
        let mut last: Option<String> = None;
        loop {
            let page = self
                .retried(
                    || format!("list tags of {}", self.settings.repository),
                    || async {
                        self.counts.tag_pages.fetch_add(1, Ordering::Relaxed);
                        Ok(self
                            .client
                            .list_tags(
                                &reference,
                                self.auth().await?,
                                Some(TAG_PAGE_SIZE),
                                last.as_deref(),
                            )
                            .await?)
                    },
                )
                .await?;
            let before = tags.len();
            for tag in page.tags {
                if seen.insert(tag.clone()) {
                    tags.push(tag);
                }
            }
            let new_on_page = tags.len() - before;
            if new_on_page == 0 || new_on_page < TAG_PAGE_SIZE {
                return Ok(tags);
            }
            last = tags.last().cloned();
        }
    }

    /// The manifest of a tag or digest, parsed, with its digest.
    pub async fn manifest(&self, tag_or_digest: &str) -> Result<(Manifest, String), RegistryError> {
        let reference = self.reference(tag_or_digest);
        self.retried(
            || format!("get manifest {}:{tag_or_digest}", self.settings.repository),
            || async {
                self.counts.manifests.fetch_add(1, Ordering::Relaxed);
                let (bytes, digest) = self
                    .client
                    .pull_manifest_raw(&reference, self.auth().await?, &manifest::ACCEPTED)
                    .await?;
                Ok((Manifest::parse(&bytes)?, digest))
            },
        )
        .await
    }

    /// The digest a tag points at, from a HEAD request: cheap re-checks.
    pub async fn manifest_digest(&self, tag: &str) -> Result<String, RegistryError> {
        let reference = self.reference(tag);
        self.retried(
            || format!("head manifest {}:{tag}", self.settings.repository),
            || async {
                self.counts.manifest_heads.fetch_add(1, Ordering::Relaxed);
                Ok(self
                    .client
                    .fetch_manifest_digest(&reference, self.auth().await?)
                    .await?)
            },
        )
        .await
    }

    /// A small blob (an image config) read whole, refusing more than `limit` bytes.
    pub async fn small_blob(&self, digest: &str, limit: usize) -> Result<Vec<u8>, RegistryError> {
        self.retried(
            || format!("get blob {digest}"),
            || async {
                let mut stream = self.open_blob(digest).await?;
                let mut bytes = Vec::new();
                while let Some(chunk) = stream.next().await {
                    bytes.extend_from_slice(&chunk?);
                    if bytes.len() > limit {
                        return Err(RegistryFailure::TooLarge(limit));
                    }
                }
                Ok(bytes)
            },
        )
        .await
    }

    /// A blob as a stream of chunks, for layers that must never be held whole.
    pub async fn blob_stream(&self, digest: &str) -> Result<oci_client::client::SizedStream, RegistryError> {
        self.retried(|| format!("get blob {digest}"), || self.open_blob(digest))
            .await
    }

    async fn open_blob(&self, digest: &str) -> Result<oci_client::client::SizedStream, RegistryFailure> {
        let reference = self.reference(digest);
        // Blob requests use the authentication stored by the calls that take it.
        self.client
            .store_auth_if_needed(reference.resolve_registry(), self.auth().await?)
            .await;
        self.counts.blobs.fetch_add(1, Ordering::Relaxed);
        Ok(self.client.pull_blob_stream(&reference, digest).await?)
    }
}
