//! One client request traced through the chain client → policy-engine B →
//! policy-engine A → graph-builder, the services running as processes that
//! export spans over OTLP to a receiver in this test.
//!
//! A request's trace holds the fetches made for it: B fetches A for a
//! parameter set it has not served before, and A, asked for an answer it has
//! not computed yet, revalidates its graph with the graph-builder first. So
//! the client's trace reaches the graph-builder. Each answer also links to
//! the refresh that fetched the graph it was computed from.

mod receiver;
mod services;

use std::io::Write as _;
use std::time::Duration;

use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use receiver::{ReceivedSpan, Receiver};
use services::{Service, graph_builder_binary, policy_engine_binary};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/fixtures/secondary-metadata/20211124.083150"
);
/// The client's trace and span, which B continues.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN_ID: &str = "00f067aa0ba902b7";
/// Sent as credentials; must appear in no span.
const SECRET: &str = "s3cr3t-credential";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_is_traced_through_both_engines_to_the_graph_builder() {
    let receiver = Receiver::start();
    let config = graph_builder_config();
    let graph_builder = Service::start(
        "graph-builder",
        graph_builder_binary(),
        &[
            "-c",
            config.path().to_str().unwrap(),
            "--service.public_port",
            "0",
        ],
        &receiver.endpoint,
    )
    .await;
    graph_builder.wait_ready("/readiness").await;
    // No background refresh during the test: a refresh that finished after
    // the request arrived would stand in for the revalidation the request
    // makes, outside its trace.
    let a = start_engine("engine-a", &graph_builder.url("/graph"), "3600", &receiver).await;
    let b = start_engine("engine-b", &a.url("/graph"), "3600", &receiver).await;

    let response = reqwest::Client::new()
        .get(b.url("/graph?channel=stable-4.9&arch=amd64"))
        .header("traceparent", format!("00-{TRACE_ID}-{CLIENT_SPAN_ID}-01"))
        .header("authorization", format!("Bearer {SECRET}"))
        .header("cookie", format!("session={SECRET}"))
        .send()
        .await
        .expect("engine B answers");
    assert_eq!(response.status(), 200);

    eventually("spans from every service", async || {
        check_chain(&receiver.spans())
    })
    .await;
    assert_no_credentials(&receiver.spans());
}

async fn start_engine(
    name: &'static str,
    upstream: &str,
    interval_secs: &str,
    receiver: &Receiver,
) -> Service {
    let arguments = [
        "--upstream.cincinnati.url",
        upstream,
        "--upstream.cincinnati.interval_secs",
        interval_secs,
    ];
    let engine = Service::start(name, policy_engine_binary(), &arguments, &receiver.endpoint).await;
    engine.wait_ready("/readyz").await;
    engine
}

fn graph_builder_config() -> tempfile::NamedTempFile {
    let mut config = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    write!(
        config,
        "[[plugin_settings]]\nname = \"release-graph-file\"\npath = \"{FIXTURES}/graph-gb-raw.json\"\n\
         [[plugin_settings]]\nname = \"openshift-secondary-metadata-parse\"\n\
         data_directory = \"{FIXTURES}/cincinnati-graph-data\"\n\
         [[plugin_settings]]\nname = \"edge-add-remove\"\n"
    )
    .unwrap();
    config
}

