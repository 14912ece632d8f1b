//! `explain` and `path` on the demo graph, against files in
//! `tests/golden/` (as golden.rs does for every command:
//! `CINCINNATI_BLESS=1 cargo nextest run -p cincinnati-cli explain_path`
//! rewrites them), and what those answers must say whatever their layout:
//! the reason that decides first, each blocked edge's reason once, the CVO's
//! words for conditional updates, an EUS-to-EUS plan as a runbook, a break
//! that names only releases the answer shows, a downgrade refused before
//! any service is asked.

use std::collections::BTreeSet;

use release_set_generator::testdata_graph_data;

use crate::support::golden::GoldenFiles;
use crate::support::{EVERY_DOCUMENT, Run, cincinnati, demo_graph_file, documented_fields, keys, repository};

/// `cincinnati --graph <demo> <args>`.
fn on_demo(args: &[&str]) -> Run {
    let demo = demo_graph_file();
    let mut all = vec!["--graph", demo.to_str().unwrap()];
    all.extend_from_slice(args);
    cincinnati(&all)
}

fn graph_data() -> String {
    testdata_graph_data().display().to_string()
}

const RUNBOOK: [&str; 7] = ["path", "--from", "4.14.30", "--to", "4.16.68", "--tier", "eus"];

/// blocked-edges/4.3.5.yaml blocks it, with four reasons.
const BLOCKED: [&str; 7] = [
    "explain",
    "--channel",
    "stable-4.3",
    "--from",
    "4.3.1",
    "--to",
    "4.3.5",
];

/// A conditional update: the risk DuplicateRelease, fixed in 4.11.24.
const CONDITIONAL: [&str; 7] = [
    "explain",
    "--channel",
    "stable-4.11",
    "--from",
    "4.11.22",
    "--to",
    "4.11.23",
];

/// The demo's phased rollout: 4.18.52.
const ROLLOUT: [&str; 7] = [
    "explain",
    "--channel",
    "stable-4.18",
    "--from",
    "4.18.51",
    "--to",
    "4.18.52",
];

#[test]
fn explain_and_path_print_what_the_golden_files_hold() {
    let graph_data = graph_data();
    let with =
        |args: &[&'static str], extra: &[&'static str]| -> Vec<&'static str> { [args, extra].concat() };
    let blocked = BLOCKED;
    let cases: Vec<(&str, i32, Vec<String>)> = vec![
        ("path-eus-runbook.txt", 0, strings(&RUNBOOK)),
        (
            "path-eus-runbook.json",
            0,
            strings(&with(&RUNBOOK, &["-o", "json"])),
        ),
        (
            "path-eus-all.txt",
            0,
            strings(&with(&RUNBOOK, &["--all", "--limit", "4"])),
        ),
        (
            "path-other-tiers.txt",
            1,
            strings(&["path", "--from", "4.18.40", "--to", "4.18.53"]),
        ),
        (
            "explain-blocked-reasons.txt",
            1,
            [strings(&blocked), vec!["--graph-data".into(), graph_data.clone()]].concat(),
        ),
        ("explain-remove-regex.txt", 1, strings(&blocked)),
        (
            "explain-fixed-in.txt",
            0,
            [
                strings(&CONDITIONAL),
                vec!["--graph-data".into(), graph_data.clone()],
            ]
            .concat(),
        ),
    ];
    let demo = demo_graph_file().display().to_string();
    let replacements = [
        (demo.clone(), "$DEMO_GRAPH".to_owned()),
        (
            repository("").canonicalize().unwrap().display().to_string(),
            "$REPO".to_owned(),
        ),
        (repository("").display().to_string(), "$REPO".to_owned()),
    ];
    let mut golden_files = GoldenFiles::default();
    for (golden, code, args) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = on_demo(&args);
        if run.code != *code {
            golden_files.fail(format!(
                "{golden}: exit {} instead of {code}; stderr: {}",
                run.code, run.stderr
            ));
            continue;
        }
        let shown = replacements
            .iter()
            .fold(run.stdout, |text, (from, to)| text.replace(from.as_str(), to));
        golden_files.check(golden, &shown);
    }
    golden_files.assert_same();
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|arg| (*arg).to_owned()).collect()
}

