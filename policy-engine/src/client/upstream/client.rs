//! One fetch of the upstream graph: conditional (`If-None-Match`), gzip,
//! bounded in time and size and traced, through `http-fetch` (the fetch
//! path every outgoing request takes); what the answer means is read here.
//! A fetch may ask the upstream to hold it until its graph changes
//! (`http_answers::wait`).

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use cincinnati_core::ErrorKind;
use http_answers::accept::APPLICATION_JSON;
use http_fetch::{ClientSettings, ExtraRoots, HttpClient, Request, StatusCode, Url};
use service_kit::secret::RedactedUrl;

use super::UpstreamParameters;

/// Fetches the upstream's `/graph`.
#[derive(Debug, Clone)]
pub struct UpstreamClient {
    http: HttpClient,
    url: RedactedUrl,
    max_body_bytes: usize,
    timeout: Duration,
}

/// What a fetch brought.
#[derive(Debug)]
pub enum Fetched {
    /// The upstream answered 304 to our `If-None-Match`.
    NotModified,
    Body {
        body: Bytes,
        etag: Option<String>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Unreachable, or an answer over `max_body_bytes`.
    #[error(transparent)]
    Http(#[from] http_fetch::FetchError),
    #[error("{url} answered {status}: {body}")]
    Status {
        url: Url,
        status: StatusCode,
        body: String,
        /// The `kind` of a Cincinnati JSON error body, if it was one.
        error_kind: Option<ErrorKind>,
    },
}

#[derive(Debug, thiserror::Error)]
#[error("invalid upstream URL {url:?}: {reason}")]
pub struct InvalidUpstream {
    url: String,
    reason: String,
}

impl UpstreamClient {
    /// `root_certificate_dir` holds CAs trusted besides the system's.
    pub fn new(
        url: &RedactedUrl,
        timeout: Duration,
        max_body_bytes: usize,
        root_certificate_dir: &Path,
    ) -> Result<Self, InvalidUpstream> {
        let invalid = |reason: String| InvalidUpstream {
            url: url.to_string(),
            reason,
        };
        let http = HttpClient::new(ClientSettings {
            user_agent: concat!("cincinnati-rs-policy-engine/", env!("CARGO_PKG_VERSION")).to_owned(),
            timeout,
            roots: ExtraRoots::from_dir(root_certificate_dir),
            gzip: true,
        })
        .map_err(|error| invalid(error.to_string()))?;
        Ok(Self {
            http,
            url: url.clone(),
            max_body_bytes,
            timeout,
        })
    }

    /// The upstream URL as shown (its password redacted).
    pub fn url(&self) -> &RedactedUrl {
        &self.url
    }

    /// GETs the upstream URL with `parameters` added to its query (as the
    /// client span `GET upstream`, whose context the upstream receives).
    pub async fn fetch(
        &self,
        parameters: &UpstreamParameters,
        etag: Option<&str>,
    ) -> Result<Fetched, FetchError> {
        self.send(parameters, etag, false)
            .await
            .map(|(fetched, _)| fetched)
    }

    /// [`UpstreamClient::fetch`] of a graph whose tag is `etag`, asking the
    /// upstream to answer when it changes (`wait_for_change`), and whether
    /// the upstream waits: one that ignored the parameter answered at once,
    /// and is to be polled instead.
    pub async fn fetch_when_changed(
        &self,
        parameters: &UpstreamParameters,
        etag: &str,
    ) -> Result<(Fetched, bool), FetchError> {
        self.send(parameters, Some(etag), true).await
    }

    async fn send(
        &self,
        parameters: &UpstreamParameters,
        etag: Option<&str>,
        wait: bool,
    ) -> Result<(Fetched, bool), FetchError> {
        let mut url = self.url.expose();
        if !parameters.pairs().is_empty() {
            url.query_pairs_mut().extend_pairs(parameters.pairs());
        }
        if let (true, Some(etag)) = (wait, etag) {
            url.query_pairs_mut()
                .append_pair(http_answers::wait::PARAMETER, etag);
        }
        let mut request = Request::get("upstream", &url, self.max_body_bytes)
            .accept(APPLICATION_JSON)
            .if_none_match(etag);
        if wait {
            request = request.timeout(self.timeout + http_answers::wait::WAIT);
        }
        let response = self.http.send(request).await?;
        let waits = response.headers.contains_key(http_answers::wait::HEADER);
        if response.status == StatusCode::NOT_MODIFIED {
            return Ok((Fetched::NotModified, waits));
        }
        if !response.status.is_success() {
            let mut url = response.url;
            // Errors are logged and shown in /status: no password in them.
            let _ = url.set_password(None);
            return Err(status_error(url, response.status, &response.body));
        }
        let fetched = Fetched::Body {
            body: response.body,
            etag: response.etag,
        };
        Ok((fetched, waits))
    }

    /// The upstream engine's explorer answer `{base}/v1/{endpoint}?{query}`
    /// (its graph URL's last segment replaced), whatever its status.
    pub async fn fetch_explorer_answer(
        &self,
        endpoint: &str,
        query: &str,
    ) -> Result<http_fetch::Response, http_fetch::FetchError> {
        let mut url = self.url.expose();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop().extend(["v1", endpoint]);
        }
        url.set_query(Some(query).filter(|query| !query.is_empty()));
        let request = Request::get("upstream explorer", &url, self.max_body_bytes).accept(APPLICATION_JSON);
        self.http.send(request).await
    }
}

fn status_error(url: Url, status: StatusCode, body: &[u8]) -> FetchError {
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        kind: String,
    }
    const SHOWN: usize = 512;
    let text = String::from_utf8_lossy(&body[..body.len().min(SHOWN)]).into_owned();
    FetchError::Status {
        url,
        status,
        error_kind: serde_json::from_slice::<ErrorBody>(body)
            .ok()
            .and_then(|error| error.kind.parse().ok()),
        body: text,
    }
}
