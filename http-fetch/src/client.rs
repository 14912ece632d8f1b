//! One GET: conditional if asked, bounded in time (the client's timeout) and
//! size (the request's limit), in a client span that sends its context.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use opentelemetry::trace::Status;
use reqwest::header::{
    ACCEPT, AUTHORIZATION, ETAG, HeaderMap, HeaderName, HeaderValue, IF_NONE_MATCH, USER_AGENT,
};
use reqwest::{Method, StatusCode, Url};
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use crate::bounded::{BoundedBody, Overflow};
use crate::error_chain::error_chain;
use crate::plain::{PlainClient, PlainError};
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
/// Its clones share its connections and its TLS set-up.
#[derive(Debug, Clone)]
pub struct HttpClient {
    settings: Arc<ClientSettings>,
    /// `http://` requests, without TLS.
    plain: PlainClient,
    /// reqwest over OpenSSL, for the rest (`https://`, a proxy, a
    /// redirect), made on the first of them: making it loads the system's
    /// CA bundle, which an `http://` request never needs.
    tls: Arc<OnceLock<Result<reqwest::Client, ClientError>>>,
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
    /// A client with these settings; TLS is set up on its first `https://`
    /// request, and a failure to set it up is that request's error.
    pub fn new(settings: ClientSettings) -> Result<Self, ClientError> {
        Ok(Self {
            plain: PlainClient::new(settings.gzip),
            settings: Arc::new(settings),
            tls: Arc::new(OnceLock::new()),
        })
    }

    /// Whether this client (or a clone) has set up TLS, loading the
    /// system's trust roots: not until a request needed it.
    pub fn tls_configured(&self) -> bool {
        self.tls.get().is_some()
    }

    fn tls(&self) -> Result<&reqwest::Client, &ClientError> {
        self.tls
            .get_or_init(|| {
                let settings = &self.settings;
                let mut builder = reqwest::Client::builder()
                    .timeout(settings.timeout)
                    .gzip(settings.gzip)
                    .user_agent(settings.user_agent.as_str());
                for certificate in settings.roots.reqwest_certificates() {
                    builder = builder.add_root_certificate(certificate);
                }
                builder.build().map_err(ClientError)
            })
            .as_ref()
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

    /// Plain `http://` requests are sent without reqwest, unless a proxy
    /// applies; an answer redirecting elsewhere is asked again through
    /// reqwest, which follows redirects (to `https://` too) as before.
    async fn exchange(&self, request: Request<'_>) -> Result<Response, FetchError> {
        let url = without_credentials(request.url);
        let transport = |detail: String| FetchError::Transport {
            url: url.clone(),
            detail,
        };
        let too_large = || FetchError::TooLarge {
            url: url.clone(),
            limit: request.limit,
        };
        let headers = request.headers().map_err(transport)?;
        if self.plain.serves(request.url) {
            let timeout = request.timeout.unwrap_or(self.settings.timeout);
            let answer = tokio::time::timeout(
                timeout,
                self.plain.exchange(
                    &request.method,
                    request.url,
                    self.plain_headers(&headers),
                    request.limit,
                ),
            )
            .await
            .map_err(|_| transport(format!("operation timed out after {timeout:?}")))?;
            match answer {
                Ok(answer) if !is_followed_redirect(answer.status) => {
                    return Ok(Response {
                        url,
                        status: answer.status,
                        etag: etag(&answer.headers),
                        headers: answer.headers,
                        body: answer.body,
                    });
                }
                Ok(_) => {}
                Err(PlainError::TooLarge) => return Err(too_large()),
                Err(PlainError::Transport(detail)) => return Err(transport(detail)),
            }
        }
        let http = self.tls().map_err(|error| transport(error_chain(error)))?;
        let mut builder = http
            .request(request.method.clone(), request.url.clone())
            .headers(headers);
        if let Some(timeout) = request.timeout {
            builder = builder.timeout(timeout);
        }
        let reqwest_transport = |error: reqwest::Error| transport(error_chain(&error.without_url()));
        let mut response = builder.send().await.map_err(reqwest_transport)?;
        let status = response.status();
        let headers = response.headers().clone();
        if response
            .content_length()
            .is_some_and(|length| length > request.limit as u64)
        {
            return Err(too_large());
        }
        let mut body = BoundedBody::new(request.limit);
        while let Some(chunk) = response.chunk().await.map_err(reqwest_transport)? {
            body.extend(&chunk).map_err(|Overflow| too_large())?;
        }
        Ok(Response {
            url,
            status,
            etag: etag(&headers),
            headers,
            body: body.freeze(),
        })
    }

    /// `headers` with what reqwest adds to every request of this client.
    fn plain_headers(&self, headers: &HeaderMap) -> HeaderMap {
        let mut sent = headers.clone();
        sent.entry(ACCEPT).or_insert(HeaderValue::from_static("*/*"));
        if let Ok(agent) = HeaderValue::from_str(&self.settings.user_agent) {
            sent.insert(USER_AGENT, agent);
        }
        sent
    }
}

impl Request<'_> {
    /// The headers this request asks for, trace context included.
    fn headers(&self) -> Result<HeaderMap, String> {
        let mut headers = HeaderMap::new();
        let mut add = |name: &str, value: &str, sensitive: bool| -> Result<(), String> {
            let name =
                HeaderName::from_bytes(name.as_bytes()).map_err(|error| format!("header {name}: {error}"))?;
            let mut value =
                HeaderValue::from_str(value).map_err(|error| format!("header {name}: {error}"))?;
            value.set_sensitive(sensitive);
            headers.insert(name, value);
            Ok(())
        };
        if let Some(token) = self.bearer {
            add(AUTHORIZATION.as_str(), &format!("Bearer {token}"), true)?;
        }
        if let Some(media_type) = self.accept {
            add(ACCEPT.as_str(), media_type, false)?;
        }
        if let Some((name, value)) = self.header {
            add(name, value, false)?;
        }
        if let Some(etag) = self.if_none_match {
            add(IF_NONE_MATCH.as_str(), etag, false)?;
        }
        for (name, value) in trace::context_headers() {
            add(&name, &value, false)?;
        }
        Ok(headers)
    }
}

/// The statuses reqwest's default policy follows (304 and 300 it does not).
fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}

fn etag(headers: &HeaderMap) -> Option<String> {
    headers
        .get(ETAG)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

fn without_credentials(url: &Url) -> Url {
    let mut url = url.clone();
    // Fails only for URLs that cannot carry credentials anyway.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url
}
