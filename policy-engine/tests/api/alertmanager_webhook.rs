//! Alertmanager's webhook on real engines: notifications as Alertmanager
//! shapes them, posted with a `pause` token, pause the rollout their
//! alerts name, once however many engines the same alert reaches; an alert
//! is its fingerprint (or label set), so a rollout is resumed (where the
//! policy file says `auto_resume`) only when every alert holding it has
//! resolved; and a real Alertmanager, given an alert on its own API,
//! routes it there.

use std::path::Path;

use policy_engine::Settings;
use postgres_testkit::PostgresServer;
use prometheus_testkit::{Alertmanager, Webhook};
use serde_json::json;

use crate::support::app::{TestApp, spawn_ready};
use crate::support::rollouts::{
    ALERTMANAGER_TOKEN, PREFIX, READ_TOKEN, TOKEN, WEBHOOK, alert, cluster_at, control_settings, first,
    notification, notify, offered, once_paused, post_notification, rollout_with, rollouts,
};
use crate::support::small_graph;
use crate::support::upstream::{Behaviour, FakeUpstream};

/// An engine with rollout control (a rollout of 4.18.4 half way through,
/// unless `dir` holds a policy file), its store and token file in `dir`.
async fn engine(dir: &Path, configure: impl FnOnce(&mut Settings)) -> (FakeUpstream, TestApp) {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let store = format!("sqlite://{}", dir.join("fleet.db").display());
    let mut settings = control_settings(&upstream, dir, &store);
    configure(&mut settings);
    (upstream, spawn_ready(settings).await)
}

