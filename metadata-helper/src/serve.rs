//! `GET`/`HEAD {prefix}/signatures/{algo}={digest}/signature-{N}`: the
//! signature file's bytes as `application/octet-stream`, with a strong ETag
//! (answering 304 to a matching `If-None-Match`) and a long, immutable
//! `Cache-Control`: a signature for a digest never changes.
//!
//! The route is a scope on the static prefix `{prefix}/signatures`, its two
//! segments split off by hand: a route with `{…}` segments is matched with
//! a regular expression, again for each `match_pattern` (tracing, metrics),
//! which took a fifth of the helper's CPU under load.
//!
//! The path is checked ([`crate::request::parse`]) before the set is asked;
//! errors are the `{kind, value}` JSON of the other services. A file the set
//! refuses (out of the tree, too large) is answered as missing and logged.
//!
//! Lookups read the file on the worker thread, as nginx does: a signature
//! is under a kilobyte and in the page cache, so moving the read to a
//! blocking pool would cost more than it saves.

use std::time::Duration;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, Scope, web};
use cincinnati_core::{ApiError, ErrorKind};
use http_answers::conditional::respond_tagged;
use http_answers::errors::method_not_allowed;
use http_answers::{CachePolicy, HttpError, PathPrefix};
use image_signature::layout::SignatureName;

use crate::metrics::ServeMetrics;
use crate::request;
use crate::set::LookupError;
use crate::signature::Signature;
use crate::status::Signatures;

pub const CONTENT_TYPE: &str = "application/octet-stream";

/// How long caches keep a signature: a year, the longest RFC 9111 advises.
pub const MAX_AGE: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// What the route reads: the set in service, and its metrics.
#[derive(Clone)]
pub struct SignatureRoute {
    signatures: Signatures,
    metrics: ServeMetrics,
    caching: CachePolicy,
    /// [`SignatureRoute::pattern`], the metrics' `uri_path`.
    pattern: String,
}

impl SignatureRoute {
    pub fn new(signatures: Signatures, metrics: ServeMetrics, prefix: &PathPrefix) -> Self {
        Self {
            signatures,
            metrics,
            caching: CachePolicy::immutable(MAX_AGE),
            pattern: Self::pattern(prefix),
        }
    }

    /// The route's pattern under `prefix`: its metrics' `uri_path`.
    pub fn pattern(prefix: &PathPrefix) -> String {
        prefix.join("/signatures/{algo_digest}/{signature}")
    }

    /// The route under `prefix`, answered from `self` (moved into app data).
    pub fn scope(self, prefix: &PathPrefix) -> Scope {
        web::scope(&prefix.join("/signatures"))
            .app_data(web::Data::new(self))
            .default_service(web::to(serve))
    }

    /// The answer to `request` for the segments of the route.
    fn answer(
        &self,
        request: &HttpRequest,
        algo_digest: &str,
        signature: &str,
    ) -> Result<HttpResponse, ApiError> {
        let name = request::parse(algo_digest, signature)?;
        let set = self
            .signatures
            .set()
            .ok_or_else(|| ApiError::new(ErrorKind::ServiceUnavailable, "no signature set is loaded yet"))?;
        match set.lookup(&name) {
            Ok(Some(found)) => Ok(self.respond(request, found)),
            Ok(None) => Err(missing(&name)),
            Err(refused @ (LookupError::OutsideTree { .. } | LookupError::TooLarge { .. })) => {
                tracing::warn!(error = %refused, "signature refused");
                Err(missing(&name))
            }
            Err(error @ LookupError::Io { .. }) => {
                tracing::warn!(%error, "signature unreadable");
                Err(ApiError::new(ErrorKind::FileOpenError, name.path()))
            }
        }
    }

    fn respond(&self, request: &HttpRequest, found: Signature) -> HttpResponse {
        respond_tagged(request, &found.etag, &self.caching, None, |response| {
            response.content_type(CONTENT_TYPE).body(found.bytes)
        })
    }
}

async fn serve(request: HttpRequest, route: web::Data<SignatureRoute>) -> Result<HttpResponse, HttpError> {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return method_not_allowed(request).await;
    }
    let _timer = route.metrics.start(&route.pattern);
    // `/{algo}={digest}/{signature}` after the scope's prefix, as received
    // (`%2F` stays encoded); more segments stay in `signature` and fail its check.
    let tail = request.match_info().unprocessed().trim_start_matches('/');
    let (algo_digest, signature) = tail.split_once('/').unwrap_or((tail, ""));
    Ok(route.answer(&request, algo_digest, signature)?)
}

fn missing(name: &SignatureName) -> ApiError {
    ApiError::new(ErrorKind::DoesNotExist, format_args!("signature {}", name.path()))
}
