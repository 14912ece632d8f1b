//! The services' front doors as real processes (issue 26): every
//! conformance case of `http1-probes`, each naming the rule of RFC 9112 it
//! checks, against each service's ports (public ones take no body and
//! answer any host; status ones take bodies and answer only their own
//! hosts); and an engine under a pipelining flood, whose other clients are
//! answered and whose probes stay true.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use e2e::graph_builder::PATH_PREFIX;
use e2e::metadata_helper::{self, SignatureSource};
use e2e::offline::OfflineStack;
use e2e::process::ServiceProcess;
use http1_probes::cases::{self, Server};
use http1_probes::flood::Flood;
use http1_probes::run::{self, Target};
use registry_testkit::poll;
use release_set_generator::{demo_releases, testdata_graph_data};

/// A signature the demo's signature tree holds.
const SIGNATURE: &str = "sha256=026f73269c5b3db397ccc35975c5e0a865306c215e704383d13ac8bc3cf35628/signature-1";

fn address_of(url: &str) -> SocketAddr {
    let authority = url.trim_start_matches("http://");
    authority[..authority.find('/').unwrap_or(authority.len())]
        .parse()
        .unwrap()
}

fn target(url: &str) -> Target {
    let address = address_of(url);
    let path = &url[url.find(&address.to_string()).unwrap() + address.to_string().len()..];
    Target::new(address, path)
}

async fn stack_and_helper() -> (OfflineStack, ServiceProcess) {
    let stack = OfflineStack::start(&demo_releases(), &testdata_graph_data())
        .await
        .unwrap();
    let signatures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/demo/signatures");
    let helper = metadata_helper::start(
        stack.workdir(),
        "front-door",
        &SignatureSource::Directory(signatures),
    )
    .await
    .unwrap();
    (stack, helper)
}

#[tokio::test]
async fn every_service_answers_the_conformance_cases_as_their_rules_say() {
    let (stack, helper) = stack_and_helper().await;
    let targets = vec![
        ("graph-builder's public port", target(&stack.graph_data_url())),
        (
            "policy-engine",
            target(
                &stack
                    .engines
                    .engine_b
                    .api_url(&format!("{PATH_PREFIX}/v1/channels?arch=amd64")),
            ),
        ),
        (
            "metadata-helper",
            target(&format!("{}/{SIGNATURE}", metadata_helper::store_url(&helper))),
        ),
    ];
    // The policy-engine's status port reads a body only for a change of its
    // rollout control, which this engine has not.
    let status = |service: &ServiceProcess, probe: &str, takes_bodies: bool| {
        let server = Server {
            takes_bodies,
            checks_host: true,
        };
        target(&service.status_url(probe)).serving(server)
    };
    let targets = [
        targets,
        vec![
            (
                "graph-builder's status port",
                status(&stack.graph_builder, "/liveness", true),
            ),
            (
                "policy-engine's status port",
                status(&stack.engines.engine_b, "/livez", false),
            ),
            ("metadata-helper's status port", status(&helper, "/livez", true)),
        ],
    ]
    .concat();
    let failures = tokio::task::spawn_blocking(move || {
        let mut failures = Vec::new();
        for (service, target) in &targets {
            for case in cases::all() {
                if let Err(error) = run::run(&case, target).conforms() {
                    failures.push(format!("{service}: {} ({}): {error}", case.name, case.rule));
                }
            }
        }
        failures
    })
    .await
    .unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn an_engine_under_a_pipelining_flood_answers_others_and_its_probes_stay_true() {
    let (stack, _helper) = stack_and_helper().await;
    let engine = &stack.engines.engine_b;
    let channels = target(&engine.api_url(&format!("{PATH_PREFIX}/v1/channels?arch=amd64")));
    // One flooding connection for each of the engine's workers.
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    let flood = Flood::start(
        channels.address,
        "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n",
        workers,
        2000,
    )
    .unwrap();
    poll::eventually("the flood answered", Duration::from_secs(30), || {
        let read = flood.bytes_read();
        async move { read > 1 << 20 }
    })
    .await;

    let statuses = tokio::task::spawn_blocking(move || {
        (0..10)
            .map(|_| channels.well_formed_status().map_or(0, |status| status))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let answered_to_flood = flood.bytes_read();
    assert_eq!(statuses, vec![200; 10]);
    let client = reqwest::Client::new();
    for probe in ["/livez", "/readyz"] {
        let status = client
            .get(engine.status_url(probe))
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, 200, "{probe}");
    }
    poll::eventually("the flood still answered", Duration::from_secs(30), || {
        let read = flood.bytes_read();
        async move { read > answered_to_flood }
    })
    .await;
    flood.stop();
}
