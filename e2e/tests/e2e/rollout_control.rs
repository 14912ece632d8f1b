//! Rollouts under run-time control across two real engine processes
//! sharing one PostgreSQL (a real, throw-away server), as replicas behind
//! one Service are: a change made on either is honoured by the other (the
//! time it took is printed: the target is 5 s at the default
//! `rollouts.refresh_ms`), both keep it across restarts, tokens are
//! checked (missing, wrong, removed from the file while the engines run)
//! and the audit shows every change with who made it. And a rollout whose
//! clusters go silent after taking its target is halted by the fleet's
//! signal, once, on both.

use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::ensure;
use cincinnati_client::rollout::Rollouts;
use e2e::client_graph::ClientGraph;
use e2e::fleet::{FleetAnswers, place_percent};
use e2e::graph_builder::PATH_PREFIX;
use e2e::process::ServiceProcess;
use e2e::static_server::StaticServer;
use e2e::workdir::Workdir;
use e2e::{http, policy_engine, poll};
use postgres_testkit::PostgresServer;
use serde_json::json;

const TARGET: &str = "4.18.4";
const ROLLOUTS: &str = "/v1/rollouts";
const OPS_TOKEN: &str = "ops-0123456789abcdef";
const ROBOT_TOKEN: &str = "robot-fedcba9876543210";

/// 4.18.1 with an update to [`TARGET`] in stable-4.18.
fn full_graph() -> Vec<u8> {
    let node = |version: &str| {
        json!({
            "version": format!("{version}+amd64"),
            "payload": format!("example.com/ocp-release:{version}"),
            "metadata": {
                "io.openshift.upgrades.graph.release.arch": "amd64",
                "io.openshift.upgrades.graph.release.channels": "stable-4.18",
            },
        })
    };
    let graph = json!({
        "nodes": [node("4.18.1"), node(TARGET)],
        "edges": [[0, 1]],
        "conditionalEdges": [],
    });
    serde_json::to_vec(&graph).expect("a graph serializes")
}

/// A rollout of [`TARGET`] to half the fleet on 2026-01-01, the rest over
/// 91 years: its progress grows by about half a percent a year from 50%;
/// with `halt_when` (YAML) if given.
fn policy_file(halt_when: Option<&str>) -> String {
    let halt_when = halt_when.map_or_else(String::new, |halt| format!("    halt_when: {halt}\n"));
    format!(
        "rollouts:\n  - target: {TARGET}\n    start: 2026-01-01T00:00:00Z\n    \
         duration_hours: 800000\n    starting_percentage: 50\n{halt_when}"
    )
}

/// A cluster id whose place is within `range` (percent).
fn cluster_at(range: std::ops::Range<f64>) -> String {
    (0u32..)
        .map(|n| format!("{n:08x}-0e1c-4000-8000-00000000000e"))
        .find(|id| range.contains(&place_percent(id)))
        .expect("some id is placed there")
}

struct Replica {
    engine: ServiceProcess,
}

impl Replica {
    /// An engine recording to `store`, with the policy and token files of
    /// `workdir` and the `extra` flags.
    async fn start(
        workdir: &Path,
        id: &str,
        upstream: &str,
        store: &str,
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        let (policy, tokens) = (workdir.join("policy.yaml"), workdir.join("tokens"));
        let mut flags = vec![
            "--fleet.store",
            store,
            "--cluster_policy.file",
            policy.to_str().unwrap(),
            "--rollouts.token_file",
            tokens.to_str().unwrap(),
        ];
        flags.extend(extra);
        let engine = policy_engine::start_with(workdir, id, upstream, &flags).await?;
        Ok(Self { engine })
    }

    /// Asks as cluster `id` on `version` does; whether it was answered.
    async fn check(&self, http: &reqwest::Client, id: &str, version: &str) -> anyhow::Result<ClientGraph> {
        let url = self.engine.api_url(&format!(
            "{PATH_PREFIX}/graph?channel=stable-4.18&arch=amd64&version={version}&id={id}"
        ));
        let answer = http::get(http, &url, Some("application/json")).await?;
        ensure!(answer.status == 200, "{url}: {}", answer.status);
        ClientGraph::from_served(&answer.json()?)
    }

    /// Whether the engine offers [`TARGET`] to cluster `id` on 4.18.1.
    async fn offers(&self, http: &reqwest::Client, id: &str) -> anyhow::Result<bool> {
        let graph = self.check(http, id, "4.18.1").await?;
        Ok(graph
            .updates_from("4.18.1")
            .is_some_and(|updates| updates.available.iter().any(|to| to == TARGET)))
    }

    /// 1 while the engine holds the rollout paused (its policy's state, not
    /// the store's).
    async fn paused(&self, http: &reqwest::Client) -> anyhow::Result<f64> {
        FleetAnswers::of(&self.engine, http)
            .metric(&format!("cincinnati_pe_rollout_paused{{target=\"{TARGET}\"}}"))
            .await
    }

