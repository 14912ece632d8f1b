//! Graph-data's phased rollouts, served per cluster: a graph-builder's full
//! graph with 4.18.2 phasing into stable-4.18 (a P2D patch rollout that
//! started a day ago, so half of the fleet is offered it now), and under
//! run-time control as a policy file's rollouts are.

use rollout_model::ClusterId;
use rollout_model::time::{SignedDuration, Timestamp};
use serde_json::json;

use std::time::Duration;

use reqwest::Method;

use crate::support::app::{Answer, settings, spawn_ready};
use crate::support::eventually;
use crate::support::rollouts::{change, conflicts, control_settings, offered_from, rollouts};
use crate::support::upstream::{Behaviour, FakeUpstream};

const HOUR: SignedDuration = SignedDuration::from_hours(1);

/// The full graph at `now`: 4.18.1 in stable-4.18, 4.18.2 phasing into it
/// from a day ago with a two-day window for patch updates.
fn full_graph(now: Timestamp) -> Vec<u8> {
    let start = (now - 24 * HOUR).to_string();
    let phased = json!({"stable-4.18": {"start": start, "patch": "P2D"}}).to_string();
    let node = |version: &str, payload: &str, channels: &str| {
        json!({"version": version, "payload": payload, "metadata": {
            "io.openshift.upgrades.graph.release.arch": "amd64",
            "io.openshift.upgrades.graph.release.channels": channels}})
    };
    let mut phasing = node("4.18.2+amd64", "p2", "fast-4.18");
    phasing["metadata"]["io.openshift.upgrades.graph.release.phased_rollouts"] = json!(phased);
    serde_json::to_vec(&json!({
        "nodes": [node("4.18.1+amd64", "p1", "fast-4.18,stable-4.18"), phasing],
        "edges": [[0, 1]]
    }))
    .unwrap()
}

/// The first id of a made-up series whose place (the documented formula)
/// is within `places`.
fn id_placed(places: std::ops::Range<f64>) -> (String, f64) {
    (0..10_000u32)
        .map(|n| format!("00000000-0000-4000-8000-{n:012x}"))
        .map(|id| {
            let place = ClusterId::parse(&id).unwrap().place().fraction();
            (id, place)
        })
        .find(|(_, place)| places.contains(place))
        .expect("a place in range among 10,000 ids")
}

fn offered(answer: &Answer) -> bool {
    let graph = answer.json();
    let nodes = graph["nodes"].as_array().unwrap();
    let index = |version: &str| nodes.iter().position(|node| node["version"] == version);
    let (Some(from), Some(to)) = (index("4.18.1"), index("4.18.2")) else {
        return false;
    };
    graph["edges"].as_array().unwrap().contains(&json!([from, to]))
}

