//! Per-cluster policy on a real engine: clusters see what their groups and
//! the rollouts in flight say; a broken policy file keeps the last good one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use policy_engine::LookupStatus;
use policy_engine::Settings;

use crate::support::app::{TestApp, settings, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, hours_ago, place_percent, recommended_from, rollout, small_graph as graph};

const PRODUCTION: &str = "11111111-2222-4333-8444-555555555555";
const CANARY: &str = "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE";

const GROUPS: &str = "\
groups:
  production:
    deferral_days: 1
    max_version: 4.18.3
  canary: {}
";

fn policy(rollout: &str) -> String {
    format!("{GROUPS}clusters:\n  {PRODUCTION}: [production]\n  {CANARY}: [canary]\n{rollout}")
}

/// An upstream serving [`graph`], and a policy file holding `text` (in a
/// directory that lives as long as the returned guard).
async fn serve(text: &str) -> (FakeUpstream, tempfile::TempDir, PathBuf) {
    let upstream = FakeUpstream::start(Behaviour::Graph(graph())).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policy.yaml");
    std::fs::write(&file, text).unwrap();
    (upstream, dir, file)
}

fn policy_settings(upstream: &FakeUpstream, policy_file: &Path) -> Settings {
    let mut settings: Settings = settings(&upstream.url());
    settings.cluster_policy.file = Some(policy_file.to_owned());
    settings.cluster_policy.reload_secs = 1;
    settings
}

async fn engine(upstream: &FakeUpstream, policy_file: &Path) -> TestApp {
    spawn_ready(policy_settings(upstream, policy_file)).await
}

/// An engine whose lookup service is `lookup` (asked `{url}/{id}`), with
/// answers kept for `ttl_secs` and waited for at most `timeout_ms`.
async fn engine_with_lookup(
    upstream: &FakeUpstream,
    policy_file: &Path,
    lookup: &FakeUpstream,
    ttl_secs: u64,
    timeout_ms: u64,
) -> TestApp {
    let mut settings = policy_settings(upstream, policy_file);
    settings.cluster_policy.lookup_url = Some(lookup.url().parse().unwrap());
    settings.cluster_policy.lookup_cache_ttl_secs = ttl_secs;
    settings.cluster_policy.lookup_timeout_ms = timeout_ms;
    spawn_ready(settings).await
}

