//! Rollouts under run-time control on real engines: a token-guarded API on
//! the status port pauses, holds and resumes a rollout of the policy file,
//! each change audited, explained and taken by every engine sharing the
//! store; engines fail closed (no target offered before the state is read,
//! a pause in force even while the store cannot take it); halts count
//! only evidence an outsider cannot mint, and never the same twice.

use std::time::Duration;

use postgres_testkit::PostgresServer;
use reqwest::Method;

use crate::support::app::{TestApp, spawn, spawn_ready};
use crate::support::rollouts::{
    ALERTMANAGER_TOKEN, PREFIX, READ_TOKEN, ROLLOUTS, TOKEN, ask, change, change_with, cluster_at,
    clusters_at, conflicts, control_settings, first, offered, once_paused, rollout_with, rollouts,
    round_after, seed,
};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, place_percent, rollout, small_graph};

fn sqlite(dir: &std::path::Path) -> String {
    format!("sqlite://{}", dir.join("fleet.db").display())
}

#[tokio::test]
async fn a_token_holder_pauses_holds_and_resumes_a_rollout_within_its_scope_and_every_change_is_audited() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let app = spawn_ready(control_settings(&upstream, dir.path(), &sqlite(dir.path()))).await;
    let (inside, outside) = (cluster_at(20.0..40.0), cluster_at(60.0..80.0));
    assert!(offered(&app, &inside).await && !offered(&app, &outside).await);

    // Without a token, with a wrong one, on the public port: refused.
    let bare = app.status_get(ROLLOUTS).await;
    bare.assert_error(401, "unauthorized");
    assert_eq!(bare.header("www-authenticate"), Some("Bearer"));
    let (status, _) = change_with(
        &app,
        "not-the-token",
        (Method::POST, "4.18.4/pause"),
        &[("reason", "x")],
    )
    .await;
    assert_eq!(status, 403);
    app.get(ROLLOUTS).await.assert_error(404, "does_not_exist");
    // A read token reads and changes nothing; Alertmanager's may pause,
    // never hold or resume.
    let (status, body) = change_with(
        &app,
        READ_TOKEN,
        (Method::POST, "4.18.4/pause"),
        &[("reason", "x")],
    )
    .await;
    assert!(status == 403 && body.contains("scope is read"), "{body}");
    let hold = [("reason", "all in"), ("percent", "100")];
    let (status, _) = change_with(&app, ALERTMANAGER_TOKEN, (Method::PUT, "4.18.4/progress"), &hold).await;
    assert_eq!(status, 403, "a pause-only token cannot hold a rollout at 100%");
    assert!(!offered(&app, &outside).await);

    // Held at 90% (the scheme in lower case, as RFC 9110 allows).
    let answer = app
        .client
        .put(format!("http://{}{ROLLOUTS}/4.18.4/progress", app.status_address))
        .header("authorization", format!("bearer {TOKEN}"))
        .query(&[("reason", "weekend push"), ("percent", "90")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert!(offered(&app, &outside).await, "held above its place");

    // Paused, then released: the pause keeps what it had, nobody new.
    let (status, _) = change(
        &app,
        Method::POST,
        "4.18.4/pause",
        &[("reason", "storage\0 alarms\n")],
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = change(
        &app,
        Method::PUT,
        "4.18.4/progress",
        &[("reason", "let the clock decide")],
    )
    .await;
    assert_eq!(status, 200);
    let document = rollouts(&app).await;
    let paused = first(&document);
    assert_eq!(paused.state, "paused");
    let control = paused.control.as_ref().expect("the rollout is under control");
    assert_eq!(control.paused.as_ref().unwrap().by, "ops");
    assert!(
        paused.said.starts_with("paused at 90.0% by ops since "),
        "{}",
        paused.said
    );
    assert!(
        offered(&app, &inside).await,
        "inside before the pause: still offered"
    );
    let paused_metric = "cincinnati_pe_rollout_paused{target=\"4.18.4\"}";
    assert_eq!(app.metric(paused_metric).await, 1.0);

    // Explain says it.
    let explained = app
        .status_get(&format!(
            "{PREFIX}/v1/explain-cluster?channel=stable-4.18&arch=amd64&version=4.18.1&id={inside}"
        ))
        .await
        .json();
    let rollout = &explained["rollouts"][0];
    assert_eq!(rollout["state"], "paused", "{explained}");
    assert_eq!(rollout["control"]["paused"]["by"], "ops");
    assert!(
        rollout["insideFrom"].is_null(),
        "no schedule while paused: {explained}"
    );

    let (status, _) = change(
        &app,
        Method::POST,
        "4.18.4/resume",
        &[("reason", "firmware fixed")],
    )
    .await;
    assert_eq!(status, 200);
    let document = rollouts(&app).await;
    assert_eq!(first(&document).state, "on-schedule");
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
        ],
        "reasons kept without their control characters"
    );

    // Refusals name what is wrong.
    let (status, body) = change(&app, Method::POST, "4.19.9/pause", &[("reason", "x")]).await;
    assert_eq!(status, 404, "{body}");
    let (status, _) = change(
        &app,
        Method::PUT,
        "4.18.4/progress",
        &[("reason", "x"), ("percent", "150")],
    )
    .await;
    assert_eq!(status, 400);
    let (status, _) = change(&app, Method::POST, "4.18.4/pause", &[("reason", " ")]).await;
    assert_eq!(status, 400);
    let (status, body) = change(&app, Method::POST, "4.18.4/pause", &[]).await;
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
    let first_engine = spawn_ready(control_settings(&upstream, dir.path(), &postgres.url())).await;
    let second = spawn_ready(control_settings(&upstream, dir.path(), &postgres.url())).await;
    let outside = cluster_at(60.0..80.0);
    assert!(!offered(&second, &outside).await);

    let (status, _) = change(
        &first_engine,
        Method::PUT,
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
    // Ready once it has read the state: the hold is in force at once.
    assert!(offered(&again, &outside).await, "ready only after the first read");
    let document = rollouts(&again).await;
    assert_eq!(document.state.known, "read");
    assert_eq!(document.history.len(), 1, "one change, audited once");
}

/// Held at 0%, the store stops and an engine restarts: it answers (ready),
/// but offers the target to nobody, not even where the file's schedule
/// would; once the store is back, the hold is in force.
#[tokio::test]
async fn an_engine_that_has_not_read_the_state_offers_no_rollout_target_to_anyone() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let mut postgres = PostgresServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = postgres.url();
    let settings = || control_settings(&upstream, dir.path(), &url);
    let engine = spawn_ready(settings()).await;
    let inside = cluster_at(10.0..30.0);
    assert!(
        offered(&engine, &inside).await,
        "inside the file's schedule (50%)"
    );
    let (status, _) = change(
        &engine,
        Method::PUT,
        "4.18.4/progress",
        &[("reason", "stop"), ("percent", "0")],
    )
    .await;
    assert_eq!(status, 200);
    assert!(!offered(&engine, &inside).await);
    drop(engine);

    postgres.stop().unwrap();
    let restarted = spawn(settings()).await;
    restarted.wait_ready().await;
    assert!(!offered(&restarted, &inside).await, "the hold unknown: nobody");
    assert!(!offered(&restarted, "").await, "nor a request without an id");
    let status = restarted.status_document().await.rollout_control.unwrap();
    assert!(!status.known && status.freshness.is_stale(), "{status:?}");
    assert_eq!(restarted.metric("cincinnati_pe_rollout_state_known").await, 0.0);
    let document = rollouts(&restarted).await;
    assert_eq!(
        (document.state.known.as_str(), first(&document).state.as_str()),
        ("unknown", "unknown")
    );

    postgres.restart().await.unwrap();
    eventually(
        "the state is read once the store is back",
        Duration::from_secs(30),
        || async { restarted.status_document().await.rollout_control.unwrap().known },
    )
    .await;
    assert!(!offered(&restarted, &inside).await, "held at 0%, as stored");
    assert_eq!(restarted.metric("cincinnati_pe_rollout_state_known").await, 1.0);
}

