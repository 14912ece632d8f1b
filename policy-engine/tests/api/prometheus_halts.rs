//! `halt_when: {promql, above}` against a real Prometheus (Debian's
//! `prometheus`) scraping a test target whose figure the test sets: below
//! the bound the rollout goes on, above it the engine pauses the rollout
//! as `prometheus`, with the query and its value as the reason.

use std::time::{Duration, SystemTime};

use prometheus_testkit::Prometheus;
use registry_testkit::{Body, FileServer, poll};

use crate::support::app::spawn_ready;
use crate::support::rollouts::{control_settings, first, once_paused, rollout_with, rollouts};
use crate::support::upstream::{Behaviour, FakeUpstream};

const QUERY: &str = r#"max(updated_clusters_degraded{version="4.18.4"})"#;

fn degraded(count: u32) -> Body {
    Body::Bytes(format!("updated_clusters_degraded{{version=\"4.18.4\"}} {count}\n").into_bytes())
}

/// The value Prometheus gives `QUERY` now, if any.
async fn value(client: &reqwest::Client, prometheus: &Prometheus) -> Option<f64> {
    let answer: serde_json::Value = client
        .get(format!("{}/api/v1/query", prometheus.url()))
        .query(&[("query", QUERY)])
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    answer["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

#[tokio::test]
async fn a_rollout_halts_once_its_prometheus_query_is_above_the_bound() {
    let target = FileServer::start().unwrap();
    target.serve("/metrics", degraded(1));
    let prometheus = Prometheus::start(&[target.url().trim_start_matches("http://").to_owned()])
        .await
        .unwrap();
    let upstream = FakeUpstream::start(Behaviour::Graph(crate::support::small_graph())).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("policy.yaml"),
        rollout_with(
            5000.0,
            10000.0,
            &format!("    halt_when: {{promql: '{QUERY}', above: 3}}\n"),
        ),
    )
    .unwrap();
    let store = format!("sqlite://{}", dir.path().join("fleet.db").display());
    let mut settings = control_settings(&upstream, dir.path(), &store);
    settings.rollouts.prometheus_url = Some(prometheus.url().parse().unwrap());
    settings.rollouts.prometheus_check_secs = 1;
    let app = spawn_ready(settings).await;
    let client = reqwest::Client::new();
    let deadline = Duration::from_secs(60);

    // Below the bound, evaluated: the rollout goes on.
    poll::eventually("Prometheus to have scraped the figure", deadline, || {
        let (client, prometheus) = (&client, &prometheus);
        async move { value(client, prometheus).await == Some(1.0) }
    })
    .await;
    let scraped = SystemTime::now();
    poll::eventually("the engine to evaluate the query since", deadline, || {
        let app = &app;
        async move {
            let status = app.status_document().await.rollout_control.unwrap();
            status
                .prometheus
                .and_then(|freshness| freshness.last_success())
                .is_some_and(|at| at > scraped + Duration::from_secs(1))
        }
    })
    .await;
    assert_eq!(first(&rollouts(&app).await).state, "on-schedule");

    // Above it: paused by the query, its value the reason.
    target.serve("/metrics", degraded(7));
    let document = once_paused(&app, "the rollout halted by its query")
        .await
        .unwrap_or_else(|error| panic!("{error:#}\nPrometheus's log:\n{}", prometheus.log()));
    let entry = &document.history[0];
    assert_eq!(
        (entry.action.as_str(), entry.by.as_str()),
        ("pause", "prometheus")
    );
    assert_eq!(entry.reason, format!("halted: {QUERY} = 7 (halt_when: above 3)"));
}
