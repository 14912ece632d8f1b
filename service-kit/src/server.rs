//! The API servers of a service, all with one middleware stack: request
//! tracing (outermost), CORS where the service wants it, latency by route
//! where it keeps a histogram for it, and error counting; unknown paths and
//! methods are answered with JSON 404 and 405. They are served over
//! `http1-server`'s connections, with the bound on open connections where
//! the service has one. No public route takes a request body: one is
//! answered 413 before a byte of it is read (the layer's default gate), so
//! a client cannot make the server hold bodies nobody reads.
//!
//! A service may answer requests whose answer is at hand from their head
//! alone, beside the app (see [`ApiServer::answers_at_hand`]): an answer
//! the stack would leave as it is, but for CORS's `Vary`, costs a third
//! less without the stack's routing and boxed middleware.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::{RequestHead, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::{Condition, Next, from_fn};
use actix_web::{App, web};
use prometheus::HistogramVec;

use cincinnati_core::{ApiError, ErrorKind};
pub use http1_server::Prepared;
use http1_server::{
    Admission, BodyBudget, ConnectionLimit, DEFAULT_BODY_BUDGET_BYTES, Gate, LimitMetrics, Options, Server,
    Timeouts,
};
use prometheus::{IntCounter, IntGauge};

use crate::metrics::MetricRegistry;
use crate::settings::ConnectionSettings;
use crate::telemetry::trace_requests;
use http_answers::accept::APPLICATION_JSON;
use http_answers::errors::{ResponseErrors, count_errors, not_found};

type Routes = Arc<dyn Fn(&mut web::ServiceConfig) + Send + Sync>;

type AtHand = Arc<dyn Fn(&RequestHead) -> Option<Prepared> + Send + Sync>;

/// One API server, as a service describes it; see [`crate::service::Kit::api_server`].
pub struct ApiServer {
    address: SocketAddr,
    errors: ResponseErrors,
    workers: Option<usize>,
    connections: Option<(ConnectionSettings, ConnectionLimit)>,
    cors: bool,
    durations: Option<RequestDurations>,
    routes: Routes,
    at_hand: Option<AtHand>,
}

/// `HistogramVec{route}` observed with the time to answer each request,
/// labelled with the matched route pattern (so unknown paths cannot blow up
/// the label set).
#[derive(Clone)]
pub struct RequestDurations(pub HistogramVec);

impl RequestDurations {
    fn observe(&self, route: &str, started: Instant) {
        self.0
            .with_label_values(&[route])
            .observe(started.elapsed().as_secs_f64());
    }
}

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
            at_hand: None,
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

    /// Answers at hand: `answer` is asked about every request without a
    /// body (and, with CORS, without an `Origin`, which actix-cors answers
    /// itself) before the app is, and what it answers is written without
    /// the app's routing and middleware. Its contract: it answers only a
    /// request whose path is exactly a route's pattern, only with a
    /// success (2xx or 304: nothing for the error count), and only as that
    /// route would (a test of the service holds each answer to its
    /// route's); it must not block. The stack's part is done here: CORS's
    /// `Vary`, the route's duration. Not while spans are exported
    /// (`OTEL_EXPORTER_OTLP_*_ENDPOINT`): every request then goes through
    /// the app, which records its span.
    pub fn answers_at_hand(
        mut self,
        answer: impl Fn(&RequestHead) -> Option<Prepared> + Send + Sync + 'static,
    ) -> Self {
        self.at_hand = Some(Arc::new(answer));
        self
    }

    /// Binds the address (port 0 picks a free port); await (or spawn) the
    /// server. Signals are left to the caller, which stops every server of
    /// the process together.
    pub(crate) fn bind(self) -> std::io::Result<(Server, SocketAddr)> {
        let errors = web::Data::new(self.errors);
        let gate = self
            .at_hand
            .filter(|_| !crate::telemetry::export_configured())
            .map(|at_hand| gate(at_hand, self.cors, self.durations.clone()));
        let durations = self.durations.map(web::Data::new);
        let (routes, cors) = (self.routes, self.cors);
        let factory = move || {
            let mut app = App::new().app_data(errors.clone());
            if let Some(durations) = &durations {
                app = app.app_data(durations.clone());
            }
            let routes = routes.clone();
            // Timing only where a histogram is kept: elsewhere the layer
            // would box every request's future for nothing.
            app.wrap(from_fn(count_errors))
                .wrap(Condition::new(durations.is_some(), from_fn(time_requests)))
                .wrap(Condition::new(cors, crate::cors::cors()))
                .wrap(Condition::new(cors, from_fn(crate::cors::extend_vary)))
                .wrap(from_fn(trace_requests))
                .configure(move |config| routes(config))
                .default_service(web::to(not_found))
        };
        let mut options = Options {
            body_budget: body_budget(),
            gate: gate.unwrap_or_default(),
            ..Options::new("api")
        };
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
        http1_server::bind(self.address, factory, options)
    }
}

