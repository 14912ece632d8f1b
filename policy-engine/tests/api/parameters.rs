//! Query parameters: required, validated, defaulted, ignored.

use crate::support::app::{settings, spawn_ready};
use crate::support::fixture;
use crate::support::upstream::{Behaviour, FakeUpstream};

const CHANNEL_KEY: &str = "io.openshift.upgrades.graph.release.channels";

#[tokio::test]
async fn a_channel_answers_its_releases_without_arch_suffixes() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;

    let answer = app.get("/graph?channel=stable-4.6").await;
    assert_eq!(answer.status, 200);
    let graph = answer.json();
    assert_eq!(graph["version"], 1);
    let nodes = graph["nodes"].as_array().unwrap();
    assert!(nodes.len() > 50, "stable-4.6 has many releases");
    for node in nodes {
        let version = node["version"].as_str().unwrap();
        assert!(!version.contains('+'), "{version} keeps its arch");
        let metadata = node["metadata"].as_object().unwrap();
        assert!(!metadata.contains_key("io.openshift.upgrades.graph.release.arch"));
        let channels = metadata[CHANNEL_KEY].as_str().unwrap();
        assert!(
            channels.split(',').any(|channel| channel == "stable-4.6"),
            "{version}: {channels}"
        );
    }
    let count = nodes.len() as u64;
    for edge in graph["edges"].as_array().unwrap() {
        assert!(edge[0].as_u64().unwrap() < count && edge[1].as_u64().unwrap() < count);
    }
    assert!(graph["conditionalEdges"].is_array());

    let v1 = app.get("/v1/graph?channel=stable-4.6").await;
    assert_eq!(v1.body, answer.body, "/v1/graph is the same handler");
}

#[tokio::test]
async fn arch_defaults_to_amd64_and_selects_other_architectures() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;

    let default = app.get("/graph?channel=stable-4.6").await;
    let amd64 = app.get("/graph?channel=stable-4.6&arch=amd64").await;
    assert_eq!(default.body, amd64.body);

    let s390x = app.get("/graph?channel=stable-4.6&arch=s390x").await.json();
    let versions: Vec<&str> = s390x["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["version"].as_str().unwrap())
        .collect();
    assert!(!versions.is_empty());
    assert_ne!(s390x, amd64.json());
}

#[tokio::test]
async fn a_valid_channel_that_matches_nothing_is_an_empty_graph() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    for query in [
        "channel=a",
        "channel=stable-4.6&arch=arrgh64",
        "channel=stable-4.6&arch=multi",
    ] {
        let answer = app.get(&format!("/graph?{query}")).await;
        assert_eq!(answer.status, 200, "{query}");
        let graph = answer.json();
        assert_eq!(graph["nodes"], serde_json::json!([]), "{query}");
        assert_eq!(graph["edges"], serde_json::json!([]), "{query}");
        // The fixture's risk groups that never had edges stay, as upstream
        // drops only the groups its filters emptied.
        for group in graph["conditionalEdges"].as_array().unwrap() {
            assert_eq!(group["edges"], serde_json::json!([]), "{query}");
        }
    }
}

#[tokio::test]
async fn unknown_and_informational_parameters_are_ignored() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let plain = app.get("/graph?channel=fast-4.6").await;
    let decorated = app
        .get("/graph?channel=fast-4.6&version=4.6.1&id=ceb3b0bb-c689-4db9-bb6a-0122237e33fd&foo=bar")
        .await;
    assert_eq!(decorated.status, 200);
    assert_eq!(decorated.body, plain.body);
}

#[tokio::test]
async fn missing_and_invalid_parameters_are_client_errors() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let app = spawn_ready(settings(&upstream.url())).await;

    let value = app.get("/graph").await.assert_error(400, "missing_params");
    assert_eq!(value, "mandatory client parameters missing: channel");

    let value = app
        .get("/graph?channel=fast-4+9")
        .await
        .assert_error(400, "invalid_params");
    assert_eq!(
        value,
        r"invalid client parameters: channel 'fast-4 9' does not match regex '^[0-9a-z\-\.]+$'"
    );
    let value = app
        .get("/graph?channel=fast-4.9&arch=x86_64")
        .await
        .assert_error(400, "invalid_params");
    assert_eq!(
        value,
        "invalid client parameters: arch 'x86_64' does not match regex '^[0-9a-z]+$'"
    );
}

#[tokio::test]
async fn mandatory_parameters_are_configurable() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut settings = settings(&upstream.url());
    settings.service.requests.mandatory_client_parameters = vec!["version".into(), "id".into()];
    let app = spawn_ready(settings).await;

    let value = app
        .get("/graph?arch=amd64")
        .await
        .assert_error(400, "missing_params");
    assert_eq!(value, "mandatory client parameters missing: channel, id, version");
    // Presence is what counts, as upstream.
    let answer = app.get("/graph?channel=stable-4.6&version=&id=x").await;
    assert_eq!(answer.status, 200);
}

#[tokio::test]
async fn the_path_prefix_is_normalised() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut settings = settings(&upstream.url());
    settings.service.api.path_prefix = http_answers::PathPrefix::parse("//api/upgrades_info//");
    let app = spawn_ready(settings).await;

    for path in ["/api/upgrades_info/graph", "/api/upgrades_info/v1/graph"] {
        assert_eq!(
            app.get(&format!("{path}?channel=stable-4.6")).await.status,
            200,
            "{path}"
        );
    }
    app.get("/graph?channel=stable-4.6")
        .await
        .assert_error(404, "does_not_exist");
}
