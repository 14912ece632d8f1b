//! A bound on open client connections. Every connection costs memory for as
//! long as it is open, idle keep-alive ones included, so a reconnect storm
//! could otherwise grow a service past its memory limit and get it killed.
//! Connections are counted as they open and close (`open_connections`);
//! beyond the limit a request is answered 503 `service_unavailable` and its
//! connection closed (`connections_refused_total`), so clients hear a clear
//! refusal and retry while those already connected keep being served.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::{HttpResponse, web};
use cincinnati_core::{ApiError, ErrorKind};
use prometheus::{IntCounter, IntGauge};

use crate::HttpError;
use crate::metrics::MetricRegistry;

/// The open connections of one server and their limit; cheap to clone.
#[derive(Clone)]
pub struct ConnectionLimit {
    open: Arc<AtomicUsize>,
    limit: usize,
    open_gauge: IntGauge,
    refused: IntCounter,
}

/// Held by a connection: counts it while it is open.
pub(crate) struct OpenConnection(ConnectionLimit);

impl ConnectionLimit {
    /// Registers `open_connections` and `connections_refused_total`.
    pub fn new(limit: usize, registry: &MetricRegistry) -> prometheus::Result<Self> {
        let open_gauge = registry.add(IntGauge::new("open_connections", "Client connections open now")?)?;
        let refused = registry.add(IntCounter::new(
            "connections_refused_total",
            "Requests refused with 503 because too many connections were open",
        )?)?;
        Ok(Self {
            open: Arc::default(),
            limit,
            open_gauge,
            refused,
        })
    }

    /// Counts a new connection until the returned guard drops.
    pub(crate) fn track(&self) -> OpenConnection {
        self.open.fetch_add(1, Ordering::SeqCst);
        self.open_gauge.inc();
        OpenConnection(self.clone())
    }

    pub fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.open_gauge.dec();
    }
}

/// Middleware: answers 503 and closes the connection while more
/// connections are open than the [`ConnectionLimit`] (app data) allows.
pub async fn refuse_beyond_limit(
    request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let over = request
        .app_data::<web::Data<ConnectionLimit>>()
        .filter(|limit| limit.open() > limit.limit)
        .map(|limit| (limit.open(), limit.limit, limit.refused.clone()));
    let Some((open, limit, refused)) = over else {
        return next.call(request).await.map(ServiceResponse::map_into_left_body);
    };
    refused.inc();
    let error = ApiError::new(
        ErrorKind::ServiceUnavailable,
        format_args!("{open} connections are open and the limit is {limit}; try again later"),
    );
    let mut response = HttpResponse::from_error(HttpError(error));
    response.head_mut().set_connection_type(ConnectionType::Close);
    // Not `into_response`, which would drop the error that `count_errors` reads.
    let (request, _) = request.into_parts();
    Ok(ServiceResponse::new(request, response).map_into_right_body())
}
