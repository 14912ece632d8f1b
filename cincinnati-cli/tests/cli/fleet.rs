//! `cincinnati fleet` against a real policy-engine (a process, as the other
//! engine-asking commands are tested) recording the update checks of
//! simulated clusters — real graph requests with ids — to a real fleet
//! store, a SQLite file; the answer when the engine has no fleet store; and
//! each question's table and JSON for fixed documents, against files in
//! `tests/golden/` (`CINCINNATI_BLESS=1` rewrites the tables).

use std::path::Path;

use cincinnati_client::fleet::{FleetAdoption, FleetCluster, FleetRollouts, FleetStuck, FleetVersions};
use e2e::process::ServiceProcess;
use e2e::static_server::StaticServer;
use serde::de::DeserializeOwned;

use crate::support::golden::{GoldenFiles, golden};
use crate::support::{PREFIX, Run, cincinnati, small_graph};

/// The `n`th simulated cluster's id.
fn cluster(n: u32) -> String {
    format!("{n:08x}-0c1d-4e2f-8a3b-4c5d6e7f8091")
}

/// An engine on `upstream` with `flags`, its files in `dir`.
async fn engine(dir: &Path, upstream: &StaticServer, flags: &[&str]) -> ServiceProcess {
    crate::support::engine(dir, "fleet", upstream, flags).await
}

/// The engine's fleet answers, as `--fleet-url` names them.
fn fleet_url(engine: &ServiceProcess) -> String {
    engine.status_url(&format!("{PREFIX}/v1/fleet"))
}

/// Asks `engine` as cluster `id` on `version` asks, and expects an answer.
async fn check(engine: &ServiceProcess, id: &str, version: &str) {
    let url = format!(
        "{}?channel=stable-4.18&arch=amd64&id={id}&version={version}",
        e2e::policy_engine::graph_url(engine)
    );
    let answer = reqwest::get(&url).await.unwrap();
    assert_eq!(answer.status(), 200, "{url}");
}

/// Waits until the engine has written `checks` update checks to its store.
async fn written(engine: &ServiceProcess, checks: u64) {
    engine
        .await_status(&format!("{checks} checks written"), |status| {
            status["fleet"]["recorder"]["written"] == checks
        })
        .await
        .expect("the checks are written");
}

/// `cincinnati --url <engine> fleet --fleet-url <its fleet> <question>`.
fn fleet(engine: &ServiceProcess, question: &[&str]) -> Run {
    let graph_url = e2e::policy_engine::graph_url(engine);
    let fleet_url = fleet_url(engine);
    let args = [
        &["--url", &graph_url, "fleet", "--fleet-url", &fleet_url],
        question,
    ]
    .concat();
    cincinnati(&args)
}

/// `fleet` with `-o json`, read back as the document it prints.
fn fleet_json<D: DeserializeOwned>(engine: &ServiceProcess, question: &[&str]) -> D {
    let run = fleet(engine, &[question, &["-o", "json"]].concat());
    assert_eq!(run.code, 0, "{question:?}: {run:?}");
    serde_json::from_str(&run.stdout).unwrap_or_else(|error| panic!("{error}: {run:?}"))
}

/// The engine's own answer at `route`, as JSON, without its time.
async fn answered(engine: &ServiceProcess, route: &str) -> serde_json::Value {
    let url = format!("{}/{route}", fleet_url(engine));
    let mut document: serde_json::Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    for time in ["generatedAt", "countedAt"] {
        document.as_object_mut().unwrap().remove(time);
    }
    document
}

/// Printed JSON, without its time.
fn timeless(text: &str) -> serde_json::Value {
    let mut document: serde_json::Value = serde_json::from_str(text).unwrap();
    for time in ["generatedAt", "countedAt"] {
        document.as_object_mut().unwrap().remove(time);
    }
    document
}