    /// `method` on `{prefix}/v1/rollouts{route}` with `token`: the status
    /// and the body.
    async fn control(
        &self,
        http: &reqwest::Client,
        method: reqwest::Method,
        route: &str,
        token: Option<&str>,
    ) -> anyhow::Result<(u16, serde_json::Value, Option<String>)> {
        let url = self.engine.status_url(&format!("{PATH_PREFIX}{ROLLOUTS}{route}"));
        let mut request = http.request(method, &url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await?;
        let status = response.status().as_u16();
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        Ok((status, response.json().await?, challenge))
    }
}

/// Waits until `done` holds, and says how long that took after `since`.
async fn honoured(what: &str, since: SystemTime, done: impl AsyncFn() -> anyhow::Result<bool>) -> Duration {
    poll::until(what, poll::CHANGE_TIMEOUT, || async {
        ensure!(done().await?, "not yet");
        Ok(())
    })
    .await
    .unwrap_or_else(|error| panic!("{error:#}"));
    since.elapsed().unwrap_or_default()
}

/// Two replicas on one PostgreSQL, before one upstream, with the policy
/// file `policy` and both tokens.
struct Replicas {
    a: Replica,
    b: Replica,
    postgres: PostgresServer,
    _upstream: StaticServer,
    workdir: Workdir,
}

impl Replicas {
    async fn start(policy: &str, extra: &[&str]) -> anyhow::Result<Self> {
        let workdir = Workdir::new()?;
        let dir = workdir.path();
        std::fs::write(dir.join("policy.yaml"), policy)?;
        std::fs::write(
            dir.join("tokens"),
            format!("ops {OPS_TOKEN}\nrobot {ROBOT_TOKEN}\n"),
        )?;
        let upstream = StaticServer::start(full_graph(), "application/json")?;
        let upstream_url = format!("{}{PATH_PREFIX}/graph", upstream.url());
        let postgres = PostgresServer::start().await?;
        let store = postgres.url();
        let a = Replica::start(dir, "a", &upstream_url, &store, extra).await?;
        let b = Replica::start(dir, "b", &upstream_url, &store, extra).await?;
        Ok(Self {
            a,
            b,
            postgres,
            _upstream: upstream,
            workdir,
        })
    }
}

#[tokio::test]
async fn replicas_sharing_postgresql_honour_each_others_changes_keep_them_and_audit_them() {
    // Every part kept until the test ends (the store and the upstream too).
    let Replicas {
        mut a,
        mut b,
        workdir,
        postgres: _postgres,
        _upstream,
    } = Replicas::start(&policy_file(None), &[]).await.unwrap();
    let dir = workdir.path();
    let http = reqwest::Client::new();
    let (inside, outside) = (cluster_at(10.0..40.0), cluster_at(60.0..90.0));
    for replica in [&a, &b] {
        assert!(
            replica.offers(&http, &inside).await.unwrap(),
            "placed below the progress"
        );
        assert!(!replica.offers(&http, &outside).await.unwrap(), "placed above it");
    }

    // Tokens: none, one the file does not hold, one it holds.
    let get = reqwest::Method::GET;
    let (status, body, challenge) = a.control(&http, get.clone(), "", None).await.unwrap();
    assert_eq!(
        (status, body["kind"].as_str()),
        (401, Some("unauthorized")),
        "{body}"
    );
    assert!(challenge.is_some_and(|challenge| challenge.starts_with("Bearer")));
    let (status, body, _) = a.control(&http, get.clone(), "", Some("guess")).await.unwrap();
    assert_eq!(
        (status, body["kind"].as_str()),
        (403, Some("forbidden")),
        "{body}"
    );
    let (status, _, _) = b
        .control(&http, get.clone(), "", Some(ROBOT_TOKEN))
        .await
        .unwrap();
    assert_eq!(status, 200);

    // Paused on A: B's policy holds it paused.
    let post = reqwest::Method::POST;
    let pause = format!("/{TARGET}/pause?reason=storage+alarms+in+the+first+wave");
    let made = SystemTime::now();
    let (status, body, _) = a
        .control(&http, post.clone(), &pause, Some(OPS_TOKEN))
        .await
        .unwrap();
    assert_eq!(status, 200, "{body}");
    let paused_on_b = honoured("B to hold the rollout paused", made, || async {
        Ok(b.paused(&http).await? == 1.0)
    })
    .await;

    // Progress held at 100% on B: A offers the target to the cluster
    // placed above the schedule.
    let hold = format!("/{TARGET}/progress?reason=the+fix+is+verified&percent=100");
    let made = SystemTime::now();
    let (status, body, _) = b
        .control(&http, reqwest::Method::PUT, &hold, Some(ROBOT_TOKEN))
        .await
        .unwrap();
    assert_eq!(status, 200, "{body}");
    let offered_on_a = honoured("A to offer the target at the held progress", made, || async {
        a.offers(&http, &outside).await
    })
    .await;
    println!(
        "rollout control across replicas: a pause made on A in force on B after {} ms, a hold made on B \
         offered by A after {} ms (rollouts.refresh_ms 2000; target 5 s)",
        paused_on_b.as_millis(),
        offered_on_a.as_millis()
    );

    // Both restarted: the state is the store's.
    a.engine.restart().await.unwrap();
    b.engine.restart().await.unwrap();
    for replica in [&a, &b] {
        let name = replica.engine.name().to_owned();
        honoured(
            &format!("{name} to read the state again"),
            SystemTime::now(),
            || async { Ok(replica.paused(&http).await? == 1.0 && replica.offers(&http, &outside).await?) },
        )
        .await;
    }

    // The robot's token removed from the file: refused, without a restart.
    std::fs::write(dir.join("tokens"), format!("ops {OPS_TOKEN}\n")).unwrap();
    for replica in [&a, &b] {
        let name = replica.engine.name().to_owned();
        honoured(
            &format!("{name} to refuse the removed token"),
            SystemTime::now(),
            || async {
                let (status, _, _) = replica
                    .control(&http, reqwest::Method::GET, "", Some(ROBOT_TOKEN))
                    .await?;
                Ok(status == 403)
            },
        )
        .await;
    }
    let resume = format!("/{TARGET}/resume?reason=by+the+robot");
    let (status, _, _) = a.control(&http, post, &resume, Some(ROBOT_TOKEN)).await.unwrap();
    assert_eq!(status, 403, "a removed token changes nothing");

    // Every change, once, with who made it and why, on either replica.
    let (status, body, _) = b.control(&http, get, "", Some(OPS_TOKEN)).await.unwrap();
    assert_eq!(status, 200);
    let document: Rollouts = serde_json::from_value(body).unwrap();
    let history: Vec<(&str, &str, &str)> = document
        .history
        .iter()
        .map(|entry| (entry.action.as_str(), entry.by.as_str(), entry.reason.as_str()))
        .collect();
    assert_eq!(
        history,
        [
            ("pause", "ops", "storage alarms in the first wave"),
            ("hold", "robot", "the fix is verified"),
        ],
        "oldest first"
    );
}

/// Clusters that took the rollout's target and were not seen since: the
/// fleet's signal halts it on both replicas, once. The clusters ask for
/// real; the store's times are then moved back: recorded over two days
/// (established), settled on the target for 15 minutes, silent for two
/// hours (the shortest silent window is an hour).
#[tokio::test]
async fn a_rollout_whose_clusters_go_silent_after_arriving_is_halted_once_on_both_replicas() {
    let halt_when = "{silent_after_arriving_percent: 50, min_arrived: 6}";
    let replicas = Replicas::start(
        &policy_file(Some(halt_when)),
        &["--rollouts.halt_check_secs", "1", "--fleet.silent_hours", "1"],
    )
    .await
    .unwrap();
    let (a, b) = (&replicas.a, &replicas.b);
    let http = reqwest::Client::new();
    let arriving: Vec<String> = (0u32..)
        .map(|n| format!("{n:08x}-0f1c-4000-8000-00000000000f"))
        .filter(|id| place_percent(id) < 45.0)
        .take(8)
        .collect();
    let mut asked = [0, 0];
    for (n, id) in arriving.iter().enumerate() {
        let replica = [a, b][n % 2];
        let offered = replica.check(&http, id, "4.18.1").await.unwrap();
        assert!(
            offered
                .updates_from("4.18.1")
                .is_some_and(|updates| updates.available.iter().any(|to| to == TARGET)),
            "{id} is placed inside the rollout"
        );
        replica.check(&http, id, TARGET).await.unwrap();
        asked[n % 2] += 2;
    }
    for (replica, checks) in [a, b].into_iter().zip(asked) {
        FleetAnswers::of(&replica.engine, &http)
            .await_written(checks)
            .await
            .unwrap();
        assert_eq!(replica.paused(&http).await.unwrap(), 0.0, "seen a moment ago");
    }

    let pool = sqlx::PgPool::connect(&replicas.postgres.url()).await.unwrap();
    for statement in [
        "UPDATE fleet_clusters SET first_seen = first_seen - 180000, last_seen = last_seen - 7200, \
         version_since = version_since - 8100",
        "UPDATE fleet_changes SET at = at - 8100",
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    for replica in [a, b] {
        let name = replica.engine.name().to_owned();
        honoured(
            &format!("{name} to hold the rollout halted"),
            SystemTime::now(),
            || async { Ok(replica.paused(&http).await? == 1.0) },
        )
        .await;
    }
    let (status, body, _) = a
        .control(&http, reqwest::Method::GET, "", Some(OPS_TOKEN))
        .await
        .unwrap();
    assert_eq!(status, 200, "{body}");
    let document: Rollouts = serde_json::from_value(body).unwrap();
    let halts: Vec<(&str, &str)> = document
        .history
        .iter()
        .map(|entry| (entry.action.as_str(), entry.by.as_str()))
        .collect();
    assert_eq!(halts, [("pause", "fleet-signal")], "halted once by two engines");
    let reason = &document.history[0].reason;
    assert!(reason.contains("100.0% of the 8 clusters"), "{reason}");
}
