//! The fleet view on a real engine: simulated clusters (real graph requests
//! with ids) are recorded in a real store (a SQLite file, a throw-away
//! PostgreSQL), and the fleet answers match what the test counted itself.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use cincinnati_client::fleet::{FleetAdoption, FleetCluster, FleetRollouts, FleetStuck, FleetVersions};
use policy_engine::Settings;
use postgres_testkit::PostgresServer;

use crate::support::app::{TestApp, settings, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, place_percent, rollout, small_graph};

const FLEET: &str = "/api/upgrades_info/v1/fleet";

/// The `n`th simulated cluster's id.
fn cluster(n: u32) -> String {
    format!("{n:08x}-0c1d-4e2f-8a3b-4c5d6e7f8091")
}

fn fleet_settings(upstream: &FakeUpstream, store: &str, policy_file: Option<&Path>) -> Settings {
    let mut settings = settings(&upstream.url());
    settings.service.api.path_prefix = http_answers::PathPrefix::parse("/api/upgrades_info");
    settings.fleet.store = Some(store.parse().unwrap());
    settings.fleet.flush_interval_ms = 20;
    // Answers as of now: the tests compare them with their own count at once.
    settings.fleet.count_interval_secs = 0;
    settings.cluster_policy.file = policy_file.map(Path::to_owned);
    settings
}

/// Asks as cluster `id` on `version` would, and expects an answer.
async fn check(app: &TestApp, id: &str, version: &str) {
    let answer = app
        .get(&format!(
            "/api/upgrades_info/graph?channel=stable-4.18&arch=amd64&id={id}&version={version}"
        ))
        .await;
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
}

async fn versions(app: &TestApp) -> BTreeMap<String, u64> {
    let answer = app.status_get(&format!("{FLEET}/versions")).await;
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    let document: FleetVersions = answer.parse();
    assert_eq!(
        (document.header.kind.as_str(), document.header.schema_version),
        ("FleetVersions", 1)
    );
    assert!(document.counted_at.is_some(), "says when it was counted");
    document
        .versions
        .into_iter()
        .map(|count| (count.version, count.clusters))
        .collect()
}

async fn written(app: &TestApp) -> u64 {
    app.status_document()
        .await
        .fleet
        .expect("the fleet is in /status")
        .recorder
        .written
}

#[tokio::test]
async fn the_fleet_answers_count_what_the_clusters_said() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let policy_file = dir.path().join("policy.yaml");
    // Half way through a 10,000-hour rollout of 4.18.4.
    std::fs::write(&policy_file, rollout(5000.0, 10000.0)).unwrap();
    let store = format!("sqlite://{}", dir.path().join("fleet.db").display());
    let app = spawn_ready(fleet_settings(&upstream, &store, Some(&policy_file))).await;

    // 40 clusters on 4.18.1, 10 on 4.18.2; requests that are not checks.
    for n in 0..50 {
        check(&app, &cluster(n), if n < 40 { "4.18.1" } else { "4.18.2" }).await;
    }
    for extra in [
        "",
        "&id=not-a-uuid",
        "&id=00000000-0000-4000-8000-000000000000&version=banana",
    ] {
        let answer = app
            .get(&format!("/api/upgrades_info/graph?channel=stable-4.18{extra}"))
            .await;
        assert_eq!(answer.status, 200);
    }
    eventually("50 checks written", Duration::from_secs(20), || async {
        written(&app).await == 50
    })
    .await;
    let expected = BTreeMap::from([("4.18.1".to_owned(), 40), ("4.18.2".to_owned(), 10)]);
    assert_eq!(versions(&app).await, expected);

    // The clusters the rollout offers 4.18.4 to (placed below 50%) take it.
    let offered: Vec<u32> = (0..50).filter(|n| place_percent(&cluster(*n)) < 49.9).collect();
    assert!((1..50).contains(&offered.len()), "{offered:?}");
    for n in &offered {
        check(&app, &cluster(*n), "4.18.4").await;
    }
    let total = 50 + offered.len() as u64;
    eventually("the moves written", Duration::from_secs(20), || async {
        written(&app).await == total
    })
    .await;
    assert_eq!(versions(&app).await.get("4.18.4"), Some(&(offered.len() as u64)));

    let rollouts: FleetRollouts = app.status_get(&format!("{FLEET}/rollouts")).await.parse();
    let rollout = &rollouts.rollouts[0];
    assert_eq!(rollout.rollout.target, "4.18.4");
    assert!(
        (rollout.rollout.progress - 50.0).abs() < 0.1,
        "{}",
        rollout.rollout.progress
    );
    assert_eq!(rollout.in_scope, 50, "everyone has an update to 4.18.4");
    assert_eq!(rollout.arrived, offered.len() as u64);
    let waiting_below = (0..50)
        .filter(|n| !offered.contains(n) && place_percent(&cluster(*n)) < rollout.rollout.progress)
        .count();
    assert_eq!(rollout.offered, (offered.len() + waiting_below) as u64);
    // Offered long before the store first saw them: timed from that first
    // check, seconds ago, not from the offer thousands of hours ago.
    let median = rollout.median_hours_to_arrive.expect("arrivals have a median");
    assert!((0.0..1.0).contains(&median), "{median}");
    assert_eq!(rollout.silent_after_arriving, 0);

    let adoption: FleetAdoption = app
        .status_get(&format!("{FLEET}/adoption?version=4.18.4"))
        .await
        .parse();
    assert_eq!(adoption.clusters, offered.len() as u64);

    let mover = cluster(offered[0]);
    let history: FleetCluster = app.status_get(&format!("{FLEET}/clusters/{mover}")).await.parse();
    assert_eq!(history.cluster, mover, "ids are stored as they are");
    assert_eq!(history.version, "4.18.4");
    let changes: Vec<(&str, &str)> = history
        .changes
        .iter()
        .map(|change| (change.from.as_str(), change.to.as_str()))
        .collect();
    let from = if offered[0] < 40 { "4.18.1" } else { "4.18.2" };
    assert_eq!(changes, [(from, "4.18.4")]);

    // 4.18.4 leads nowhere; nobody has been waiting for a day yet.
    let stuck: FleetStuck = app.status_get(&format!("{FLEET}/stuck")).await.parse();
    let nowhere: Vec<(&str, u64, &str)> = stuck
        .no_update
        .iter()
        .map(|group| {
            (
                group.group.version.as_str(),
                group.group.clusters,
                group.reason.as_str(),
            )
        })
        .collect();
    assert_eq!(
        nowhere,
        [("4.18.4", offered.len() as u64, "no recommended update")]
    );
    assert!(stuck.not_moving.is_empty());

    app.status_get(&format!("{FLEET}/clusters/{}", cluster(999)))
        .await
        .assert_error(404, "does_not_exist");
    app.status_get(&format!("{FLEET}/clusters/nobody"))
        .await
        .assert_error(400, "invalid_params");
    app.status_get(&format!("{FLEET}/adoption"))
        .await
        .assert_error(400, "missing_params");
    app.get(&format!("{FLEET}/versions"))
        .await
        .assert_error(404, "does_not_exist");

    let metrics = app.metrics().await;
    assert!(!metrics.contains(&mover), "no cluster id in a metric");
    assert_eq!(
        app.metric("cincinnati_pe_fleet_checks_total{outcome=\"without_id\"}")
            .await,
        1.0
    );
    assert_eq!(
        app.metric("cincinnati_pe_fleet_checks_total{outcome=\"invalid\"}")
            .await,
        2.0
    );
    assert_eq!(
        app.metric("cincinnati_pe_fleet_checks_written_total").await,
        total as f64
    );
}

