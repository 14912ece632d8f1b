//! One fetch of the upstream graph: conditional (`If-None-Match`), gzip,
//! bounded in time (a total timeout) and size (a body limit, checked while
//! reading so a huge answer is cut off, not buffered).

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use reqwest::header::{ACCEPT, ETAG, IF_NONE_MATCH};
use reqwest::{StatusCode, Url};
use service_kit::accept::APPLICATION_JSON;
use service_kit::telemetry;

/// Fetches the upstream's `/graph`.
#[derive(Debug, Clone)]
pub struct UpstreamClient {
    http: reqwest::Client,
    url: Url,
    max_body_bytes: usize,
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
    #[error("request to {url} failed: {detail}")]
    Transport { url: Url, detail: String },
    #[error("{url} answered {status}: {body}")]
    Status {
        url: Url,
        status: StatusCode,
        body: String,
        /// The `kind` of a Cincinnati JSON error body, if it was one.
        error_kind: Option<String>,
    },
    #[error("{url} sent more than {limit} bytes")]
    TooLarge { url: Url, limit: usize },
}

#[derive(Debug, thiserror::Error)]
#[error("invalid upstream URL {url:?}: {reason}")]
pub struct InvalidUpstream {
    url: String,
    reason: String,
}

impl UpstreamClient {
    pub fn new(url: &str, timeout: Duration, max_body_bytes: usize) -> Result<Self, InvalidUpstream> {
        let invalid = |reason: String| InvalidUpstream {
            url: url.to_owned(),
            reason,
        };
        let url = Url::parse(url).map_err(|error| invalid(error.to_string()))?;
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .gzip(true)
            .user_agent(concat!("cincinnati-rs-policy-engine/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| invalid(error.to_string()))?;
        Ok(Self {
            http,
            url,
            max_body_bytes,
        })
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    /// GETs the upstream URL with `parameters` added to its query, in a
    /// client span whose context the upstream receives.
    #[tracing::instrument(
        name = "GET upstream",
        skip_all,
        fields(
            otel.kind = "client",
            http.request.method = "GET",
            server.address = self.url.host_str(),
            server.port = self.url.port_or_known_default(),
            http.response.status_code = tracing::field::Empty,
        )
    )]
    pub async fn fetch(
        &self,
        parameters: &[(String, String)],
        etag: Option<&str>,
    ) -> Result<Fetched, FetchError> {
        let fetched = self.exchange(parameters, etag).await;
        if let Err(error) = &fetched {
            telemetry::mark_failed(error);
        }
        fetched
    }

    async fn exchange(
        &self,
        parameters: &[(String, String)],
        etag: Option<&str>,
    ) -> Result<Fetched, FetchError> {
        let mut url = self.url.clone();
        if !parameters.is_empty() {
            url.query_pairs_mut().extend_pairs(parameters);
        }
        let mut request = self.http.get(url.clone()).header(ACCEPT, APPLICATION_JSON);
        if let Some(etag) = etag {
            request = request.header(IF_NONE_MATCH, etag);
        }
        for (name, value) in telemetry::context_headers() {
            request = request.header(name, value);
        }
        // Errors end up in logs, traces and `/status`: they name the URL
        // without the credentials it may carry.
        let url = without_credentials(url);
        let transport = |url: &Url, error: reqwest::Error| FetchError::Transport {
            url: url.clone(),
            detail: error_chain(&error.without_url()),
        };
        let mut response = request.send().await.map_err(|error| transport(&url, error))?;
        let status = response.status();
        tracing::Span::current().record("http.response.status_code", status.as_u16());
        if status == StatusCode::NOT_MODIFIED {
            return Ok(Fetched::NotModified);
        }
        let etag = response
            .headers()
            .get(ETAG)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if response
            .content_length()
            .is_some_and(|length| length > self.max_body_bytes as u64)
        {
            return Err(FetchError::TooLarge {
                url,
                limit: self.max_body_bytes,
            });
        }
        let mut body = BytesMut::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| transport(&url, error))? {
            if body.len() + chunk.len() > self.max_body_bytes {
                return Err(FetchError::TooLarge {
                    url,
                    limit: self.max_body_bytes,
                });
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            return Err(status_error(url, status, &body));
        }
        Ok(Fetched::Body {
            body: body.freeze(),
            etag,
        })
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
            .map(|error| error.kind),
        body: text,
    }
}

fn without_credentials(mut url: Url) -> Url {
    // Fails only for URLs that cannot carry credentials anyway.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url
}

/// An error with its sources, which hold what actually went wrong
/// ("connection refused") behind reqwest's generic message.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