/// The store stops: a pause asked meanwhile is in force on the engine at
/// once (202), and written when the store is back.
#[tokio::test]
async fn a_pause_the_store_cannot_take_is_in_force_at_once_and_written_later() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let mut postgres = PostgresServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.yaml"), rollout(1.0, 2.0)).unwrap();
    let engine = spawn_ready(control_settings(&upstream, dir.path(), &postgres.url())).await;
    postgres.stop().unwrap();

    let (status, body) = change(
        &engine,
        Method::POST,
        "4.18.4/pause",
        &[("reason", "store down, still braking")],
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let document = rollouts(&engine).await;
    assert_eq!(first(&document).state, "paused");
    assert_eq!(document.state.pending.len(), 1);
    let held_back = cluster_at(55.0..56.0);
    // The schedule passes 55% within minutes: paused at ~50%, never.
    assert!(!offered(&engine, &held_back).await);
    assert_eq!(engine.metric("cincinnati_pe_rollout_control_pending").await, 1.0);
    // A resume is no brake: refused while the store is away.
    let (status, _) = change(&engine, Method::POST, "4.18.4/resume", &[("reason", "x")]).await;
    assert_eq!(status, 503);

    postgres.restart().await.unwrap();
    eventually(
        "the pending pause is written",
        Duration::from_secs(30),
        || async {
            let document = rollouts(&engine).await;
            document.state.pending.is_empty() && document.history.len() == 1
        },
    )
    .await;
    let document = rollouts(&engine).await;
    assert_eq!(document.history[0].reason, "store down, still braking");
    assert_eq!(first(&document).state, "paused");
}

