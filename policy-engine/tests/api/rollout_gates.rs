//! Rollout gates on a real engine with a SQLite fleet store, the fleet
//! seeded in the store as the engine's recorder would have written it:
//! canaries are chosen among established clusters (never among ids minted
//! for it), offered the target first and alone, and arrive only once they
//! settled on it; a rate offers the target to at most so many distinct
//! clusters a period, whatever the clusters do meanwhile.

use std::time::Duration;

use cincinnati_client::rollout::RolloutView;
use fleet_store::FleetStore;
use fleet_store::changes::Changes;
use rollout_model::time::Timestamp;

use crate::support::app::{TestApp, spawn_ready};
use crate::support::rollouts::{
    clusters_at, control_settings, first, offered, rollout_with, rollouts, round_after, seed,
};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, place_percent, small_graph};

/// A rate of two clusters a day.
const RATE_OF_TWO: &str = "    max_offered_per_period: {clusters: 2, period_hours: 24}\n";

/// A fresh SQLite store and a policy file with a rollout of 4.18.4 at 100%
/// from an hour ago, with `gates`.
struct GatedFleet {
    dir: tempfile::TempDir,
    url: String,
    store: FleetStore,
    upstream: FakeUpstream,
}

impl GatedFleet {
    async fn new(gates: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("fleet.db").display());
        std::fs::write(
            dir.path().join("policy.yaml"),
            rollout_with(1.0, 10.0, &format!("    starting_percentage: 100\n{gates}")),
        )
        .unwrap();
        let store = FleetStore::open(&url, &url).await.unwrap();
        let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
        Self {
            dir,
            url,
            store,
            upstream,
        }
    }

    /// `clusters`, established (seen for three days), on `version` now.
    async fn established(&self, clusters: &[String], version: &str) {
        for cluster in clusters {
            seed(
                &self.store,
                (cluster, place_percent(cluster)),
                &[(version, 72.0)],
                0.0,
            )
            .await;
        }
    }

    /// `clusters`, first seen a minute ago, on `version`.
    async fn minted(&self, clusters: &[String], version: &str) {
        for cluster in clusters {
            seed(
                &self.store,
                (cluster, place_percent(cluster)),
                &[(version, 1.0 / 60.0)],
                0.0,
            )
            .await;
        }
    }

    /// An engine over it, its gates judged and its policy file read every
    /// second.
    async fn engine(&self) -> TestApp {
        let mut settings = control_settings(&self.upstream, self.dir.path(), &self.url);
        settings.rollouts.halt_check_secs = 1;
        settings.cluster_policy.reload_secs = 1;
        spawn_ready(settings).await
    }
}

/// The rollout once `done` says it is (polled).
async fn once(app: &TestApp, what: &str, done: impl Fn(&RolloutView) -> bool) -> RolloutView {
    eventually(what, Duration::from_secs(30), || async {
        done(first(&rollouts(app).await))
    })
    .await;
    first(&rollouts(app).await).clone()
}

#[tokio::test]
async fn canaries_are_established_clusters_never_ids_minted_to_be_first() {
    let fleet = GatedFleet::new("    canary: {clusters: 2}\n").await;
    let real = clusters_at(50.0..100.0, 4);
    // Minted with the lowest places there are: a place is public.
    let minted = clusters_at(0.0..0.5, 6);
    fleet.established(&real, "4.18.1").await;
    fleet.minted(&minted, "4.18.1").await;
    let app = fleet.engine().await;
    let rollout = once(&app, "canaries chosen", |rollout| {
        rollout
            .canaries
            .as_ref()
            .is_some_and(|canaries| canaries.chosen_at.is_some())
    })
    .await;
    let chosen: Vec<&str> = rollout
        .canaries
        .as_ref()
        .unwrap()
        .clusters
        .iter()
        .map(|canary| canary.cluster.as_str())
        .collect();
    assert_eq!(chosen.len(), 2);
    assert!(
        chosen
            .iter()
            .all(|cluster| real.iter().any(|real| real == cluster)),
        "{chosen:?}"
    );
    assert_eq!(rollout.state, "awaiting-canaries");
    assert!(
        rollout
            .said
            .starts_with("awaiting 2 canaries (0 arrived, due by "),
        "{}",
        rollout.said
    );
    for cluster in &real {
        let canary = chosen.contains(&cluster.as_str());
        assert_eq!(
            offered(&app, cluster).await,
            canary,
            "only the canaries are offered"
        );
    }
    for cluster in &minted {
        assert!(
            !offered(&app, cluster).await,
            "a minted id is never offered a gated target"
        );
    }
}

