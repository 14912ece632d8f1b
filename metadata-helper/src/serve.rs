//! `GET`/`HEAD {prefix}/signatures/{algo}={digest}/signature-{N}`: the
//! signature file's bytes as `application/octet-stream`, with a strong ETag
//! (answering 304 to a matching `If-None-Match`) and a long, immutable
//! `Cache-Control`: a signature for a digest never changes.
//!
//! The path is checked ([`crate::request::parse`]) before the set is asked;
//! errors are the `{kind, value}` JSON of the other services. A file the set
//! refuses (out of the tree, too large) is answered as missing and logged.
//!
//! Lookups read the file on the worker thread, as nginx does: a signature
//! is under a kilobyte and in the page cache, so moving the read to a
//! blocking pool would cost more than it saves.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, Resource, web};
use cincinnati_core::{ApiError, ErrorKind};
use image_signature::layout::SignatureName;
use service_kit::accept::header_values;
use service_kit::prepared::matches_if_none_match;
use service_kit::routes::get_or_head;
use service_kit::{CachePolicy, HttpError, PathPrefix};

use crate::metrics::ServeMetrics;
use crate::request;
use crate::set::{LookupError, Signature};
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
}

impl SignatureRoute {
    pub fn new(signatures: Signatures, metrics: ServeMetrics) -> Self {
        Self {
            signatures,
            metrics,
            caching: CachePolicy::immutable(MAX_AGE),
        }
    }

    /// The route's pattern under `prefix` (also its metrics' `uri_path`).
    pub fn pattern(prefix: &PathPrefix) -> String {
        prefix.join("/signatures/{algo_digest}/{signature}")
    }

    /// The route under `prefix`, answered from `self` (moved into app data).
    pub fn resource(self, prefix: &PathPrefix) -> Resource {
        get_or_head(&Self::pattern(prefix), serve).app_data(web::Data::new(self))
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
        let not_modified =
            matches_if_none_match(&header_values(request, &header::IF_NONE_MATCH), &found.etag);
        let mut response = if not_modified {
            HttpResponse::NotModified()
        } else {
            HttpResponse::Ok()
        };
        response
            .insert_header((header::ETAG, found.etag))
            .insert_header((header::CACHE_CONTROL, self.caching.header_value()));
        if not_modified {
            return response.finish();
        }
        response.content_type(CONTENT_TYPE).body(found.bytes)
    }
}

async fn serve(request: HttpRequest, route: web::Data<SignatureRoute>) -> Result<HttpResponse, HttpError> {
    let pattern = request.match_pattern().unwrap_or_default();
    let _timer = route.metrics.start(&pattern);
    let segment = |name| request.match_info().get(name).unwrap_or_default();
    Ok(route.answer(&request, segment("algo_digest"), segment("signature"))?)
}

fn missing(name: &SignatureName) -> ApiError {
    ApiError::new(ErrorKind::DoesNotExist, format_args!("signature {}", name.path()))
}
