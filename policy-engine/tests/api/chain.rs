//! Engines chain: `client → B → A → graph-builder` answers exactly what
//! `client → A` answers, with B fetching A once per parameter set.

use std::time::Duration;

use policy_engine::UpstreamKind;

use crate::support::app::{TestApp, settings, spawn, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, fixture};

async fn chain() -> (FakeUpstream, TestApp, TestApp) {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let a = spawn_ready(settings(&upstream.url())).await;
    let b = spawn_ready(settings(&a.url("/graph"))).await;
    (upstream, a, b)
}

#[tokio::test]
async fn an_engine_in_front_of_an_engine_answers_the_same_bytes() {
    let (_upstream, a, b) = chain().await;
    assert_eq!(
        b.status_document().await.client.upstream.kind,
        Some(UpstreamKind::PolicyEngine)
    );
    let queries = [
        "channel=stable-4.6",
        "channel=stable-4.6&arch=amd64",
        "channel=stable-4.6&arch=s390x",
        "channel=fast-4.9&arch=arm64",
        "channel=candidate-4.10&arch=ppc64le",
        "channel=stable-4.7&version=4.7.1&id=x",
        "channel=a",
        "channel=stable-4.6&arch=multi",
    ];
    let accepts: [&[(&str, &str)]; 3] = [
        &[],
        &[("accept", "application/json")],
        &[("accept-encoding", "gzip")],
    ];
    for query in queries {
        for headers in accepts {
            let path = format!("/graph?{query}");
            let (direct, chained) = (a.get_with(&path, headers).await, b.get_with(&path, headers).await);
            assert_eq!(chained.status, 200, "{query}");
            assert_eq!(chained.body, direct.body, "{query} {headers:?}");
            assert_eq!(chained.header("content-type"), direct.header("content-type"));
            assert_eq!(chained.header("etag"), direct.header("etag"));
        }
    }
    // A graph with conditional edges survives the chain intact.
    let direct = a.get("/graph?channel=candidate-4.9").await.json();
    assert!(!direct["conditionalEdges"].as_array().unwrap().is_empty());
    assert_eq!(b.get("/graph?channel=candidate-4.9").await.json(), direct);
}

#[tokio::test]
async fn errors_travel_the_chain_unchanged() {
    let (_upstream, a, b) = chain().await;
    for (path, headers) in [
        ("/graph", &[][..]),
        ("/graph?channel=fast-4+9", &[][..]),
        ("/graph?channel=a&arch=x-1", &[][..]),
        ("/graph?channel=a", &[("accept", "text/plain")][..]),
        ("/nope", &[][..]),
    ] {
        let (direct, chained) = (a.get_with(path, headers).await, b.get_with(path, headers).await);
        assert_eq!(chained.status, direct.status, "{path}");
        assert_eq!(chained.body, direct.body, "{path}");
    }
}

#[tokio::test]
async fn the_front_engine_fetches_once_per_parameter_set() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let a = spawn_ready(settings(&upstream.url())).await;
    let mut front = settings(&a.url("/graph"));
    // No background refresh during the test: every fetch B makes is counted.
    front.upstream.cincinnati.interval_secs = 3600;
    let b = spawn_ready(front).await;
    for _ in 0..5 {
        b.get("/graph?channel=stable-4.6&arch=amd64").await;
        b.get("/graph?channel=stable-4.6&arch=amd64&id=cluster").await;
    }
    b.get("/graph?channel=fast-4.6").await;
    let feeds = b.status_document().await.client.feeds;
    let parameters: Vec<_> = feeds.iter().map(|feed| feed.parameters.clone()).collect();
    assert_eq!(parameters.len(), 2, "{parameters:?}");
    // B asked A once to learn its kind, once to learn it answers, then once
    // per parameter set.
    let incoming = a
        .metric("cincinnati_pe_graph_incoming_requests_total{uri_path=\"/graph\"}")
        .await;
    assert_eq!(incoming, 4.0, "B forwarded client traffic");
}

#[tokio::test]
async fn the_front_engine_serves_its_last_graph_when_the_middle_one_stops() {
    let (_upstream, a, b) = chain().await;
    let before = b.get("/graph?channel=stable-4.6").await;
    drop(a);
    eventually("B notices A is gone", Duration::from_secs(10), || async {
        b.status_document()
            .await
            .client
            .feeds
            .first()
            .is_some_and(|feed| feed.freshness.is_stale())
    })
    .await;
    let after = b.get("/graph?channel=stable-4.6").await;
    assert_eq!(after.status, 200);
    assert_eq!(after.body, before.body);
}

