//! The explorer page and its script and style, compiled into the binary
//! (no CDN, no build step: a disconnected cluster serves it as is) and
//! prepared once, so they go out as the graph does: ETag, gzip,
//! Cache-Control.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use http_answers::{CachePolicy, PreparedBody};

/// Everything the page loads comes from the engine itself; no inline
/// script or style, no frames, no plugins.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// One compiled-in file: where it is served under the prefix, and as what.
pub struct Asset {
    pub path: &'static str,
    content_type: &'static str,
    body: &'static str,
}

/// The page at `{prefix}/`, and what it loads (relative to it).
pub const ASSETS: [Asset; 4] = [
    Asset::new(
        "/",
        "text/html; charset=utf-8",
        include_str!("../../assets/explorer/index.html"),
    ),
    Asset::new(
        "/explorer/app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../assets/explorer/app.js"),
    ),
    Asset::new(
        "/explorer/style.css",
        "text/css; charset=utf-8",
        include_str!("../../assets/explorer/style.css"),
    ),
    Asset::new(
        "/explorer/icon.svg",
        "image/svg+xml",
        include_str!("../../assets/explorer/icon.svg"),
    ),
];

/// An asset, prepared.
pub struct Prepared {
    content_type: &'static str,
    body: PreparedBody,
}

impl Asset {
    const fn new(path: &'static str, content_type: &'static str, body: &'static str) -> Self {
        Self {
            path,
            content_type,
            body,
        }
    }

    pub fn prepare(&self) -> Prepared {
        Prepared {
            content_type: self.content_type,
            body: PreparedBody::new(self.body.as_bytes()),
        }
    }
}

pub async fn serve(
    request: HttpRequest,
    asset: web::Data<Prepared>,
    caching: web::Data<CachePolicy>,
) -> HttpResponse {
    let mut response = asset.body.respond(&request, asset.content_type, &caching);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}
