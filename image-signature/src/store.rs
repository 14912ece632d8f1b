//! A signature store over HTTP(S): `<base>/<algo>=<hex>/signature-<N>`,
//! fetched through `http-fetch` (bounded, with the caller's extra CAs,
//! traced).

use std::time::Duration;

use http_fetch::{ClientSettings, ExtraRoots, HttpClient, Request, StatusCode, Url};

use crate::MAX_SIGNATURE_BYTES;
use crate::digest::Digest;
use crate::layout::file_name;

/// The CVO looks at `signature-1` to `signature-9` at most (its limit of
/// 10 is exclusive); so does upstream's graph-builder.
pub const MAX_SIGNATURES: u32 = 9;

/// How long one request may take, as upstream.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A signature store.
#[derive(Debug, Clone)]
pub struct SignatureStore {
    client: HttpClient,
    /// Without a trailing `/`.
    base_url: String,
}

/// The store could not be used at all.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("invalid signature store URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    #[error(transparent)]
    Client(#[from] http_fetch::ClientError),
}

/// One signature could not be fetched (as opposed to not existing).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Unreachable, or a signature over [`MAX_SIGNATURE_BYTES`].
    #[error(transparent)]
    Http(#[from] http_fetch::FetchError),
    #[error("fetching {url}: HTTP {status}")]
    Status { url: Url, status: u16 },
}

/// Where signature `index` (from 1) of `digest` is, relative to a store's
/// base URL: `<algo>=<hex>/signature-<index>`.
pub fn path(digest: &Digest, index: u32) -> String {
    format!("{}/{}", digest.store_segment(), file_name(index))
}

/// What the search found at one index.
#[derive(Debug)]
pub struct Fetched {
    /// N of `signature-N`.
    pub index: u32,
    pub url: Url,
    pub signature: Result<Vec<u8>, FetchError>,
}

impl SignatureStore {
    /// Where OpenShift publishes release signatures (upstream's default
    /// `signature_baseurl`).
    pub const DEFAULT_BASE_URL: &'static str =
        "https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release/";

    /// A store at `base_url`, trusting `roots` besides the system's CAs.
    pub fn new(base_url: &str, roots: ExtraRoots, user_agent: &str) -> Result<Self, StoreError> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        Url::parse(&base_url).map_err(|error| StoreError::InvalidUrl {
            url: base_url.clone(),
            reason: error.to_string(),
        })?;
        let client = HttpClient::new(ClientSettings {
            user_agent: user_agent.to_owned(),
            timeout: TIMEOUT,
            roots,
            gzip: false,
        })?;
        Ok(Self { client, base_url })
    }

    /// The URL of signature `index` (from 1) of `digest`.
    pub fn url(&self, digest: &Digest, index: u32) -> Url {
        let url = format!("{}/{}", self.base_url, path(digest, index));
        Url::parse(&url).expect("a valid base URL with a digest and a file name appended")
    }

    /// Signature `index` of `digest`, or `None` when the store has no such
    /// signature (404).
    pub async fn fetch(&self, digest: &Digest, index: u32) -> Result<Option<Vec<u8>>, FetchError> {
        self.get(&self.url(digest, index)).await
    }

    /// The signatures of `digest` as the cluster-version operator searches
    /// them: `signature-1`, `signature-2`, … up to [`MAX_SIGNATURES`],
    /// stopping at the first 404. An index the store fails to answer (an
    /// unreachable store, another status, a body over the limit) is
    /// reported and the search goes on, as the CVO's does; an empty body is
    /// skipped, as the CVO skips it.
    pub async fn search(&self, digest: &Digest) -> Vec<Fetched> {
        let mut found = Vec::new();
        for index in 1..=MAX_SIGNATURES {
            let url = self.url(digest, index);
            let signature = match self.get(&url).await {
                Ok(None) => break,
                Ok(Some(signature)) if signature.is_empty() => continue,
                Ok(Some(signature)) => Ok(signature),
                Err(error) => Err(error),
            };
            found.push(Fetched {
                index,
                url,
                signature,
            });
        }
        found
    }

    async fn get(&self, url: &Url) -> Result<Option<Vec<u8>>, FetchError> {
        let response = self
            .client
            .send(Request::get("signature", url, MAX_SIGNATURE_BYTES))
            .await?;
        match response.status {
            StatusCode::NOT_FOUND => Ok(None),
            status if status.is_success() => Ok(Some(response.body.to_vec())),
            status => Err(FetchError::Status {
                url: response.url,
                status: status.as_u16(),
            }),
        }
    }
}