#[tokio::test]
async fn a_store_that_goes_away_costs_no_request_and_recording_resumes() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let mut postgres = PostgresServer::start().await.unwrap();
    // A credential in the query (libpq's own parameter) is as secret as the
    // URL's password: never shown, even while the store fails.
    let url = format!("{}?password=hunter2", postgres.url());
    let app = spawn_ready(fleet_settings(&upstream, &url, None)).await;
    for n in 0..10 {
        check(&app, &cluster(n), "4.18.1").await;
    }
    eventually("10 checks written", Duration::from_secs(20), || async {
        written(&app).await == 10
    })
    .await;

    postgres.kill().unwrap();
    for n in 10..30 {
        check(&app, &cluster(n), "4.18.2").await;
    }
    eventually("the outage seen", Duration::from_secs(30), || async {
        let status = app.status_document().await.fleet.unwrap();
        status.recorder.freshness.is_stale() && status.recorder.retrying + status.recorder.queued == 20
    })
    .await;
    app.status_get(&format!("{FLEET}/versions"))
        .await
        .assert_error(503, "service_unavailable");
    let status = String::from_utf8(app.status_get("/status").await.body).unwrap();
    assert!(
        !status.contains("hunter2") && status.contains("password=redacted"),
        "{status}"
    );

    postgres.restart().await.unwrap();
    eventually("the held checks written", Duration::from_secs(30), || async {
        written(&app).await == 30
    })
    .await;
    let expected = BTreeMap::from([("4.18.1".to_owned(), 10), ("4.18.2".to_owned(), 20)]);
    assert_eq!(versions(&app).await, expected);
    assert!(
        !app.status_document()
            .await
            .fleet
            .unwrap()
            .recorder
            .freshness
            .is_stale()
    );
    assert_eq!(
        app.metric("cincinnati_pe_fleet_checks_total{outcome=\"dropped\"}")
            .await,
        0.0
    );
}

#[tokio::test]
async fn hashed_ids_are_all_the_store_holds() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, "a key of more than sixteen bytes\n").unwrap();
    let database = dir.path().join("fleet.db");
    let mut settings = fleet_settings(&upstream, &format!("sqlite://{}", database.display()), None);
    settings.fleet.hash_ids = true;
    settings.fleet.hash_key_file = Some(key);
    let app = spawn_ready(settings).await;
    let id = cluster(7);
    check(&app, &id, "4.18.1").await;
    eventually("the check written", Duration::from_secs(20), || async {
        written(&app).await == 1
    })
    .await;

    let history: FleetCluster = app.status_get(&format!("{FLEET}/clusters/{id}")).await.parse();
    assert_ne!(history.cluster, id);
    assert_eq!(history.cluster.len(), 64, "a hex HMAC-SHA-256");
    let again: FleetCluster = app
        .status_get(&format!("{FLEET}/clusters/{}", history.cluster))
        .await
        .parse();
    assert_eq!(again.version, "4.18.1", "the hash names the cluster too");
    let bytes = std::fs::read(&database).unwrap_or_default();
    let wal = std::fs::read(dir.path().join("fleet.db-wal")).unwrap_or_default();
    let id_bytes = id.as_bytes();
    for file in [&bytes, &wal] {
        assert!(
            !file.windows(id_bytes.len()).any(|window| window == id_bytes),
            "the id is nowhere in the store"
        );
    }
}