/// The versions `from` updates to in the engine's answer for `query`.
async fn updates_from(app: &TestApp, query: &str, from: &str) -> BTreeSet<String> {
    let answer = app.get(&format!("/graph?channel=stable-4.18&{query}")).await;
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    recommended_from(&answer.json(), from)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

fn set(versions: &[&str]) -> BTreeSet<String> {
    versions.iter().map(|version| version.to_string()).collect()
}

#[tokio::test]
async fn clusters_see_what_their_groups_allow_and_others_the_default() {
    let (upstream, _dir, file) = serve(&policy("")).await;
    let app = engine(&upstream, &file).await;

    let everything = set(&["4.18.2", "4.18.3", "4.18.4"]);
    // Deferred (built "in 2100") and above the pin: only 4.18.2.
    assert_eq!(
        updates_from(&app, &format!("id={PRODUCTION}"), "4.18.1").await,
        set(&["4.18.2"])
    );
    assert_eq!(
        updates_from(&app, &format!("id={CANARY}&version=4.18.1"), "4.18.1").await,
        everything
    );
    for default in [
        "",
        "id=",
        "id=not-a-uuid",
        "id=99999999-2222-4333-8444-555555555555",
    ] {
        assert_eq!(
            updates_from(&app, default, "4.18.1").await,
            everything,
            "{default}"
        );
    }
    let status = app.status_document().await;
    let policy = status.client.cluster_policy.expect("the policy is in /status");
    assert_eq!(policy.clusters, 2);
    assert_eq!(policy.groups["production"].deferral_days, 1);
    assert!(!policy.freshness.is_stale());
    assert!(
        status
            .client
            .pipeline
            .iter()
            .any(|stage| stage == "cluster-policy"),
        "{:?}",
        status.client.pipeline
    );
}

#[tokio::test]
async fn a_rollout_offers_its_target_by_place_at_0_50_and_100_percent() {
    let (upstream, _dir, file) = serve(&policy(&rollout(-1000.0, 100.0))).await;
    let app = engine(&upstream, &file).await;
    let ids: Vec<String> = (0..300_u32)
        .map(|n| format!("{n:08x}-5d2c-4a7e-9b1f-0123456789ab"))
        .collect();
    let offered = |updates: &BTreeSet<String>| updates.contains("4.18.4");
    for id in &ids[..20] {
        assert!(!offered(&updates_from(&app, &format!("id={id}"), "4.18.1").await));
    }

    // Half way through a 10,000-hour rollout: progress moves 0.01% an hour.
    std::fs::write(&file, policy(&rollout(5000.0, 10000.0))).unwrap();
    eventually("the rollout at 50% is taken", Duration::from_secs(10), || async {
        app.status_document()
            .await
            .client
            .cluster_policy
            .is_some_and(|policy| policy.generation == 1)
    })
    .await;
    let mut inside = 0;
    for id in &ids {
        let place = place_percent(id);
        let is_offered = offered(&updates_from(&app, &format!("id={id}"), "4.18.1").await);
        if (place - 50.0).abs() > 0.1 {
            assert_eq!(is_offered, place < 50.0, "{id} at {place}%");
        }
        inside += usize::from(is_offered);
    }
    let share = inside as f64 / ids.len() as f64;
    assert!((0.4..=0.6).contains(&share), "{share}");
    assert!(
        !offered(&updates_from(&app, "", "4.18.1").await),
        "no id: last in the rollout"
    );

    // Finished.
    std::fs::write(&file, policy(&rollout(200.0, 1.0))).unwrap();
    eventually(
        "the finished rollout is taken",
        Duration::from_secs(10),
        || async {
            app.status_document()
                .await
                .client
                .cluster_policy
                .is_some_and(|policy| policy.generation == 2)
        },
    )
    .await;
    for id in ids[..20].iter().map(String::as_str).chain([""]) {
        assert!(offered(&updates_from(&app, &format!("id={id}"), "4.18.1").await));
    }
}

#[tokio::test]
async fn answers_are_not_cached_beyond_the_clusters_next_rollout_threshold() {
    // Ten minutes from now the rollout starts at 100%: every cluster's class
    // changes then, within the hour answers are otherwise cached for.
    let start = hours_ago(-1.0 / 6.0);
    let rollouts = format!(
        "rollouts:\n  - {{target: 4.18.4, start: \"{start}\", duration_hours: 1, starting_percentage: 100}}\n"
    );
    let (upstream, _dir, file) = serve(&policy(&rollouts)).await;
    let mut with_policy = policy_settings(&upstream, &file);
    with_policy.service.requests.cache_max_age_secs = 3600;
    let app = spawn_ready(with_policy).await;
    let bounded = app
        .get(&format!("/graph?channel=stable-4.18&id={CANARY}"))
        .await
        .max_age();
    assert!(bounded <= 600, "max-age={bounded}");
    // Without a policy, the configured max-age.
    let mut without_policy = settings(&upstream.url());
    without_policy.service.requests.cache_max_age_secs = 3600;
    let without_policy = spawn_ready(without_policy).await;
    assert_eq!(
        without_policy.get("/graph?channel=stable-4.18").await.max_age(),
        3600
    );
}

#[tokio::test]
async fn a_policy_file_broken_while_serving_keeps_the_last_good_policy() {
    let (upstream, _dir, file) = serve(&policy("")).await;
    let app = engine(&upstream, &file).await;
    let production = format!("id={PRODUCTION}");
    assert_eq!(updates_from(&app, &production, "4.18.1").await, set(&["4.18.2"]));

    std::fs::write(
        &file,
        format!(
            "{}  bbbbbbbb-0000-4000-8000-000000000000: [no-such-group]\n",
            policy("")
        ),
    )
    .unwrap();
    eventually("the broken file is noticed", Duration::from_secs(10), || async {
        app.metric("cincinnati_pe_cluster_policy_stale").await == 1.0
    })
    .await;
    let status = app.status_document().await.client.cluster_policy.unwrap();
    let error = status.freshness.last_error().expect("the refusal is in /status");
    assert!(
        error.message.contains("policy.yaml:") && error.message.contains("no-such-group"),
        "{}",
        error.message
    );
    assert_eq!(status.generation, 0);
    assert_eq!(
        app.metric("cincinnati_pe_cluster_policy_reload_errors_total")
            .await,
        1.0
    );
    assert_eq!(
        updates_from(&app, &production, "4.18.1").await,
        set(&["4.18.2"]),
        "the last good policy is still applied"
    );

    // Fixed: production is moved to canary.
    std::fs::write(&file, format!("{GROUPS}clusters:\n  {PRODUCTION}: [canary]\n")).unwrap();
    eventually("the fixed file is taken", Duration::from_secs(10), || async {
        app.metric("cincinnati_pe_cluster_policy_stale").await == 0.0
    })
    .await;
    assert_eq!(
        updates_from(&app, &production, "4.18.1").await,
        set(&["4.18.2", "4.18.3", "4.18.4"])
    );
    assert_eq!(
        app.metric("cincinnati_pe_cluster_policy_reloads_total").await,
        1.0
    );
}

/// Not in the policy file: its groups come from the lookup service.
const STRANGER: &str = "cccccccc-0000-4000-8000-000000000000";

async fn lookup_status(app: &TestApp) -> LookupStatus {
    let policy = app
        .status_document()
        .await
        .client
        .cluster_policy
        .expect("a policy");
    policy.lookup.expect("a lookup service")
}

fn groups_answer(groups: &[&str]) -> Behaviour {
    Behaviour::Untagged(serde_json::to_vec(&serde_json::json!({ "groups": groups })).unwrap())
}

#[tokio::test]
async fn groups_from_the_lookup_service_apply_and_are_kept() {
    let (upstream, _dir, file) = serve(&policy("")).await;
    let lookup = FakeUpstream::start(groups_answer(&["production", "not-defined-in-the-file"])).await;
    let app = engine_with_lookup(&upstream, &file, &lookup, 3600, 10_000).await;
    let stranger = format!("id={STRANGER}");
    for _ in 0..3 {
        assert_eq!(updates_from(&app, &stranger, "4.18.1").await, set(&["4.18.2"]));
    }
    let asked: Vec<String> = lookup
        .requests()
        .iter()
        .map(|request| request.query.clone())
        .collect();
    assert_eq!(asked.len(), 1, "kept for its TTL: {asked:?}");
    assert_eq!(app.metric("cincinnati_pe_cluster_lookups_total").await, 1.0);
    // Requests without a valid id never ask.
    assert_eq!(updates_from(&app, "id=nope", "4.18.1").await.len(), 3);
    assert_eq!(lookup.requests().len(), 1);
    let status = lookup_status(&app).await;
    assert_eq!(
        (status.known_clusters, status.lookups, status.failed_lookups),
        (1, 1, 0)
    );
}

#[tokio::test]
async fn a_lookup_service_that_hangs_fails_or_talks_garbage_never_fails_a_request() {
    let (upstream, _dir, file) = serve(&policy("")).await;
    let lookup = FakeUpstream::start(groups_answer(&["production"])).await;
    let app = engine_with_lookup(&upstream, &file, &lookup, 3600, 300).await;
    let everything = set(&["4.18.2", "4.18.3", "4.18.4"]);
    let id = |n: u32| format!("id={n:08x}-0000-4000-8000-000000000000");

    // A service that never answers: the request is answered (the default)
    // instead of hanging.
    lookup.hold();
    assert_eq!(updates_from(&app, &id(1), "4.18.1").await, everything);
    lookup.release();
    lookup.set(Behaviour::Status(500));
    assert_eq!(updates_from(&app, &id(2), "4.18.1").await, everything);
    lookup.set(Behaviour::Garbage);
    assert_eq!(updates_from(&app, &id(3), "4.18.1").await, everything);
    // Production's file groups still apply while the service fails.
    assert_eq!(
        updates_from(&app, &format!("id={PRODUCTION}"), "4.18.1").await,
        set(&["4.18.2"])
    );
    eventually("the failures are counted", Duration::from_secs(10), || async {
        app.metric("cincinnati_pe_cluster_lookup_errors_total").await >= 4.0
    })
    .await;

    // Five failures in a row open the breaker: no more lookups for a while.
    assert_eq!(updates_from(&app, &id(4), "4.18.1").await, everything);
    eventually("the breaker opens", Duration::from_secs(10), || async {
        app.metric("cincinnati_pe_cluster_lookup_breaker_open").await == 1.0
    })
    .await;
    let asked = lookup.requests().len();
    for n in 5..10 {
        assert_eq!(updates_from(&app, &id(n), "4.18.1").await, everything);
    }
    assert_eq!(lookup.requests().len(), asked, "the open breaker asks nothing");
    assert!(app.metric("cincinnati_pe_cluster_lookup_fallbacks_total").await >= 9.0);
    let status = lookup_status(&app).await;
    assert!(status.breaker_open && status.freshness.is_stale(), "{status:?}");
}

#[tokio::test]
async fn the_last_known_groups_are_used_while_the_lookup_service_is_down() {
    let (upstream, _dir, file) = serve(&policy("")).await;
    let mut lookup = FakeUpstream::start(groups_answer(&["production"])).await;
    // Every answer is expired at once: each request asks again.
    let app = engine_with_lookup(&upstream, &file, &lookup, 0, 10_000).await;
    let stranger = format!("id={STRANGER}");
    assert_eq!(updates_from(&app, &stranger, "4.18.1").await, set(&["4.18.2"]));
    lookup.stop().await;
    for _ in 0..3 {
        assert_eq!(
            updates_from(&app, &stranger, "4.18.1").await,
            set(&["4.18.2"]),
            "the groups last known"
        );
    }
    eventually(
        "the failed refreshes are counted",
        Duration::from_secs(10),
        || async { app.metric("cincinnati_pe_cluster_lookup_errors_total").await >= 1.0 },
    )
    .await;
}

#[tokio::test]
async fn explain_on_the_status_port_says_which_rule_removed_which_update() {
    let (upstream, _dir, file) = serve(&policy(&rollout(5000.0, 10000.0))).await;
    let app = engine(&upstream, &file).await;
    let explain = |query: String| {
        let app = &app;
        async move {
            app.status_get(&format!("/v1/explain-cluster?channel=stable-4.18&{query}"))
                .await
        }
    };

    let production = explain(format!("id={PRODUCTION}&version=4.18.1")).await;
    assert_eq!(
        production.status,
        200,
        "{}",
        String::from_utf8_lossy(&production.body)
    );
    let production = production.json();
    assert_eq!(production["id"], PRODUCTION.to_lowercase());
    assert_eq!(production["groups"], serde_json::json!(["production"]));
    assert_eq!(
        production["rules"],
        serde_json::json!({"deferral_days": 1, "max_version": "4.18.3"})
    );
    let place = production["placePercent"].as_f64().unwrap();
    assert!((place - place_percent(PRODUCTION)).abs() < 1e-9);
    assert_eq!(production["rollouts"][0]["target"], "4.18.4");
    assert_eq!(production["rollouts"][0]["offered"], place < 50.0);
    assert_eq!(production["updates"]["from"], "4.18.1");
    assert_eq!(production["updates"]["offered"], serde_json::json!(["4.18.2"]));
    assert_eq!(
        production["updates"]["removed"],
        serde_json::json!([
            {"release": "4.18.3", "rule": "deferral", "deferralDays": 1, "created": "2100-01-01T00:00:00Z"},
            {"release": "4.18.4", "rule": "maxVersion", "maxVersion": "4.18.3"},
        ])
    );
    // The same as the graph answer says.
    assert_eq!(
        updates_from(&app, &format!("id={PRODUCTION}"), "4.18.1").await,
        set(&["4.18.2"])
    );

    let outside = (0..)
        .map(|n: u32| format!("{n:08x}-aaaa-4bbb-8ccc-dddddddddddd"))
        .find(|id| place_percent(id) > 51.0)
        .unwrap();
    let stranger = explain(format!("id={outside}&version=4.18.2")).await.json();
    assert_eq!(stranger["groups"], serde_json::json!([]));
    assert_eq!(stranger["rollouts"][0]["offered"], false);
    assert_eq!(
        stranger["withheld"],
        serde_json::json!([{"release": "4.18.4", "rule": "rollout", "rollout": 0}])
    );
    assert_eq!(stranger["updates"]["offered"], serde_json::json!([]));
    let no_id = explain(String::new()).await.json();
    assert_eq!(
        (no_id["id"].clone(), no_id["updates"].clone()),
        (serde_json::Value::Null, serde_json::Value::Null)
    );

    // Not on the public port.
    let public = app
        .get(&format!(
            "/v1/explain-cluster?channel=stable-4.18&id={PRODUCTION}&version=4.18.1"
        ))
        .await;
    assert_eq!(public.status, 404);
    assert!(
        !String::from_utf8_lossy(&public.body).contains(PRODUCTION),
        "{}",
        String::from_utf8_lossy(&public.body)
    );
    app.status_get("/v1/explain-cluster?id=x")
        .await
        .assert_error(400, "missing_params");
}

#[tokio::test]
async fn explain_without_a_policy_says_so() {
    let upstream = FakeUpstream::start(Behaviour::Graph(graph())).await;
    let app = spawn_ready(settings(&upstream.url())).await;
    let message = app
        .status_get("/v1/explain-cluster?channel=stable-4.18&id=x")
        .await
        .assert_error(400, "invalid_params");
    assert!(message.contains("no cluster policy"), "{message}");
}