#[tokio::test]
async fn configured_parameters_are_forwarded_and_split_the_cache() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let a = spawn_ready(settings(&upstream.url())).await;
    let mut front = settings(&a.url("/graph"));
    front.upstream.cincinnati.forward_parameters = vec!["version".into()];
    let b = spawn_ready(front).await;
    for version in ["4.6.1", "4.6.2", "4.6.1"] {
        let answer = b
            .get(&format!("/graph?channel=stable-4.6&version={version}&id=x"))
            .await;
        assert_eq!(answer.status, 200);
    }
    let feeds = b.status_document().await.client.feeds;
    let mut parameters: Vec<String> = feeds
        .iter()
        .map(|feed| serde_json::to_string(&feed.parameters).unwrap())
        .collect();
    parameters.sort();
    assert_eq!(
        parameters,
        [
            r#"[["channel","stable-4.6"],["version","4.6.1"]]"#,
            r#"[["channel","stable-4.6"],["version","4.6.2"]]"#
        ]
    );
}

#[tokio::test]
async fn the_front_engine_is_ready_only_once_the_middle_one_can_answer() {
    // A's upstream has no graph yet: A knows nothing to answer with.
    let upstream = FakeUpstream::start(Behaviour::Status(503)).await;
    let a = spawn(settings(&upstream.url())).await;
    let b = spawn(settings(&a.url("/graph"))).await;
    eventually(
        "B learned its upstream is an engine",
        Duration::from_secs(10),
        || async { b.status_document().await.client.upstream.kind == Some(UpstreamKind::PolicyEngine) },
    )
    .await;
    // Several refresh rounds: B keeps asking, A keeps having nothing.
    let errors = "cincinnati_pe_http_upstream_errors_total";
    let failed_before = b.metric(errors).await;
    eventually(
        "three more of B's fetches from A to fail",
        Duration::from_secs(10),
        || async { b.metric(errors).await >= failed_before + 3.0 },
    )
    .await;
    assert_eq!(b.status_get("/readyz").await.status, 503);
    assert!(!b.status_document().await.client.ready);
    b.get("/graph?channel=stable-4.6")
        .await
        .assert_error(503, "service_unavailable");

    upstream.set(Behaviour::Graph(fixture()));
    b.wait_ready().await;
    // Ready means a client's request is answered, right away.
    let answer = b.get("/graph?channel=stable-4.6").await;
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    assert_eq!(answer.body, a.get("/graph?channel=stable-4.6").await.body);
}

/// Channels the upstream does not serve (anyone can make them up) cost it
/// one request each, are never followed, and never push a served feed out.
#[tokio::test]
async fn made_up_channels_cost_the_upstream_one_request_each_and_evict_no_served_feed() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let a = spawn_ready(settings(&upstream.url())).await;
    let mut front = settings(&a.url("/graph"));
    front.upstream.cincinnati.interval_secs = 3600;
    front.upstream.cincinnati.max_feeds = 8;
    front.upstream.cincinnati.wait_for_change = true;
    let b = spawn_ready(front).await;
    b.get("/graph?channel=stable-4.6&arch=amd64").await;
    let made_up = 40;
    for n in 0..made_up {
        let answer = b.get(&format!("/graph?channel=made-up-{n}&arch=amd64")).await;
        assert_eq!(answer.status, 200);
    }
    b.get("/graph?channel=made-up-39&arch=amd64").await;
    let incoming = || a.metric("cincinnati_pe_graph_incoming_requests_total{uri_path=\"/graph\"}");
    // B's kind and readiness, the served channel and its follower's held
    // request, then one request per made-up channel: none of them followed.
    let expected = f64::from(2 + 1 + 1 + made_up);
    eventually(
        "the served feed's follower asked",
        Duration::from_secs(10),
        || async { incoming().await >= expected },
    )
    .await;
    assert_eq!(incoming().await, expected, "no made-up channel followed");
    let feeds = b.status_document().await.client.feeds;
    let channels: Vec<&str> = feeds
        .iter()
        .filter_map(|feed| feed.parameters.get("channel"))
        .collect();
    assert!(channels.contains(&"stable-4.6"), "{channels:?}");
    assert!(channels.len() <= 8, "{channels:?}");
}
