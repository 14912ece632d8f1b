//! The API servers of a service, all with one middleware stack: request
//! tracing (outermost), CORS where the service wants it, latency by route
//! where it keeps a histogram for it, error counting, and the bound on open
//! connections where it has one (innermost); unknown paths and methods are
//! answered with JSON 404 and 405.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_cors::Cors;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::{Condition, Next, from_fn};
use actix_web::{App, web};
use prometheus::HistogramVec;

use crate::connections::{ConnectionLimit, refuse_beyond_limit};
use crate::errors::{ResponseErrors, count_errors, not_found};
use crate::http1::{self, Options, Server, Timeouts};
use crate::settings::ConnectionSettings;
use crate::telemetry::trace_requests;

type Routes = Arc<dyn Fn(&mut web::ServiceConfig) + Send + Sync>;

/// One API server, as a service describes it; see [`crate::service::Kit::api_server`].
pub struct ApiServer {
    address: SocketAddr,
    errors: ResponseErrors,
    workers: Option<usize>,
    connections: Option<(ConnectionSettings, ConnectionLimit)>,
    cors: bool,
    durations: Option<RequestDurations>,
    routes: Routes,
}

/// `HistogramVec{route}` observed with the time to answer each request,
/// labelled with the matched route pattern (so unknown paths cannot blow up
/// the label set).
#[derive(Clone)]
pub struct RequestDurations(pub HistogramVec);

impl ApiServer {
    pub(crate) fn new(address: SocketAddr, errors: ResponseErrors) -> Self {
        Self {
            address,
            errors,
            workers: None,
            connections: None,
            cors: false,
            durations: None,
            routes: Arc::new(|_| {}),
        }
    }

    /// Worker threads (default: one per CPU core).
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = Some(workers);
        self
    }

    /// Upstream's connection knobs, and the bound on open connections.
    pub(crate) fn connections(mut self, settings: &ConnectionSettings, limit: ConnectionLimit) -> Self {
        if settings.workers > 0 {
            self.workers = Some(settings.workers);
        }
        self.connections = Some((settings.clone(), limit));
        self
    }

    /// Answers cross-origin GETs and HEADs from any origin.
    pub fn cors(mut self) -> Self {
        self.cors = true;
        self
    }

    /// Observes each request's duration by route.
    pub fn request_durations(mut self, histogram: HistogramVec) -> Self {
        self.durations = Some(RequestDurations(histogram));
        self
    }

    /// The routes, and the app data their handlers read.
    pub fn routes(mut self, routes: impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static) -> Self {
        self.routes = Arc::new(routes);
        self
    }

    /// Binds the address (port 0 picks a free port); await (or spawn) the
    /// server. Signals are left to the caller, which stops every server of
    /// the process together.
    pub(crate) fn bind(self) -> std::io::Result<(Server, SocketAddr)> {
        let errors = web::Data::new(self.errors);
        let app_limit = self
            .connections
            .as_ref()
            .map(|(_, limit)| web::Data::new(limit.clone()));
        let durations = self.durations.map(web::Data::new);
        let (routes, cors) = (self.routes, self.cors);
        let factory = move || {
            let mut app = App::new().app_data(errors.clone());
            if let Some(limit) = &app_limit {
                app = app.app_data(limit.clone());
            }
            if let Some(durations) = &durations {
                app = app.app_data(durations.clone());
            }
            let routes = routes.clone();
            app.wrap(from_fn(refuse_beyond_limit))
                .wrap(from_fn(count_errors))
                .wrap(from_fn(time_requests))
                .wrap(Condition::new(
                    cors,
                    Cors::default()
                        .allow_any_origin()
                        .allowed_methods(["GET", "HEAD"]),
                ))
                .wrap(from_fn(trace_requests))
                .configure(move |config| routes(config))
                .default_service(web::to(not_found))
        };
        let mut options = Options::new("api");
        if let Some(workers) = self.workers {
            options.workers = workers;
        }
        if let Some((settings, limit)) = self.connections {
            options.timeouts = Timeouts {
                keep_alive: Duration::from_secs(settings.keep_alive),
                client_request: Duration::from_secs(settings.client_timeout),
                ..Timeouts::default()
            };
            options.backlog = settings.backlog;
            options.max_connections_per_worker = settings.max_connections;
            options.limit = Some(limit);
        }
        http1::bind(self.address, factory, options)
    }
}

/// Observes the app's [`RequestDurations`], if it has one.
async fn time_requests(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let Some(durations) = request.app_data::<web::Data<RequestDurations>>().cloned() else {
        return next.call(request).await;
    };
    let started = Instant::now();
    let route = request.match_pattern().unwrap_or_else(|| "unmatched".to_owned());
    let response = next.call(request).await?;
    durations
        .0
        .with_label_values(&[route.as_str()])
        .observe(started.elapsed().as_secs_f64());
    Ok(response)
}