#[tokio::test]
async fn a_question_an_operators_tool_asks_is_not_recorded_as_the_clusters_check() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(dir.path());
    let app = spawn_ready(control_settings(&upstream, dir.path(), &store)).await;
    let (asked, checked) = (cluster_at(0.0..50.0), cluster_at(50.0..100.0));
    ask(&app, &asked, "4.18.1", &[("cincinnati-question", "1")]).await;
    ask(&app, &checked, "4.18.1", &[]).await;
    let fleet = fleet_store::FleetStore::open(&store, &store).await.unwrap();
    eventually(
        "the cluster's own check is written",
        Duration::from_secs(10),
        || async { fleet.history(&checked).await.unwrap().is_some() },
    )
    .await;
    assert!(
        fleet.history(&asked).await.unwrap().is_none(),
        "the question is not a check"
    );
}

/// A rollout over and done with long ago (every cluster offered its target
/// for days), with `halt_when`.
fn rollout_done_long_ago(halt_when: &str) -> String {
    rollout_with(200.0, 1.0, &format!("    halt_when: {halt_when}\n"))
}

/// Waits until the rollout is paused; the pause's actor and reason, and
/// the audit's length.
async fn await_halted(app: &TestApp) -> (String, String, usize) {
    let document = once_paused(app, "the fleet's signal pauses the rollout")
        .await
        .unwrap();
    let last = document.history.last().unwrap();
    (last.by.clone(), last.reason.clone(), document.history.len())
}

/// Three established clusters arrived at 4.18.4 three hours ago, settled
/// there, and went silent; two minted ids did the same a minute after
/// being first seen: the halt counts the three.
#[tokio::test]
async fn a_rollout_whose_established_arrivals_go_silent_is_halted_once_and_not_again_after_a_resume() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(dir.path());
    std::fs::write(
        dir.path().join("policy.yaml"),
        rollout_done_long_ago("{silent_after_arriving_percent: 50, min_arrived: 3}"),
    )
    .unwrap();
    let mut settings = control_settings(&upstream, dir.path(), &store);
    settings.rollouts.halt_check_secs = 1;
    settings.fleet.silent_hours = 1;
    let seeded = fleet_store::FleetStore::open(&store, &store).await.unwrap();
    for n in 0..3 {
        let id = cluster_at(f64::from(n) * 10.0..f64::from(n) * 10.0 + 10.0);
        seed(&seeded, (&id, 5.0), &[("4.18.1", 60.0), ("4.18.4", 3.0)], 2.5).await;
    }
    for id in clusters_at(50.0..100.0, 2) {
        seed(
            &seeded,
            (&id, 5.0),
            &[("4.18.1", 3.0 + 1.0 / 60.0), ("4.18.4", 3.0)],
            2.5,
        )
        .await;
    }
    let app = spawn_ready(settings).await;
    let (by, reason, audited) = await_halted(&app).await;
    assert_eq!(by, "fleet-signal");
    assert!(
        reason.starts_with("halted: 100.0% of the 3 clusters that arrived at 4.18.4 went silent"),
        "{reason}"
    );
    assert_eq!(audited, 1, "paused once, not on every check");

    // Resumed: the same silent clusters do not halt it again.
    let (status, _) = change(&app, Method::POST, "4.18.4/resume", &[("reason", "known cause")]).await;
    assert_eq!(status, 200);
    let resumed = jiff::Timestamp::now();
    round_after(
        &app,
        "rollout halts",
        resumed + jiff::SignedDuration::from_secs(1),
    )
    .await;
    let document = rollouts(&app).await;
    assert_eq!(
        first(&document).state,
        "complete",
        "still running after the halt checks"
    );
    assert_eq!(document.history.len(), 2);
}