/// Fifty clusters ask a real engine recording to SQLite; ten of them take
/// the update a finished rollout offers. Every question's answer counts
/// them, as tables and as the engine's documents.
#[tokio::test]
async fn fleet_prints_what_a_real_engine_recorded_of_the_clusters_asking_it() {
    let upstream = StaticServer::start(small_graph(), "application/json").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    // A rollout of 4.18.4 over and done with: every cluster is offered it.
    std::fs::write(
        &policy,
        "rollouts:\n  - {target: 4.18.4, start: \"2000-01-01T00:00:00Z\", duration_hours: 1}\n",
    )
    .unwrap();
    let store = format!("sqlite://{}", dir.path().join("fleet.db").display());
    let engine = engine(
        dir.path(),
        &upstream,
        &[
            "--fleet.store",
            &store,
            "--fleet.flush_interval_ms",
            "20",
            "--fleet.count_interval_secs",
            "0",
            "--cluster_policy.file",
            policy.to_str().unwrap(),
        ],
    )
    .await;

    // 40 clusters on 4.18.1, 10 on 4.18.2.
    for n in 0..50 {
        check(&engine, &cluster(n), if n < 40 { "4.18.1" } else { "4.18.2" }).await;
    }
    written(&engine, 50).await;

    let versions = fleet(&engine, &["versions"]);
    assert_eq!(versions.code, 0, "{versions:?}");
    assert_eq!(
        versions.stdout,
        "\
50 clusters active in the last 24 hours (every channel, every architecture), on 2 versions

  CHANNEL      ARCH   VERSION  CLUSTERS   SHARE
  stable-4.18  amd64  4.18.1         40   80.0%
  stable-4.18  amd64  4.18.2         10   20.0%
  total                              50  100.0%
"
    );
    // The document as the engine answered it, in JSON and YAML.
    let json = fleet(&engine, &["versions", "-o", "json"]);
    assert_eq!(json.code, 0, "{json:?}");
    assert_eq!(timeless(&json.stdout), answered(&engine, "versions").await);
    let document: FleetVersions = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        (document.header.kind.as_str(), document.header.schema_version),
        ("FleetVersions", 1)
    );
    let yaml = fleet(&engine, &["versions", "-o", "yaml"]);
    assert_eq!(yaml.code, 0, "{yaml:?}");
    let mut from_yaml: FleetVersions = serde_saphyr::from_str(&yaml.stdout).unwrap();
    from_yaml
        .header
        .generated_at
        .clone_from(&document.header.generated_at);
    from_yaml.counted_at.clone_from(&document.counted_at);
    assert_eq!(from_yaml, document, "asked again");

    // Filters, --arch among them only when given.
    let scoped: FleetVersions = fleet_json(
        &engine,
        &[
            "versions",
            "--channel",
            "stable-4.18",
            "--arch",
            "amd64",
            "--active-hours",
            "1",
        ],
    );
    assert_eq!(
        (
            scoped.clusters,
            scoped.channel.as_deref(),
            scoped.arch.as_deref(),
            scoped.active_hours
        ),
        (50, Some("stable-4.18"), Some("amd64"), 1)
    );
    let other_arch = fleet(&engine, &["versions", "--arch", "arm64"]);
    assert_eq!(
        (other_arch.code, other_arch.stdout.as_str()),
        (
            0,
            "No cluster active in the last 24 hours (every channel, arm64).\n"
        )
    );
    let other_channel: FleetVersions = fleet_json(&engine, &["versions", "--channel", "fast-4.18"]);
    assert_eq!(other_channel.clusters, 0);

    // The first ten take 4.18.4.
    for n in 0..10 {
        check(&engine, &cluster(n), "4.18.4").await;
    }
    written(&engine, 60).await;
    let versions: FleetVersions = fleet_json(&engine, &["versions"]);
    let counts: Vec<(&str, u64)> = versions
        .versions
        .iter()
        .map(|group| (group.version.as_str(), group.clusters))
        .collect();
    assert_eq!(counts, [("4.18.1", 30), ("4.18.2", 10), ("4.18.4", 10)]);

    let adoption = fleet(&engine, &["adoption", "--version", "4.18.4"]);
    assert_eq!(adoption.code, 0, "{adoption:?}");
    assert!(
        adoption
            .stdout
            .starts_with("10 clusters arrived at 4.18.4 in the last 168 hours\n"),
        "{}",
        adoption.stdout
    );
    assert!(adoption.stdout.contains("  ██████████\n"), "{}", adoption.stdout);
    let adoption: FleetAdoption = fleet_json(&engine, &["adoption", "--version", "4.18.4", "--hours", "2"]);
    assert_eq!((adoption.clusters, adoption.hours), (10, 2));

    let rollouts: FleetRollouts = fleet_json(&engine, &["rollouts"]);
    let rollout = &rollouts.rollouts[0];
    assert_eq!(
        (
            rollout.rollout.target.as_str(),
            rollout.rollout.progress,
            rollout.in_scope,
            rollout.offered,
            rollout.arrived,
            rollout.silent_after_arriving
        ),
        ("4.18.4", 100.0, 50, 50, 10, 0)
    );
    let table = fleet(&engine, &["rollouts"]);
    let rows = |after: &str| {
        let row = table
            .stdout
            .lines()
            .skip_while(|line| !line.starts_with(after))
            .find(|line| line.starts_with("  4.18.4"));
        row.unwrap_or_default().split_whitespace().collect::<Vec<_>>()
    };
    assert_eq!(
        rows("Rollouts").get(..5),
        Some(&["4.18.4", "line", "2", "100.0%", "100.0%"][..]),
        "{}",
        table.stdout
    );
    assert_eq!(
        rows("Their clusters").get(..5),
        Some(&["4.18.4", "50", "50", "10", "(20.0%)"][..]),
        "{}",
        table.stdout
    );

    // 4.18.4 leads nowhere; nobody has waited for 14 days.
    let stuck: FleetStuck = fleet_json(&engine, &["stuck", "--channel", "stable-4.18"]);
    let nowhere: Vec<(&str, u64, &str)> = stuck
        .no_update
        .iter()
        .map(|group| {
            (
                group.group.version.as_str(),
                group.group.clusters,
                group.reason.as_str(),
            )
        })
        .collect();
    assert_eq!(nowhere, [("4.18.4", 10, "no recommended update")]);
    assert!(stuck.not_moving.is_empty());
    let table = fleet(&engine, &["stuck"]);
    assert!(
        table
            .stdout
            .contains("  stable-4.18  amd64  4.18.4         10  no recommended update\n"),
        "{}",
        table.stdout
    );

    let mover = cluster(3);
    let history: FleetCluster = fleet_json(&engine, &["cluster", &mover]);
    let changes: Vec<(&str, &str)> = history
        .changes
        .iter()
        .map(|change| (change.from.as_str(), change.to.as_str()))
        .collect();
    assert_eq!(
        (history.version.as_str(), changes),
        ("4.18.4", vec![("4.18.1", "4.18.4")])
    );
    let table = fleet(&engine, &["cluster", &mover]);
    assert!(
        table
            .stdout
            .starts_with(&format!("Cluster {mover}: 4.18.4 on stable-4.18 (amd64)\n")),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains("\n  4.18.1  4.18.4  "), "{}", table.stdout);

    // A cluster the engine never heard from: the answer is no.
    let stranger = fleet(&engine, &["cluster", &cluster(999)]);
    assert_eq!(
        (stranger.code, stranger.stderr),
        (
            1,
            format!(
                "cincinnati: cluster {}: does not exist: no update check of this cluster is stored\n",
                cluster(999)
            )
        )
    );
    // What the engine refuses, it says why.
    let not_an_id = fleet(&engine, &["cluster", "nobody"]);
    assert_eq!(not_an_id.code, 3, "{not_an_id:?}");
    assert!(
        not_an_id.stderr.contains("answered 400: invalid_params:"),
        "{}",
        not_an_id.stderr
    );
}