/// Finds, or says what is still missing: the client's trace through B and A
/// to the graph-builder.
fn check_chain(spans: &[ReceivedSpan]) -> Result<(), String> {
    let find = |description: &str, predicate: &dyn Fn(&ReceivedSpan) -> bool| {
        spans
            .iter()
            .find(|span| predicate(span))
            .ok_or_else(|| format!("no {description} yet; received:\n{}", summary(spans)))
    };
    let child_of = |parent: &ReceivedSpan, span: &ReceivedSpan| {
        span.trace_id == parent.trace_id && span.parent_span_id == parent.span_id
    };
    // An engine's answer, which links to the refresh that fetched the graph
    // it was computed from, and the fetch of its upstream made for it.
    let answer_and_fetch = |engine: &str, server: &ReceivedSpan| {
        let answer = find(&format!("answer span of {engine}"), &|span| {
            child_of(server, span) && span.name == "graph answer"
        })?;
        let [(origin_trace, origin_span)] = answer.links.as_slice() else {
            panic!("{engine}'s answer should link to the refresh that fetched its graph: {answer:?}");
        };
        let origin = find(&format!("refresh {engine}'s answer links to"), &|span| {
            &span.trace_id == origin_trace && &span.span_id == origin_span
        })?;
        assert_eq!(
            (origin.instance.as_str(), origin.name.as_str()),
            (engine, "upstream refresh")
        );
        let refresh = find(&format!("refresh by {engine} for the request"), &|span| {
            child_of(answer, span) && span.name == "upstream refresh"
        })?;
        let fetch = find(&format!("fetch by {engine} for the request"), &|span| {
            child_of(refresh, span) && span.kind == SpanKind::Client
        })?;
        Ok::<_, String>((answer, fetch))
    };

    let b_server = find("server span of B continuing the client's", &|span| {
        span.trace_id == TRACE_ID && span.parent_span_id == CLIENT_SPAN_ID && span.kind == SpanKind::Server
    })?;
    assert_eq!(
        (b_server.service.as_str(), b_server.instance.as_str()),
        ("policy-engine", "engine-b")
    );
    assert_eq!(b_server.name, "GET /graph");
    assert_eq!(b_server.attribute("http.route"), Some("/graph"));
    assert_eq!(b_server.attribute("http.request.method"), Some("GET"));
    assert_eq!(b_server.attribute("http.response.status_code"), Some("200"));
    let (b_answer, b_fetch) = answer_and_fetch("engine-b", b_server)?;
    assert_eq!(b_answer.attribute("channel"), Some("stable-4.9"));
    assert_eq!(b_answer.attribute("arch"), Some("amd64"));

    let a_server = find("server span of A under B's fetch", &|span| {
        child_of(b_fetch, span) && span.kind == SpanKind::Server
    })?;
    assert_eq!(
        (a_server.service.as_str(), a_server.instance.as_str()),
        ("policy-engine", "engine-a")
    );
    let (_, a_fetch) = answer_and_fetch("engine-a", a_server)?;

    let graph_builder = find("server span of the graph-builder under A's fetch", &|span| {
        child_of(a_fetch, span) && span.kind == SpanKind::Server
    })?;
    assert_eq!(graph_builder.service, "graph-builder");
    assert_eq!(graph_builder.attribute("http.route"), Some("/graph"));
    Ok(())
}

/// No header is recorded, so neither is any credential the client sent.
fn assert_no_credentials(spans: &[ReceivedSpan]) {
    for span in spans {
        for (key, value) in &span.attributes {
            let key = key.to_ascii_lowercase();
            assert!(
                !value.contains(SECRET) && !key.contains("authorization") && !key.contains("cookie"),
                "{key} = {value} in {span:?}"
            );
        }
    }
}

fn summary(spans: &[ReceivedSpan]) -> String {
    spans
        .iter()
        .map(|span| {
            format!(
                "  {} {:?} {:?} trace {} span {} parent {:?}",
                span.instance, span.name, span.kind, span.trace_id, span.span_id, span.parent_span_id
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Polls `check` until it succeeds; fails with its last complaint after 30 s.
async fn eventually<T>(what: &str, mut check: impl AsyncFnMut() -> Result<T, String>) -> T {
    let waited = registry_testkit::poll::until(what, Duration::from_secs(30), async || {
        check().await.map_err(|complaint| anyhow::anyhow!(complaint))
    })
    .await;
    waited.unwrap_or_else(|error| panic!("{error}")).0
}
