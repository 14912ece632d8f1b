//! The fleet view across the demo's chain, as real processes: two public
//! engines on the graph-builder recording to one PostgreSQL (a real,
//! throw-away server), and an in-cluster engine chained to one of them,
//! recording to a SQLite file, with a policy file whose rollout is half
//! way. Simulated clusters ask with their ids (real HTTP), take the
//! updates the engines offer and ask again; the test counts what each said
//! (`Census`) and every store's fleet answers must equal that count.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use e2e::client_graph::ClientGraph;
use e2e::fleet::{self, Census, FleetAnswers, Recorder, Recording, Reported, place_percent};
use e2e::graph_builder::GraphBuilderOptions;
use e2e::policy_engine::graph_url;
use e2e::poll;
use e2e::process::ServiceProcess;
use e2e::scenario::{ARCHITECTURES, CANDIDATE};
use e2e::stack::Stack;
use postgres_testkit::PostgresServer;

/// The rollout's target: every version of the in-cluster channel has an
/// update to it.
const TARGET: &str = "4.17.1";
/// The in-cluster engine's clusters' channel and versions.
const IN_CLUSTER_CHANNEL: &str = "fast-4.17";
const IN_CLUSTER_VERSIONS: [&str; 3] = ["4.16.1", "4.16.2", "4.17.0"];
/// The rollout: from 50% on 2020-01-01, for 800,000 hours (54% or so now,
/// rising by a ten-thousandth of a percent an hour).
const ROLLOUT_START_UNIX: u64 = 1_577_836_800;
const ROLLOUT_HOURS: f64 = 800_000.0;
const ROLLOUT_STARTING_PERCENTAGE: f64 = 50.0;
/// Clusters of the public engines and of the in-cluster one.
const PUBLIC_CLUSTERS: u32 = 200;
const IN_CLUSTER_CLUSTERS: u32 = 100;

fn public_id(n: u32) -> String {
    format!("{n:08x}-0b1c-4000-8000-00000000000a")
}

fn in_cluster_id(n: u32) -> String {
    format!("{n:08x}-0c1c-4000-8000-00000000000c")
}

/// Where public cluster `n` starts: every architecture, three channels,
/// versions with and without an update.
fn public_start(n: u32) -> Reported {
    const STARTS: [(&str, &str); 5] = [
        ("stable-4.16", "4.16.0"),
        ("stable-4.16", "4.16.1"),
        (CANDIDATE, "4.16.1"),
        (CANDIDATE, "4.17.0"),
        ("fast-4.17", "4.16.2"),
    ];
    let (channel, version) = STARTS[n as usize % STARTS.len()];
    let arch = ARCHITECTURES[(n as usize / STARTS.len()) % ARCHITECTURES.len()];
    Reported::new(channel, arch, version)
}

/// The rollout's progress now, by its documented formula.
fn rollout_progress() -> f64 {
    let elapsed = SystemTime::now()
        .duration_since(UNIX_EPOCH + Duration::from_secs(ROLLOUT_START_UNIX))
        .unwrap();
    let fraction = (elapsed.as_secs_f64() / (ROLLOUT_HOURS * 3600.0)).min(1.0);
    ROLLOUT_STARTING_PERCENTAGE + (100.0 - ROLLOUT_STARTING_PERCENTAGE) * fraction
}

fn policy_file() -> String {
    format!(
        "\
rollouts:
  - target: {TARGET}
    start: 2020-01-01T00:00:00Z
    duration_hours: {ROLLOUT_HOURS}
    starting_percentage: {ROLLOUT_STARTING_PERCENTAGE}
"
    )
}

/// The update a cluster takes: the newest recommended one its answer
/// offers, if any.
fn newest_recommended(graph: &ClientGraph, version: &str) -> Option<String> {
    graph.updates_from(version)?.available.first().cloned()
}

/// Every update an answer offers a cluster on `version`.
fn offered(graph: &ClientGraph, version: &str) -> BTreeSet<String> {
    let updates = graph
        .updates_from(version)
        .unwrap_or_else(|| panic!("{version} is not in the answer"));
    updates
        .available
        .into_iter()
        .chain(updates.conditional.into_iter().map(|(to, _)| to))
        .collect()
}