/// The status line the status port answers to a notification's head, 1 MiB
/// of body announced and 16 bytes of it sent before the client stops
/// sending: a port that read the body before judging the head would answer
/// its truncation, not the token (401, 403) or the bound (413).
async fn answer_to_a_head(app: &TestApp, token: Option<&str>) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(app.status_address).await.unwrap();
    let authorization = token
        .map(|token| format!("Authorization: Bearer {token}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST {WEBHOOK} HTTP/1.1\r\nHost: {}\r\n{authorization}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        app.status_address,
        1 << 20
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&[b' '; 16]).await.unwrap();
    stream.shutdown().await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_firing_alert_pauses_the_rollout_it_names_once_and_only_an_operator_resumes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_upstream, app) = engine(dir.path(), |settings| settings.rollouts.max_alert_bytes = 4096).await;
    let (inside, outside) = (cluster_at(20.0..40.0), cluster_at(60.0..80.0));

    // Refused: no token, a read token, not a notification, another
    // version, too large.
    post_notification(&app, None, "{}")
        .await
        .assert_error(401, "unauthorized");
    post_notification(&app, Some(READ_TOKEN), "{}")
        .await
        .assert_error(403, "forbidden");
    post_notification(&app, Some(ALERTMANAGER_TOKEN), "not json")
        .await
        .assert_error(400, "invalid_params");
    let version_3 = json!({"version": "3", "alerts": []}).to_string();
    post_notification(&app, Some(ALERTMANAGER_TOKEN), version_3)
        .await
        .assert_error(400, "invalid_params");
    let large = notification(&[alert("firing", json!({"alertname": "X"}), &"x".repeat(5000), "a")]);
    assert_eq!(
        post_notification(&app, Some(ALERTMANAGER_TOKEN), large.to_string())
            .await
            .status,
        413
    );
    // Judged from the head, before a byte of the body is held.
    assert_eq!(answer_to_a_head(&app, None).await, "HTTP/1.1 401 Unauthorized");
    assert_eq!(
        answer_to_a_head(&app, Some(READ_TOKEN)).await,
        "HTTP/1.1 403 Forbidden"
    );
    assert_eq!(
        answer_to_a_head(&app, Some(ALERTMANAGER_TOKEN)).await,
        "HTTP/1.1 413 Payload Too Large"
    );
    assert!(offered(&app, &inside).await, "nothing changed");

    let firing = alert(
        "firing",
        json!({"alertname": "UpdatesFailing", "to_version": "4.18.4", "severity": "critical"}),
        "12% of clusters\u{0} that took 4.18.4 stopped reporting",
        "f1",
    );
    let outcomes = notify(
        &app,
        &[
            firing.clone(),
            alert("firing", json!({"alertname": "Unrelated"}), "disk full", "f2"),
            alert(
                "firing",
                json!({"alertname": "Old", "rollout_target": "4.17.9"}),
                "",
                "f3",
            ),
        ],
    )
    .await;
    assert_eq!(outcomes, ["paused", "no-rollout-label", "unknown-rollout"]);
    assert!(offered(&app, &inside).await && !offered(&app, &outside).await);
    let document = rollouts(&app).await;
    let rollout = first(&document);
    let control = rollout.control.as_ref().unwrap();
    assert_eq!(
        control.paused.as_ref().unwrap().by,
        "alertmanager:alertmanager/UpdatesFailing"
    );
    assert_eq!(control.alerts, ["UpdatesFailing"]);
    assert_eq!(
        control.last.as_ref().unwrap().reason,
        "UpdatesFailing: 12% of clusters that took 4.18.4 stopped reporting",
        "the NUL gone: PostgreSQL refuses it"
    );

    // Explain tells a cluster left outside why.
    let explained = app
        .status_get(&format!(
            "{PREFIX}/v1/explain-cluster?channel=stable-4.18&arch=amd64&version=4.18.1&id={outside}"
        ))
        .await
        .json();
    assert!(
        explained["rollouts"][0]["said"]
            .as_str()
            .unwrap()
            .starts_with("paused at 50.0% by alertmanager:alertmanager/UpdatesFailing since "),
        "{explained}"
    );

    // Alertmanager repeats a firing alert; the resolved one leaves the
    // pause to an operator (no auto_resume).
    assert_eq!(
        notify(&app, std::slice::from_ref(&firing)).await,
        ["already-paused"]
    );
    let mut resolved = firing.clone();
    resolved["status"] = json!("resolved");
    assert_eq!(notify(&app, &[resolved]).await, ["left-paused"]);
    let history: Vec<(String, String)> = rollouts(&app)
        .await
        .history
        .into_iter()
        .map(|entry| (entry.action, entry.by))
        .collect();
    assert_eq!(
        history,
        [(
            "pause".to_owned(),
            "alertmanager:alertmanager/UpdatesFailing".to_owned()
        )]
    );
    assert_eq!(
        app.metric("cincinnati_pe_rollout_alerts_total{outcome=\"paused\"}")
            .await,
        1.0
    );
    assert_eq!(
        app.metric("cincinnati_pe_rollout_alerts_total{outcome=\"left-paused\"}")
            .await,
        1.0
    );
}

/// Alertmanager runs as an HA pair and retries: the same firing alert
/// reaches two engines sharing a store at once. One pause, one audit
/// entry.
#[tokio::test]
async fn the_same_alert_reaching_two_engines_at_once_pauses_once() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let postgres = PostgresServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let one = spawn_ready(control_settings(&upstream, dir.path(), &postgres.url())).await;
    let other = spawn_ready(control_settings(&upstream, dir.path(), &postgres.url())).await;
    let firing = [alert(
        "firing",
        json!({"alertname": "Degraded", "rollout_target": "4.18.4"}),
        "5 degraded",
        "d1",
    )];
    let (first_outcomes, second_outcomes) = tokio::join!(notify(&one, &firing), notify(&other, &firing));
    let mut outcomes = [first_outcomes[0].clone(), second_outcomes[0].clone()];
    outcomes.sort();
    assert_eq!(outcomes, ["already-paused", "paused"]);
    let document = rollouts(&other).await;
    assert_eq!(document.history.len(), 1, "{:?}", document.history);
}

