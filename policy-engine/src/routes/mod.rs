//! The client API: `{prefix}/graph`, `{prefix}/v1/graph`, `{prefix}/openapi`,
//! `{prefix}/v1/openapi`; and on the status port, [`explain`] and
//! [`fleet`].

pub mod explain;
pub mod fleet;
pub mod graph;
pub mod openapi;

use std::sync::Arc;

use actix_web::web;
use http_answers::routes::get_or_head;
use http_answers::{CachePolicy, PathPrefix};

use crate::engine::Engine;
use openapi::OpenApiDocument;

/// The API routes under `prefix`, as [`openapi`] documents them, with what
/// their handlers read.
pub fn configure(
    prefix: PathPrefix,
    engine: Arc<Engine>,
    openapi: OpenApiDocument,
    caching: CachePolicy,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static {
    let engine = web::Data::from(engine);
    let openapi = web::Data::new(openapi);
    let caching = web::Data::new(caching);
    move |config| {
        config
            .app_data(engine.clone())
            .app_data(openapi.clone())
            .app_data(caching.clone());
        for path in ["/graph", "/v1/graph"] {
            config.service(get_or_head(&prefix.join(path), graph::graph));
        }
        for path in ["/openapi", "/v1/openapi"] {
            config.service(get_or_head(&prefix.join(path), openapi::openapi));
        }
    }
}