/// An engine without `fleet.store` has no fleet routes: the answer says to
/// set it, for every question (an unknown cluster included: it is the
/// route that is missing).
#[tokio::test]
async fn an_engine_without_a_fleet_store_is_told_apart_and_named() {
    let upstream = StaticServer::start(small_graph(), "application/json").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), &upstream, &[]).await;
    let versions = fleet(&engine, &["versions"]);
    assert!(
        versions.stderr.contains(&format!(
            "/v1/fleet/versions answered 404 (does_not_exist: does not exist: path {PREFIX}/v1/fleet/versions): \
             no fleet view there. "
        )),
        "{}",
        versions.stderr
    );
    for question in [
        &["versions"][..],
        &["rollouts"],
        &["adoption", "--version", "4.18.1"],
        &["cluster", &cluster(1)],
    ] {
        fleet(&engine, question).assert_failed_saying(
            3,
            &[
                "answered 404",
                "no fleet view there",
                "set fleet.store in its settings",
            ],
        );
    }
}

/// The commands asking an engine's status port find it from --url or
/// their flag, not from a saved graph.
#[test]
fn fleet_and_rollout_ask_an_engine_not_a_saved_graph() {
    let work = tempfile::tempdir().unwrap();
    let graph = work.path().join("graph.json");
    std::fs::write(&graph, small_graph()).unwrap();
    for (command, flag) in [
        (["fleet", "versions"], "--fleet-url"),
        (["rollout", "list"], "--rollouts-url"),
    ] {
        let run = cincinnati(&[&["--graph", graph.to_str().unwrap()][..], &command].concat());
        assert_eq!(run.code, 2, "{run:?}");
        assert_eq!(
            run.stderr,
            format!(
                "cincinnati: {} asks a policy-engine's status port: give --url (the engine's graph URL) \
                 or {flag}\n",
                command[0]
            )
        );
        let run = cincinnati(&[command[0], flag, "engine:9081", command[1]]);
        run.assert_failed_saying(
            2,
            &[&format!(
                "{flag} \"engine:9081\" is not an http:// or https:// URL"
            )],
        );
    }
}

