//! Fetching release signatures from a signature store over HTTP(S), through
//! `http-fetch`: bounded, with the caller's extra CAs, traced.

use std::time::Duration;

use http_fetch::{ClientSettings, ExtraRoots, Get, HttpClient, StatusCode, Url};

use super::{SignatureError, TrustedKeys, split_digest, verify_one};

/// Stores number signatures from 1; upstream looks at no more than this many.
pub const MAX_SIGNATURES: usize = 9;

/// The largest signature accepted. Real ones are about a kilobyte; this
/// bounds what a hostile or broken store can make us hold.
pub const MAX_SIGNATURE_BYTES: usize = 64 * 1024;

/// How long one request may take, as upstream.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A signature store: `<base>/<algo>=<hex>/signature-<i>`.
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

/// The store could not be asked (as opposed to having no valid signature).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Unreachable, or a signature over [`MAX_SIGNATURE_BYTES`].
    #[error(transparent)]
    Http(#[from] http_fetch::FetchError),
    #[error("fetching {url}: HTTP {status}")]
    Status { url: Url, status: u16 },
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
    pub fn url(&self, digest: &str, index: usize) -> Result<Url, SignatureError> {
        let (algorithm, hex) = split_digest(digest)?;
        let url = format!("{}/{algorithm}={hex}/signature-{index}", self.base_url);
        Ok(Url::parse(&url).expect("a valid base URL with a path appended"))
    }

    /// Signature `index` of `digest`, or `None` when the store has no such
    /// signature (404): signatures are numbered without gaps.
    pub async fn fetch(&self, digest: &str, index: usize) -> Result<Option<Vec<u8>>, SignatureError> {
        let url = self.url(digest, index)?;
        let response = self
            .client
            .get(Get::new("signature", &url, MAX_SIGNATURE_BYTES))
            .await
            .map_err(FetchError::from)?;
        match response.status {
            StatusCode::NOT_FOUND => Ok(None),
            status if status.is_success() => Ok(Some(response.body.to_vec())),
            status => Err(FetchError::Status {
                url: response.url,
                status: status.as_u16(),
            }
            .into()),
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
