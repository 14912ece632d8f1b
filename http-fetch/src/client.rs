//! One GET: conditional if asked, bounded in time (the client's timeout) and
//! size (the request's limit), in a client span that sends its context.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use opentelemetry::trace::Status;
use reqwest::header::{ACCEPT, ETAG, HeaderMap, IF_NONE_MATCH};
use reqwest::{Method, StatusCode, Url};
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use crate::trace;
use crate::trust::ExtraRoots;

/// How a client connects; what it fetches is given per request ([`Get`]).
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// e.g. `cincinnati-rs-graph-builder/0.1.0`.
    pub user_agent: String,
    /// How long one request may take, body included.
    pub timeout: Duration,
    /// CAs trusted besides the system's.
    pub roots: ExtraRoots,
    /// Ask for gzip and inflate it; limits apply to the inflated bytes. Off
    /// for bodies that are gzip files themselves: a server that labels a
    /// `.tar.gz` `Content-Encoding: gzip` would have them inflated.
    pub gzip: bool,
}

/// A client for one purpose (an upstream, a tarball URL, a signature store).
#[derive(Debug, Clone)]
pub struct HttpClient {
    http: reqwest::Client,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot set up an HTTP client: {0}")]
pub struct ClientError(#[source] reqwest::Error);

/// A request to send: a GET, or a bodiless POST or PUT (an operator's
/// action, said in its query).
#[derive(Debug, Clone)]
pub struct Request<'a> {
    method: Method,
    what: &'static str,
    url: &'a Url,
    limit: usize,
    accept: Option<&'a str>,
    if_none_match: Option<&'a str>,
    bearer: Option<&'a str>,
    header: Option<(&'static str, &'a str)>,
    timeout: Option<Duration>,
}

impl<'a> Request<'a> {
    /// A GET of `url`; `what` names the client span (`GET {what}`); a body
    /// over `limit` bytes is refused.
    pub fn get(what: &'static str, url: &'a Url, limit: usize) -> Self {
        Self {
            method: Method::GET,
            what,
            url,
            limit,
            accept: None,
            if_none_match: None,
            bearer: None,
            header: None,
            timeout: None,
        }
    }

    /// The same request with another method (POST, PUT), without a body.
    pub fn with_method(self, method: Method) -> Self {
        Self { method, ..self }
    }

    /// With `Authorization: Bearer {token}` (never in a span or an error).
    pub fn bearer(self, token: &'a str) -> Self {
        Self {
            bearer: Some(token),
            ..self
        }
    }

    /// With one more header, `name: value` (a header the server defines,
    /// such as the policy-engine's `cincinnati-question`).
    pub fn header(self, name: &'static str, value: &'a str) -> Self {
        Self {
            header: Some((name, value)),
            ..self
        }
    }

    pub fn accept(self, media_type: &'a str) -> Self {
        Self {
            accept: Some(media_type),
            ..self
        }
    }

    /// This request may take `timeout` instead of the client's: one the
    /// server is asked to hold (`wait_for_change`) takes longer.
    pub fn timeout(self, timeout: Duration) -> Self {
        Self {
            timeout: Some(timeout),
            ..self
        }
    }

    /// A conditional GET: the server answers 304 when `etag` still matches.
    pub fn if_none_match(self, etag: Option<&'a str>) -> Self {
        Self {
            if_none_match: etag,
            ..self
        }
    }
}

/// Any status the server answered, with the body read (within the limit).
#[derive(Debug)]
pub struct Response {
    /// The URL asked, without credentials: for messages.
    pub url: Url,
    pub status: StatusCode,
    pub etag: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// The server could not be asked, or answered too much. Errors name the
/// URL without the credentials it may carry: they end up in logs, traces
/// and `/status`.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("request to {url} failed: {detail}")]
    Transport { url: Url, detail: String },
    #[error("{url} sent more than the {limit} bytes allowed")]
    TooLarge { url: Url, limit: usize },
}

impl HttpClient {
    pub fn new(settings: ClientSettings) -> Result<Self, ClientError> {
        let mut builder = reqwest::Client::builder()
            .timeout(settings.timeout)
            .gzip(settings.gzip)
            .user_agent(settings.user_agent);
        for certificate in settings.roots.reqwest_certificates() {
            builder = builder.add_root_certificate(certificate);
        }
        Ok(Self {
            http: builder.build().map_err(ClientError)?,
        })
    }

    /// Sends `request` in a client span: the status is recorded, and the
    /// span fails with an error or a 4xx/5xx answer.
    pub async fn send(&self, request: Request<'_>) -> Result<Response, FetchError> {
        let span = tracing::info_span!(
            "HTTP request",
            otel.name = format!("{} {}", request.method, request.what),
            otel.kind = "client",
            http.request.method = request.method.as_str(),
            server.address = request.url.host_str(),
            server.port = request.url.port_or_known_default(),
            http.response.status_code = tracing::field::Empty,
        );
        let fetched = self.exchange(request).instrument(span.clone()).await;
        match &fetched {
            Ok(response) => {
                span.record("http.response.status_code", response.status.as_u16());
                if response.status.is_client_error() || response.status.is_server_error() {
                    span.set_status(Status::error(response.status.to_string()));
                }
            }
            Err(error) => span.set_status(Status::error(error.to_string())),
        }
        fetched
    }

    async fn exchange(&self, request: Request<'_>) -> Result<Response, FetchError> {
        let mut builder = self.http.request(request.method.clone(), request.url.clone());
        if let Some(token) = request.bearer {
            builder = builder.bearer_auth(token);
        }
        if let Some(media_type) = request.accept {
            builder = builder.header(ACCEPT, media_type);
        }
        if let Some((name, value)) = request.header {
            builder = builder.header(name, value);
        }
        if let Some(etag) = request.if_none_match {
            builder = builder.header(IF_NONE_MATCH, etag);
        }
        if let Some(timeout) = request.timeout {
            builder = builder.timeout(timeout);
        }
        for (name, value) in trace::context_headers() {
            builder = builder.header(name, value);
        }
        let url = without_credentials(request.url);
        let transport = |error: reqwest::Error| FetchError::Transport {
            url: url.clone(),
            detail: error_chain(&error.without_url()),
        };
        let too_large = || FetchError::TooLarge {
            url: url.clone(),
            limit: request.limit,
        };
        let mut response = builder.send().await.map_err(transport)?;
        let status = response.status();
        let etag = response
            .headers()
            .get(ETAG)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let headers = response.headers().clone();
        if response
            .content_length()
            .is_some_and(|length| length > request.limit as u64)
        {
            return Err(too_large());
        }
        let mut body = BytesMut::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if body.len() + chunk.len() > request.limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Response {
            url,
            status,
            etag,
            headers,
            body: body.freeze(),
        })
    }
}

fn without_credentials(url: &Url) -> Url {
    let mut url = url.clone();
    // Fails only for URLs that cannot carry credentials anyway.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url
}

/// An error with its sources, which hold what actually went wrong
/// ("connection refused", "certificate verify failed") behind reqwest's
/// generic message.
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
