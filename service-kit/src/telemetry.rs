//! Tracing export: `tracing` spans sent as OpenTelemetry spans over OTLP
//! (HTTP/protobuf) when `OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, and W3C trace context
//! (`traceparent`, `tracestate`) read from requests; `http-fetch` writes it
//! into the requests a service makes, with the propagator installed here.
//!
//! The standard variables tune the rest: `OTEL_SERVICE_NAME` (else the
//! service's own name), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`,
//! `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_EXPORTER_OTLP_HEADERS`.
//!
//! Attributes are chosen one by one, never copied wholesale: no header, no
//! query string, no credential is recorded (upstream's services record every
//! header, `Authorization` and cookies included).

use std::cell::OnceCell;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::HeaderMap;
use actix_web::middleware::Next;
use opentelemetry::global;
use opentelemetry::propagation::Extractor;
use opentelemetry::trace::{SpanContext, Status, TraceContextExt as _, TracerProvider as _};
use opentelemetry_otlp::{ExporterBuildError, SpanExporter};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::{Instrument as _, Level, Span, Subscriber};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

use crate::declaration::Declaration;

/// Either turns the export on.
const ENDPOINT_VARIABLES: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// Sends the spans still queued when dropped: keep it until the service
/// has stopped.
#[must_use = "dropping it ends the span export"]
#[derive(Debug, Default)]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            tracing::warn!(%error, "the last spans could not be exported");
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot set up the OTLP span exporter: {0}")]
pub struct TelemetryError(#[from] ExporterBuildError);

/// The layer exporting the spans of the service `declaration` describes,
/// or none when no endpoint is set.
pub(crate) fn export_layer<S>(
    declaration: &Declaration,
) -> Result<(Option<impl Layer<S> + use<S>>, Telemetry), TelemetryError>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    if !export_configured() {
        return Ok((None, Telemetry::default()));
    }
    let service = declaration.name;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(SpanExporter::builder().with_http().build()?)
        .with_resource(resource(service))
        .build();
    global::set_text_map_propagator(TraceContextPropagator::new());
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer(service))
        .with_filter(exported_spans(declaration.crate_name));
    Ok((
        Some(layer),
        Telemetry {
            provider: Some(provider),
        },
    ))
}

pub(crate) fn export_configured() -> bool {
    ENDPOINT_VARIABLES
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()))
}

/// `service.name` is the service's own unless `OTEL_SERVICE_NAME` says
/// otherwise (two engines in a chain are told apart that way, or by
/// `service.instance.id` in `OTEL_RESOURCE_ATTRIBUTES`).
fn resource(service: &'static str) -> Resource {
    let name = std::env::var("OTEL_SERVICE_NAME")
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| service.to_owned());
    Resource::builder().with_service_name(name).build()
}

/// The service's own spans (those of its crate, `service_crate`, and the
/// skeleton's), and the client spans of its outgoing requests
/// (`http_fetch`). Other libraries' are left out: oci-client makes one per
/// blob, and the exporter's HTTP client would trace its own exports.
fn exported_spans(service_crate: &'static str) -> Targets {
    [service_crate, "service_kit", "http_fetch"]
        .into_iter()
        .fold(Targets::new(), |targets, target| {
            targets.with_target(target, Level::INFO)
        })
}

/// Middleware: one server span per request, continuing the caller's trace.
/// It records the method, the route pattern (not the path, which clients
/// choose freely) and the status; handlers add what matters to them.
pub async fn trace_requests(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    // The route is looked up (and copied) only for a span that is
    // recorded: a span's fields are evaluated only then.
    let route = OnceCell::new();
    let route = || route.get_or_init(|| request.match_pattern()).as_deref();
    let span = tracing::info_span!(
        "HTTP request",
        otel.name = server_span_name(request.method(), route()),
        otel.kind = "server",
        http.request.method = %request.method(),
        http.route = route(),
        http.response.status_code = tracing::field::Empty,
    );
    // A span nobody records has no parent to take.
    if !span.is_disabled() {
        continue_trace(&span, request.headers());
    }
    let response = next.call(request).instrument(span.clone()).await;
    let status = match &response {
        Ok(response) => response.status(),
        Err(error) => error.as_response_error().status_code(),
    };
    span.record("http.response.status_code", status.as_u16());
    // A client's mistake (4xx) is not the server's failure.
    if status.is_server_error() {
        span.set_status(Status::error(status.to_string()));
    }
    response
}

/// `GET /graph`, or the method alone when no route matched.
fn server_span_name(method: &Method, route: Option<&str>) -> String {
    match route {
        Some(route) => format!("{method} {route}"),
        None => method.to_string(),
    }
}

/// Makes `span` a child of the span context the request carries, if any.
fn continue_trace(span: &Span, headers: &HeaderMap) {
    let parent = global::get_text_map_propagator(|propagator| propagator.extract(&RequestHeaders(headers)));
    if parent.span().span_context().is_valid() {
        // Fails only without the export layer, when there is no trace to continue.
        let _ = span.set_parent(parent);
    }
}

/// Marks the current span failed, with `error` as the reason.
pub fn mark_failed(error: &dyn std::fmt::Display) {
    Span::current().set_status(Status::error(error.to_string()));
}

/// The span that produced some data (a fetched graph), so that the requests
/// answered from that data can link to its trace: answers are computed ahead
/// of requests, so the work behind an answer is in another trace.
#[derive(Debug, Clone)]
pub struct Origin(SpanContext);

impl Origin {
    /// The current span (none, and links to nothing, when nothing is exported).
    pub fn current() -> Self {
        Self(Span::current().context().span().span_context().clone())
    }

    /// Links the current span to this origin.
    pub fn link_current_span(&self) {
        // An origin taken while nothing was exported links to nothing
        // (as `add_link` would decide, after finding the current span).
        if self.0.is_valid() {
            Span::current().add_link(self.0.clone());
        }
    }
}

/// Request headers as the propagator reads them.
struct RequestHeaders<'a>(&'a HeaderMap);

impl Extractor for RequestHeaders<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|name| name.as_str()).collect()
    }
}
