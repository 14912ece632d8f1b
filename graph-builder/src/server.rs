//! The graph-builder's HTTP servers: the Graph API (`{prefix}/graph`,
//! `{prefix}/v1/graph`) and, on the public port, the graph-data in use
//! (`{prefix}/graph-data`). The status server comes from service-kit.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::{Next, from_fn};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use cincinnati_core::{ApiError, ErrorKind};
use service_kit::errors::{ResponseErrors, count_errors, not_found};
use service_kit::routes::get_or_head;
use service_kit::telemetry::trace_requests;
use service_kit::{CachePolicy, HttpError, MediaTypes, PathPrefix};

use crate::metrics::Metrics;
use crate::state::State;

/// What the handlers read.
pub struct ApiContext {
    pub state: Arc<State>,
    pub metrics: Metrics,
    pub mandatory_parameters: Vec<String>,
    pub caching: CachePolicy,
}

/// Binds the Graph API server; await (or spawn) the returned server.
pub fn bind_api(
    address: SocketAddr,
    prefix: &PathPrefix,
    context: Arc<ApiContext>,
    errors: ResponseErrors,
) -> std::io::Result<(Server, SocketAddr)> {
    let (graph, graph_v1) = (prefix.join("/graph"), prefix.join("/v1/graph"));
    bind(address, None, context, errors, move |routes| {
        routes
            .service(get_or_head(&graph, serve_graph))
            .service(get_or_head(&graph_v1, serve_graph));
    })
}

/// Binds the public server of `{prefix}/graph-data`; one worker is plenty
/// for a file fetched by a few downstream services.
pub fn bind_public(
    address: SocketAddr,
    prefix: &PathPrefix,
    context: Arc<ApiContext>,
    errors: ResponseErrors,
) -> std::io::Result<(Server, SocketAddr)> {
    let graph_data = prefix.join("/graph-data");
    bind(address, Some(1), context, errors, move |routes| {
        routes.service(get_or_head(&graph_data, serve_graph_data));
    })
}

/// A server with the shared middleware (error counting, latency, tracing)
/// and JSON 404s around `routes`.
fn bind(
    address: SocketAddr,
    workers: Option<usize>,
    context: Arc<ApiContext>,
    errors: ResponseErrors,
    routes: impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static,
) -> std::io::Result<(Server, SocketAddr)> {
    let context = web::Data::from(context);
    let errors = web::Data::new(errors);
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(context.clone())
            .app_data(errors.clone())
            .wrap(from_fn(count_errors))
            .wrap(from_fn(time_requests))
            .wrap(from_fn(trace_requests))
            .configure(routes.clone())
            .default_service(web::to(not_found))
    })
    .disable_signals();
    if let Some(workers) = workers {
        server = server.workers(workers);
    }
    let server = server.bind(address)?;
    let bound = server.addrs()[0];
    Ok((server.run(), bound))
}

async fn serve_graph(
    request: HttpRequest,
    context: web::Data<ApiContext>,
) -> Result<HttpResponse, HttpError> {
    context
        .metrics
        .incoming_requests
        .with_label_values(&[request.path()])
        .inc();
    let content_type = MediaTypes::JSON_ONLY.negotiate_request(&request)?;
    check_mandatory_parameters(&request, &context.mandatory_parameters)?;
    let Some(served) = context.state.graph.load_full() else {
        return Err(ApiError::new(ErrorKind::ServiceUnavailable, "no graph has been built yet").into());
    };
    Ok(served.body.respond(&request, content_type, &context.caching))
}

/// Upstream checks presence only, never the value; so do we.
fn check_mandatory_parameters(request: &HttpRequest, mandatory: &[String]) -> Result<(), ApiError> {
    if mandatory.is_empty() {
        return Ok(());
    }
    let query = web::Query::<Vec<(String, String)>>::from_query(request.query_string())
        .map_err(|error| ApiError::new(ErrorKind::InvalidParams, error))?;
    let missing: Vec<&str> = mandatory
        .iter()
        .filter(|name| !query.iter().any(|(key, _)| key == *name))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(ApiError::missing_params(&missing))
    }
}

async fn serve_graph_data(
    request: HttpRequest,
    context: web::Data<ApiContext>,
) -> Result<HttpResponse, HttpError> {
    let Some(published) = context.state.graph_data.load_full() else {
        return Err(ApiError::new(ErrorKind::FileOpenError, "no graph-data has been loaded").into());
    };
    let etag = format!("\"{}\"", published.revision);
    let not_modified = request
        .headers()
        .get_all(header::IF_NONE_MATCH)
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|candidate| candidate.trim().trim_start_matches("W/") == etag || candidate.trim() == "*");
    if not_modified {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, etag))
            .finish());
    }
    Ok(HttpResponse::Ok()
        .content_type("application/gzip")
        .insert_header((header::ETAG, etag))
        .insert_header((header::CACHE_CONTROL, "public, no-cache"))
        .body(published.tarball.clone()))
}

/// Observes `http_request_duration_seconds{route}`; the route is the matched
/// pattern, so unknown paths cannot blow up the label set.
async fn time_requests(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let context = request.app_data::<web::Data<ApiContext>>().cloned();
    let route = request.match_pattern().unwrap_or_else(|| "unmatched".to_owned());
    let response = next.call(request).await?;
    if let Some(context) = context {
        context
            .metrics
            .request_duration
            .with_label_values(&[route.as_str()])
            .observe(started.elapsed().as_secs_f64());
    }
    Ok(response)
}
