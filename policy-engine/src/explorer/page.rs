//! The explorer page and its script and style, compiled into the binary
//! (no CDN, no build step: a disconnected cluster serves it as is) and
//! prepared once, so they go out as the graph does: ETag, gzip,
//! Cache-Control. On the status port of an engine with a fleet store, the
//! page's `<body>` says where the fleet answers are ([`Variant::Fleet`]):
//! the one difference, which shows the page's Fleet view.

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

/// The page at `{prefix}/`, and what it loads (relative to it; fleet.js
/// only where it has fleet answers).
pub const ASSETS: [Asset; 5] = [
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
        "/explorer/fleet.js",
        "text/javascript; charset=utf-8",
        include_str!("../../assets/explorer/fleet.js"),
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

/// `<body>` as the page opens it.
const BODY: &str = r#"<body data-state="loading">"#;

/// Which page is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The page as written: no Fleet view, no request about the fleet.
    Public,
    /// On the status port of an engine with a fleet store: `<body
    /// data-fleet="v1/fleet/">` (the path of the fleet answers given,
    /// relative to the page), where the page finds them, and so shows its
    /// Fleet view.
    Fleet(&'static str),
}

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

    pub fn prepare(&self, variant: Variant) -> Prepared {
        let body = match variant {
            Variant::Fleet(answers) if self.path == "/" => fleet_page(self.body, answers),
            _ => self.body.to_owned(),
        };
        Prepared {
            content_type: self.content_type,
            body: PreparedBody::new(body.into_bytes()),
        }
    }
}

/// The page with its `<body>` telling where the fleet answers are.
fn fleet_page(page: &str, answers: &str) -> String {
    let fleet = format!(
        r#"<body data-state="loading" data-fleet="{}/">"#,
        answers.trim_start_matches('/')
    );
    page.replacen(BODY, &fleet, 1)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fleet_page_differs_from_the_public_one_by_where_the_fleet_answers_are() {
        let page = ASSETS[0].body;
        assert_eq!(ASSETS[0].path, "/");
        assert_eq!(
            page.matches(BODY).count(),
            1,
            "index.html opens <body> as BODY says"
        );
        assert!(!page.contains("data-fleet"), "the public page knows of no fleet");
        let fleet = fleet_page(page, "/v1/fleet");
        assert_eq!(
            fleet.replacen(r#" data-fleet="v1/fleet/""#, "", 1),
            page,
            "nothing else differs"
        );
    }
}
