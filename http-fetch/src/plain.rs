//! `http://` requests over hyper's connection pool, without reqwest: a
//! reqwest client sets up TLS when it is built, and with OpenSSL that loads
//! the system's CA bundle (twice: OpenSSL's default paths, then the file
//! native-tls probes), about 80 ms of CPU here that a plain request never uses.
//! What reqwest would do differently (a proxy, a redirect) is left to it:
//! see [`HttpClient::send`](crate::HttpClient::send).

use std::io::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::TokioExecutor;
use reqwest::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};

use crate::bounded::{BoundedBody, Overflow};
use crate::error_chain::error_chain;

#[derive(Debug, Clone)]
pub(crate) struct PlainClient {
    pool: Client<HttpConnector, Empty<Bytes>>,
    /// The proxies the environment names, read when the client is made,
    /// as reqwest reads them.
    proxies: Arc<Matcher>,
    gzip: bool,
}

/// What the server answered, its body read within the limit.
pub(crate) struct PlainAnswer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// Why a plain exchange gave no answer.
pub(crate) enum PlainError {
    Transport(String),
    TooLarge,
}

impl PlainClient {
    pub(crate) fn new(gzip: bool) -> Self {
        let mut connector = HttpConnector::new();
        // As reqwest's.
        connector.set_nodelay(true);
        Self {
            pool: Client::builder(TokioExecutor::new()).build(connector),
            proxies: Arc::new(Matcher::from_system()),
            gzip,
        }
    }

    /// Whether this client asks `url` as reqwest would: `http://`, without
    /// credentials (reqwest sends them as basic authentication) or a
    /// fragment, and no proxy from the environment (`http_proxy`,
    /// `NO_PROXY`, …) applies.
    pub(crate) fn serves(&self, url: &Url) -> bool {
        url.scheme() == "http"
            && url.username().is_empty()
            && url.password().is_none()
            && url.fragment().is_none()
            && url
                .as_str()
                .parse()
                .is_ok_and(|uri| self.proxies.intercept(&uri).is_none())
    }

    /// Sends a bodiless `method` request to `url` with `headers` (as
    /// reqwest sends them: `accept`, `user-agent`, the caller's), gzip
    /// asked for and inflated when the client was made to.
    pub(crate) async fn exchange(
        &self,
        method: &http::Method,
        url: &Url,
        mut headers: HeaderMap,
        limit: usize,
    ) -> Result<PlainAnswer, PlainError> {
        if self.gzip {
            headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        }
        let mut request = http::Request::new(Empty::new());
        *request.method_mut() = method.clone();
        *request.uri_mut() = url
            .as_str()
            .parse()
            .map_err(|error: http::uri::InvalidUri| PlainError::Transport(error.to_string()))?;
        *request.headers_mut() = headers;
        let response = self
            .pool
            .request(request)
            .await
            .map_err(|error| PlainError::Transport(error_chain(&error)))?;
        let (mut parts, mut incoming) = response.into_parts();
        let gzipped = self.gzip
            && parts
                .headers
                .get(CONTENT_ENCODING)
                .is_some_and(|encoding| encoding.as_bytes().eq_ignore_ascii_case(b"gzip"));
        let mut body = if gzipped {
            // As reqwest: the headers describe the inflated body.
            parts.headers.remove(CONTENT_ENCODING);
            parts.headers.remove(CONTENT_LENGTH);
            Sink::Gzip(Box::new(flate2::write::GzDecoder::new(BoundedBody::new(limit))))
        } else {
            let declared = parts
                .headers
                .get(CONTENT_LENGTH)
                .and_then(|length| length.to_str().ok()?.parse::<u64>().ok());
            if declared.is_some_and(|length| length > limit as u64) {
                return Err(PlainError::TooLarge);
            }
            Sink::Identity(BoundedBody::new(limit))
        };
        while let Some(frame) = incoming.frame().await {
            let frame = frame.map_err(|error| PlainError::Transport(error_chain(&error)))?;
            if let Ok(chunk) = frame.into_data() {
                body.write(&chunk)?;
            }
        }
        Ok(PlainAnswer {
            status: parts.status,
            headers: parts.headers,
            body: body.finish()?,
        })
    }
}

/// Where a body's bytes go: kept as they come, or inflated first (the
/// limit then bounds the inflated bytes, as reqwest's does).
enum Sink {
    Identity(BoundedBody),
    Gzip(Box<flate2::write::GzDecoder<BoundedBody>>),
}

impl Sink {
    fn write(&mut self, chunk: &[u8]) -> Result<(), PlainError> {
        match self {
            Sink::Identity(body) => body.extend(chunk).map_err(|Overflow| PlainError::TooLarge),
            Sink::Gzip(decoder) => decoder.write_all(chunk).map_err(inflate_error),
        }
    }

    fn finish(self) -> Result<Bytes, PlainError> {
        match self {
            Sink::Identity(body) => Ok(body.freeze()),
            Sink::Gzip(decoder) => decoder.finish().map(BoundedBody::freeze).map_err(inflate_error),
        }
    }
}

/// The bounded body refuses bytes past the limit with an [`Overflow`];
/// any other error is the gzip stream's.
fn inflate_error(error: std::io::Error) -> PlainError {
    if error.get_ref().is_some_and(|inner| inner.is::<Overflow>()) {
        PlainError::TooLarge
    } else {
        PlainError::Transport(format!("error decoding response body: {error}"))
    }
}
