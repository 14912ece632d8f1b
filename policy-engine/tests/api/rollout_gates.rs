//! Rollout gates on a real engine with a SQLite fleet store: a rollout's
//! canaries are offered its target first and alone, the schedule starts
//! once they arrived; a late canary halts the rollout; a rate offers the
//! target to at most so many clusters a period. The fleet is seeded in the
//! store as the engine's recorder would have written it.

use std::time::Duration;

use fleet_store::gates::{Canary, GateUpdate};
use fleet_store::{Check, FleetStore};
use serde_json::Value;

use crate::rollout_control::{cluster_at, control_settings, offered, rollouts};
use crate::support::app::{TestApp, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, place_percent, rfc3339, small_graph};

/// Four clusters, lowest place first (one in each tenth from 0 to 40%).
fn four_clusters() -> Vec<String> {
    (0..4)
        .map(|n| cluster_at(f64::from(n) * 10.0..f64::from(n) * 10.0 + 10.0))
        .collect()
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// `clusters` checking in on `version` now, as stored.
async fn seed(store: &FleetStore, clusters: &[String], version: &str) {
    let checks: Vec<Check> = clusters
        .iter()
        .map(|cluster| Check {
            cluster: cluster.clone(),
            channel: "stable-4.18".into(),
            arch: "amd64".into(),
            version: version.into(),
            place: place_percent(cluster),
            at: now(),
        })
        .collect();
    store.record(&checks).await.unwrap();
}

/// A rollout of 4.18.4 starting at 100% (its schedule offers everyone
/// from its start) `starts_in` from now, with `gates` (policy file lines).
fn gated_rollout(starts_in: time::Duration, gates: &str) -> String {
    let start = rfc3339(time::OffsetDateTime::now_utc() + starts_in);
    format!(
        "rollouts:\n  - target: 4.18.4\n    start: \"{start}\"\n    duration_hours: 10\n    \
         starting_percentage: 100\n{gates}"
    )
}

/// Canaries are chosen once a rollout has started: this one an hour ago.
const STARTED: time::Duration = time::Duration::hours(-1);

/// A fresh SQLite store holding four clusters on 4.18.1, and a policy
/// file with a gated rollout.
struct GatedFleet {
    dir: tempfile::TempDir,
    url: String,
    store: FleetStore,
    clusters: Vec<String>,
}

impl GatedFleet {
    async fn new(starts_in: time::Duration, gates: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("fleet.db").display());
        std::fs::write(dir.path().join("policy.yaml"), gated_rollout(starts_in, gates)).unwrap();
        let store = FleetStore::open(&url, &url).await.unwrap();
        let clusters = four_clusters();
        seed(&store, &clusters, "4.18.1").await;
        Self {
            dir,
            url,
            store,
            clusters,
        }
    }

    /// An engine over it, its gates checked every second.
    async fn engine(&self, upstream: &FakeUpstream) -> TestApp {
        let mut settings = control_settings(upstream, self.dir.path(), &self.url);
        settings.rollouts.halt_check_secs = 1;
        spawn_ready(settings).await
    }
}

/// An engine over a [`GatedFleet`] of `gates`.
async fn gated_engine(
    starts_in: time::Duration,
    gates: &str,
) -> (TestApp, Vec<String>, GatedFleet, FakeUpstream) {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let fleet = GatedFleet::new(starts_in, gates).await;
    let app = fleet.engine(&upstream).await;
    (app, fleet.clusters.clone(), fleet, upstream)
}

/// The explanation of `id` (on 4.18.1): its rollout's place.
async fn explained_rollout(app: &TestApp, id: &str) -> Value {
    let explained = app
        .status_get(&format!(
            "/api/upgrades_info/v1/explain-cluster?channel=stable-4.18&arch=amd64&version=4.18.1&id={id}"
        ))
        .await
        .json();
    explained["rollouts"][0].clone()
}

/// `id` asks for its updates on `version`: the engine records it there.
async fn check_in(app: &TestApp, id: &str, version: &str) {
    let answer = app
        .get(&format!(
            "/api/upgrades_info/graph?channel=stable-4.18&arch=amd64&version={version}&id={id}"
        ))
        .await;
    assert_eq!(answer.status, 200);
}

async fn audited_actions(app: &TestApp) -> Vec<(String, String)> {
    rollouts(app)
        .await
        .history
        .into_iter()
        .map(|entry| (entry.action, entry.by))
        .collect()
}