/// The engines public cluster `n` asks: A or B, and a fifth of them both
/// (a cluster behind a load balancer reaching either replica).
fn public_engines<'a>(n: u32, a: &'a ServiceProcess, b: &'a ServiceProcess) -> Vec<&'a ServiceProcess> {
    let (first, second) = if n.is_multiple_of(2) { (a, b) } else { (b, a) };
    if n.is_multiple_of(5) {
        vec![first, second]
    } else {
        vec![first]
    }
}

/// How many clusters moved to each version: what `adoption` counts.
fn arrivals(moves: &BTreeMap<String, (String, String)>) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for (_, to) in moves.values() {
        *counts.entry(to.clone()).or_default() += 1;
    }
    counts
}

#[tokio::test]
async fn every_store_counts_the_clusters_as_the_test_did_and_rollout_arrivals_grow_as_clusters_move() {
    let stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    stack.await_expected(IN_CLUSTER_CHANNEL, "amd64").await.unwrap();
    let postgres = PostgresServer::start().await.unwrap();
    let shared = Recording::to(postgres.url());
    let upstream = graph_url(&stack.graph_builder);
    let workdir = stack.workdir();
    let engine_a = fleet::start_engine(workdir, "public-a", &upstream, &shared, &[])
        .await
        .unwrap();
    let engine_b = fleet::start_engine(workdir, "public-b", &upstream, &shared, &[])
        .await
        .unwrap();
    let policy = workdir.join("policy.yaml");
    std::fs::write(&policy, policy_file()).unwrap();
    let sqlite = format!("sqlite://{}", workdir.join("fleet.db").display());
    let engine_c = fleet::start_engine(
        workdir,
        "in-cluster",
        &graph_url(&engine_a),
        &Recording::to(sqlite),
        &["--cluster_policy.file", policy.to_str().unwrap()],
    )
    .await
    .unwrap();
    let http = stack.http().clone();
    let (fleet_a, fleet_b, fleet_c) = (
        FleetAnswers::of(&engine_a, &http),
        FleetAnswers::of(&engine_b, &http),
        FleetAnswers::of(&engine_c, &http),
    );

    // The public clusters ask A, B or both with their versions.
    let mut public = Census::default();
    let mut answers = BTreeMap::new();
    for n in 0..PUBLIC_CLUSTERS {
        let (id, reported) = (public_id(n), public_start(n));
        for engine in public_engines(n, &engine_a, &engine_b) {
            let graph = public.check(&http, engine, &id, &reported).await.unwrap();
            answers.insert(n, graph);
        }
    }
    fleet_a.await_written(public.checks(&engine_a)).await.unwrap();
    fleet_b.await_written(public.checks(&engine_b)).await.unwrap();
    assert_eq!(public.len(), PUBLIC_CLUSTERS as usize);
    assert_eq!(
        public.checks(&engine_a) + public.checks(&engine_b),
        u64::from(PUBLIC_CLUSTERS + PUBLIC_CLUSTERS / 5),
        "a fifth asked both"
    );
    let counted = public.versions();
    assert_eq!(fleet_a.counts().await.unwrap(), counted, "A: each cluster once");
    assert_eq!(fleet_b.counts().await.unwrap(), counted, "B shares A's store");

    // A third of them take the newest recommended update their answer
    // offers, and ask again (each of its engines) on it.
    let mut public_moves = BTreeMap::new();
    for n in (0..PUBLIC_CLUSTERS).filter(|n| n.is_multiple_of(3)) {
        let (id, from) = (public_id(n), public_start(n));
        let Some(to) = newest_recommended(&answers[&n], &from.version) else {
            continue;
        };
        for engine in public_engines(n, &engine_a, &engine_b) {
            public.check(&http, engine, &id, &from.on(&to)).await.unwrap();
        }
        public_moves.insert(id, (from.version, to));
    }
    assert!(public_moves.len() > 20, "{public_moves:?}");
    fleet_a.await_written(public.checks(&engine_a)).await.unwrap();
    fleet_b.await_written(public.checks(&engine_b)).await.unwrap();
    let counted = public.versions();
    assert_eq!(fleet_a.counts().await.unwrap(), counted);
    assert_eq!(fleet_b.counts().await.unwrap(), counted);
    for (version, clusters) in arrivals(&public_moves) {
        for fleet in [&fleet_a, &fleet_b] {
            assert_eq!(
                fleet.adoption(&version).await.unwrap().clusters,
                clusters,
                "arrivals at {version}"
            );
        }
    }
    // A cluster that asked both engines on its new version changed once.
    let both = (0..PUBLIC_CLUSTERS)
        .find(|n| n.is_multiple_of(15) && public_moves.contains_key(&public_id(*n)))
        .map(public_id)
        .unwrap();
    for fleet in [&fleet_a, &fleet_b] {
        let history = fleet.cluster(&both).await.unwrap();
        let (from, to) = &public_moves[&both];
        assert_eq!(history.version, *to);
        let changes: Vec<(&str, &str)> = history
            .changes
            .iter()
            .map(|change| (change.from.as_str(), change.to.as_str()))
            .collect();
        assert_eq!(changes, [(from.as_str(), to.as_str())], "{both}");
    }

    // The in-cluster engine's clusters ask C, which offers the rollout's
    // target to those placed below its progress.
    let mut in_cluster = Census::default();
    let first_checks = SystemTime::now();
    let mut rollout_offered = Vec::new();
    let mut next = BTreeMap::new();
    for n in 0..IN_CLUSTER_CLUSTERS {
        let id = in_cluster_id(n);
        let version = IN_CLUSTER_VERSIONS[n as usize % IN_CLUSTER_VERSIONS.len()];
        let reported = Reported::new(IN_CLUSTER_CHANNEL, "amd64", version);
        let graph = in_cluster.check(&http, &engine_c, &id, &reported).await.unwrap();
        let progress = rollout_progress();
        let place = place_percent(&id);
        if offered(&graph, version).contains(TARGET) {
            // The policy file's rollout, as documented (a place on the
            // edge might cross it between two readings of the clock).
            assert!(
                place < progress + 1e-6,
                "{id} at {place} offered {TARGET} at {progress}"
            );
            rollout_offered.push(id.clone());
            next.insert(id, TARGET.to_owned());
        } else {
            assert!(
                place > progress - 1e-6,
                "{id} at {place} not offered {TARGET} at {progress}"
            );
            if let Some(to) = newest_recommended(&graph, version) {
                next.insert(id, to);
            }
        }
    }
    let offered_count = rollout_offered.len() as u64;
    assert!(
        (30..70).contains(&offered_count),
        "about half of the clusters are inside: {rollout_offered:?}"
    );
    fleet_c.await_written(in_cluster.checks(&engine_c)).await.unwrap();
    assert_eq!(fleet_c.counts().await.unwrap(), in_cluster.versions());
    let rollout = assert_rollout(&fleet_c, IN_CLUSTER_CLUSTERS, offered_count, 0).await;
    assert_eq!(rollout.median_hours_to_arrive, None);

    // Two waves of moves: the first half of those offered the target, and
    // those outside taking what they are offered instead; then the rest.
    let (first_wave, second_wave) = rollout_offered.split_at(rollout_offered.len() / 2);
    let outside_movers = next.keys().filter(|id| next[*id] != TARGET).cloned();
    let waves: [Vec<String>; 2] = [
        first_wave.iter().cloned().chain(outside_movers).collect(),
        second_wave.to_vec(),
    ];
    let mut in_cluster_moves = BTreeMap::new();
    let mut arrived = 0;
    for (wave, arriving) in waves.iter().zip([first_wave.len(), second_wave.len()]) {
        for id in wave {
            let from = in_cluster.reported(id).unwrap().clone();
            let to = &next[id];
            in_cluster
                .check(&http, &engine_c, id, &from.on(to))
                .await
                .unwrap();
            in_cluster_moves.insert(id.clone(), (from.version, to.clone()));
        }
        assert!(arriving > 0);
        arrived += arriving as u64;
        assert_eq!(arrivals(&in_cluster_moves).get(TARGET), Some(&arrived));
        fleet_c.await_written(in_cluster.checks(&engine_c)).await.unwrap();
        assert_eq!(fleet_c.counts().await.unwrap(), in_cluster.versions());
        let rollout = assert_rollout(&fleet_c, IN_CLUSTER_CLUSTERS, offered_count, arrived).await;
        // Offered long before the store first saw them: timed from their
        // first check, which is less than the test's time ago.
        let since_first_checks = first_checks.elapsed().unwrap().as_secs_f64().ceil() + 1.0;
        assert!(
            rollout
                .median_hours_to_arrive
                .is_some_and(|hours| (0.0..=since_first_checks / 3600.0).contains(&hours)),
            "{rollout:?}, the first checks {since_first_checks} s ago"
        );
        for (version, clusters) in arrivals(&in_cluster_moves) {
            assert_eq!(
                fleet_c.adoption(&version).await.unwrap().clusters,
                clusters,
                "{version}"
            );
        }
    }
    assert_eq!(arrived, offered_count, "everyone offered the target took it");
    let mover = &rollout_offered[0];
    let history = fleet_c.cluster(mover).await.unwrap();
    let (from, _) = &in_cluster_moves[mover];
    assert_eq!(history.version, TARGET);
    assert_eq!(history.changes.len(), 1, "{history:?}");
    assert_eq!(
        (history.changes[0].from.as_str(), history.changes[0].to.as_str()),
        (from.as_str(), TARGET)
    );
    assert_eq!(
        fleet_c
            .metric(&format!(
                "cincinnati_pe_fleet_rollout_arrived{{target=\"{TARGET}\"}}"
            ))
            .await
            .unwrap(),
        arrived as f64
    );
    assert_eq!(
        fleet_c
            .metric(&format!(
                "cincinnati_pe_fleet_rollout_offered{{target=\"{TARGET}\"}}"
            ))
            .await
            .unwrap(),
        offered_count as f64
    );

    // Neither store saw the other's clusters: C asks A without ids.
    assert_eq!(fleet_a.counts().await.unwrap(), public.versions());
    assert_eq!(
        fleet_a.status_of(&format!("clusters/{mover}")).await.unwrap(),
        404
    );
    let status_c = fleet_c.status().await.unwrap();
    assert_eq!(status_c["open"], true);
    assert!(
        status_c["store"].as_str().unwrap().starts_with("sqlite://"),
        "{status_c}"
    );
    for (answers, engine, census) in [
        (&fleet_a, &engine_a, &public),
        (&fleet_b, &engine_b, &public),
        (&fleet_c, &engine_c, &in_cluster),
    ] {
        let checks = census.checks(engine) as f64;
        assert_eq!(
            answers
                .metric("cincinnati_pe_fleet_checks_written_total")
                .await
                .unwrap(),
            checks
        );
        assert_eq!(
            answers
                .metric("cincinnati_pe_fleet_checks_total{outcome=\"queued\"}")
                .await
                .unwrap(),
            checks
        );
        assert_eq!(
            answers
                .metric("cincinnati_pe_fleet_checks_total{outcome=\"dropped\"}")
                .await
                .unwrap(),
            0.0
        );
        assert_eq!(
            answers
                .metric("cincinnati_pe_fleet_store_errors_total")
                .await
                .unwrap(),
            0.0,
            "{}",
            engine.name()
        );
    }
    println!(
        "fleet: {PUBLIC_CLUSTERS} public clusters ({} checks to A, {} to B), {} took an update; \
         {IN_CLUSTER_CLUSTERS} in-cluster clusters, {offered_count} offered {TARGET}, arrived {} then {arrived}",
        public.checks(&engine_a),
        public.checks(&engine_b),
        public_moves.len(),
        first_wave.len(),
    );
}

