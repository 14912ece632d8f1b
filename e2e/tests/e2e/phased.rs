//! Graph-data's phased rollouts through the real system. Graph-data
//! (schema 2.0.0) phases 4.17.1 into stable-4.17 from five minutes ago:
//! patch updates (from 4.17.0) over 20 minutes, the others (from 4.16.2)
//! over 40. The graph-builder scrapes the real registry and publishes the
//! rollout; three engines answer 500 clusters:
//!
//! - P, on the graph-builder, under run-time control (a store, a token);
//! - D, chained to P, forwarding each cluster's `id`;
//! - C, on the graph-builder alone, without control.
//!
//! At several instants all three answer every cluster as the documented
//! formula says (offered from `start + place × duration`); upstream's
//! policy-engine (its channel filter, recorded as `e2e::expected::
//! engine_view`) and the CVO's client logic see the end-of-window graph
//! (no 4.17.1 in stable-4.17 yet); a pause on P freezes the rollout on P
//! and on D behind it, while C, not under control, goes on.

use std::time::Duration;

use anyhow::ensure;
use e2e::client_graph::ClientGraph;
use e2e::fleet::place_percent;
use e2e::graph_builder::{GraphBuilderOptions, PATH_PREFIX};
use e2e::policy_engine::{self, graph_url};
use e2e::process::ServiceProcess;
use e2e::scenario::{self, CANDIDATE};
use e2e::stack::Stack;
use e2e::{expected, http, poll};
use jiff::{SignedDuration, Timestamp};

const CHANNEL: &str = "stable-4.17";
const TARGET: &str = "4.17.1";
const TOKEN: &str = "ops-phased-0123456789";
const PATCH_WINDOW: SignedDuration = SignedDuration::from_mins(20);
const OTHER_WINDOW: SignedDuration = SignedDuration::from_mins(40);
/// How long an engine under control may trail the time: it reads the
/// run-time state every `rollouts.refresh_ms` (200) and applies it as of
/// that read (never offering what a later change may have withheld); a
/// loaded machine delays reads. A moment within it is too close to call.
const CONTROL_LAG: SignedDuration = SignedDuration::from_secs(5);
/// How long a chained engine's answer may trail its upstream's: each
/// cluster's feed is revalidated every second (`interval_secs`), 500 of
/// them, on a machine the suite loads.
const CHAIN_LAG: SignedDuration = SignedDuration::from_secs(30);

/// The standard graph-data, with stable-4.17 phasing [`TARGET`] from `start`.
fn phased_graph_data(start: Timestamp) -> e2e::graph_data::GraphData {
    let mut graph_data = scenario::graph_data();
    graph_data
        .raw_files
        .push(("version".to_owned(), "2.0.0\n".to_owned()));
    graph_data.raw_files.push((
        format!("channels/{CHANNEL}.yaml"),
        format!(
            "name: {CHANNEL}\nversions:\n- 4.16.2\n- 4.17.0\n- name: {TARGET}\n  start: {start}\n\
             phasedRollouts:\n- duration: PT20M\n  fromVersion: patch\n- duration: PT40M\n"
        ),
    ));
    graph_data
}

/// A cluster: its id, the version it runs, and when it is offered
/// [`TARGET`] by the documented formula.
struct Cluster {
    id: String,
    version: &'static str,
    moment: Timestamp,
}

/// 500 clusters, half on 4.17.0 (a patch update), half on 4.16.2.
fn clusters(start: Timestamp) -> Vec<Cluster> {
    (0..500u32)
        .map(|n| {
            let id = format!("{n:08x}-7a3e-4000-8000-0000000000a5");
            let (version, window) = if n % 2 == 0 {
                ("4.17.0", PATCH_WINDOW)
            } else {
                ("4.16.2", OTHER_WINDOW)
            };
            let moment = start + window.mul_f64(place_percent(&id) / 100.0);
            Cluster { id, version, moment }
        })
        .collect()
}

