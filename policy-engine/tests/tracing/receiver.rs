//! A minimal OTLP/HTTP trace receiver: `POST /v1/traces` with an
//! `ExportTraceServiceRequest` in protobuf, kept in memory as flat spans.

use std::sync::{Arc, Mutex};

use actix_web::dev::ServerHandle;
use actix_web::{App, HttpResponse, HttpServer, web};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message as _;

/// One received span, with its service's resource attributes.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    pub service: String,
    pub instance: String,
    pub name: String,
    pub kind: SpanKind,
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    pub attributes: Vec<(String, String)>,
    /// (trace id, span id) of each link.
    pub links: Vec<(String, String)>,
}

impl ReceivedSpan {
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }
}

pub struct Receiver {
    pub endpoint: String,
    spans: Arc<Mutex<Vec<ReceivedSpan>>>,
    server: ServerHandle,
}

impl Receiver {
    pub fn start() -> Self {
        let spans = Arc::new(Mutex::new(Vec::new()));
        let data = web::Data::new(spans.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .app_data(web::PayloadConfig::new(64 << 20))
                .route("/v1/traces", web::post().to(receive))
        })
        .workers(1)
        .disable_signals()
        .bind("127.0.0.1:0")
        .expect("the receiver binds a loopback port");
        let endpoint = format!("http://{}", server.addrs()[0]);
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        Self {
            endpoint,
            spans,
            server: handle,
        }
    }

    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.spans.lock().unwrap().clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        drop(self.server.stop(false));
    }
}

async fn receive(body: web::Bytes, spans: web::Data<Arc<Mutex<Vec<ReceivedSpan>>>>) -> HttpResponse {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return HttpResponse::BadRequest().finish();
    };
    let mut received = spans.lock().unwrap();
    for resource_spans in request.resource_spans {
        let resource = resource_spans
            .resource
            .map(|resource| resource.attributes)
            .unwrap_or_default();
        let resource_attribute = |key: &str| {
            flatten(&resource)
                .into_iter()
                .find_map(|(name, value)| (name == key).then_some(value))
                .unwrap_or_default()
        };
        let (service, instance) = (
            resource_attribute("service.name"),
            resource_attribute("service.instance.id"),
        );
        for span in resource_spans
            .scope_spans
            .into_iter()
            .flat_map(|scope| scope.spans)
        {
            received.push(ReceivedSpan {
                service: service.clone(),
                instance: instance.clone(),
                kind: SpanKind::try_from(span.kind).unwrap_or(SpanKind::Unspecified),
                name: span.name,
                trace_id: hex(&span.trace_id),
                span_id: hex(&span.span_id),
                parent_span_id: hex(&span.parent_span_id),
                attributes: flatten(&span.attributes),
                links: span
                    .links
                    .iter()
                    .map(|link| (hex(&link.trace_id), hex(&link.span_id)))
                    .collect(),
            });
        }
    }
    HttpResponse::Ok().content_type("application/x-protobuf").finish()
}

fn flatten(attributes: &[KeyValue]) -> Vec<(String, String)> {
    attributes
        .iter()
        .map(|attribute| (attribute.key.clone(), text(attribute.value.as_ref())))
        .collect()
}

fn text(value: Option<&AnyValue>) -> String {
    match value.and_then(|value| value.value.as_ref()) {
        Some(any_value::Value::StringValue(text)) => text.clone(),
        Some(any_value::Value::IntValue(number)) => number.to_string(),
        Some(any_value::Value::BoolValue(flag)) => flag.to_string(),
        Some(any_value::Value::DoubleValue(number)) => number.to_string(),
        other => format!("{other:?}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
