//! The client against real services, started as processes with the e2e
//! harness: the demo data behind a graph-builder and two chained
//! policy-engines. Whatever it reads from — a saved full graph, the
//! graph-builder, or an engine asked one channel at a time — it gives the
//! same answers.

use e2e::offline::OfflineStack;
use e2e::static_server::StaticServer;
use release_set_generator::{demo_graph, demo_releases, testdata_graph_data};

use crate::support::{cincinnati, demo_graph_file};

async fn demo_stack() -> OfflineStack {
    OfflineStack::start(&demo_releases(), &testdata_graph_data())
        .await
        .expect("the demo stack starts")
}

#[tokio::test]
async fn the_demo_graph_builder_serves_the_graph_the_other_tests_read_and_diff_and_preview_agree() {
    let stack = demo_stack().await;
    let served = reqwest::get(stack.full_graph_url())
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let served = cincinnati_core::wire::parse(&served).unwrap().graph;
    assert!(
        served == demo_graph().unwrap(),
        "the demo graph-builder serves another graph"
    );

    // The same graph, compared from a URL, a channel's answer, and rebuilt
    // from the releases and the graph-data the graph-builder serves.
    let demo = demo_graph_file();
    let demo = demo.to_str().unwrap();
    let (full_graph, engine) = (stack.full_graph_url(), stack.engines.graph_url());
    let releases = demo_releases().display().to_string();
    let graph_data = testdata_graph_data().display().to_string();
    for args in [
        vec!["diff", &full_graph, demo],
        vec!["diff", "--channel", "stable-4.18", &engine, demo],
        vec![
            "--url",
            &full_graph,
            "graph-data",
            "preview",
            &graph_data,
            "--releases",
            &releases,
        ],
    ] {
        let run = cincinnati(&args);
        // Preview follows with the warnings of applying the graph-data.
        let first_line = run.stdout.lines().next();
        assert_eq!(
            (run.code, first_line),
            (0, Some("No differences.")),
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[tokio::test]
async fn every_source_gives_the_same_answers() {
    let stack = demo_stack().await;
    let demo = demo_graph_file();
    let sources = [
        vec!["--graph".to_owned(), demo.display().to_string()],
        vec!["--url".to_owned(), stack.full_graph_url()],
        vec!["--url".to_owned(), stack.engines.graph_url()],
    ];
    let graph_data = testdata_graph_data().display().to_string();
    let questions: [&[&str]; 8] = [
        &[
            "updates",
            "--channel",
            "stable-4.18",
            "--version",
            "4.18.20",
            "--include-not-recommended",
        ],
        &[
            "path", "--from", "4.16.40", "--to", "4.18.40", "--tier", "fast", "--all", "--limit", "5",
        ],
        &["path", "--from", "4.14.60", "--to", "4.16.50", "--tier", "eus"],
        // Only in fast and candidate: the other tiers' plans.
        &["path", "--from", "4.18.40", "--to", "4.18.53"],
        // A runbook, each hop's release image from the engine's answers.
        &["path", "--from", "4.14.30", "--to", "4.16.68", "--tier", "eus"],
        &[
            "explain",
            "--channel",
            "stable-4.16",
            "--from",
            "4.16.30",
            "--to",
            "4.16.32",
            "--graph-data",
            &graph_data,
        ],
        &[
            "explain",
            "--channel",
            "stable-4.17",
            "--from",
            "4.16.30",
            "--to",
            "4.18.30",
        ],
        &["render", "--channel", "stable-4.18"],
    ];
    for question in questions {
        let answers: Vec<_> = sources
            .iter()
            .map(|source| {
                let question: Vec<String> = question.iter().map(|arg| (*arg).to_owned()).collect();
                let run = cincinnati(&[&source[..], &["-o".into(), "json".into()], &question].concat());
                (run.code, run.stdout)
            })
            .collect();
        assert!(answers[0].0 < 2, "{question:?}: exit {}", answers[0].0);
        assert_eq!(answers[1], answers[0], "{question:?} from the graph-builder");
        assert_eq!(
            answers[2], answers[0],
            "{question:?} from the engine, channel by channel"
        );
    }
}

#[tokio::test]
async fn an_engine_answering_one_channel_at_a_time_lists_every_channel_and_a_versions() {
    let stack = demo_stack().await;
    let names = |args: &[&str]| -> Vec<String> {
        let run = cincinnati(&[args, &["-o", "json", "channels", "--version", "4.16.30"]].concat());
        assert_eq!(run.code, 0, "{run:?}");
        let document = run.json();
        let channels = document["channels"].as_array().unwrap();
        channels
            .iter()
            .map(|channel| channel["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let demo = demo_graph_file();
    let expected = names(&["--graph", demo.to_str().unwrap()]);
    assert!(expected.contains(&"eus-4.18".to_owned()), "{expected:?}");
    assert_eq!(names(&["--url", &stack.engines.graph_url()]), expected);

    // Every channel: the engine lists those it serves beside its graph.
    let every_channel = |args: &[&str]| {
        let run = cincinnati(&[args, &["-o", "json", "channels"]].concat());
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        run.stdout
    };
    let saved = every_channel(&["--graph", demo.to_str().unwrap()]);
    assert_eq!(every_channel(&["--url", &stack.engines.graph_url()]), saved);
    assert_eq!(every_channel(&["--url", &stack.full_graph_url()]), saved);
}

#[tokio::test]
async fn explain_names_the_blocked_edges_file_from_the_graph_builders_graph_data() {
    let stack = demo_stack().await;
    let run = cincinnati(&[
        "--url",
        &stack.engines.graph_url(),
        "explain",
        "--channel",
        "stable-4.9",
        "--from",
        "4.9.37",
        "--to",
        "4.9.38",
        "--graph-data",
        &stack.graph_data_url(),
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    // The one-line answer names the file and line; its reason is in the
    // graph-data section, once.
    assert_eq!(
        run.stderr,
        "cincinnati: there is no update from 4.9.37 to 4.9.38: graph-data blocks it (blocked-edges/4.9.38.yaml:1)\n"
    );
    assert_eq!(
        run.stdout
            .matches("OVN networking issue https://bugzilla.redhat.com/show_bug.cgi?id=2098099")
            .count(),
        1,
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn a_server_answering_an_error_or_garbage_exits_3() {
    let stack = demo_stack().await;
    let wrong_channel = cincinnati(&[
        "--url",
        &stack.engines.graph_url(),
        "updates",
        "--channel",
        "Stable",
        "--version",
        "4.16.1",
    ]);
    assert_eq!(wrong_channel.code, 3, "{wrong_channel:?}");
    assert!(
        wrong_channel.stderr.contains("answered 400"),
        "{}",
        wrong_channel.stderr
    );

    let garbage = StaticServer::start(b"<html>not a graph</html>".to_vec(), "text/html").unwrap();
    let run = cincinnati(&["--url", &format!("{}/graph", garbage.url()), "channels"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr.contains("is not a Graph API document"),
        "{}",
        run.stderr
    );
}

/// `explain --id` asks an engine with the demo's per-cluster policy as that
/// cluster, and its explain endpoint which rule removed the update: the
/// rule that decides comes first (a pin, the phased rollout with the
/// cluster's place, its progress and when the cluster is inside), and a
/// risk of the policy's own is attributed to its line in the policy file.
#[tokio::test]
async fn explain_with_an_id_says_which_policy_rule_removed_the_update() {
    let stack = demo_stack().await;
    let policy = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/demo/policy.yaml");
    let engine = e2e::policy_engine::start_with(
        stack.workdir(),
        "policy",
        &stack.engines.graph_url(),
        &["--cluster_policy.file", policy],
    )
    .await
    .expect("the engine with a policy starts");
    let graph_url = e2e::policy_engine::graph_url(&engine);
    let explain_url = engine.status_url("/api/upgrades_info/v1/explain-cluster");
    // Held at or below 4.18.45 by the demo policy's production group.
    let production = "5ca1ab1e-0000-4000-8000-00000000d0e5";
    let explain = |from: &str, to: &str, id: Option<&str>, json: bool| {
        let mut args = vec![
            "--url",
            &graph_url,
            "explain",
            "--channel",
            "stable-4.18",
            "--from",
            from,
            "--to",
            to,
        ];
        if let Some(id) = id {
            args.extend(["--id", id, "--explain-url", &explain_url]);
        }
        if json {
            args.extend(["-o", "json"]);
        }
        cincinnati(&args)
    };
    let held = explain("4.18.40", "4.18.46", Some(production), false);
    assert_eq!(held.code, 1, "{held:?}");
    assert!(
        held.stdout.lines().nth(1).is_some_and(|line| line.contains(
            "4.18.40 → 4.18.46 is withheld from this cluster: its groups are pinned at 4.18.45 (max_version), and 4.18.46 is above"
        )) && held.stdout.contains("(groups: production; place in rollouts 28.97%)"),
        "{}",
        held.stdout
    );
    let other = explain(
        "4.18.40",
        "4.18.46",
        Some("c0ffee00-0000-4a11-8b22-0123456789ab"),
        false,
    );
    assert_eq!(other.code, 0, "{}{}", other.stdout, other.stderr);
    assert!(
        other
            .stdout
            .contains("this cluster's policy neither withholds 4.18.46 nor changes 4.18.40 → 4.18.46"),
        "{}",
        other.stdout
    );

    // Outside the rollout of 4.18.52 (at 71.29%, the rollout at 50% and more):
    // the rollout decides, before graph-data and release metadata.
    let outside = explain(
        "4.18.51",
        "4.18.52",
        Some("c0ffee00-0001-4a11-8b22-0123456789ab"),
        true,
    );
    assert_eq!(outside.code, 1, "{outside:?}");
    let document = outside.json();
    let first = &document["reasons"][0];
    assert_eq!(
        (&first["layer"], &first["kind"], &first["decides"], &first["line"]),
        (
            &serde_json::json!("clusterPolicy"),
            &serde_json::json!("rollout"),
            &serde_json::json!(true),
            &serde_json::json!(27)
        ),
        "{document}"
    );
    let summary = document["summary"].as_str().unwrap();
    assert!(
        summary.contains(
            "the phased rollout of 4.18.52 does not offer it to this cluster yet (its place is 71.29%; \
             at its schedule it is inside from 2030-"
        ) && summary.contains("): on schedule at "),
        "{summary}"
    );
    // Without an id, the engine answers as for no cluster (last in every
    // rollout), and the answer says a policy may be why.
    let no_id = explain("4.18.51", "4.18.52", None, false);
    assert_eq!(no_id.code, 1, "{no_id:?}");
    assert!(
        no_id
            .stdout
            .contains("a per-cluster policy (a phased rollout, a deferral, a pin) may withhold it")
            && no_id.stdout.contains("Asked without a cluster id"),
        "{}",
        no_id.stdout
    );

    // Production's own risk on 4.18.44, from line 12 of the policy file.
    let risky_table = explain("4.18.40", "4.18.44", Some(production), false);
    assert!(
        risky_table.stdout.contains(
            "deploy/demo/policy.yaml:12: risk ProductionStorageFirmware on 4.18.40 → 4.18.44 is this cluster's groups' own"
        ),
        "{}",
        risky_table.stdout
    );
    let risky = explain("4.18.40", "4.18.44", Some(production), true).json();
    assert_eq!(risky["verdict"], "conditional", "{risky}");
    let reason = &risky["reasons"][0];
    assert_eq!(
        (&reason["kind"], &reason["line"]),
        (&serde_json::json!("policyRisk"), &serde_json::json!(12)),
        "{risky}"
    );
    assert!(
        reason["text"]
            .as_str()
            .unwrap()
            .contains("risk ProductionStorageFirmware on 4.18.40 → 4.18.44 is this cluster's groups' own"),
        "{reason}"
    );
}
