//! JSON as upstream services write it: the upstream graph-builder's graph
//! (unsorted, abstract nodes, `+arch` versions) and policy-engine answers
//! with nodes in any order and without `+arch`.

use e2e::client_graph::ClientGraph;
use e2e::policy_engine::EngineChain;
use e2e::static_server::StaticServer;
use release_set_generator::{demo_releases, testdata_graph_data};
use serde_json::{Value, json};

use crate::support::{cincinnati, offered, repository, updates};

/// A graph served by the upstream graph-builder in November 2021.
const UPSTREAM_GRAPH: &str =
    "testdata/fixtures/secondary-metadata/20211124.083150/graph-gb-with-quay-metadata.json";

#[tokio::test]
async fn updates_read_from_an_upstream_graph_builder_are_the_cvos() {
    let upstream = StaticServer::start(
        std::fs::read(repository(UPSTREAM_GRAPH)).unwrap(),
        "application/json",
    )
    .unwrap();
    let upstream_url = format!("{}/graph", upstream.url());
    let workdir = tempfile::tempdir().unwrap();
    let engines = EngineChain::start(workdir.path(), &upstream_url).await.unwrap();
    let channel = "fast-4.3";
    let served = engines
        .answer(channel, "amd64", Some("application/json"))
        .await
        .unwrap();
    let served = ClientGraph::from_served(&served.json().unwrap()).unwrap();
    assert!(served.nodes.len() > 30, "{} releases", served.nodes.len());
    for version in served.nodes.keys() {
        let run = updates(&["--url", &upstream_url], channel, version, &[]);
        assert!(run.code < 2, "{version}: {run:?}");
        assert_eq!(
            offered(&run.json()),
            served.updates_from(version).unwrap(),
            "{version}"
        );
    }
}

#[tokio::test]
async fn a_shuffled_answer_without_version_gives_the_same_answers() {
    let workdir = tempfile::tempdir().unwrap();
    let stack = e2e::offline::OfflineStack::start(&demo_releases(), &testdata_graph_data())
        .await
        .unwrap();
    let channel = "stable-4.18";
    let answer = stack
        .engines
        .answer(channel, "amd64", Some("application/json"))
        .await
        .unwrap();
    let shuffled = workdir.path().join("shuffled.json");
    std::fs::write(&shuffled, shuffle(&answer.json().unwrap()).to_string()).unwrap();
    let engine = stack.engines.graph_url();
    let file = shuffled.display().to_string();
    for question in [
        vec!["render", "--channel", channel],
        vec![
            "updates",
            "--channel",
            channel,
            "--version",
            "4.18.20",
            "--include-not-recommended",
        ],
        vec![
            "updates",
            "--channel",
            channel,
            "--version",
            "4.16.40",
            "--include-not-recommended",
        ],
        vec![
            "explain",
            "--channel",
            channel,
            "--from",
            "4.18.20",
            "--to",
            "4.18.26",
        ],
    ] {
        let from_file = cincinnati(&[&["--graph", file.as_str(), "-o", "json"][..], &question].concat());
        let from_engine = cincinnati(&[&["--url", engine.as_str(), "-o", "json"][..], &question].concat());
        assert_eq!(from_file.code, 0, "{question:?}: {from_file:?}");
        assert_eq!(from_file.stdout, from_engine.stdout, "{question:?}");
    }
}

/// The answer with its nodes in another order (edges renumbered),
/// conditional edges and their groups reversed, and no top-level `version`.
fn shuffle(answer: &Value) -> Value {
    let nodes = answer["nodes"].as_array().unwrap();
    let count = nodes.len();
    // A fixed permutation: every seventh node, wrapping around.
    let order: Vec<usize> = (0..count).map(|position| position * 7 % count).collect();
    assert_ne!(count % 7, 0, "7 must not divide {count}");
    let mut new_index = vec![0; count];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let edges: Vec<Value> = answer["edges"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|edge| {
            let end = |position: usize| new_index[edge[position].as_u64().unwrap() as usize];
            json!([end(0), end(1)])
        })
        .collect();
    let mut conditional = answer["conditionalEdges"].as_array().unwrap().clone();
    conditional.reverse();
    for group in &mut conditional {
        group["edges"].as_array_mut().unwrap().reverse();
    }
    json!({
        "nodes": order.iter().map(|&old| nodes[old].clone()).collect::<Vec<_>>(),
        "edges": edges,
        "conditionalEdges": conditional,
    })
}
