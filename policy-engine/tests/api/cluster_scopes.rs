//! A cluster policy's scoped channels (a customer's hotfixes, seen by its
//! clusters only, joined to the channels they are on) and its groups' own
//! blocked edges, on a real engine reading a graph-builder's graph and on
//! an engine chained to an engine without a policy.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::app::{TestApp, settings, spawn_ready};
use crate::support::recommended_from;
use crate::support::upstream::{Behaviour, FakeUpstream};

const ACME: &str = "acacacac-0000-4000-8000-000000000001";
const OTHER: &str = "0e0e0e0e-0000-4000-8000-000000000002";
const HOTFIX: &str = "4.18.2-0.hotfix-2026-11-25";

/// A graph-builder's graph: 4.18.1 → 4.18.2 → 4.18.3 in stable-4.18, and a
/// hotfix of 4.18.2 for ACME only, between 4.18.1 and 4.18.3, in its
/// hotfix channel (with the releases it joins, as graph-data lists them).
fn graph() -> Vec<u8> {
    let node = |version: &str, channels: &str| {
        serde_json::json!({
            "version": format!("{version}+amd64"),
            "payload": format!("quay.io/r@sha256:{version}"),
            "metadata": {
                "io.openshift.upgrades.graph.release.arch": "amd64",
                "io.openshift.upgrades.graph.release.channels": channels,
            }
        })
    };
    serde_json::to_vec(&serde_json::json!({
        "nodes": [
            node("4.18.1", "stable-4.18,hotfix-acme-4.18"),
            node("4.18.2", "stable-4.18"),
            node("4.18.3", "stable-4.18,hotfix-acme-4.18"),
            node(HOTFIX, "hotfix-acme-4.18"),
        ],
        "edges": [[0, 1], [1, 2], [0, 3], [3, 2]],
        "conditionalEdges": [],
    }))
    .unwrap()
}

const POLICY: &str = "\
groups:
  acme: {}
  production:
    blocked_edges:
      - {to: 4.18.2, from: '^4[.]18[.]1[+]amd64$'}
      - to: 4.18.3
        from: '4[.]18[.]2[+].*'
        url: https://example.com/ours
        name: OurStorageRisk
        message: Our storage needs a firmware update first.
        matchingRules: [{type: Always}]
clusters:
  acacacac-0000-4000-8000-000000000001: [acme]
  0e0e0e0e-0000-4000-8000-000000000002: [production]
scoped_channels:
  - {channel: hotfix-acme-4.18, joins: [stable-4.18], groups: [acme]}
";

async fn engine_on(upstream: &str, policy_file: Option<&Path>) -> TestApp {
    let mut settings = settings(upstream);
    settings.cluster_policy.file = policy_file.map(Path::to_owned);
    spawn_ready(settings).await
}

fn policy_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let file = dir.path().join("policy.yaml");
    std::fs::write(&file, POLICY).unwrap();
    file
}

fn versions(graph: &serde_json::Value) -> BTreeSet<String> {
    graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| node["version"].as_str().unwrap().to_owned())
        .collect()
}

fn set(versions: &[&str]) -> BTreeSet<String> {
    versions.iter().map(|version| version.to_string()).collect()
}

async fn view(app: &TestApp, query: &str) -> serde_json::Value {
    let answer = app.get(&format!("/graph?{query}")).await;
    assert_eq!(
        answer.status,
        200,
        "{query}: {}",
        String::from_utf8_lossy(&answer.body)
    );
    answer.json()
}