/// Whether `engine` offers [`TARGET`] to `cluster`, asked as the CVO asks.
async fn offers(http: &reqwest::Client, engine: &ServiceProcess, cluster: &Cluster) -> anyhow::Result<bool> {
    let url = format!(
        "{}?channel={CHANNEL}&arch=amd64&version={}&id={}",
        graph_url(engine),
        cluster.version,
        cluster.id
    );
    let answer = http::get(http, &url, Some("application/json")).await?;
    ensure!(answer.status == 200, "{url}: {}", answer.status);
    let graph = ClientGraph::from_served(&answer.json()?)?;
    ensure!(
        graph.nodes.contains_key(TARGET),
        "{url}: {TARGET} entered the channel at its start"
    );
    Ok(graph
        .updates_from(cluster.version)
        .is_some_and(|updates| updates.available.iter().any(|to| to == TARGET)))
}

/// Asks every engine of `engines` about every cluster; the answers that
/// differ from `expected(cluster, asked_from, answered_by, lag)` (`None`:
/// too close to call), as lines to print.
async fn disagreements(
    http: &reqwest::Client,
    engines: &[(&ServiceProcess, SignedDuration)],
    clusters: &[Cluster],
    expected: impl Fn(&Cluster, Timestamp, Timestamp, SignedDuration) -> Option<bool>,
) -> anyhow::Result<(Vec<String>, usize)> {
    let (mut differing, mut offered) = (Vec::new(), 0);
    for cluster in clusters {
        for (engine, lag) in engines {
            let asked = Timestamp::now();
            let answer = offers(http, engine, cluster).await?;
            let answered = Timestamp::now();
            offered += usize::from(answer);
            if expected(cluster, asked, answered, *lag).is_some_and(|expected| expected != answer) {
                differing.push(format!(
                    "{}: {} on {} (moment {}) offered={answer}",
                    engine.name(),
                    cluster.id,
                    cluster.version,
                    cluster.moment
                ));
            }
        }
    }
    Ok((differing, offered))
}

/// Offered when its moment has come by the time it was asked, unless the
/// moment falls while it was asked (or within the engine's lag before).
fn by_the_formula(
    cluster: &Cluster,
    asked: Timestamp,
    answered: Timestamp,
    lag: SignedDuration,
) -> Option<bool> {
    if cluster.moment <= asked - lag {
        Some(true)
    } else if cluster.moment > answered {
        Some(false)
    } else {
        None
    }
}

/// `method` on P's `{prefix}/v1/rollouts{route}`.
async fn control(
    http: &reqwest::Client,
    engine: &ServiceProcess,
    method: reqwest::Method,
    route: &str,
) -> anyhow::Result<(u16, serde_json::Value)> {
    let url = engine.status_url(&format!("{PATH_PREFIX}/v1/rollouts{route}"));
    let response = http.request(method, &url).bearer_auth(TOKEN).send().await?;
    Ok((response.status().as_u16(), response.json().await?))
}

