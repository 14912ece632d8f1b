//! The operator plane's routes, on the status port: [`explain`], [`fleet`]
//! (with a fleet store), [`rollouts`] and [`alerts`] (with rollout
//! control), and the status port's own `{prefix}/openapi`. With rollout
//! control every answer but the explanation asks for a bearer token
//! (`Operator::authorize`), the scope its question or change needs.

mod alerts;
mod explain;
mod fleet;
mod rollouts;

use std::sync::Arc;

use actix_web::web;
use http_answers::routes::get_or_head;
use http_answers::{CachePolicy, PathPrefix};

use super::Operator;
use crate::openapi::{self, OpenApiDocument};

/// Where the fleet answers are, under the prefix (the explorer's Fleet
/// view asks them there).
pub const FLEET_PATH: &str = fleet::PATH;

/// The status port's routes under `prefix`, as its [`openapi`] document
/// (served there too) describes them.
pub fn configure_status(
    prefix: PathPrefix,
    operator: Arc<Operator>,
    caching: CachePolicy,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static {
    let openapi = web::Data::new(OpenApiDocument::status(
        &prefix,
        operator.fleet().is_some(),
        operator.control().is_some(),
    ));
    let caching = web::Data::new(caching);
    let explain = explain::configure(&prefix, operator.engine().clone());
    let fleet = operator
        .fleet()
        .is_some()
        .then(|| fleet::configure(&prefix, operator.clone()));
    let rollouts = operator.control().cloned().map(|control| {
        (
            rollouts::configure(&prefix, operator.clone()),
            alerts::configure(&prefix, operator.clone(), control),
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