/// Five established clusters were offered the target days ago, four still
/// run 4.18.1; a hundred ids minted an hour ago on 4.18.1 would make it
/// any share: the halt counts the five.
#[tokio::test]
async fn a_rollout_its_established_clusters_do_not_take_is_halted_and_minted_ids_change_nothing() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(dir.path());
    std::fs::write(
        dir.path().join("policy.yaml"),
        rollout_done_long_ago("{stuck_percent: 50, stuck_hours: 24, min_offered: 5}"),
    )
    .unwrap();
    let mut settings = control_settings(&upstream, dir.path(), &store);
    settings.rollouts.halt_check_secs = 1;
    let seeded = fleet_store::FleetStore::open(&store, &store).await.unwrap();
    for n in 0..5 {
        let id = cluster_at(f64::from(n) * 10.0..f64::from(n) * 10.0 + 10.0);
        let history: &[(&str, f64)] = if n == 0 {
            &[("4.18.1", 72.0), ("4.18.4", 2.0)]
        } else {
            &[("4.18.1", 72.0)]
        };
        seed(&seeded, (&id, f64::from(n) * 10.0 + 5.0), history, 1.0).await;
    }
    for id in clusters_at(50.0..100.0, 100) {
        seed(&seeded, (&id, place_percent(&id)), &[("4.18.1", 1.0)], 0.0).await;
    }
    let app = spawn_ready(settings).await;
    let (by, reason, audited) = await_halted(&app).await;
    assert_eq!(by, "fleet-signal");
    assert!(
        reason.starts_with(
            "halted: 80.0% of the 5 clusters offered 4.18.4 more than 24 h ago have not taken it"
        ),
        "{reason}"
    );
    assert_eq!(audited, 1, "paused once");
}

/// The file edited under a pause (its rollout started earlier: the
/// schedule now past a cluster placed above the pause's progress): the
/// cluster is still not offered the target, and the conflict is reported,
/// under its rollout too, until the rollout is resumed.
#[tokio::test]
async fn an_edit_of_the_file_under_a_pause_offers_nobody_new_and_is_reported() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let mut settings = control_settings(&upstream, dir.path(), &sqlite(dir.path()));
    settings.cluster_policy.reload_secs = 1;
    let app = spawn_ready(settings).await;
    let above = cluster_at(60.0..80.0);
    assert!(!offered(&app, &above).await, "placed above the progress (50%)");
    let (status, _) = change(&app, Method::POST, "4.18.4/pause", &[("reason", "alarms")]).await;
    assert_eq!(status, 200);

    // Started 9,000 of its 10,000 hours ago: 95% by the file.
    std::fs::write(dir.path().join("policy.yaml"), rollout(9000.0, 10000.0)).unwrap();
    eventually("the conflict reported", Duration::from_secs(20), || async {
        conflicts(&app).await.len() == 1
    })
    .await;
    let reported = conflicts(&app).await;
    assert!(
        reported[0].starts_with(
            "4.18.4: the schedule declared in the policy file (line 2) was edited while the rollout is paused by ops (ops: alarms)"
        ),
        "{reported:?}"
    );
    assert_eq!(app.metric("cincinnati_pe_rollout_control_conflicts").await, 1.0);
    let document = rollouts(&app).await;
    let rollout = first(&document);
    assert!(
        rollout.declared_progress > 90.0 && rollout.progress < 51.0,
        "the file says 95%, the pause keeps 50%: {rollout:?}"
    );
    assert!(rollout.conflict.is_some(), "under its rollout too");
    assert!(!offered(&app, &above).await, "a pause offers nobody new");
    let fleet: cincinnati_client::fleet::FleetRollouts = app
        .send(
            app.client
                .get(format!("http://{}{PREFIX}/v1/fleet/rollouts", app.status_address))
                .bearer_auth(READ_TOKEN),
            &[],
        )
        .await
        .parse();
    assert_eq!(fleet.rollouts[0].rollout.state, "paused");

    let (status, _) = change(&app, Method::POST, "4.18.4/resume", &[("reason", "fixed")]).await;
    assert_eq!(status, 200);
    assert!(conflicts(&app).await.is_empty(), "resumed: the file decides");
    assert!(offered(&app, &above).await, "at the file's progress again");
}
