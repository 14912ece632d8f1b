//! Alertmanager's webhook on real engines: notifications as Alertmanager
//! shapes them, posted with the operator tokens, pause the rollout their
//! alerts name; a resolved alert resumes it only where the policy file says
//! `auto_resume` and only the pause it made; and a real Alertmanager, given
//! an alert on its own API, routes it there.

use std::path::Path;

use policy_engine::Settings;
use prometheus_testkit::{Alertmanager, Webhook};
use serde_json::{Value, json};

use crate::rollout_control::{TOKEN, cluster_at, control_settings, offered, once_paused, rollouts};
use crate::support::app::{Answer, TestApp, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{rfc3339, small_graph};

const WEBHOOK: &str = "/api/upgrades_info/v1/alerts/alertmanager";

/// An alert as Alertmanager sends it.
fn alert(status: &str, labels: Value, summary: &str) -> Value {
    json!({
        "status": status,
        "labels": labels,
        "annotations": {"summary": summary},
        "startsAt": "2026-11-26T10:00:00Z",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus.example/graph",
        "fingerprint": "c0ffee",
    })
}

/// A version 4 notification of `alerts`.
fn notification(alerts: &[Value]) -> Value {
    json!({
        "version": "4",
        "groupKey": "{}:{alertname=\"UpdatesFailing\"}",
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": "cincinnati",
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager.example",
        "alerts": alerts,
    })
}

/// An engine with rollout control (a rollout of 4.18.4 half way through,
/// unless `dir` holds a policy file), its store and token file in `dir`.
async fn engine(dir: &Path, configure: impl FnOnce(&mut Settings)) -> (FakeUpstream, TestApp) {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let store = format!("sqlite://{}", dir.join("fleet.db").display());
    let mut settings = control_settings(&upstream, dir, &store);
    configure(&mut settings);
    (upstream, spawn_ready(settings).await)
}

async fn post(app: &TestApp, token: Option<&str>, body: impl Into<reqwest::Body>) -> Answer {
    let mut request = app
        .client
        .post(format!("http://{}{WEBHOOK}", app.status_address))
        .header("content-type", "application/json")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    app.send(request, &[]).await
}

/// Posts `alerts` with the token; each alert's outcome.
async fn notify(app: &TestApp, alerts: &[Value]) -> Vec<String> {
    let answer = post(app, Some(TOKEN), notification(alerts).to_string()).await;
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    answer.json()["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|taken| taken["outcome"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_firing_alert_pauses_the_rollout_it_names_and_only_an_operator_resumes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_upstream, app) = engine(dir.path(), |settings| settings.rollouts.max_alert_bytes = 4096).await;
    let (inside, outside) = (cluster_at(20.0..40.0), cluster_at(60.0..80.0));

    // Refused: no token, not a notification, another version, too large.
    post(&app, None, "{}").await.assert_error(401, "unauthorized");
    post(&app, Some(TOKEN), "not json")
        .await
        .assert_error(400, "invalid_params");
    let version_3 = json!({"version": "3", "alerts": []}).to_string();
    post(&app, Some(TOKEN), version_3)
        .await
        .assert_error(400, "invalid_params");
    let large = notification(&[alert("firing", json!({"alertname": "X"}), &"x".repeat(5000))]);
    assert_eq!(post(&app, Some(TOKEN), large.to_string()).await.status, 413);
    assert!(offered(&app, &inside).await, "nothing changed");

    let firing = alert(
        "firing",
        json!({"alertname": "UpdatesFailing", "to_version": "4.18.4", "severity": "critical"}),
        "12% of clusters that took 4.18.4 stopped reporting",
    );
    let outcomes = notify(
        &app,
        &[
            firing.clone(),
            alert("firing", json!({"alertname": "Unrelated"}), "disk full"),
            alert(
                "firing",
                json!({"alertname": "Old", "rollout_target": "4.17.9"}),
                "",
            ),
        ],
    )
    .await;
    assert_eq!(outcomes, ["paused", "no-rollout-label", "unknown-rollout"]);
    assert!(offered(&app, &inside).await && !offered(&app, &outside).await);
    let document = rollouts(&app).await;
    let control = document.rollouts[0].control.as_ref().unwrap();
    assert_eq!(
        (
            control.state.as_str(),
            control.by.as_str(),
            control.reason.as_str()
        ),
        (
            "paused",
            "alertmanager:ops/UpdatesFailing",
            "UpdatesFailing: 12% of clusters that took 4.18.4 stopped reporting"
        )
    );

    // Explain tells a cluster left outside why.
    let explained = app
        .status_get(&format!(
            "/api/upgrades_info/v1/explain-cluster?channel=stable-4.18&arch=amd64&version=4.18.1&id={outside}"
        ))
        .await
        .json();
    let control = &explained["rollouts"][0]["control"];
    assert_eq!(control["by"], "alertmanager:ops/UpdatesFailing", "{explained}");
    assert_eq!(
        control["reason"], "UpdatesFailing: 12% of clusters that took 4.18.4 stopped reporting",
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
    resolved["endsAt"] = json!(rfc3339(time::OffsetDateTime::now_utc()));
    assert_eq!(notify(&app, &[resolved]).await, ["left-paused"]);
    let history: Vec<(String, String)> = rollouts(&app)
        .await
        .history
        .into_iter()
        .map(|entry| (entry.action, entry.by))
        .collect();
    assert_eq!(
        history,
        [("pause".to_owned(), "alertmanager:ops/UpdatesFailing".to_owned())]
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

#[tokio::test]
async fn with_auto_resume_the_alert_that_paused_a_rollout_resumes_it_when_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let start = rfc3339(time::OffsetDateTime::now_utc() - time::Duration::hours(5000));
    std::fs::write(
        dir.path().join("policy.yaml"),
        format!(
            "rollouts:\n  - {{target: 4.18.4, start: \"{start}\", duration_hours: 10000, auto_resume: true}}\n"
        ),
    )
    .unwrap();
    let (_upstream, app) = engine(dir.path(), |_| {}).await;
    let outside = cluster_at(60.0..80.0);
    let (failing, other) = (
        json!({"alertname": "UpdatesFailing", "rollout_target": "4.18.4"}),
        json!({"alertname": "Other", "rollout_target": "4.18.4"}),
    );

    assert_eq!(
        notify(&app, &[alert("firing", failing.clone(), "")]).await,
        ["paused"]
    );
    // Another alert's resolution is not this pause's end.
    assert_eq!(
        notify(&app, &[alert("resolved", other, "")]).await,
        ["left-paused"]
    );
    assert_eq!(
        notify(&app, &[alert("resolved", failing.clone(), "")]).await,
        ["resumed"]
    );
    let document = rollouts(&app).await;
    assert!(document.rollouts[0].on_schedule, "{document:?}");
    assert!(
        !offered(&app, &outside).await,
        "back on its schedule, below this place"
    );
    assert_eq!(
        notify(&app, &[alert("resolved", failing.clone(), "")]).await,
        ["not-paused"]
    );

    // A pause an operator made stays when the alert resolves.
    assert_eq!(
        notify(&app, &[alert("firing", failing.clone(), "")]).await,
        ["paused"]
    );
    let answer = app
        .client
        .post(format!(
            "http://{}/api/upgrades_info/v1/rollouts/4.18.4/pause",
            app.status_address
        ))
        .bearer_auth(TOKEN)
        .query(&[("reason", "investigating by hand")])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(
        notify(&app, &[alert("resolved", failing, "")]).await,
        ["left-paused"]
    );
    let last = rollouts(&app).await.history.pop().unwrap();
    assert_eq!((last.action.as_str(), last.by.as_str()), ("pause", "ops"));
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
    std::fs::write(&credentials_file, TOKEN).unwrap();
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
            "alertmanager:ops/UpdatedClustersDegraded",
            "UpdatedClustersDegraded: 5 clusters on 4.18.4 report degraded operators"
        )
    );
    assert_eq!(paused.history.len(), 1, "{:?}", paused.history);
}