/// The four reasons of blocked-edges/4.3.5.yaml: its comment paragraphs.
const REASONS_OF_4_3_5: [&str; 4] = [
    "Upgrading any release to 4.3.5 will enable automated service ca rotation",
    "Reference: https://bugzilla.redhat.com/show_bug.cgi?id=1810036",
    "Also includes broken OAuth service cert rotation",
    "4.2 -> 4.3 updates occasionally hit PodIP vs. PodIPs",
];

#[test]
fn a_blocked_edges_reasons_are_printed_each_on_its_own_line_once() {
    let graph_data = graph_data();
    let run = on_demo(&[&BLOCKED[..], &["--graph-data", &graph_data]].concat());
    assert_eq!(run.code, 1, "{run:?}");
    for reason in REASONS_OF_4_3_5 {
        assert_eq!(
            run.stdout.matches(reason).count(),
            1,
            "{reason:?} in {}",
            run.stdout
        );
        let line = run.stdout.lines().find(|line| line.contains(reason)).unwrap();
        let others = REASONS_OF_4_3_5.iter().filter(|other| **other != reason);
        for other in others {
            assert!(!line.contains(other), "glued: {line}");
        }
        assert!(
            !run.stderr.contains(reason),
            "the one-line answer names the file, not the reasons"
        );
    }
    assert!(
        run.stderr.contains("blocked-edges/4.3.5.yaml:9"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_conditional_update_is_called_what_the_cvo_calls_it() {
    let run = on_demo(&[&CONDITIONAL[..], &["-o", "json"]].concat());
    assert_eq!(run.code, 0, "{run:?}");
    let document = run.json();
    assert_eq!(document["verdict"], "conditional");
    let summary = document["summary"].as_str().unwrap();
    assert!(
        summary.contains("not recommended")
            && summary.contains("Recommended=False")
            && !summary.contains("offered"),
        "{summary}"
    );
    let table = on_demo(&CONDITIONAL);
    let heading = table.stdout.lines().next().unwrap();
    assert!(
        heading.ends_with("not recommended where its risks apply (conditional)"),
        "{heading}"
    );
}

/// A full graph (a file, a graph-builder's) is no cluster's view: no
/// per-cluster policy shaped it, and the answer does not hedge about one
/// (real_servers.rs checks that an engine's answer does).
#[test]
fn a_full_graph_says_nothing_of_a_per_cluster_policy() {
    let run = on_demo(&ROLLOUT);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        !run.stdout.contains("cluster id") && !run.stdout.contains("per-cluster"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_downgrade_is_refused_without_asking_any_service() {
    // CINCINNATI_URL is a closed port: asking it would exit 3.
    for args in [
        vec!["path", "--from", "4.16.68", "--to", "4.14.30"],
        vec![
            "path", "--from", "4.16.68", "--to", "4.14.30", "--tier", "eus", "-o", "json",
        ],
    ] {
        let run = cincinnati(&args);
        assert_eq!(run.code, 1, "{run:?}");
        assert_eq!(
            run.stderr.trim(),
            "cincinnati: no path from 4.16.68 to 4.14.30: 4.14.30 is older than 4.16.68: clusters do not downgrade"
        );
    }
}

#[test]
fn an_eus_to_eus_runbook_pauses_the_workers_through_the_odd_minor() {
    let run = on_demo(&[&RUNBOOK[..], &["-o", "json"]].concat());
    assert_eq!(run.code, 0, "{run:?}");
    let document = run.json();
    let hops = document["plan"]["hops"].as_array().unwrap();
    let runbook = &document["runbook"];
    assert_eq!(runbook["procedure"], "controlPlaneOnly");
    assert_eq!(runbook["workersSkip"], serde_json::json!(["4.15.67"]));
    let steps = runbook["steps"].as_array().unwrap();
    let actions: Vec<&str> = steps
        .iter()
        .map(|step| step["action"].as_str().unwrap())
        .collect();
    let position = |action: &str| actions.iter().position(|a| *a == action).unwrap();
    // The documented order: pools checked, the target's EUS channel, pause,
    // the control plane through 4.15 to 4.16, unpause, pools checked.
    let switch_to_target = steps
        .iter()
        .position(|step| step["channel"] == "eus-4.16")
        .unwrap();
    assert!(position("checkPools") < switch_to_target);
    assert!(switch_to_target < position("pausePools"));
    let updates: Vec<(usize, &serde_json::Value)> = steps
        .iter()
        .enumerate()
        .filter(|(_, step)| step["action"] == "update")
        .collect();
    assert_eq!(updates.len(), hops.len(), "a step per hop");
    for (order, (position_of_step, step)) in updates.iter().enumerate() {
        assert_eq!(step["hopIndex"], order, "in plan order");
        let hop = &hops[order];
        let image = hop["image"].as_str().unwrap();
        assert!(image.contains("@sha256:"), "by digest: {image}");
        assert_eq!(
            step["commands"][0],
            format!("oc adm upgrade --to-image={image}"),
            "{step}"
        );
        let paused = *position_of_step > position("pausePools");
        assert_eq!(hop["workers"] != "update", paused, "{hop}");
    }
    assert!(position("unpausePools") > updates.last().unwrap().0);
    assert_eq!(hops[4]["to"], "4.15.67");
    assert_eq!(hops[4]["workers"], "skip");
    assert_eq!(hops[5]["workers"], "catchUp");
}

#[test]
fn all_shows_per_hop_alternatives_in_one_table() {
    let run = on_demo(&[&RUNBOOK[..], &["--all", "--limit", "4"]].concat());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("Alternative 1:"), "{}", run.stdout);
    assert_eq!(
        run.stdout.matches("  #  FROM").count(),
        1,
        "one table: {}",
        run.stdout
    );
    let json = on_demo(&[&RUNBOOK[..], &["--all", "--limit", "4", "-o", "json"]].concat()).json();
    let hops = json["plan"]["hops"].as_array().unwrap();
    for (index, hop) in hops.iter().enumerate() {
        let instead = hop["alternatives"].as_array().unwrap();
        assert!(instead.len() <= 4);
        if index + 1 == hops.len() {
            assert!(instead.is_empty(), "the target is the target");
        }
    }
    assert!(
        hops.iter()
            .any(|hop| !hop["alternatives"].as_array().unwrap().is_empty())
    );
}

#[test]
fn where_a_path_breaks_it_names_only_releases_the_answer_shows() {
    let run = on_demo(&["path", "--from", "4.14.60", "--to", "4.16.50", "--tier", "eus"]);
    assert_eq!(run.code, 1, "{run:?}");
    // Every version in the break's sentence is in a table of the answer.
    let tables: BTreeSet<&str> = run
        .stdout
        .lines()
        .filter(|line| line.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .flat_map(|line| line.split_whitespace().skip(1).take(2))
        .collect();
    let sentence = run.stdout.lines().nth(1).unwrap();
    for word in sentence.split(|c: char| c.is_whitespace() || c == ';' || c == ',') {
        let word = word.trim_end_matches("'s");
        if word.starts_with("4.") && word.matches('.').count() == 2 {
            assert!(
                tables.contains(word),
                "{word} is named but not shown:\n{}",
                run.stdout
            );
        }
    }
    assert!(run.stdout.contains("Other tiers:"), "{}", run.stdout);
}

#[test]
fn path_and_explain_documents_have_the_documented_fields() {
    let runbook = on_demo(&[&RUNBOOK[..], &["-o", "json"]].concat()).json();
    let mut documented = documented_fields("`Path`");
    documented.extend(EVERY_DOCUMENT.map(str::to_owned));
    assert_eq!(keys(&runbook), documented, "docs/cli.md's Path");
    assert_eq!(keys(&runbook["plan"]["hops"][0]), documented_fields("— hop"));
    assert_eq!(keys(&runbook["runbook"]), documented_fields("— `runbook`"));
    assert_eq!(
        keys(&runbook["runbook"]["steps"][0]),
        documented_fields("— runbook step")
    );
    let none = on_demo(&[
        "path", "--from", "4.14.60", "--to", "4.16.50", "--tier", "eus", "-o", "json",
    ])
    .json();
    assert_eq!(keys(&none["break"]), documented_fields("— `break`"));
    assert_eq!(keys(&none["otherTiers"][0]), documented_fields("— other tier"));
    let graph_data = graph_data();
    let explained = on_demo(&[&BLOCKED[..], &["--graph-data", &graph_data, "-o", "json"]].concat()).json();
    assert_eq!(keys(&explained["reasons"][0]), documented_fields("— reason"));
    assert_eq!(
        keys(&explained["declarations"][0]),
        documented_fields("— declaration")
    );
}