/// Checks the one rollout's figures on `answers`, and returns it.
async fn assert_rollout(
    answers: &FleetAnswers<'_>,
    in_scope: u32,
    offered: u64,
    arrived: u64,
) -> cincinnati_client::fleet::RolloutFleet {
    let rollouts = answers.rollouts().await.unwrap();
    assert_eq!(rollouts.rollouts.len(), 1, "{rollouts:?}");
    let rollout = rollouts.rollouts[0].clone();
    assert_eq!(rollout.rollout.target, TARGET);
    assert!(
        (rollout.rollout.progress - rollout_progress()).abs() < 0.01,
        "{rollout:?}"
    );
    assert_eq!(
        (
            rollout.in_scope,
            rollout.offered,
            rollout.arrived,
            rollout.silent_after_arriving
        ),
        (u64::from(in_scope), offered, arrived, 0),
        "in scope, offered, arrived, silent: {rollout:?}"
    );
    rollout
}

/// Public clusters before the outage; clusters joining during it.
const BEFORE_OUTAGE: u32 = 60;
const JOINING: u32 = 30;
/// Clusters asking the small-queue engine during the outage, each once, on
/// a channel no other cluster reports; and its queue's bounds.
const BURST: u32 = 100;
const SMALL_QUEUE_CAPACITY: usize = 20;
const SMALL_BATCH_SIZE: usize = 10;

