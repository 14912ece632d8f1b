//! Interoperability: our engines chained behind graphs in the upstream
//! graph-builder's format — real upstream output from testdata, with nodes
//! in no order, releases named in `previous` but never scraped (no payload,
//! no metadata), no `version` key, and either no `conditionalEdges` key or
//! entries without edges — served as a file by a loopback HTTP server.

use std::path::Path;

use e2e::expected::engine_view;
use e2e::graph_builder::PATH_PREFIX;
use e2e::policy_engine::EngineChain;
use e2e::static_server::StaticServer;
use e2e::workdir::Workdir;
use serde_json::Value;

fn upstream_graph(fixture: &str) -> (Vec<u8>, Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures/secondary-metadata")
        .join(fixture)
        .join("graph-gb-with-quay-metadata.json");
    let body = std::fs::read(&path).unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
    let graph = serde_json::from_slice(&body).unwrap();
    (body, graph)
}

/// Serves `fixture` to engine A (B behind it) and checks what B serves
/// each channel and architecture.
async fn assert_served_through_both_engines(fixture: &str, channels: &[&str], architectures: &[&str]) {
    let (body, upstream) = upstream_graph(fixture);
    let nodes = upstream["nodes"].as_array().unwrap();
    assert!(
        nodes
            .iter()
            .any(|node| node.get("payload").is_none() && node.get("metadata").is_none()),
        "{fixture} has releases without payload and metadata"
    );
    assert!(upstream.get("version").is_none(), "{fixture} has no version key");

    let server = StaticServer::start(body, "application/json").unwrap();
    let workdir = Workdir::new().unwrap();
    let upstream_url = format!("{}{PATH_PREFIX}/graph", server.url());
    let engines = EngineChain::start(workdir.path(), &upstream_url).await.unwrap();
    let mut served_releases = 0;
    for channel in channels {
        for arch in architectures {
            let expected = engine_view(&upstream, channel, arch).unwrap();
            engines.await_graph(channel, arch, &expected).await.unwrap();
            served_releases += expected.nodes.len();
        }
    }
    assert!(served_releases > 0, "the views checked are not all empty");
}

#[tokio::test]
async fn a_graph_without_conditional_edges_is_served_through_both_engines() {
    let (_, upstream) = upstream_graph("20200319.204124");
    assert!(upstream.get("conditionalEdges").is_none());
    assert_served_through_both_engines(
        "20200319.204124",
        &["stable-4.2", "fast-4.3", "stable-4.3", "candidate-4.4"],
        &["amd64", "s390x"],
    )
    .await;
}

#[tokio::test]
async fn a_graph_with_empty_conditional_edge_entries_is_served_through_both_engines() {
    assert_served_through_both_engines(
        "20211124.083150",
        &["stable-4.6", "eus-4.6", "fast-4.7", "candidate-4.8", "stable-4.9"],
        &["amd64", "s390x", "ppc64le", "arm64"],
    )
    .await;
}