#[tokio::test]
async fn canaries_are_offered_first_and_alone_and_the_schedule_starts_once_they_arrived() {
    let (app, clusters, _dir, _upstream) = gated_engine(STARTED, "    canary: {clusters: 2}\n").await;
    eventually("the two canaries chosen", Duration::from_secs(30), || async {
        offered(&app, &clusters[0]).await && offered(&app, &clusters[1]).await
    })
    .await;
    for later in &clusters[2..] {
        assert!(
            !offered(&app, later).await,
            "the schedule says 100%, the canaries come first"
        );
    }
    let rollout = explained_rollout(&app, &clusters[2]).await;
    assert_eq!(rollout["gate"]["rule"], "canary", "{rollout}");
    assert!(
        rollout["gate"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("canary: 0 of its 2 canaries have arrived at 4.18.4"),
        "{rollout}"
    );
    assert_eq!(rollout["gate"]["until"], Value::Null, "the fleet decides when");
    let document = rollouts(&app).await;
    assert!(
        document.rollouts[0]
            .gates
            .as_deref()
            .unwrap()
            .starts_with("canary: 0 of its 2"),
        "{:?}",
        document.rollouts[0]
    );

    // One canary arrives (and says so when it next checks): still the two
    // alone.
    check_in(&app, &clusters[0], "4.18.4").await;
    eventually("one canary counted", Duration::from_secs(30), || async {
        rollouts(&app).await.rollouts[0]
            .gates
            .as_deref()
            .is_some_and(|gates| gates.starts_with("canary: 1 of its 2"))
    })
    .await;
    assert!(!offered(&app, &clusters[3]).await);

    // Both: the gate opens, the schedule starts (at 100%).
    check_in(&app, &clusters[1], "4.18.4").await;
    eventually("the gate open", Duration::from_secs(30), || async {
        offered(&app, &clusters[2]).await && offered(&app, &clusters[3]).await
    })
    .await;
    assert_eq!(explained_rollout(&app, &clusters[3]).await["gate"], Value::Null);
    let gate = |action: &str| (action.to_owned(), "gate".to_owned());
    assert_eq!(
        audited_actions(&app).await,
        [gate("canaries"), gate("canaries-arrived")],
        "chosen once, opened once"
    );
}

#[tokio::test]
async fn a_canary_that_does_not_arrive_within_its_timeout_halts_the_rollout() {
    let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
    let fleet = GatedFleet::new(
        STARTED,
        "    canary: {clusters: 1}\n    arrival_timeout_hours: 1\n",
    )
    .await;
    let clusters = &fleet.clusters;
    // Its canary was chosen (by an engine) two hours ago, and is still on
    // 4.18.1.
    fleet
        .store
        .update_gates("4.18.4", now() - 2 * 3600, |_| {
            Some(GateUpdate {
                choose: vec![Canary {
                    cluster: clusters[0].clone(),
                    place: place_percent(&clusters[0]),
                }],
                reason: "canary: 0 of its 1 canaries have arrived at 4.18.4".into(),
                ..GateUpdate::default()
            })
        })
        .await
        .unwrap();
    let app = fleet.engine(&upstream).await;

    eventually(
        "the late canary halts the rollout",
        Duration::from_secs(30),
        || async {
            rollouts(&app).await.rollouts[0]
                .control
                .as_ref()
                .is_some_and(|control| control.state == "paused")
        },
    )
    .await;
    let document = rollouts(&app).await;
    let control = document.rollouts[0].control.as_ref().unwrap();
    assert_eq!(control.by, "canary");
    assert!(
        control
            .reason
            .starts_with("halted: 1 of the 1 canaries have not arrived at 4.18.4 within 1 h of their offer"),
        "{}",
        control.reason
    );
    assert_eq!(document.history.len(), 1, "halted once");
    assert!(offered(&app, &clusters[0]).await, "the canary keeps its offer");
    assert!(!offered(&app, &clusters[1]).await);
}

#[tokio::test]
async fn a_rate_offers_the_target_to_so_many_clusters_a_period() {
    let (app, clusters, _dir, _upstream) = gated_engine(
        // Declared before it starts: the first period counts from 0.
        time::Duration::seconds(15),
        "    max_offered_per_period: {clusters: 2, period_hours: 24}\n",
    )
    .await;
    eventually("the period's two offered", Duration::from_secs(60), || async {
        offered(&app, &clusters[0]).await && offered(&app, &clusters[1]).await
    })
    .await;
    assert!(
        !offered(&app, &clusters[2]).await,
        "the schedule says 100%, the rate two"
    );
    // The gate's words follow at its next check.
    eventually("the rate says so", Duration::from_secs(30), || async {
        explained_rollout(&app, &clusters[2]).await["gate"]["reason"]
            .as_str()
            .is_some_and(|reason| reason.starts_with("max_offered_per_period: 2 of at most 2"))
    })
    .await;
    let rollout = explained_rollout(&app, &clusters[2]).await;
    assert_eq!(rollout["gate"]["rule"], "max_offered_per_period", "{rollout}");
    let reason = rollout["gate"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("max_offered_per_period: 2 of at most 2 clusters offered 4.18.4")
            && reason.ends_with("the rest wait for the next period"),
        "{reason}"
    );
    let until = time::OffsetDateTime::parse(
        rollout["gate"]["until"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    let ahead = until - time::OffsetDateTime::now_utc();
    assert!(
        ahead > time::Duration::hours(23) && ahead <= time::Duration::hours(24),
        "the next period, a day after the first began: {until}"
    );
    assert!(
        audited_actions(&app).await.is_empty(),
        "a rate's steps are not audited"
    );
    let fleet = app
        .status_get("/api/upgrades_info/v1/fleet/rollouts")
        .await
        .json();
    assert!(
        fleet["rollouts"][0]["gates"]
            .as_str()
            .is_some_and(|gates| gates.starts_with("max_offered_per_period: 2 of at most 2")),
        "{fleet}"
    );
}
