//! The explorer page and the answers it reads: served as the graph is
//! (ETag, 304, gzip, Cache-Control), the page under a strict
//! Content-Security-Policy, off when `service.explorer` is false; the
//! answers are the planning library's documents on the upstream's graph.

use std::io::Read as _;

use cincinnati_client::document::{Document, Shape};
use cincinnati_client::json::{PathJson, SCHEMA_VERSION};
use cincinnati_client::plan::{PathQuery, plan};
use cincinnati_client::{Tier, UpdateGraph};
use cincinnati_core::Version;
use flate2::read::GzDecoder;

use crate::support::app::{TestApp, settings, spawn_ready};
use crate::support::fixture;
use crate::support::upstream::{Behaviour, FakeUpstream};

async fn app_with_explorer(explorer: bool) -> (FakeUpstream, TestApp) {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut settings = settings(&upstream.url());
    settings.service.explorer = explorer;
    let app = spawn_ready(settings).await;
    (upstream, app)
}

#[tokio::test]
async fn the_page_and_its_assets_are_prepared_answers_under_a_strict_policy() {
    let (_upstream, app) = app_with_explorer(true).await;
    let page = app.get("/").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    let policy = page.header("content-security-policy").unwrap();
    assert!(
        policy.contains("default-src 'none'") && policy.contains("script-src 'self'"),
        "{policy}"
    );
    let html = String::from_utf8(page.body.clone()).unwrap();
    assert!(
        !html.contains("<script>") && !html.contains("style="),
        "nothing inline"
    );
    for asset in ["explorer/app.js", "explorer/style.css", "explorer/icon.svg"] {
        assert!(html.contains(asset), "the page loads {asset}");
        let served = app.get(&format!("/{asset}")).await;
        assert_eq!(served.status, 200, "{asset}");
        let etag = served.header("etag").unwrap().to_owned();
        assert_eq!(served.header("cache-control"), Some("public, no-cache"));
        let again = app
            .get_with(&format!("/{asset}"), &[("if-none-match", &etag)])
            .await;
        assert_eq!(again.status, 304, "{asset}");
        let compressed = app
            .get_with(&format!("/{asset}"), &[("accept-encoding", "gzip")])
            .await;
        assert_eq!(compressed.header("content-encoding"), Some("gzip"), "{asset}");
        let mut inflated = Vec::new();
        GzDecoder::new(&compressed.body[..])
            .read_to_end(&mut inflated)
            .unwrap();
        assert_eq!(inflated, served.body, "{asset}");
    }
}

#[tokio::test]
async fn the_setting_turns_the_page_off_and_leaves_the_answers() {
    let (_upstream, app) = app_with_explorer(false).await;
    for path in ["/", "/explorer/app.js"] {
        assert_eq!(app.get(path).await.status, 404, "{path}");
    }
    assert_eq!(app.get("/v1/architectures").await.status, 200);
}

/// The page on the status port: the same page, assets and answers as on
/// the public port; with a fleet store, its `<body>` says where the fleet
/// answers are (on that port only), which shows its Fleet view.
#[tokio::test]
async fn the_status_port_serves_the_page_too_with_its_fleet_view_only_with_a_fleet_store() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let dir = tempfile::tempdir().unwrap();
    let mut with_fleet = settings(&upstream.url());
    with_fleet.fleet.store = Some(
        format!("sqlite://{}", dir.path().join("fleet.db").display())
            .parse()
            .unwrap(),
    );
    let app = spawn_ready(with_fleet).await;
    let (public, status) = (app.get("/").await, app.status_get("/").await);
    assert_eq!((public.status, status.status), (200, 200));
    let (public, status) = (
        String::from_utf8(public.body).unwrap(),
        String::from_utf8(status.body).unwrap(),
    );
    assert!(!public.contains("data-fleet"), "the public page knows no fleet");
    assert_eq!(
        status.replacen(r#" data-fleet="v1/fleet/""#, "", 1),
        public,
        "the status port's page differs by where the fleet answers are"
    );
    assert!(
        app.status_get("/")
            .await
            .header("content-security-policy")
            .is_some_and(|policy| policy.contains("connect-src 'self'"))
    );
    for path in [
        "/explorer/app.js",
        "/explorer/fleet.js",
        "/explorer/style.css",
        "/v1/architectures",
    ] {
        assert_eq!(
            app.status_get(path).await.body,
            app.get(path).await.body,
            "{path}"
        );
    }
    assert_eq!(app.status_get("/v1/fleet/versions").await.status, 200);
    assert_eq!(app.get("/v1/fleet/versions").await.status, 404);

    // Without a fleet store, the status port's page is the public one.
    let (_upstream, app) = app_with_explorer(true).await;
    assert_eq!(app.status_get("/").await.body, app.get("/").await.body);
    // Without the page, neither port serves it.
    let (_upstream, app) = app_with_explorer(false).await;
    for path in ["/", "/explorer/app.js", "/v1/architectures"] {
        assert_eq!(app.status_get(path).await.status, 404, "{path}");
    }
}

