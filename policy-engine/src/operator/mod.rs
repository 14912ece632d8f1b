//! The operator plane, on the status port: the fleet view recorded from
//! the update checks ([`fleet`]), rollouts under run-time control
//! ([`control`]), the per-cluster explanation, and their routes
//! ([`routes`]), through one façade, [`Operator`]. It reads the client
//! plane (the upstream's graphs, the engine's explanation); the client
//! plane knows it only as a `CheckSink`.

mod control;
mod error;
mod fleet;
mod routes;

pub(crate) use control::queries::Prometheus;
pub(crate) use control::tokens::Tokens;
pub(crate) use control::{Control, ControlMetrics, ControlPlan, ControlStatus, Intervals};
pub(crate) use error::OperatorError;
pub(crate) use fleet::keys::ClusterKeys;
pub(crate) use fleet::metrics::FleetMetrics;
pub(crate) use fleet::{Bounds, Fleet, FleetPlan, FleetStatus, Windows};
pub(crate) use routes::{FLEET_PATH, configure_status};

use std::sync::Arc;
use std::time::SystemTime;

use actix_web::dev::RequestHead;
use actix_web::http::{Method, header};
use actix_web::{HttpRequest, ResponseError as _};
use cincinnati_client::rollout::RolloutView;
use cincinnati_client::tokens::Scope;
use cincinnati_core::ApiError;
use http_answers::HttpError;
use rollout_model::time::from_system;
use service_kit::status::Admission;

use self::control::tokens::Bearer;
use crate::client::Engine;
use crate::cluster_policy::rollout_view;

/// The operator plane of one engine.
pub struct Operator {
    engine: Arc<Engine>,
    fleet: Option<Arc<Fleet>>,
    control: Option<Arc<Control>>,
}

impl Operator {
    pub fn new(engine: Arc<Engine>, fleet: Option<Arc<Fleet>>, control: Option<Arc<Control>>) -> Self {
        Self {
            engine,
            fleet,
            control,
        }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn fleet(&self) -> Option<&Arc<Fleet>> {
        self.fleet.as_ref()
    }

    pub fn control(&self) -> Option<&Arc<Control>> {
        self.control.as_ref()
    }

    /// Who `request`'s bearer token is, if it may do what `needed`
    /// allows; with no token file (no rollout control) nobody is asked for
    /// one: the status port's operator answers are then open to whoever
    /// reaches the port.
    pub fn authorize(&self, request: &HttpRequest, needed: Scope) -> Result<Option<Bearer>, ApiError> {
        let Some(control) = &self.control else {
            return Ok(None);
        };
        let authorization = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok());
        control.authorize(authorization, needed).map(Some)
    }

    /// What the status port reads of a request's body, decided from its
    /// head before a byte of it is read: only with rollout control (the
    /// only routes that take one are its changes), only a change's (any
    /// method but GET and HEAD), of up to `max_bytes`, and only from a
    /// token that may at least pause (the route then asks for the scope
    /// its change needs). Whoever reaches the port without a token makes
    /// it hold no body: the rest are refused unread (401, 403, 413).
    pub fn body_admission(
        &self,
        max_bytes: usize,
    ) -> impl Fn(&RequestHead) -> Admission + Send + Sync + 'static {
        let control = self.control.clone();
        move |head| {
            let Some(control) = control.as_ref() else {
                return Admission::Take(0);
            };
            if head.method == Method::GET || head.method == Method::HEAD {
                return Admission::Take(0);
            }
            let authorization = head
                .headers
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok());
            match control.authorize(authorization, Scope::Pause) {
                Ok(_) => Admission::Take(max_bytes),
                Err(error) => Admission::Answer(HttpError::from(error).error_response()),
            }
        }
    }

    /// Whether the engine may take traffic as far as this plane goes: once
    /// rollout control attempted its first read.
    pub fn is_ready(&self) -> bool {
        self.control.as_ref().is_none_or(|control| control.is_ready())
    }

    /// Every rollout as the documents show it at `now`.
    pub fn rollout_views(&self, now: SystemTime) -> Vec<RolloutView> {
        match &self.control {
            Some(control) => control.views(now),
            None => {
                let now = from_system(now);
                self.engine
                    .rollouts()
                    .iter()
                    .map(|rollout| rollout_view(rollout, now, None))
                    .collect()
            }
        }
    }

    /// Brings this plane's gauges up to date, before a scrape.
    pub fn update_gauges(&self) {
        if let Some(fleet) = &self.fleet {
            fleet.update_gauges();
        }
        if let Some(control) = &self.control {
            control.update_gauges();
        }
    }

    pub fn status(&self) -> (Option<FleetStatus>, Option<ControlStatus>) {
        (
            self.fleet.as_ref().map(|fleet| fleet.status()),
            self.control.as_ref().map(|control| control.status()),
        )
    }
}
