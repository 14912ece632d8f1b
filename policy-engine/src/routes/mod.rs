//! The client API: `{prefix}/graph`, `{prefix}/v1/graph`, `{prefix}/openapi`,
//! `{prefix}/v1/openapi`.

pub mod graph;
pub mod openapi;

use actix_web::web;
use service_kit::PathPrefix;
use service_kit::routes::get_or_head;

/// The API routes under `prefix`, as [`openapi`] documents them.
pub fn configure(prefix: &PathPrefix) -> impl FnOnce(&mut web::ServiceConfig) + '_ {
    move |config| {
        for path in ["/graph", "/v1/graph"] {
            config.service(get_or_head(&prefix.join(path), graph::graph));
        }
        for path in ["/openapi", "/v1/openapi"] {
            config.service(get_or_head(&prefix.join(path), openapi::openapi));
        }
    }
}
