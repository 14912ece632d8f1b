//! Engines with rollout control, for every test of it: their settings,
//! tokens, the clusters asked about, the control API and a store seeded as
//! the recorder would have written it.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use cincinnati_client::rollout::{RolloutView, Rollouts};
use policy_engine::Settings;
use serde_json::{Value, json};

use super::app::{Answer, TestApp};
use super::upstream::FakeUpstream;
use super::{hours_ago, place_percent, recommended_from, rollout};

pub const PREFIX: &str = "/api/upgrades_info";
pub const ROLLOUTS: &str = "/api/upgrades_info/v1/rollouts";
/// An operator's token (scope `operate`).
pub const TOKEN: &str = "s3cret-ops-token";
/// Alertmanager's (scope `pause`).
pub const ALERTMANAGER_TOKEN: &str = "s3cret-am-token";
/// A dashboard's (scope `read`).
pub const READ_TOKEN: &str = "s3cret-read-token";
/// Alertmanager's webhook, on the status port.
pub const WEBHOOK: &str = "/api/upgrades_info/v1/alerts/alertmanager";

/// A cluster id whose place in rollouts is within `range` (percent).
pub fn cluster_at(range: std::ops::Range<f64>) -> String {
    clusters_at(range, 1).remove(0)
}

/// `count` cluster ids placed within `range`, distinct.
pub fn clusters_at(range: std::ops::Range<f64>, count: usize) -> Vec<String> {
    (0_u32..)
        .map(|n| format!("{n:08x}-7a1e-4c0d-9e55-0123456789ab"))
        .filter(|id| range.contains(&place_percent(id)))
        .take(count)
        .collect()
}

/// An engine with a policy file (unless `dir` has one: a rollout of 4.18.4
/// half way through), a fleet store at `store` and the token file.
pub fn control_settings(upstream: &FakeUpstream, dir: &Path, store: &str) -> Settings {
    let policy = dir.join("policy.yaml");
    if !policy.exists() {
        std::fs::write(&policy, rollout(5000.0, 10000.0)).unwrap();
    }
    std::fs::write(
        dir.join("tokens"),
        format!("ops {TOKEN}\nalertmanager {ALERTMANAGER_TOKEN} pause\ndashboard {READ_TOKEN} read\n"),
    )
    .unwrap();
    let mut settings = super::app::settings(&upstream.url());
    settings.service.api.path_prefix = http_answers::PathPrefix::parse(PREFIX);
    settings.cluster_policy.file = Some(policy);
    settings.fleet.store = Some(store.parse().unwrap());
    settings.fleet.flush_interval_ms = 20;
    settings.rollouts.token_file = Some(dir.join("tokens"));
    settings.rollouts.refresh_ms = 200;
    settings
}

/// A policy file with one rollout of 4.18.4 under way for `hours` of its
/// `duration` hours, declaring `more` (YAML lines of the rollout, indented
/// four spaces).
pub fn rollout_with(started_hours_ago: f64, duration: f64, more: &str) -> String {
    format!(
        "rollouts:\n  - target: 4.18.4\n    start: \"{}\"\n    duration_hours: {duration}\n{more}",
        hours_ago(started_hours_ago)
    )
}

/// Whether the cluster `id` on 4.18.1 is offered 4.18.4 (asked as an
/// operator's tool asks: not recorded).
pub async fn offered(app: &TestApp, id: &str) -> bool {
    offered_from(app, id, "4.18.1").await.contains("4.18.4")
}