/// The API server's gate with answers at hand (see
/// [`ApiServer::answers_at_hand`]): takes every request `at_hand` does not
/// answer, with no body, as the default gate does.
fn gate(at_hand: AtHand, cors: bool, durations: Option<RequestDurations>) -> Gate {
    Gate::new(move |head, body| {
        if body.is_present() || (cors && head.headers.contains_key(header::ORIGIN)) {
            return Admission::Take(0);
        }
        // The clock read only where a duration is kept.
        let started = durations.as_ref().map(|_| Instant::now());
        let Some(mut prepared) = at_hand(head) else {
            return Admission::Take(0);
        };
        if cors {
            prepared.vary = Some(crate::cors::extended(prepared.vary.as_ref()));
        }
        if let (Some(durations), Some(started)) = (&durations, started) {
            // The route's pattern, which the path is exactly.
            durations.observe(head.uri.path(), started);
        }
        Admission::Prepared(prepared)
    })
}

/// The bound of `max` open connections of an API server, its metrics
/// (`open_connections`, `connections_refused_total`) registered, a refused
/// connection counted among the service's error answers.
pub(crate) fn api_connection_limit(
    max: usize,
    registry: &MetricRegistry,
    errors: &ResponseErrors,
) -> prometheus::Result<ConnectionLimit> {
    let refused = registry.add(IntCounter::new(
        "connections_refused_total",
        "Connections answered 503 and closed on arrival because the limit of open connections was reached",
    )?)?;
    let metrics = LimitMetrics {
        open: registry.add(IntGauge::new("open_connections", "Client connections open now")?)?,
        refused: vec![refused, errors.counter(ErrorKind::ServiceUnavailable)],
    };
    Ok(connection_limit(max, metrics))
}

/// A bound of `max` open connections counted in `metrics`, a connection
/// beyond it answered with the services' JSON error.
pub(crate) fn connection_limit(max: usize, metrics: LimitMetrics) -> ConnectionLimit {
    let error = ApiError::new(
        ErrorKind::ServiceUnavailable,
        format_args!("the limit of {max} open connections is reached; try again later"),
    );
    ConnectionLimit::new(max, metrics, APPLICATION_JSON, error.to_json().as_bytes())
}

/// The layer's budget for the bodies a server holds at once, a body beyond
/// it answered with the services' JSON error.
pub(crate) fn body_budget() -> BodyBudget {
    let error = ApiError::new(
        ErrorKind::ServiceUnavailable,
        "the server holds as many request bodies as it may at once; try again later",
    );
    BodyBudget::new(
        DEFAULT_BODY_BUDGET_BYTES,
        APPLICATION_JSON,
        error.to_json().as_bytes(),
    )
}

/// Observes the app's [`RequestDurations`] (when it has them), except for
/// requests held waiting for a change.
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
    // A request held until its answer changed (`http_answers::wait`) took
    // as long as the upstream stayed the same, not as long as answering.
    if !http_answers::wait::is_marked(response.headers()) {
        durations.observe(&route, started);
    }
    Ok(response)
}