#[tokio::test]
async fn engines_phase_a_graph_data_rollout_alike_and_a_pause_freezes_it_behind_the_chain() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    stack.await_expected(CANDIDATE, "amd64").await.unwrap();
    let start = Timestamp::now() - SignedDuration::from_mins(5);
    stack.push_graph_data(&phased_graph_data(start)).await.unwrap();
    let http = stack.http().clone();
    let full_graph_url = graph_url(&stack.graph_builder);
    poll::until(
        "the graph-builder publishes the phased rollout",
        poll::CHANGE_TIMEOUT,
        || async {
            let full = http::get_json(&http, &full_graph_url).await?;
            let published = full["nodes"].as_array().into_iter().flatten().any(|node| {
                node["version"] == format!("{TARGET}+amd64")
                    && node["metadata"]["io.openshift.upgrades.graph.release.phased_rollouts"].is_string()
            });
            ensure!(published, "not yet");
            Ok(())
        },
    )
    .await
    .unwrap();

    // Clients that do not phase: upstream's channel filter and the CVO see
    // stable-4.17 without 4.17.1 until the end of its longest window.
    let full = http::get_json(&http, &full_graph_url).await.unwrap();
    let upstream_view = expected::engine_view(&full, CHANNEL, "amd64").unwrap();
    assert!(
        !upstream_view.nodes.contains_key(TARGET),
        "not listed while phasing"
    );
    for from in ["4.16.2", "4.17.0"] {
        let updates = upstream_view.updates_from(from).expect("in the channel");
        assert!(
            !updates.available.iter().any(|to| to == TARGET),
            "{from}: {updates:?}"
        );
    }

    let workdir = stack.workdir().to_owned();
    let (policy, tokens) = (workdir.join("phased-policy.yaml"), workdir.join("phased-tokens"));
    std::fs::write(&policy, "groups: {}\n").unwrap();
    std::fs::write(&tokens, format!("ops {TOKEN}\n")).unwrap();
    let store = format!("sqlite://{}", workdir.join("phased-fleet.db").display());
    let controlled = policy_engine::start_with(
        &workdir,
        "p",
        &full_graph_url,
        &[
            "--fleet.store",
            &store,
            "--cluster_policy.file",
            policy.to_str().unwrap(),
            "--rollouts.token_file",
            tokens.to_str().unwrap(),
            "--rollouts.refresh_ms",
            "200",
        ],
    )
    .await
    .unwrap();
    let chained = policy_engine::start_with(
        &workdir,
        "d",
        &graph_url(&controlled),
        &[
            "--upstream.cincinnati.forward_parameters",
            "id",
            "--upstream.cincinnati.interval_secs",
            "1",
        ],
    )
    .await
    .unwrap();
    let alone = policy_engine::start(&workdir, "c", &full_graph_url)
        .await
        .unwrap();
    let clusters = clusters(start);
    let no_lag = SignedDuration::ZERO;
    let all = [
        (&controlled, CONTROL_LAG),
        (&chained, CHAIN_LAG),
        (&alone, no_lag),
    ];

    // Several instants: the three engines and the formula agree.
    let mut offered_then = Vec::new();
    for instant in 0..3 {
        let (differing, offered) = disagreements(&http, &all, &clusters, by_the_formula)
            .await
            .unwrap();
        assert!(
            differing.is_empty(),
            "instant {instant}:\n{}",
            differing.join("\n")
        );
        offered_then.push(offered);
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    assert!(
        offered_then[0] > 0 && offered_then[0] < all.len() * clusters.len(),
        "some clusters and not all are offered: {offered_then:?}"
    );
    // Without an id: at the end of the longest window, as the graph-builder
    // lists it for every client.
    let anonymous = Cluster {
        id: String::new(),
        version: "4.17.0",
        moment: start + OTHER_WINDOW,
    };
    for (engine, _) in all {
        assert!(
            !offers(&http, engine, &anonymous).await.unwrap(),
            "{}",
            engine.name()
        );
    }

    // Paused on P: P and D behind it offer the clusters whose moment had
    // come at the pause, and nobody else, while C goes on.
    let (status, body) = control(
        &http,
        &controlled,
        reqwest::Method::POST,
        &format!("/{TARGET}/pause?reason=phased+e2e"),
    )
    .await
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let (_, rollouts) = control(&http, &controlled, reqwest::Method::GET, "")
        .await
        .unwrap();
    let rollout = rollouts["rollouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|rollout| rollout["target"] == TARGET)
        .unwrap_or_else(|| panic!("{TARGET} under control: {rollouts}"))
        .clone();
    assert_eq!(rollout["phasedIn"], serde_json::json!([CHANNEL]), "{rollout}");
    let paused_at: Timestamp = rollout["control"]["paused"]["since"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    poll::until(
        "a cluster's moment to come after the pause",
        poll::CHANGE_TIMEOUT,
        || async {
            let now = Timestamp::now();
            let later = clusters.iter().any(|cluster| {
                cluster.moment > paused_at + SignedDuration::from_secs(1) && cluster.moment < now
            });
            ensure!(later, "no moment has come since the pause yet");
            Ok(())
        },
    )
    .await
    .unwrap();
    // (The pause is shown to the second: a moment within that second is
    // too close to call.)
    let frozen = |cluster: &Cluster, _: Timestamp, _: Timestamp, _: SignedDuration| {
        let second = SignedDuration::from_secs(1);
        if cluster.moment <= paused_at {
            Some(true)
        } else if cluster.moment > paused_at + second {
            Some(false)
        } else {
            None
        }
    };
    let behind_the_pause = [(&controlled, CONTROL_LAG), (&chained, CHAIN_LAG)];
    let (differing, _) = disagreements(&http, &behind_the_pause, &clusters, frozen)
        .await
        .unwrap();
    assert!(differing.is_empty(), "paused:\n{}", differing.join("\n"));
    let (differing, _) = disagreements(&http, &[(&alone, no_lag)], &clusters, by_the_formula)
        .await
        .unwrap();
    assert!(
        differing.is_empty(),
        "C, not under control, goes on:\n{}",
        differing.join("\n")
    );
}
