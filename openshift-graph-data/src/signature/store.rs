//! Fetching release signatures from a signature store over HTTP.

use std::time::Duration;

use super::{SignatureError, TrustedKeys, split_digest, verify_one};

/// Stores number signatures from 1; upstream looks at no more than this many.
pub const MAX_SIGNATURES: usize = 9;

/// A signature store: `<base>/<algo>=<hex>/signature-<i>`.
#[derive(Debug, Clone)]
pub struct SignatureStore {
    client: reqwest::Client,
    base_url: String,
}

/// The store could not be asked (as opposed to having no valid signature).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("fetching {url}: {source}")]
    Request { url: String, source: reqwest::Error },
    #[error("fetching {url}: HTTP {status}")]
    Status { url: String, status: u16 },
}

impl SignatureStore {
    /// Where OpenShift publishes release signatures.
    pub const DEFAULT_BASE_URL: &'static str =
        "https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release";

    /// A store at `base_url`, asked with `client` (which carries the
    /// caller's TLS roots and timeouts).
    pub fn new(client: reqwest::Client, base_url: &str) -> Self {
        Self {
            client,
            base_url: base_url.trim_end_matches('/').to_owned(),
        }
    }

    /// A store at `base_url` with a 30 s timeout per request, as upstream.
    pub fn with_default_client(base_url: &str) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()?;
        Ok(Self::new(client, base_url))
    }

    /// The URL of signature `index` (from 1) of `digest`.
    pub fn url(&self, digest: &str, index: usize) -> Result<String, SignatureError> {
        let (algorithm, hex) = split_digest(digest)?;
        Ok(format!("{}/{algorithm}={hex}/signature-{index}", self.base_url))
    }

    /// Signature `index` of `digest`, or `None` when the store has no such
    /// signature (404): signatures are numbered without gaps.
    pub async fn fetch(&self, digest: &str, index: usize) -> Result<Option<Vec<u8>>, SignatureError> {
        let url = self.url(digest, index)?;
        let request_error = |source| FetchError::Request {
            url: url.clone(),
            source,
        };
        let response = self.client.get(&url).send().await.map_err(request_error)?;
        match response.status().as_u16() {
            404 => Ok(None),
            200..=299 => Ok(Some(response.bytes().await.map_err(request_error)?.to_vec())),
            status => Err(FetchError::Status { url, status }.into()),
        }
    }

    /// Verifies `digest`: fetches its signatures in order until one is
    /// valid. Fails with every rejection reason when none is, and with the
    /// fetch error when the store cannot be asked.
    pub async fn verify(&self, digest: &str, keys: &TrustedKeys) -> Result<(), SignatureError> {
        let mut rejected = Vec::new();
        for index in 1..=MAX_SIGNATURES {
            let Some(signature) = self.fetch(digest, index).await? else {
                break;
            };
            match verify_one(digest, &signature, keys) {
                Ok(()) => return Ok(()),
                Err(why) => rejected.push(format!("signature-{index}: {why}")),
            }
        }
        Err(SignatureError::NotVerified {
            digest: digest.to_owned(),
            rejected,
        })
    }
}
