//! The client API: `{prefix}/graph`, `{prefix}/v1/graph`, `{prefix}/openapi`,
//! `{prefix}/v1/openapi`; and on the status port, [`explain`], [`fleet`]
//! (with a fleet store), [`rollouts`] and [`alerts`] (with rollout control)
//! and their own `{prefix}/openapi`.

pub mod alerts;
pub mod explain;
pub mod fleet;
pub mod graph;
pub mod openapi;
pub mod rollouts;

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

/// The status port's routes under `prefix`, as its [`openapi`] document
/// (served there too) describes them.
pub fn configure_status(
    prefix: PathPrefix,
    engine: Arc<Engine>,
    caching: CachePolicy,
    max_alert_bytes: usize,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static {
    let openapi = web::Data::new(OpenApiDocument::status(
        &prefix,
        engine.fleet().is_some(),
        engine.control().is_some(),
    ));
    let caching = web::Data::new(caching);
    let explain = explain::configure(&prefix, engine.clone());
    let fleet = (engine.fleet().cloned()).map(|fleet| fleet::configure(&prefix, engine.clone(), fleet));
    let rollouts = (engine.control().cloned()).map(|control| {
        (
            rollouts::configure(&prefix, control.clone()),
            alerts::configure(&prefix, control, max_alert_bytes),
        )
    });
    move |config| {
        explain(config);
        if let Some(fleet) = &fleet {
            fleet(config);
        }
        if let Some((rollouts, alerts)) = &rollouts {
            rollouts(config);
            alerts(config);
        }
        for path in ["/openapi", "/v1/openapi"] {
            config.service(
                get_or_head(&prefix.join(path), openapi::openapi)
                    .app_data(openapi.clone())
                    .app_data(caching.clone()),
            );
        }
    }
}
