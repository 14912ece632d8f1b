//! Rollouts under run-time control on real engines: a token-guarded API on
//! the status port pauses, holds and resumes a rollout of the policy file;
//! the change is audited, explained, and taken by every engine sharing the
//! store (a throw-away PostgreSQL), also after a restart.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use cincinnati_client::rollout_control::Rollouts;
use policy_engine::Settings;
use postgres_testkit::PostgresServer;

use crate::support::app::{TestApp, settings, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, place_percent, recommended_from, rfc3339, rollout, small_graph};

const ROLLOUTS: &str = "/api/upgrades_info/v1/rollouts";
pub(crate) const TOKEN: &str = "s3cret-ops-token";

/// A cluster id whose place in rollouts is within `range` (percent).
pub(crate) fn cluster_at(range: std::ops::Range<f64>) -> String {
    (0_u32..)
        .map(|n| format!("{n:08x}-7a1e-4c0d-9e55-0123456789ab"))
        .find(|id| range.contains(&place_percent(id)))
        .expect("some id lands in any range")
}

/// An engine with a policy file (unless `dir` has one: a rollout of 4.18.4
/// half way through), a fleet store at `store` and a token file.
pub(crate) fn control_settings(upstream: &FakeUpstream, dir: &Path, store: &str) -> Settings {
    let policy = dir.join("policy.yaml");
    if !policy.exists() {
        std::fs::write(&policy, rollout(5000.0, 10000.0)).unwrap();
    }
    std::fs::write(dir.join("tokens"), format!("ops {TOKEN}\n")).unwrap();
    let mut settings = settings(&upstream.url());
    settings.service.api.path_prefix = http_answers::PathPrefix::parse("/api/upgrades_info");
    settings.cluster_policy.file = Some(policy);
    settings.fleet.store = Some(store.parse().unwrap());
    settings.rollouts.token_file = Some(dir.join("tokens"));
    settings.rollouts.refresh_ms = 200;
    settings
}

/// Whether the cluster `id` on 4.18.1 is offered 4.18.4.
pub(crate) async fn offered(app: &TestApp, id: &str) -> bool {
    let answer = app
        .get(&format!(
            "/api/upgrades_info/graph?channel=stable-4.18&arch=amd64&version=4.18.1&id={id}"
        ))
        .await;
    assert_eq!(answer.status, 200);
    let graph = answer.json();
    let updates: BTreeSet<&str> = recommended_from(&graph, "4.18.1").into_iter().collect();
    updates.contains("4.18.4")
}