#[tokio::test]
async fn a_canary_arrives_once_it_settled_on_the_target_after_its_offer_and_a_forged_check_is_undone() {
    let fleet = GatedFleet::new("    canary: {clusters: 1}\n").await;
    let real = clusters_at(0.0..100.0, 1);
    fleet.established(&real, "4.18.1").await;
    let app = fleet.engine().await;
    let canary = &real[0];
    once(&app, "the canary chosen", |rollout| {
        rollout
            .canaries
            .as_ref()
            .is_some_and(|canaries| !canaries.clusters.is_empty())
    })
    .await;
    // Someone who knows its id says it runs the target; its own next check
    // says otherwise.
    let forged = jiff::Timestamp::now();
    seed(
        &fleet.store,
        (canary, place_percent(canary)),
        &[("4.18.4", 0.0)],
        0.0,
    )
    .await;
    seed(
        &fleet.store,
        (canary, place_percent(canary)),
        &[("4.18.1", 0.0)],
        0.0,
    )
    .await;
    round_after(&app, "rollout halts", forged).await;
    let after_forgery = first(&rollouts(&app).await).clone();
    assert_eq!(after_forgery.state, "awaiting-canaries");
    assert!(after_forgery.canaries.unwrap().arrived_at.is_none());
    // The canary itself takes the target (a second from now) and is seen on
    // it 15 minutes after (the checks as the recorder writes them, their
    // times the clusters'): arrived; the schedule starts.
    seed(
        &fleet.store,
        (canary, place_percent(canary)),
        &[("4.18.4", -1.0 / 3600.0)],
        -0.25,
    )
    .await;
    let opened = once(&app, "the canary arrived", |rollout| {
        rollout
            .canaries
            .as_ref()
            .is_some_and(|canaries| canaries.arrived_at.is_some())
    })
    .await;
    assert_ne!(opened.state, "awaiting-canaries");
}

#[tokio::test]
async fn a_rate_offers_at_most_its_cap_a_period_whatever_the_clusters_do_meanwhile() {
    let fleet = GatedFleet::new(RATE_OF_TWO).await;
    // Six established clusters on 4.18.3, which has no update to 4.18.4:
    // none can take it when the rate is first judged.
    let clusters = clusters_at(0.0..100.0, 6);
    fleet.established(&clusters, "4.18.3").await;
    let app = fleet.engine().await;
    once(&app, "the rate counted", |rollout| {
        rollout
            .rate
            .as_ref()
            .is_some_and(|rate| rate.period_ends.is_some())
    })
    .await;
    // They move to 4.18.1 (which updates to 4.18.4): two are admitted.
    fleet.established(&clusters, "4.18.1").await;
    let admitted = once(&app, "two admitted", |rollout| {
        rollout.rate.as_ref().is_some_and(|rate| rate.in_period == 2)
    })
    .await;
    let offered_now = offered_of(&app, &clusters).await;
    assert_eq!(offered_now.len(), 2, "{admitted:?}");
    // One of them leaves for 4.18.3 (no longer a taker): its slot is not
    // freed; nobody else is admitted in the period.
    let leaving = &offered_now[0];
    seed(
        &fleet.store,
        (leaving, place_percent(leaving)),
        &[("4.18.3", 0.0)],
        0.0,
    )
    .await;
    round_after(&app, "rollout halts", jiff::Timestamp::now()).await;
    let later = first(&rollouts(&app).await).clone();
    let rate = later.rate.clone().unwrap();
    assert_eq!(
        (rate.in_period, rate.admitted, rate.waiting),
        (2, 2, 4),
        "{:?}",
        later.said
    );
    assert_eq!(offered_of(&app, &clusters).await.len(), 2);
    assert!(
        later
            .said
            .starts_with("2 of at most 2 newly offered in the period until "),
        "{}",
        later.said
    );
}

#[tokio::test]
async fn a_rate_declared_with_its_rollout_offers_nobody_uncounted_at_its_first_judgment() {
    let fleet = GatedFleet::new(RATE_OF_TWO).await;
    // Six established takers, all inside the schedule (100%), and the
    // gates opened by an engine that stopped before their first round.
    let clusters = clusters_at(0.0..100.0, 6);
    fleet.established(&clusters, "4.18.1").await;
    fleet
        .store
        .change_rollout("4.18.4", Timestamp::now, |_| {
            let open = Changes {
                open_gates: true,
                ..Changes::default()
            };
            (open, ())
        })
        .await
        .unwrap();
    let app = fleet.engine().await;
    let counted = once(&app, "the rate counted", |rollout| {
        rollout.rate.as_ref().is_some_and(|rate| rate.admitted >= 2)
    })
    .await;
    let rate = counted.rate.clone().unwrap();
    assert_eq!((rate.in_period, rate.admitted), (2, 2), "{}", counted.said);
    assert_eq!(offered_of(&app, &clusters).await.len(), 2);
}

#[tokio::test]
async fn a_rate_added_to_a_rollout_under_way_keeps_what_it_offered() {
    let fleet = GatedFleet::new("").await;
    let clusters = clusters_at(0.0..100.0, 6);
    fleet.established(&clusters, "4.18.1").await;
    let app = fleet.engine().await;
    assert_eq!(offered_of(&app, &clusters).await.len(), 6);
    std::fs::write(
        fleet.dir.path().join("policy.yaml"),
        rollout_with(1.0, 10.0, &format!("    starting_percentage: 100\n{RATE_OF_TWO}")),
    )
    .unwrap();
    let counted = once(&app, "the rate counted", |rollout| {
        rollout
            .rate
            .as_ref()
            .is_some_and(|rate| rate.period_ends.is_some())
    })
    .await;
    let rate = counted.rate.clone().unwrap();
    assert_eq!((rate.in_period, rate.admitted), (0, 6), "{}", counted.said);
    assert_eq!(offered_of(&app, &clusters).await.len(), 6);
}

/// Which of `clusters` are offered the target.
async fn offered_of(app: &TestApp, clusters: &[String]) -> Vec<String> {
    let mut offered_now = Vec::new();
    for cluster in clusters {
        if offered(app, cluster).await {
            offered_now.push(cluster.clone());
        }
    }
    offered_now
}
