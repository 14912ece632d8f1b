//! The OpenAPI document describes the API as served: checked against the
//! live routes of an engine with a prefix and mandatory parameters.

use serde_json::Value;

use crate::support::app::{TestApp, settings, spawn_ready};
use crate::support::fixture;
use crate::support::upstream::{Behaviour, FakeUpstream};

async fn documented_app() -> (FakeUpstream, TestApp) {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut settings = settings(&upstream.url());
    settings.service.api.path_prefix = http_answers::PathPrefix::parse("api/upgrades_info");
    settings.service.requests.mandatory_client_parameters = vec!["id".into()];
    let app = spawn_ready(settings).await;
    (upstream, app)
}

/// A query with every required parameter of `operation` set to its example.
fn required_query(operation: &Value, except: Option<&str>) -> String {
    operation["parameters"]
        .as_array()
        .map(|parameters| {
            parameters
                .iter()
                .filter(|parameter| {
                    parameter["required"] == true && Some(parameter["name"].as_str().unwrap()) != except
                })
                .map(|parameter| {
                    let example = parameter["example"].as_str().unwrap_or("x");
                    format!("{}={example}", parameter["name"].as_str().unwrap())
                })
                .collect::<Vec<_>>()
                .join("&")
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn the_document_is_json_with_the_prefix_and_mandatory_parameters() {
    let (_upstream, app) = documented_app().await;
    for path in ["/api/upgrades_info/openapi", "/api/upgrades_info/v1/openapi"] {
        let answer = app.get(path).await;
        assert_eq!(answer.status, 200, "{path}");
        assert_eq!(answer.header("content-type"), Some("application/json"));
        let document = answer.json();
        assert_eq!(document["openapi"], "3.0.3");
        let parameters = document["paths"]["/api/upgrades_info/graph"]["get"]["parameters"]
            .as_array()
            .unwrap();
        let required: Vec<&str> = parameters
            .iter()
            .filter(|parameter| parameter["required"] == true)
            .map(|parameter| parameter["name"].as_str().unwrap())
            .collect();
        assert_eq!(required, ["channel", "id"]);
    }
}

#[tokio::test]
async fn every_documented_operation_answers_as_documented() {
    let (_upstream, app) = documented_app().await;
    let document = app.get("/api/upgrades_info/openapi").await.json();
    let paths = document["paths"].as_object().unwrap();
    assert!(!paths.is_empty());
    for (path, item) in paths {
        let operation = &item["get"];
        let answer = app
            .get_with(
                &format!("{path}?{}", required_query(operation, None)),
                &[("accept", "application/json")],
            )
            .await;
        assert_eq!(answer.status, 200, "{path}");
        let content_type = answer.header("content-type").unwrap();
        assert!(
            operation["responses"]["200"]["content"]
                .get(content_type)
                .is_some(),
            "{path} answers {content_type}, which is not documented"
        );
        if let Some(required) =
            operation["responses"]["200"]["content"][content_type]["schema"]["$ref"].as_str()
        {
            let schema = &document["components"]["schemas"][required.rsplit('/').next().unwrap()];
            for key in schema["required"].as_array().unwrap() {
                assert!(
                    answer.json().get(key.as_str().unwrap()).is_some(),
                    "{path} lacks {key}"
                );
            }
        }
        for parameter in operation["parameters"].as_array().into_iter().flatten() {
            if parameter["required"] != true {
                continue;
            }
            let name = parameter["name"].as_str().unwrap();
            let missing = app
                .get(&format!("{path}?{}", required_query(operation, Some(name))))
                .await;
            assert_eq!(missing.status, 400, "{path} without {name}");
            assert!(
                operation["responses"].get("400").is_some(),
                "{path} documents its 400"
            );
        }
    }
}

#[tokio::test]
async fn every_live_route_is_documented() {
    let (_upstream, app) = documented_app().await;
    let document = app.get("/api/upgrades_info/openapi").await.json();
    let documented: Vec<&String> = document["paths"].as_object().unwrap().keys().collect();
    let candidates = [
        "/api/upgrades_info/graph",
        "/api/upgrades_info/v1/graph",
        "/api/upgrades_info/openapi",
        "/api/upgrades_info/v1/openapi",
        "/api/upgrades_info/graph-data",
        "/api/upgrades_info/v2/graph",
        "/api/upgrades_info",
        "/graph",
        "/openapi",
    ];
    for path in candidates {
        let live = app.get(&format!("{path}?channel=a&id=x")).await.status != 404;
        assert_eq!(
            live,
            documented.iter().any(|documented| *documented == path),
            "{path}"
        );
    }
}

/// A value outside what a parameter's schema allows, if the schema restricts
/// its values (a pattern or a format).
fn value_the_schema_forbids(schema: &Value) -> Option<String> {
    if schema.get("pattern").is_some() {
        return Some("Not Valid!".to_owned());
    }
    schema["format"].as_str().map(|format| format!("not-a-{format}"))
}

/// A contract fuzzer takes the document at its word: a request the schema
/// forbids must be refused, or the document claims what the engine does not do.
#[tokio::test]
async fn every_restriction_the_document_declares_is_enforced() {
    let (_upstream, app) = documented_app().await;
    let document = app.get("/api/upgrades_info/openapi").await.json();
    for (path, item) in document["paths"].as_object().unwrap() {
        let operation = &item["get"];
        for parameter in operation["parameters"].as_array().into_iter().flatten() {
            let name = parameter["name"].as_str().unwrap();
            let Some(forbidden) = value_the_schema_forbids(&parameter["schema"]) else {
                continue;
            };
            let others = required_query(operation, Some(name));
            let query: String = form_urlencoded::Serializer::new(others)
                .append_pair(name, &forbidden)
                .finish();
            let answer = app.get(&format!("{path}?{query}")).await;
            assert_eq!(answer.status, 400, "{path} with {name}={forbidden:?} is accepted");
            assert_eq!(
                answer.json()["kind"],
                "invalid_params",
                "{path} with {name}={forbidden:?}"
            );
        }
    }
}

/// An engine with a fleet store and a policy file: every status route on.
async fn status_documented_app(dir: &std::path::Path) -> (FakeUpstream, TestApp) {
    let upstream = FakeUpstream::start(Behaviour::Graph(crate::support::small_graph())).await;
    let mut settings = settings(&upstream.url());
    settings.service.api.path_prefix = http_answers::PathPrefix::parse("api/upgrades_info");
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, "groups: {canary: {}}\n").unwrap();
    settings.cluster_policy.file = Some(policy);
    std::fs::write(dir.join("tokens"), "ops a-token\n").unwrap();
    settings.rollouts.token_file = Some(dir.join("tokens"));
    settings.fleet.store = Some(
        format!("sqlite://{}", dir.join("fleet.db").display())
            .parse()
            .unwrap(),
    );
    let app = spawn_ready(settings).await;
    (upstream, app)
}

#[tokio::test]
async fn the_status_port_documents_what_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (_upstream, app) = status_documented_app(dir.path()).await;
    let document = app.status_get("/api/upgrades_info/openapi").await.json();
    assert_eq!(document["openapi"], "3.0.3");
    let paths = document["paths"].as_object().unwrap();
    assert!(
        paths.contains_key("/api/upgrades_info/v1/fleet/versions"),
        "{paths:?}"
    );
    assert!(paths.contains_key("/status"), "the skeleton's own at the root");
    assert!(
        paths.contains_key("/api/upgrades_info/v1/rollouts/{target}/pause"),
        "{paths:?}"
    );
    assert!(
        paths.contains_key("/api/upgrades_info/v1/alerts/alertmanager"),
        "{paths:?}"
    );
    // (Asked as GET, without a token: what a change answers is the
    // rollout control tests'.)
    for (path, item) in paths.iter().filter(|(_, item)| item.get("get").is_some()) {
        let operation = &item["get"];
        let example = operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|parameter| parameter["in"] == "path")
            .map(|parameter| parameter["example"].as_str().unwrap());
        let served = match example {
            Some(example) => path.replace("{id}", example),
            None => path.clone(),
        };
        let answer = app
            .status_get(&format!("{served}?{}", required_query(operation, None)))
            .await;
        let code = answer.status.to_string();
        assert!(
            operation["responses"].get(&code).is_some(),
            "{served} answered {code}, not documented: {}",
            String::from_utf8_lossy(&answer.body)
        );
        // The API's document is not the status port's.
        assert!(!path.ends_with("/graph"), "{path}");
    }
}

#[tokio::test]
async fn without_a_fleet_store_the_status_port_documents_no_fleet() {
    let (_upstream, app) = documented_app().await;
    let document = app.status_get("/api/upgrades_info/openapi").await.json();
    let paths: Vec<&String> = document["paths"].as_object().unwrap().keys().collect();
    assert!(
        paths.iter().all(|path| !path.contains("/fleet/")
            && !path.contains("/rollouts")
            && !path.contains("/alerts/")),
        "{paths:?}"
    );
    app.status_get("/api/upgrades_info/v1/fleet/versions")
        .await
        .assert_error(404, "does_not_exist");
}
