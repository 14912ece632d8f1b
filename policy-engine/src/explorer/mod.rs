//! The update graph explorer: a page every engine serves at `{prefix}/`
//! that draws a channel's releases and updates, plans the way from one
//! release to another and says why an update is missing; and the JSON
//! answers it reads, which are the command-line client's documents.
//!
//! - [`page`]: the page, its script and style, compiled in.
//! - [`answers`]: `{prefix}/v1/architectures`, `/v1/channels`,
//!   `/v1/channel`, `/v1/path`, `/v1/explain`.
//! - [`graphs`]: the planning library's graph of each architecture, built
//!   from the upstream's full graph.
//!
//! The page draws a channel as `/v1/channel` answers it (the library's
//! version order and the CVO's rules, applied here, not in the page's
//! script) and asks `/v1/path` and `/v1/explain` for the rest. An engine
//! chained to another engine has no full graph: it asks its upstream
//! engine's `/v1/...` and answers with that. The drawing is hand-written
//! SVG: see docs/ARCHITECTURE.md.
//!
//! The same page, its assets and answers are served on the status port
//! too, where an engine with a fleet store answers `{prefix}/v1/fleet/...`
//! (cluster ids are not public): there, and only there, the page is told
//! where those answers are and shows its Fleet view. The public page never
//! learns of the fleet, so it never asks.

mod answers;
mod graphs;
mod page;

use std::sync::Arc;

use actix_web::web;
use http_answers::routes::get_or_head;
use http_answers::{CachePolicy, PathPrefix};

use crate::client::Engine;
use graphs::Graphs;
use page::Variant;

/// The explorer of one engine, for both of its ports: one [`Graphs`], so
/// a graph built for the page on one port serves the other.
pub struct Explorer {
    prefix: PathPrefix,
    graphs: web::Data<Graphs>,
    caching: web::Data<CachePolicy>,
}

impl Explorer {
    pub fn new(prefix: PathPrefix, engine: Arc<Engine>, caching: CachePolicy) -> Self {
        Self {
            prefix,
            graphs: web::Data::new(Graphs::new(engine)),
            caching: web::Data::new(caching),
        }
    }

    /// The public port's routes under the prefix: the JSON answers always
    /// (they are part of the API, in `/openapi`), the page and its assets
    /// when `serve_page`.
    pub fn public_routes(
        &self,
        serve_page: bool,
    ) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static {
        self.routes(serve_page.then_some(Variant::Public))
    }

    /// The status port's routes under the prefix (with `service.explorer`
    /// on): the page, its assets and the answers it reads (it asks its own
    /// origin), with its Fleet view when the engine has a fleet store,
    /// whose answers are on this port at `fleet`.
    pub fn status_routes(
        &self,
        fleet: Option<&'static str>,
    ) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static {
        self.routes(Some(fleet.map_or(Variant::Public, Variant::Fleet)))
    }

    fn routes(&self, page: Option<Variant>) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static {
        let (prefix, graphs, caching) = (self.prefix.clone(), self.graphs.clone(), self.caching.clone());
        let assets: Vec<_> = page
            .map(|variant| {
                page::ASSETS
                    .iter()
                    .map(|asset| (asset.path, web::Data::new(asset.prepare(variant))))
                    .collect()
            })
            .unwrap_or_default();
        move |config| {
            config.app_data(graphs.clone()).app_data(caching.clone());
            config
                .service(get_or_head(
                    &prefix.join("/v1/architectures"),
                    answers::architectures,
                ))
                .service(get_or_head(&prefix.join("/v1/channels"), answers::channels))
                .service(get_or_head(&prefix.join("/v1/channel"), answers::channel))
                .service(get_or_head(&prefix.join("/v1/path"), answers::path))
                .service(get_or_head(&prefix.join("/v1/explain"), answers::explanation));
            for (path, asset) in &assets {
                config.service(get_or_head(&prefix.join(path), page::serve).app_data(asset.clone()));
            }
        }
    }
}