fn burst_id(n: u32) -> String {
    format!("{n:08x}-0d1c-4000-8000-00000000000d")
}

/// Waits until `answers`' recorder shows the outage: stale, with an error,
/// holding `held` checks (queued or to retry), and returns it.
async fn await_outage(answers: &FleetAnswers<'_>, held: u64) -> Recorder {
    let (recorder, _) = poll::until("the outage in /status", poll::CHANGE_TIMEOUT, || async {
        let recorder = answers.recorder().await?;
        anyhow::ensure!(
            recorder.stale && recorder.last_error.is_some() && recorder.queued + recorder.retrying == held,
            "{recorder:?}"
        );
        Ok(recorder)
    })
    .await
    .unwrap();
    recorder
}

#[tokio::test]
async fn a_store_killed_mid_run_loses_no_request_and_no_more_checks_than_the_queue_could_not_hold() {
    let stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    stack.await_expected(CANDIDATE, "amd64").await.unwrap();
    let mut postgres = PostgresServer::start().await.unwrap();
    let shared = Recording::to(postgres.url());
    let upstream = graph_url(&stack.graph_builder);
    let workdir = stack.workdir();
    let engine_a = fleet::start_engine(workdir, "public-a", &upstream, &shared, &[])
        .await
        .unwrap();
    let engine_b = fleet::start_engine(workdir, "public-b", &upstream, &shared, &[])
        .await
        .unwrap();
    let small = shared.clone().bounded(SMALL_QUEUE_CAPACITY, SMALL_BATCH_SIZE);
    let engine_s = fleet::start_engine(workdir, "small-queue", &upstream, &small, &[])
        .await
        .unwrap();
    let http = stack.http().clone();
    let (fleet_a, fleet_b, fleet_s) = (
        FleetAnswers::of(&engine_a, &http),
        FleetAnswers::of(&engine_b, &http),
        FleetAnswers::of(&engine_s, &http),
    );

    let mut public = Census::default();
    let mut answers = BTreeMap::new();
    for n in 0..BEFORE_OUTAGE {
        let (id, reported) = (public_id(n), public_start(n));
        for engine in public_engines(n, &engine_a, &engine_b) {
            answers.insert(n, public.check(&http, engine, &id, &reported).await.unwrap());
        }
    }
    fleet_a.await_written(public.checks(&engine_a)).await.unwrap();
    fleet_b.await_written(public.checks(&engine_b)).await.unwrap();
    assert_eq!(fleet_a.counts().await.unwrap(), public.versions());
    let written_before = (public.checks(&engine_a), public.checks(&engine_b));

    // The store goes away. Every cluster asks again; a third of those
    // asking one engine take an update and ask on it; new clusters join;
    // the small-queue engine gets a burst. Every request is answered.
    postgres.kill().unwrap();
    let mut moves = BTreeMap::new();
    for n in 0..BEFORE_OUTAGE {
        let (id, from) = (public_id(n), public_start(n));
        let engines = public_engines(n, &engine_a, &engine_b);
        for engine in &engines {
            public.check(&http, engine, &id, &from).await.unwrap();
        }
        // Only clusters asking one engine move here: a cluster whose check
        // on its old version one engine holds and whose check on its new
        // version, made in the same second, the other holds is stored on
        // whichever is written last (checks are kept to the second; see
        // docs/e2e.md).
        if let ([engine], true) = (engines.as_slice(), n.is_multiple_of(3))
            && let Some(to) = newest_recommended(&answers[&n], &from.version)
        {
            public.check(&http, engine, &id, &from.on(&to)).await.unwrap();
            moves.insert(id, (from.version, to));
        }
    }
    for n in BEFORE_OUTAGE..BEFORE_OUTAGE + JOINING {
        let (id, reported) = (public_id(n), public_start(n));
        for engine in public_engines(n, &engine_a, &engine_b) {
            public.check(&http, engine, &id, &reported).await.unwrap();
        }
    }
    let mut burst = Census::default();
    let burst_cluster = Reported::new("eus-4.16", "amd64", "4.16.0");
    // eus-4.16 lists nothing upstream: its channel and architecture are
    // stored as `other`, as any the upstream does not serve.
    let burst_stored = Reported::new("other", "other", "4.16.0");
    for n in 0..BURST {
        burst
            .check(&http, &engine_s, &burst_id(n), &burst_cluster)
            .await
            .unwrap();
    }
    let held_a = public.checks(&engine_a) - written_before.0;
    let held_b = public.checks(&engine_b) - written_before.1;
    assert!(moves.len() >= 5, "{moves:?}");

    // The outage shows, the questions fail, nothing held is lost by A and
    // B; the small queue drops what it cannot hold.
    let (versions_status, outage_a, outage_b, outage_s) = tokio::join!(
        fleet_a.status_of("versions"),
        await_outage(&fleet_a, held_a),
        await_outage(&fleet_b, held_b),
        async {
            let (recorder, _) = poll::until("the small queue's outage", poll::CHANGE_TIMEOUT, || async {
                let recorder = fleet_s.recorder().await?;
                anyhow::ensure!(
                    recorder.stale
                        && recorder.queued + recorder.retrying + recorder.dropped == u64::from(BURST),
                    "{recorder:?}"
                );
                Ok(recorder)
            })
            .await
            .unwrap();
            recorder
        }
    );
    assert_eq!(versions_status.unwrap(), 503, "the store cannot answer");
    assert_eq!((outage_a.dropped, outage_b.dropped), (0, 0));
    assert_eq!(outage_s.queue_capacity, SMALL_QUEUE_CAPACITY as u64);
    assert!(outage_s.dropped > 0, "{outage_s:?}");

    postgres.restart().await.unwrap();
    let after_a = fleet_a.await_written(public.checks(&engine_a)).await.unwrap();
    let after_b = fleet_b.await_written(public.checks(&engine_b)).await.unwrap();
    let dropped = fleet_s.recorder().await.unwrap().dropped;
    let after_s = fleet_s.await_written(u64::from(BURST) - dropped).await.unwrap();
    for recorder in [&after_a, &after_b, &after_s] {
        assert!(!recorder.stale && recorder.last_error.is_none(), "{recorder:?}");
    }

    // Every check A and B answered is in the store; of the burst, exactly
    // what the small queue dropped is missing, and no more than it could
    // not hold.
    let mut counts = fleet_a.counts().await.unwrap();
    let stored_burst = counts.remove(&burst_stored).unwrap_or_default();
    assert_eq!(counts, public.versions(), "every cluster as it last reported");
    assert_eq!(
        fleet_b.counts().await.unwrap().remove(&burst_stored),
        Some(stored_burst)
    );
    let lost = u64::from(BURST) - stored_burst;
    assert_eq!(lost, dropped, "lost: {lost}, dropped: {dropped}");
    assert_eq!(
        fleet_s
            .metric("cincinnati_pe_fleet_checks_total{outcome=\"dropped\"}")
            .await
            .unwrap(),
        lost as f64
    );
    assert!(
        (SMALL_QUEUE_CAPACITY as u64..=(SMALL_QUEUE_CAPACITY + SMALL_BATCH_SIZE) as u64)
            .contains(&stored_burst),
        "held {stored_burst}: the queue, and at most one batch kept to retry"
    );
    for (id, (from, to)) in &moves {
        let history = fleet_a.cluster(id).await.unwrap();
        let changes: Vec<(&str, &str)> = history
            .changes
            .iter()
            .map(|change| (change.from.as_str(), change.to.as_str()))
            .collect();
        assert_eq!(
            (history.version.as_str(), changes),
            (to.as_str(), vec![(from.as_str(), to.as_str())]),
            "{id}"
        );
    }
    for (answers, engine, sent, written) in [
        (
            &fleet_a,
            &engine_a,
            public.checks(&engine_a),
            public.checks(&engine_a),
        ),
        (
            &fleet_b,
            &engine_b,
            public.checks(&engine_b),
            public.checks(&engine_b),
        ),
        (&fleet_s, &engine_s, burst.checks(&engine_s), stored_burst),
    ] {
        assert_eq!(
            answers
                .metric("cincinnati_pe_fleet_checks_total{outcome=\"queued\"}")
                .await
                .unwrap(),
            written as f64,
            "{}: {sent} sent",
            engine.name()
        );
        assert_eq!(
            answers
                .metric("cincinnati_pe_fleet_checks_written_total")
                .await
                .unwrap(),
            written as f64
        );
        assert!(
            answers
                .metric("cincinnati_pe_fleet_store_errors_total")
                .await
                .unwrap()
                >= 1.0,
            "{}",
            engine.name()
        );
        assert_eq!(
            answers.metric("cincinnati_pe_fleet_queue_depth").await.unwrap(),
            0.0
        );
    }
    println!(
        "fleet outage: {} checks answered while the store was down ({held_a} by A, {held_b} by B, \
         {BURST} by the small queue), {} moves; the small queue held {stored_burst} and dropped {dropped}",
        held_a + held_b + u64::from(BURST),
        moves.len()
    );
}
