//! W3C trace context (`traceparent`, `tracestate`) for outgoing requests,
//! written by the propagator the service installed (`service-kit`'s
//! telemetry); none when nothing is exported.

use std::collections::HashMap;

use opentelemetry::{Context, global};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// The headers that carry the current span to the server.
pub(crate) fn context_headers() -> HashMap<String, String> {
    let mut headers = HashMap::new();
    let context: Context = Span::current().context();
    global::get_text_map_propagator(|propagator| propagator.inject_context(&context, &mut headers));
    headers
}