/// What ACME's clusters, the others and strangers see, as the issue asks.
async fn assert_the_hotfix_is_acme_s_alone(app: &TestApp) {
    let acme = view(app, &format!("channel=stable-4.18&id={ACME}")).await;
    assert_eq!(versions(&acme), set(&["4.18.1", "4.18.2", "4.18.3", HOTFIX]));
    assert_eq!(
        recommended_from(&acme, "4.18.1")
            .into_iter()
            .collect::<BTreeSet<_>>(),
        BTreeSet::from(["4.18.2", HOTFIX]),
        "into the hotfix"
    );
    assert_eq!(recommended_from(&acme, HOTFIX), ["4.18.3"], "and out of it");

    for who in [format!("id={OTHER}"), "id=not-a-uuid".to_owned(), String::new()] {
        let other = view(app, &format!("channel=stable-4.18&{who}")).await;
        assert_eq!(versions(&other), set(&["4.18.1", "4.18.2", "4.18.3"]), "{who}");
        let hidden = view(app, &format!("channel=hotfix-acme-4.18&{who}")).await;
        assert_eq!(
            versions(&hidden),
            set(&[]),
            "{who}: the scoped channel does not exist for them"
        );
    }
    let direct = view(app, &format!("channel=hotfix-acme-4.18&id={ACME}")).await;
    assert_eq!(versions(&direct), set(&["4.18.1", "4.18.3", HOTFIX]));
}

#[tokio::test]
async fn a_hotfix_channel_is_seen_by_its_customers_clusters_only() {
    let upstream = FakeUpstream::start(Behaviour::Graph(graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_on(&upstream.url(), Some(&policy_file(&dir))).await;
    assert_the_hotfix_is_acme_s_alone(&engine).await;

    // The public explorer does not name it either.
    let channels = engine.get("/v1/channels?arch=amd64").await;
    assert_eq!(
        channels.status,
        200,
        "{}",
        String::from_utf8_lossy(&channels.body)
    );
    let listed = String::from_utf8_lossy(&channels.body).into_owned();
    assert!(listed.contains("stable-4.18"), "{listed}");
    assert!(!listed.contains("hotfix"), "{listed}");
    let status = engine.status_document().await;
    let policy = status.client.cluster_policy.unwrap();
    assert_eq!(policy.scoped_channels[0].channel, "hotfix-acme-4.18");
    assert_eq!(policy.blocked_edges, 2);
}

#[tokio::test]
async fn an_engine_chained_to_an_engine_joins_the_hotfix_channel_it_fetches_apart() {
    let upstream = FakeUpstream::start(Behaviour::Graph(graph())).await;
    let central = engine_on(&upstream.url(), None).await;
    let dir = tempfile::tempdir().unwrap();
    let in_cluster = engine_on(&central.url("/graph"), Some(&policy_file(&dir))).await;
    assert_the_hotfix_is_acme_s_alone(&in_cluster).await;
}

#[tokio::test]
async fn a_groups_blocked_edges_apply_to_its_clusters_alone() {
    let upstream = FakeUpstream::start(Behaviour::Graph(graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_on(&upstream.url(), Some(&policy_file(&dir))).await;

    let production = view(&engine, &format!("channel=stable-4.18&id={OTHER}")).await;
    assert!(
        recommended_from(&production, "4.18.1").is_empty(),
        "blocked for production"
    );
    assert!(
        recommended_from(&production, "4.18.2").is_empty(),
        "conditional for production"
    );
    let conditional = &production["conditionalEdges"];
    assert_eq!(
        conditional,
        &serde_json::json!([{
            "edges": [{"from": "4.18.2", "to": "4.18.3"}],
            "risks": [{
                "url": "https://example.com/ours",
                "name": "OurStorageRisk",
                "message": "Our storage needs a firmware update first.",
                "matchingRules": [{"type": "Always"}],
            }],
        }])
    );

    let everyone = view(&engine, "channel=stable-4.18").await;
    assert_eq!(recommended_from(&everyone, "4.18.1"), ["4.18.2"]);
    assert_eq!(recommended_from(&everyone, "4.18.2"), ["4.18.3"]);

    // The status port's explanation says which blocked edge did what.
    let explained = engine
        .status_get(&format!(
            "/v1/explain-cluster?channel=stable-4.18&id={OTHER}&version=4.18.1"
        ))
        .await
        .json();
    assert_eq!(
        explained["edges"],
        serde_json::json!([
            {"from": "4.18.1", "to": "4.18.2", "line": 5, "risk": null},
            {"from": "4.18.2", "to": "4.18.3", "line": 6, "risk": "OurStorageRisk"},
        ])
    );
    assert_eq!(
        explained["updates"]["removed"],
        serde_json::json!([{"release": "4.18.2", "rule": "blockedEdge", "line": 5}])
    );
}