/// A document of another kind is refused; one with fields this client does
/// not know is read, and printed with those it knows.
#[test]
fn another_kind_is_refused_and_unknown_fields_are_read() {
    let stuck = golden("fleet-stuck.json");
    let server = StaticServer::start(stuck.clone().into_bytes(), "application/json").unwrap();
    let fleet_url = format!("{}{PREFIX}/v1/fleet", server.url());
    let run = cincinnati(&["fleet", "--fleet-url", &fleet_url, "versions"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr
            .contains("versions answered a \"FleetStuck\" document, not FleetVersions"),
        "{}",
        run.stderr
    );

    let mut newer: serde_json::Value = serde_json::from_str(&stuck).unwrap();
    newer["fieldOfANewerEngine"] = serde_json::json!({"x": 1});
    newer["notMoving"][0]["medianDaysOnIt"] = serde_json::json!(31.5);
    let server = StaticServer::start(serde_json::to_vec(&newer).unwrap(), "application/json").unwrap();
    let fleet_url = format!("{}{PREFIX}/v1/fleet", server.url());
    let run = cincinnati(&["-o", "json", "fleet", "--fleet-url", &fleet_url, "stuck"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, stuck, "the fields known, as received");
}

/// Each question's table and JSON for a fixed document (the engine's
/// answer, served as it is): the JSON printed is the document received.
#[test]
fn every_fleet_question_prints_what_the_golden_files_hold() {
    let cases: [(&[&str], &str); 5] = [
        (&["versions"], "fleet-versions"),
        (&["adoption", "--version", "4.18.52"], "fleet-adoption"),
        (&["rollouts"], "fleet-rollouts"),
        (&["stuck"], "fleet-stuck"),
        (
            &["cluster", "c0ffee00-0000-4a11-8b22-0123456789ab"],
            "fleet-cluster",
        ),
    ];
    let mut golden_files = GoldenFiles::default();
    for (question, name) in cases {
        let document = golden(&format!("{name}.json"));
        let server = StaticServer::start(document.clone().into_bytes(), "application/json").unwrap();
        let fleet_url = format!("{}{PREFIX}/v1/fleet", server.url());
        let ask = |extra: &[&str]| {
            let run = cincinnati(&[&["fleet", "--fleet-url", &fleet_url], question, extra].concat());
            assert_eq!(run.code, 0, "{question:?}: {run:?}");
            run.stdout
        };
        assert_eq!(
            ask(&["-o", "json"]),
            document,
            "{question:?}: the document as received"
        );
        golden_files.check(&format!("{name}.txt"), &ask(&[]));
    }
    golden_files.assert_same();
}