/// The versions the cluster `id` on `version` is offered (asked as an
/// operator's tool asks: not recorded).
pub async fn offered_from(app: &TestApp, id: &str, version: &str) -> BTreeSet<String> {
    let graph = ask(app, id, version, &[("cincinnati-question", "1")]).await;
    recommended_from(&graph, version)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// The answer to the update check of cluster `id` on `version`, with
/// `headers`.
pub async fn ask(app: &TestApp, id: &str, version: &str, headers: &[(&str, &str)]) -> serde_json::Value {
    let answer = app
        .get_with(
            &format!("{PREFIX}/graph?channel=stable-4.18&arch=amd64&version={version}&id={id}"),
            headers,
        )
        .await;
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    answer.json()
}

/// The conflicts `/status` lists.
pub async fn conflicts(app: &TestApp) -> Vec<String> {
    app.status_document()
        .await
        .rollout_control
        .expect("rollout control in /status")
        .conflicts
}

/// Asks `{ROLLOUTS}/{route}` with `method`, the `query` and `token`.
pub async fn change_with(
    app: &TestApp,
    token: &str,
    (method, route): (reqwest::Method, &str),
    query: &[(&str, &str)],
) -> (u16, String) {
    let answer = app
        .client
        .request(method, format!("http://{}{ROLLOUTS}/{route}", app.status_address))
        .bearer_auth(token)
        .query(query)
        .send()
        .await
        .unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

/// [`change_with`] the operator's token.
pub async fn change(
    app: &TestApp,
    method: reqwest::Method,
    route: &str,
    query: &[(&str, &str)],
) -> (u16, String) {
    change_with(app, TOKEN, (method, route), query).await
}

/// An alert as Alertmanager sends it, its fingerprint `fingerprint`.
pub fn alert(status: &str, labels: Value, summary: &str, fingerprint: &str) -> Value {
    json!({
        "status": status,
        "labels": labels,
        "annotations": {"summary": summary},
        "startsAt": "2026-11-26T10:00:00Z",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus.example/graph",
        "fingerprint": fingerprint,
    })
}

/// A version 4 notification of `alerts`.
pub fn notification(alerts: &[Value]) -> Value {
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

/// Posts `body` to the [`WEBHOOK`], with `token` if any.
pub async fn post_notification(app: &TestApp, token: Option<&str>, body: impl Into<reqwest::Body>) -> Answer {
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

/// Each alert's outcome, as the webhook answered.
pub fn outcomes(answer: &Answer) -> Vec<String> {
    answer.json()["alerts"]
        .as_array()
        .expect("the alerts taken")
        .iter()
        .map(|taken| taken["outcome"].as_str().unwrap().to_owned())
        .collect()
}

/// Posts `alerts` with Alertmanager's token; each alert's outcome.
pub async fn notify(app: &TestApp, alerts: &[Value]) -> Vec<String> {
    let answer = post_notification(app, Some(ALERTMANAGER_TOKEN), notification(alerts).to_string()).await;
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    outcomes(&answer)
}

/// `GET {ROLLOUTS}` with the dashboard's token.
pub async fn rollouts(app: &TestApp) -> Rollouts {
    let answer = app
        .client
        .get(format!("http://{}{ROLLOUTS}", app.status_address))
        .bearer_auth(READ_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    answer.json().await.unwrap()
}

/// The first rollout once it is paused (polled, within a generous
/// deadline), with the document; `Err` says what was seen last.
pub async fn once_paused(app: &TestApp, what: &str) -> anyhow::Result<Rollouts> {
    let (document, _) = registry_testkit::poll::until(what, Duration::from_secs(60), async || {
        let document = rollouts(app).await;
        match &document.rollouts[0].state {
            state if state == "paused" => Ok(document),
            other => Err(anyhow::anyhow!("state {other}: {}", document.rollouts[0].said)),
        }
    })
    .await?;
    Ok(document)
}

/// Waits until the engine's rollout task `task` (`rollout halts`: halts
/// and gates) has completed a round begun after `since`.
pub async fn round_after(app: &TestApp, task: &str, since: jiff::Timestamp) {
    super::eventually("a round after", Duration::from_secs(30), || async {
        app.status_document().await.tasks.iter().any(|status| {
            status.name == task
                && status
                    .last_round
                    .as_deref()
                    .and_then(|round| round.parse::<jiff::Timestamp>().ok())
                    .is_some_and(|round| round > since + jiff::SignedDuration::from_millis(1_100))
        })
    })
    .await;
}

/// The first rollout of `document`.
pub fn first(document: &Rollouts) -> &RolloutView {
    &document.rollouts[0]
}

/// Writes to `store` the checks of `cluster` (placed at `place`) the
/// recorder would have written: on `history` versions from so many hours
/// ago each (oldest first), and a check `last_seen_hours_ago` on the last.
pub async fn seed(
    store: &fleet_store::FleetStore,
    (cluster, place): (&str, f64),
    history: &[(&str, f64)],
    last_seen_hours_ago: f64,
) {
    let check = |version: &str, hours| fleet_store::Check {
        cluster: cluster.to_owned(),
        channel: "stable-4.18".into(),
        arch: "amd64".into(),
        version: version.into(),
        place,
        at: hours_ago(hours).as_second(),
    };
    let mut checks: Vec<_> = history
        .iter()
        .map(|(version, hours)| check(version, *hours))
        .collect();
    let (last, _) = history.last().expect("a history");
    checks.push(check(last, last_seen_hours_ago));
    store.record(&checks, u64::MAX).await.unwrap();
}