/// Asks `{ROLLOUTS}/{route}` with `method`, the `query` and the token.
async fn change(
    app: &TestApp,
    method: reqwest::Method,
    route: &str,
    query: &[(&str, &str)],
) -> (u16, String) {
    let answer = app
        .client
        .request(method, format!("http://{}{ROLLOUTS}/{route}", app.status_address))
        .bearer_auth(TOKEN)
        .query(query)
        .send()
        .await
        .unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

/// The rollouts once the first is paused (polled, within a generous
/// deadline); `Err` says what was seen last.
pub(crate) async fn once_paused(app: &TestApp, what: &str) -> anyhow::Result<Rollouts> {
    let (document, _) = registry_testkit::poll::until(what, std::time::Duration::from_secs(60), async || {
        let document = rollouts(app).await;
        match &document.rollouts[0].control {
            Some(control) if control.state == "paused" => Ok(document),
            other => Err(anyhow::anyhow!("control {other:?}")),
        }
    })
    .await?;
    Ok(document)
}

pub(crate) async fn rollouts(app: &TestApp) -> Rollouts {
    let answer = app
        .client
        .get(format!("http://{}{ROLLOUTS}", app.status_address))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    answer.json().await.unwrap()
}

#[tokio::test]
async fn a_token_holder_pauses_holds_and_resumes_a_rollout_and_every_change_is_audited() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("fleet.db").display());
    let app = spawn_ready(control_settings(&upstream, dir.path(), &store)).await;
    let (inside, outside) = (cluster_at(20.0..40.0), cluster_at(60.0..80.0));
    assert!(offered(&app, &inside).await && !offered(&app, &outside).await);

    // Without a token, with a wrong one, on the public port: refused.
    let bare = app.status_get(ROLLOUTS).await;
    bare.assert_error(401, "unauthorized");
    assert_eq!(bare.header("www-authenticate"), Some("Bearer"));
    let wrong = app
        .client
        .get(format!("http://{}{ROLLOUTS}", app.status_address))
        .bearer_auth("not-the-token")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 403);
    app.get(ROLLOUTS).await.assert_error(404, "does_not_exist");

    // Held at 90%: the cluster at 60-80% is offered the target.
    let (status, body) = change(
        &app,
        reqwest::Method::PUT,
        "4.18.4/progress",
        &[("reason", "weekend push"), ("percent", "90")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(offered(&app, &outside).await, "held above its place");

    // Paused at the held 90%: nobody new, those inside stay inside.
    let (status, _) = change(
        &app,
        reqwest::Method::POST,
        "4.18.4/pause",
        &[("reason", "storage alarms")],
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = change(
        &app,
        reqwest::Method::PUT,
        "4.18.4/progress",
        &[("reason", "let the clock decide")],
    )
    .await;
    assert_eq!(status, 200);
    let document = rollouts(&app).await;
    let held = &document.rollouts[0];
    let control = held.control.as_ref().expect("the rollout is under control");
    assert_eq!(
        (
            control.state.as_str(),
            control.by.as_str(),
            control.reason.as_str()
        ),
        ("paused", "ops", "let the clock decide")
    );
    assert!(!held.on_schedule);
    assert!(
        (held.progress - held.scheduled_progress).abs() < 0.01,
        "paused a moment ago: the clock barely stood still"
    );
    assert!(offered(&app, &inside).await && !offered(&app, &outside).await);
    let paused_metric = "cincinnati_pe_rollout_paused{target=\"4.18.4\"}";
    assert_eq!(app.metric(paused_metric).await, 1.0);

    // Explain says who paused it, when and why.
    let explained = app
        .status_get(&format!(
            "/api/upgrades_info/v1/explain-cluster?channel=stable-4.18&arch=amd64&version=4.18.1&id={outside}"
        ))
        .await
        .json();
    let rollout = &explained["rollouts"][0];
    assert_eq!(rollout["control"]["state"], "paused", "{explained}");
    assert_eq!(rollout["control"]["by"], "ops");
    assert!(
        rollout["inside_from"].is_null(),
        "no schedule while paused: {explained}"
    );

    let (status, _) = change(
        &app,
        reqwest::Method::POST,
        "4.18.4/resume",
        &[("reason", "firmware fixed")],
    )
    .await;
    assert_eq!(status, 200);
    let document = rollouts(&app).await;
    assert!(document.rollouts[0].on_schedule);
    assert_eq!(app.metric(paused_metric).await, 0.0);
    let actions: Vec<(&str, &str, &str)> = document
        .history
        .iter()
        .map(|entry| (entry.action.as_str(), entry.by.as_str(), entry.reason.as_str()))
        .collect();
    assert_eq!(
        actions,
        [
            ("hold", "ops", "weekend push"),
            ("pause", "ops", "storage alarms"),
            ("release", "ops", "let the clock decide"),
            ("resume", "ops", "firmware fixed"),
        ]
    );
    assert!(app.status_document().await.rollout_control.unwrap().controlled == ["4.18.4"]);

    // Refusals name what is wrong.
    let (status, body) = change(&app, reqwest::Method::POST, "4.19.9/pause", &[("reason", "x")]).await;
    assert_eq!(status, 404, "{body}");
    let (status, _) = change(
        &app,
        reqwest::Method::PUT,
        "4.18.4/progress",
        &[("reason", "x"), ("percent", "150")],
    )
    .await;
    assert_eq!(status, 400);
    let (status, _) = change(&app, reqwest::Method::POST, "4.18.4/pause", &[("reason", " ")]).await;
    assert_eq!(status, 400);
    let (status, body) = change(
        &app,
        reqwest::Method::PUT,
        "4.18.4/progress",
        &[("reason", "x"), ("percent", "half")],
    )
    .await;
    assert!(status == 400 && body.contains("invalid_params"), "{body}");
    let (status, body) = change(&app, reqwest::Method::POST, "4.18.4/pause", &[]).await;
    assert!(status == 400 && body.contains("missing_params"), "{body}");
    let wrong_method = app.status_get(&format!("{ROLLOUTS}/4.18.4/pause")).await;
    wrong_method.assert_error(405, "method_not_allowed");
    assert_eq!(wrong_method.header("allow"), Some("POST"));
}

#[tokio::test]
async fn engines_sharing_a_store_take_a_change_made_on_either_and_keep_it_across_restarts() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let postgres = PostgresServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let first = spawn_ready(control_settings(&upstream, dir.path(), &postgres.url())).await;
    let second = spawn_ready(control_settings(&upstream, dir.path(), &postgres.url())).await;
    let outside = cluster_at(60.0..80.0);
    assert!(!offered(&second, &outside).await);

    let (status, _) = change(
        &first,
        reqwest::Method::PUT,
        "4.18.4/progress",
        &[("reason", "go"), ("percent", "100")],
    )
    .await;
    assert_eq!(status, 200);
    eventually(
        "the other engine takes the hold",
        Duration::from_secs(20),
        || async { offered(&second, &outside).await },
    )
    .await;

    drop(second);
    let again = spawn_ready(control_settings(&upstream, dir.path(), &postgres.url())).await;
    eventually(
        "a restarted engine reads the hold",
        Duration::from_secs(20),
        || async { offered(&again, &outside).await },
    )
    .await;
    let document = rollouts(&again).await;
    assert_eq!(document.history.len(), 1, "one change, audited once");
}

#[tokio::test]
async fn a_rollout_whose_arrived_clusters_go_silent_is_halted_by_the_fleets_signal() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("fleet.db").display());
    // Complete long ago; halted once half of at least two arrivals are silent.
    std::fs::write(
        dir.path().join("policy.yaml"),
        rollout_done_long_ago("{silent_after_arriving_percent: 50, min_arrived: 2}"),
    )
    .unwrap();
    let mut settings = control_settings(&upstream, dir.path(), &store);
    settings.rollouts.halt_check_secs = 1;
    settings.fleet.silent_hours = 1;

    // Three clusters arrived at 4.18.4 three hours ago and were not seen
    // since: written to the store as the engine's recorder would have.
    let seeded = fleet_store::FleetStore::open(&store, &store).await.unwrap();
    for n in 0..3 {
        let check = |version: &str, at| fleet_store::Check {
            cluster: cluster_at(f64::from(n) * 10.0..f64::from(n) * 10.0 + 10.0),
            channel: "stable-4.18".into(),
            arch: "amd64".into(),
            version: version.into(),
            place: 5.0,
            at,
        };
        seeded
            .record(&[check("4.18.1", hours_ago(5)), check("4.18.4", hours_ago(3))])
            .await
            .unwrap();
    }

    let app = spawn_ready(settings).await;
    let (control, audited) = await_halted(&app).await;
    assert_eq!(control.by, "fleet-signal");
    assert!(
        control
            .reason
            .starts_with("halted: 100.0% of the 3 clusters that arrived at 4.18.4 went silent"),
        "{}",
        control.reason
    );
    assert_eq!(audited, 1, "paused once, not on every check");
}