fn has_the_phasing_release(answer: &Answer) -> bool {
    answer.json()["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|node| node["version"] == "4.18.2")
}

#[tokio::test]
async fn each_cluster_is_offered_the_update_from_its_own_moment() {
    let now = Timestamp::now();
    let upstream = FakeUpstream::start(Behaviour::Graph(full_graph(now))).await;
    let mut settings = settings(&upstream.url());
    settings.service.requests.cache_max_age_secs = 7 * 24 * 3600;
    let app = spawn_ready(settings).await;

    // Moments: start + place × 48 h, the start a day ago.
    let (early, _) = id_placed(0.0..0.4);
    let (late, late_place) = id_placed(0.6..1.0);
    let early_answer = app.get(&format!("/graph?channel=stable-4.18&id={early}")).await;
    assert!(offered(&early_answer), "{early}: its moment has passed");
    assert_eq!(
        early_answer.max_age(),
        7 * 24 * 3600,
        "nothing left to change for it"
    );

    let late_answer = app.get(&format!("/graph?channel=stable-4.18&id={late}")).await;
    assert!(!offered(&late_answer), "{late}: its moment is ahead");
    assert!(has_the_phasing_release(&late_answer), "in the channel from start");
    let to_its_moment = (late_place * 48.0 - 24.0) * 3600.0;
    assert!(
        (late_answer.max_age() as f64) <= to_its_moment,
        "max-age {} beyond its moment, {to_its_moment} s away",
        late_answer.max_age()
    );

    // Without an id: the end of the window, as for a client that does not phase.
    let anonymous = app.get("/graph?channel=stable-4.18").await;
    assert!(!offered(&anonymous));
    assert!(anonymous.max_age() <= 24 * 3600);

    // A cluster already at 4.18.2 finds its version in the channel.
    let at_target = app
        .get(&format!("/graph?channel=stable-4.18&id={late}&version=4.18.2"))
        .await;
    assert!(has_the_phasing_release(&at_target));

    // fast-4.18 lists 4.18.2: offered to everyone.
    assert!(offered(
        &app.get(&format!("/graph?channel=fast-4.18&id={late}")).await
    ));
}

#[tokio::test]
async fn with_phasing_off_the_release_waits_for_the_graph_to_list_it() {
    let now = Timestamp::now();
    let upstream = FakeUpstream::start(Behaviour::Graph(full_graph(now))).await;
    let mut settings = settings(&upstream.url());
    settings.phased_rollouts.enabled = false;
    let app = spawn_ready(settings).await;
    let (early, _) = id_placed(0.0..0.4);
    let answer = app.get(&format!("/graph?channel=stable-4.18&id={early}")).await;
    assert!(!has_the_phasing_release(&answer));
}

/// An engine without a policy file explains a phased channel: each
/// cluster's moment in the window, offered or to come; and the gauge says
/// how far the rollout has gone.
#[tokio::test]
async fn explain_says_from_when_each_cluster_is_offered_the_update() {
    let now = Timestamp::now();
    let upstream = FakeUpstream::start(Behaviour::Graph(full_graph(now))).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let explain = |query: String| {
        let app = &app;
        async move {
            let answer = app.status_get(&format!("/v1/explain-cluster?{query}")).await;
            (answer.status, answer.json())
        }
    };
    let (early, _) = id_placed(0.0..0.4);
    let (late, _) = id_placed(0.6..1.0);
    for (id, offered) in [(early.as_str(), true), (late.as_str(), false)] {
        let (status, explanation) = explain(format!("channel=stable-4.18&version=4.18.1&id={id}")).await;
        assert_eq!(status, 200, "{explanation}");
        assert_eq!(explanation["id"], id);
        assert_eq!(explanation["policyFile"], json!(null));
        let phased = &explanation["phased"][0];
        assert_eq!(
            (
                &phased["channel"],
                &phased["from"],
                &phased["to"],
                &phased["duration"]
            ),
            (
                &json!("stable-4.18"),
                &json!("4.18.1"),
                &json!("4.18.2"),
                &json!("P2D")
            ),
            "{explanation}"
        );
        assert_eq!(phased["offered"], offered, "{id}: {explanation}");
        let offered_from: Timestamp = phased["offeredFrom"].as_str().unwrap().parse().unwrap();
        let (start, end): (Timestamp, Timestamp) = (
            phased["start"].as_str().unwrap().parse().unwrap(),
            phased["end"].as_str().unwrap().parse().unwrap(),
        );
        assert_eq!(end, start + 48 * HOUR);
        assert!(start <= offered_from && offered_from <= end, "{explanation}");
    }
    // Without an id: the end of the window.
    let (_, anonymous) = explain("channel=stable-4.18&version=4.18.1".to_owned()).await;
    assert_eq!(
        anonymous["phased"][0]["offeredFrom"],
        anonymous["phased"][0]["end"]
    );
    // Nothing phases in fast-4.18, and there is no policy file to explain.
    let (status, error) = explain(format!("channel=fast-4.18&version=4.18.1&id={early}")).await;
    assert_eq!(
        (status, &error["kind"]),
        (400, &json!("invalid_params")),
        "{error}"
    );

    let share = app
        .metric(r#"cincinnati_pe_phased_update_rollout{channel="stable-4.18",from="4.18.1",to="4.18.2"}"#)
        .await;
    assert!(
        (0.5..1.0).contains(&share),
        "a day into a two-day window: {share}"
    );
}

/// Whether the cluster `id` on 4.18.1 in stable-4.18 is offered 4.18.2 by
/// an engine under control (asked as an operator's tool asks).
async fn offered_under_control(app: &crate::support::app::TestApp, id: &str) -> bool {
    offered_from(app, id, "4.18.1").await.contains("4.18.2")
}

/// The phased rollout is a rollout of run-time control: listed with where
/// graph-data declares it, paused (nobody new offered, nobody taken out),
/// held (every cluster below the hold, in every window), released; and a
/// policy file declaring the same target is reported as a conflict.
#[tokio::test]
async fn pausing_and_holding_a_phased_rollout_moves_its_offers() {
    let now = Timestamp::now();
    let upstream = FakeUpstream::start(Behaviour::Graph(full_graph(now))).await;
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("fleet.db").display());
    let app = spawn_ready(control_settings(&upstream, dir.path(), &store)).await;
    let (early, _) = id_placed(0.0..0.4);
    let (late, _) = id_placed(0.6..1.0);
    eventually(
        "the phased rollout under control",
        Duration::from_secs(30),
        || async {
            rollouts(&app)
                .await
                .rollouts
                .iter()
                .any(|rollout| rollout.target == "4.18.2")
        },
    )
    .await;
    let listed = rollouts(&app).await;
    let phased = listed
        .rollouts
        .iter()
        .find(|rollout| rollout.target == "4.18.2")
        .unwrap();
    assert_eq!(
        (phased.line, phased.phased_in.as_slice()),
        (None, ["stable-4.18".to_owned()].as_slice())
    );
    assert_eq!(phased.declared_in(), "graph-data (stable-4.18)");
    assert!(offered_under_control(&app, &early).await && !offered_under_control(&app, &late).await);

    let (status, body) = change(&app, Method::POST, "4.18.2/pause", &[("reason", "bad canary")]).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        offered_under_control(&app, &early).await,
        "a pause takes nobody out"
    );
    assert!(!offered_under_control(&app, &late).await, "nor lets anyone in");
    let paused = rollouts(&app).await;
    let phased = paused
        .rollouts
        .iter()
        .find(|rollout| rollout.target == "4.18.2")
        .unwrap();
    assert_eq!(phased.state, "paused");

    let (status, body) = change(
        &app,
        Method::PUT,
        "4.18.2/progress",
        &[("reason", "all in"), ("percent", "100")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(offered_under_control(&app, &late).await, "held at 100%: everyone");
    let (status, body) = change(
        &app,
        Method::PUT,
        "4.18.2/progress",
        &[("reason", "none"), ("percent", "0")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(!offered_under_control(&app, &early).await, "held at 0%: nobody");
    assert!(
        conflicts(&app).await.is_empty(),
        "graph-data alone declares 4.18.2"
    );

    std::fs::write(
        dir.path().join("policy.yaml"),
        format!(
            "rollouts:\n  - target: 4.18.2\n    start: \"{}\"\n    duration_hours: 10\n",
            now - 10 * HOUR
        ),
    )
    .unwrap();
    eventually(
        "the target declared twice reported",
        Duration::from_secs(30),
        || async { !conflicts(&app).await.is_empty() },
    )
    .await;
    let reported = conflicts(&app).await;
    assert!(
        reported[0].starts_with(
            "4.18.2: declared both in the policy file (line 2) and in graph-data (phased into stable-4.18)"
        ),
        "{reported:?}"
    );
}