#[tokio::test]
async fn architectures_and_channels_come_from_the_upstream_graph() {
    let (_upstream, app) = app_with_explorer(true).await;
    let architectures = app.get("/v1/architectures").await.json();
    assert_eq!(
        architectures["architectures"],
        serde_json::json!(["amd64", "arm64", "ppc64le", "s390x"])
    );
    assert_eq!(architectures["schemaVersion"], SCHEMA_VERSION);
    let channels = app.get("/v1/channels?arch=s390x").await.json();
    assert_eq!(channels["kind"], "Channels");
    let stable = channels["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|channel| channel["name"] == "stable-4.6")
        .expect("s390x has stable-4.6");
    assert!(stable["releases"].as_u64().unwrap() > 0);
    let unknown = app.get("/v1/channels?arch=riscv64").await;
    let message = unknown.assert_error(404, "does_not_exist");
    assert!(
        message.contains("riscv64") && message.contains("amd64"),
        "{message}"
    );
}

#[tokio::test]
async fn a_path_is_the_document_the_cli_prints() {
    let (_upstream, app) = app_with_explorer(true).await;
    let graph = UpdateGraph::build(
        "amd64",
        &[Document {
            graph: cincinnati_core::wire::parse(&fixture()).unwrap().graph,
            shape: Shape::Full,
        }],
    );
    let mut found = 0;
    for (from, to, tier) in [
        ("4.6.1", "4.8.18", Tier::Stable),
        ("4.5.3", "4.6.4", Tier::Fast),
        ("4.7.0", "4.6.1", Tier::Stable),
    ] {
        let query = PathQuery {
            from: Version::parse(from).unwrap(),
            to: Version::parse(to).unwrap(),
            tier,
            accepted_risks: Default::default(),
            alternatives: 0,
        };
        let expected = serde_json::to_value(PathJson::new("amd64", &query, &plan(&graph, &query))).unwrap();
        let answer = app
            .get(&format!("/v1/path?from={from}&to={to}&tier={tier}"))
            .await;
        assert_eq!(answer.status, 200, "{from} → {to}");
        assert_eq!(answer.json(), expected, "{from} → {to}");
        found += usize::from(expected["found"] == true);
    }
    assert!(found > 0, "some question has a plan");
}

#[tokio::test]
async fn questions_that_are_not_valid_are_refused_by_name() {
    let (_upstream, app) = app_with_explorer(true).await;
    let cases = [
        ("/v1/path?to=4.6.1", 400, "missing_params", "from"),
        ("/v1/path?from=4.6&to=4.6.1", 400, "invalid_params", "from"),
        (
            "/v1/path?from=4.6.1&to=4.7.1&tier=gold",
            400,
            "invalid_params",
            "gold",
        ),
        (
            "/v1/explain?from=4.6.1&to=4.7.1",
            400,
            "missing_params",
            "channel",
        ),
        (
            "/v1/explain?channel=Stable&from=4.6.1&to=4.7.1",
            400,
            "invalid_params",
            "channel",
        ),
    ];
    for (path, status, kind, named) in cases {
        let message = app.get(path).await.assert_error(status, kind);
        assert!(message.contains(named), "{path}: {message}");
    }
    let explanation = app
        .get("/v1/explain?channel=stable-4.6&from=4.6.1&to=4.5.3")
        .await
        .json();
    assert_eq!(explanation["verdict"], "notNewer");
}
