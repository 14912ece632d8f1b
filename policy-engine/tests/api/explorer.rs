//! The explorer page and the answers it reads: served as the graph is
//! (ETag, 304, gzip, Cache-Control), the page under a strict
//! Content-Security-Policy, off when `service.explorer` is false; the
//! answers are the planning library's documents on the upstream's graph,
//! a channel with the releases phasing into it at the request's moment.

use std::io::Read as _;

use cincinnati_client::document::{Document, Shape};
use cincinnati_client::json::{PathJson, SCHEMA_VERSION};
use cincinnati_client::plan::{PathQuery, plan};
use cincinnati_client::{Tier, UpdateGraph};
use cincinnati_core::Version;
use flate2::read::GzDecoder;
use rollout_model::time::{SignedDuration, Timestamp};
use serde_json::{Value, json};

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

const HOUR: SignedDuration = SignedDuration::from_hours(1);

/// A graph-builder's full graph at `now`: stable-4.18 lists 4.18.1; 4.18.2
/// phases into it from 218.4 hours ago, patch updates over P20D (480
/// hours: 45.5% of the fleet is offered 4.18.1 → 4.18.2 now), and 4.18.3
/// from an hour ahead.
fn phased_full_graph(now: Timestamp) -> Vec<u8> {
    let rollout =
        |start: Timestamp| json!({"stable-4.18": {"start": start.to_string(), "patch": "P20D"}}).to_string();
    let node = |version: &str, channels: &str, phased: Option<String>| {
        let mut node = json!({"version": format!("{version}+amd64"), "payload": format!("p/{version}"), "metadata": {
            "io.openshift.upgrades.graph.release.arch": "amd64",
            "io.openshift.upgrades.graph.release.channels": channels}});
        if let Some(phased) = phased {
            node["metadata"]["io.openshift.upgrades.graph.release.phased_rollouts"] = json!(phased);
        }
        node
    };
    let started = now - SignedDuration::from_secs_f64(218.4 * 3600.0);
    serde_json::to_vec(&json!({
        "nodes": [
            node("4.18.1", "fast-4.18,stable-4.18", None),
            node("4.18.2", "fast-4.18", Some(rollout(started))),
            node("4.18.3", "fast-4.18", Some(rollout(now + HOUR))),
        ],
        "edges": [[0, 1], [0, 2], [1, 2]]
    }))
    .unwrap()
}

async fn phased_app(phasing: bool) -> (FakeUpstream, TestApp) {
    let upstream = FakeUpstream::start(Behaviour::Graph(phased_full_graph(Timestamp::now()))).await;
    let mut settings = settings(&upstream.url());
    settings.phased_rollouts.enabled = phasing;
    settings.service.requests.cache_max_age_secs = 7 * 24 * 3600;
    let app = spawn_ready(settings).await;
    (upstream, app)
}

fn versions(channel: &Value) -> Vec<&str> {
    channel["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|release| release["version"].as_str().unwrap())
        .collect()
}

/// A release phasing into the channel is in it once its `start` has come,
/// the update into it phased with its window and the share of the fleet
/// offered it now; one whose `start` is ahead is not, and the answer is
/// cached no longer than until then.
#[tokio::test]
async fn a_channel_has_the_releases_phasing_into_it_and_their_updates_phased() {
    let (_upstream, app) = phased_app(true).await;
    let answer = app.get("/v1/channel?channel=stable-4.18&arch=amd64").await;
    assert_eq!(answer.status, 200);
    let channel = answer.json();
    assert_eq!(versions(&channel), ["4.18.1", "4.18.2"], "{channel}");
    let update = &channel["releases"][0]["updates"][0];
    assert_eq!(update["to"], "4.18.2");
    let phased = &update["phased"];
    let phasing = &channel["releases"][1];
    assert_eq!(phasing["channels"], json!(["fast-4.18", "stable-4.18"]));
    assert_eq!(
        phasing["phasing"],
        json!({"start": phased["start"], "end": phased["end"]}),
        "listed when its one update's window ends"
    );
    assert_eq!(phased["duration"], "P20D");
    let (start, end): (Timestamp, Timestamp) = (
        phased["start"].as_str().unwrap().parse().unwrap(),
        phased["end"].as_str().unwrap().parse().unwrap(),
    );
    assert_eq!(end, start + 480 * HOUR);
    let share = phased["share"].as_f64().unwrap();
    assert!((0.45..0.46).contains(&share), "218.4 hours into 480: {share}");
    assert_eq!(channel["phasedCount"], 1);
    assert!(
        (1..=3600).contains(&answer.max_age()),
        "4.18.3 enters within the hour: {:?}",
        answer.header("cache-control")
    );
}

/// An engine chained to the phasing one forwards its answer, and caches
/// it no longer than the upstream says.
#[tokio::test]
async fn a_chained_engine_caches_the_phased_channel_no_longer_than_its_upstream() {
    let (_upstream, a) = phased_app(true).await;
    let mut front = settings(&a.url("/graph"));
    front.service.requests.cache_max_age_secs = 7 * 24 * 3600;
    let b = spawn_ready(front).await;
    let answer = b.get("/v1/channel?channel=stable-4.18&arch=amd64").await;
    assert_eq!(versions(&answer.json()), ["4.18.1", "4.18.2"]);
    assert!(
        (1..=3600).contains(&answer.max_age()),
        "4.18.3 enters within the hour: {:?}",
        answer.header("cache-control")
    );
}

/// An engine that does not phase draws the channel as the graph lists it.
#[tokio::test]
async fn without_phasing_a_channel_is_as_the_graph_lists_it() {
    let (_upstream, app) = phased_app(false).await;
    let answer = app.get("/v1/channel?channel=stable-4.18&arch=amd64").await;
    let channel = answer.json();
    assert_eq!(versions(&channel), ["4.18.1"]);
    assert_eq!(channel["phasedCount"], 0);
    assert_eq!(answer.max_age(), 7 * 24 * 3600);
}