/// Unix seconds `hours` ago.
fn hours_ago(hours: i64) -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    i64::try_from(now).unwrap() - hours * 3600
}

/// A rollout over and done with long ago (every cluster offered its target
/// for days), with `halt_when`.
fn rollout_done_long_ago(halt_when: &str) -> String {
    let start = rfc3339(time::OffsetDateTime::now_utc() - time::Duration::hours(200));
    format!(
        "rollouts:\n  - target: 4.18.4\n    start: \"{start}\"\n    duration_hours: 1\n    \
         halt_when: {halt_when}\n"
    )
}

/// Waits until the rollout is paused, and returns its control then and the
/// audit's length.
async fn await_halted(app: &TestApp) -> (cincinnati_client::cluster_policy::RolloutControlFacts, usize) {
    eventually(
        "the fleet's signal pauses the rollout",
        Duration::from_secs(30),
        || async {
            rollouts(app).await.rollouts[0]
                .control
                .as_ref()
                .is_some_and(|control| control.state == "paused")
        },
    )
    .await;
    let document = rollouts(app).await;
    (
        document.rollouts[0].control.clone().unwrap(),
        document.history.len(),
    )
}

/// Four clusters offered the rollout's target days ago are seen still on
/// the version they had, one took it: 80% stuck halts it.
#[tokio::test]
async fn a_rollout_its_clusters_do_not_take_is_halted_by_the_fleets_signal() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("fleet.db").display());
    std::fs::write(
        dir.path().join("policy.yaml"),
        rollout_done_long_ago("{stuck_percent: 50, stuck_hours: 24, min_offered: 5}"),
    )
    .unwrap();
    let mut settings = control_settings(&upstream, dir.path(), &store);
    settings.rollouts.halt_check_secs = 1;
    let seeded = fleet_store::FleetStore::open(&store, &store).await.unwrap();
    for n in 0..5 {
        let check = |version: &str, at| fleet_store::Check {
            cluster: cluster_at(f64::from(n) * 10.0..f64::from(n) * 10.0 + 10.0),
            channel: "stable-4.18".into(),
            arch: "amd64".into(),
            version: version.into(),
            place: f64::from(n) * 10.0 + 5.0,
            at,
        };
        let last = if n == 0 { "4.18.4" } else { "4.18.1" };
        seeded
            .record(&[check("4.18.1", hours_ago(30)), check(last, hours_ago(1))])
            .await
            .unwrap();
    }

    let app = spawn_ready(settings).await;
    let (control, audited) = await_halted(&app).await;
    assert_eq!(control.by, "fleet-signal");
    assert!(
        control.reason.starts_with(
            "halted: 80.0% of the 5 clusters offered 4.18.4 more than 24 h ago have not taken it"
        ),
        "{}",
        control.reason
    );
    assert_eq!(audited, 1, "paused once");
}