#[tokio::test]
async fn with_auto_resume_a_rollout_resumes_when_every_alert_holding_it_has_resolved() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("policy.yaml"),
        rollout_with(5000.0, 10000.0, "    auto_resume: true\n"),
    )
    .unwrap();
    let (_upstream, app) = engine(dir.path(), |_| {}).await;
    let outside = cluster_at(60.0..80.0);
    // Two instances of one alert rule (two clusters' storage), and their
    // resolutions.
    let instance = |status: &str, cluster: &str, fingerprint: &str| {
        alert(
            status,
            json!({"alertname": "StorageFailing", "rollout_target": "4.18.4", "cluster": cluster}),
            "",
            fingerprint,
        )
    };
    assert_eq!(
        notify(
            &app,
            &[instance("firing", "a", "fa"), instance("firing", "b", "fb")]
        )
        .await,
        ["paused", "already-paused"]
    );
    assert_eq!(
        notify(&app, &[instance("resolved", "a", "fa")]).await,
        ["left-paused"],
        "b still fires"
    );
    assert_eq!(
        notify(&app, &[instance("resolved", "b", "fb")]).await,
        ["resumed"]
    );
    let document = rollouts(&app).await;
    assert_eq!(first(&document).state, "on-schedule", "{document:?}");
    assert!(
        !offered(&app, &outside).await,
        "back on its schedule, below this place"
    );
    assert_eq!(
        notify(&app, &[instance("resolved", "b", "fb")]).await,
        ["not-paused"]
    );

    // A pause an operator made stays when the alert resolves.
    assert_eq!(notify(&app, &[instance("firing", "a", "fa")]).await, ["paused"]);
    let answer = app
        .client
        .post(format!(
            "http://{}{PREFIX}/v1/rollouts/4.18.4/pause",
            app.status_address
        ))
        .bearer_auth(TOKEN)
        .query(&[("reason", "investigating by hand")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let operator_paused = rollouts(&app).await;
    assert_eq!(
        first(&operator_paused)
            .control
            .as_ref()
            .unwrap()
            .paused
            .as_ref()
            .unwrap()
            .by,
        "alertmanager:alertmanager/StorageFailing",
        "the first pause is kept"
    );
    let answer = app
        .client
        .post(format!(
            "http://{}{PREFIX}/v1/rollouts/4.18.4/resume",
            app.status_address
        ))
        .bearer_auth(TOKEN)
        .query(&[("reason", "false alarm")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(
        notify(&app, &[instance("firing", "a", "fa")]).await,
        ["overridden"],
        "the alert an operator resumed over pauses again only when it fires anew"
    );
}

/// A real Alertmanager (Debian's `prometheus-alertmanager`) routes an alert
/// posted to its own API to the engine's webhook, with the token read from
/// a credentials file; the rollout the alert names becomes paused, and the
/// audit names the alert.
#[tokio::test]
async fn a_real_alertmanager_pauses_a_rollout_through_the_webhook() {
    let dir = tempfile::tempdir().unwrap();
    let (_upstream, app) = engine(dir.path(), |_| {}).await;
    let credentials_file = dir.path().join("alertmanager-token");
    std::fs::write(&credentials_file, ALERTMANAGER_TOKEN).unwrap();
    let alertmanager = Alertmanager::start(&Webhook {
        url: format!("http://{}{WEBHOOK}", app.status_address),
        credentials_file,
    })
    .await
    .unwrap();

    alertmanager
        .post_alerts(&json!([{
            "labels": {"alertname": "UpdatedClustersDegraded", "rollout_target": "4.18.4", "severity": "critical"},
            "annotations": {"summary": "5 clusters on 4.18.4 report degraded operators"},
            "generatorURL": "http://prometheus.example/graph",
        }]))
        .await
        .unwrap();
    let paused = once_paused(&app, "the rollout paused by Alertmanager's notification")
        .await
        .unwrap_or_else(|error| panic!("{error:#}\nAlertmanager's log:\n{}", alertmanager.log()));
    let entry = &paused.history[0];
    assert_eq!(
        (entry.action.as_str(), entry.by.as_str(), entry.reason.as_str()),
        (
            "pause",
            "alertmanager:alertmanager/UpdatedClustersDegraded",
            "UpdatedClustersDegraded: 5 clusters on 4.18.4 report degraded operators"
        )
    );
    assert_eq!(paused.history.len(), 1, "{:?}", paused.history);
}
