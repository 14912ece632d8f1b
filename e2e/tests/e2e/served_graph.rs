//! What the in-cluster engine B serves, for every channel, architecture and
//! media type, equals the graph worked out from the pushed releases and
//! graph-data; and a cluster reading it the CVO's way gets the updates and
//! risks worked out from them.

use std::time::Duration;

use cincinnati_client::fetch::document_client;
use cincinnati_client::{ClientError, fetch_updates};
use cincinnati_core::Version;
use e2e::client_graph::{ClientGraph, ClientUpdates};
use e2e::graph_builder::GraphBuilderOptions;
use e2e::scenario::{ARCHITECTURES, CANDIDATE, CHANNELS};
use e2e::stack::Stack;
use http_fetch::ExtraRoots;

const CLUSTER_ID: &str = "2b6e8d5c-3f4a-4a7e-9c1d-0e5f6a7b8c9d";

#[tokio::test]
async fn every_channel_and_architecture_is_served_as_computed_from_the_pushed_data() {
    let stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    for channel in CHANNELS {
        for arch in ARCHITECTURES {
            stack.await_expected(channel, arch).await.unwrap();
        }
    }
}

#[tokio::test]
async fn every_media_type_carries_the_same_graph() {
    let stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    stack.await_expected(CANDIDATE, "multi").await.unwrap();
    let v1 = "application/vnd.redhat.cincinnati.v1+json";
    let json = "application/json";
    // What clusters send, the Cincinnati type, and what curl and reqwest send by default.
    let cases = [(json, json), (v1, v1), ("*/*", json)];
    for (accept, content_type) in cases {
        let answer = stack
            .engines
            .answer(CANDIDATE, "multi", Some(accept))
            .await
            .unwrap();
        assert_eq!(
            answer.content_type.as_deref(),
            Some(content_type),
            "Accept: {accept}"
        );
        let served = ClientGraph::from_served(&answer.json().unwrap()).unwrap();
        assert_eq!(served, stack.expected(CANDIDATE, "multi"), "Accept: {accept}");
    }
}

#[tokio::test]
async fn a_cluster_sees_the_updates_and_risks_computed_from_the_pushed_data() {
    let stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    let graph_url = stack.engines.graph_url();
    let http = document_client("e2e", Duration::from_secs(30), ExtraRoots::EMPTY).unwrap();
    for channel in [CANDIDATE, "fast-4.17", "stable-4.16"] {
        for arch in ARCHITECTURES {
            let expected = stack.expected(channel, arch);
            stack.engines.await_graph(channel, arch, &expected).await.unwrap();
            for version in &stack.published().graph_data.channels[channel] {
                let cluster = format!("a {arch} cluster at {version} in {channel}");
                let asked = fetch_updates(
                    &http,
                    &graph_url,
                    channel,
                    arch,
                    &Version::parse(version).unwrap(),
                    CLUSTER_ID,
                )
                .await;
                match (expected.updates_from(version), asked) {
                    (Some(updates), Ok(seen)) => {
                        assert_eq!(ClientUpdates::from_client(&seen), updates, "{cluster}");
                    }
                    (None, Err(ClientError::VersionNotFound(_))) => {}
                    (expected, seen) => panic!("{cluster}: expected {expected:?}, saw {seen:?}"),
                }
            }
        }
    }
}