/// The conflicts `/status` lists.
async fn conflicts(app: &TestApp) -> Vec<String> {
    app.status_document()
        .await
        .rollout_control
        .expect("rollout control in /status")
        .conflicts
}

/// The file edited under a pause (its rollout started earlier: the
/// schedule now past a cluster placed above the pause's progress): the
/// cluster is still not offered the target, and the conflict is reported
/// until the rollout is resumed.
#[tokio::test]
async fn an_edit_of_the_file_under_a_pause_offers_nobody_new_and_is_reported() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("fleet.db").display());
    let mut settings = control_settings(&upstream, dir.path(), &store);
    settings.cluster_policy.reload_secs = 1;
    let app = spawn_ready(settings).await;
    let above = cluster_at(60.0..80.0);
    assert!(!offered(&app, &above).await, "placed above the progress (50%)");
    let (status, _) = change(
        &app,
        reqwest::Method::POST,
        "4.18.4/pause",
        &[("reason", "alarms")],
    )
    .await;
    assert_eq!(status, 200);

    // Started 9,000 of its 10,000 hours ago: 95% by the file.
    std::fs::write(dir.path().join("policy.yaml"), rollout(9000.0, 10000.0)).unwrap();
    eventually("the conflict reported", Duration::from_secs(20), || async {
        conflicts(&app).await.len() == 1
    })
    .await;
    let reported = conflicts(&app).await;
    assert!(
        reported[0].starts_with("4.18.4: the policy file's schedule (line 2) was edited while the rollout is paused by ops (alarms)"),
        "{reported:?}"
    );
    assert_eq!(app.metric("cincinnati_pe_rollout_control_conflicts").await, 1.0);
    let document = rollouts(&app).await;
    assert!(
        document.rollouts[0].scheduled_progress > 90.0 && document.rollouts[0].progress < 51.0,
        "the file says 95%, the pause keeps 50%: {:?}",
        document.rollouts[0]
    );
    assert!(!offered(&app, &above).await, "a pause offers nobody new");
    let fleet: cincinnati_client::fleet::FleetRollouts = app
        .status_get("/api/upgrades_info/v1/fleet/rollouts")
        .await
        .parse();
    let control = fleet.rollouts[0]
        .control
        .as_ref()
        .expect("the fleet's rollouts say it is controlled");
    assert_eq!((control.state.as_str(), control.by.as_str()), ("paused", "ops"));

    let (status, _) = change(
        &app,
        reqwest::Method::POST,
        "4.18.4/resume",
        &[("reason", "fixed")],
    )
    .await;
    assert_eq!(status, 200);
    assert!(conflicts(&app).await.is_empty(), "resumed: the file decides");
    assert!(offered(&app, &above).await, "at the file's progress again");
}
