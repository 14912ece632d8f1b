//! Every command's output on the demo graph, against files in
//! `tests/golden/`: tables, JSON, YAML, DOT and Mermaid. After an intended
//! change, `CINCINNATI_BLESS=1 cargo nextest run -p cincinnati-cli golden`
//! rewrites them; review the difference before committing it.

use std::path::Path;

use release_set_generator::{apply_graph_data, demo_releases, testdata_graph_data};

use crate::support::golden::GoldenFiles;
use crate::support::{cincinnati, copy_graph_data, demo_graph_file, repository};

/// A command, the file its output must equal, and its exit code.
struct Case {
    golden: &'static str,
    args: Vec<String>,
    code: i32,
}

fn case(golden: &'static str, code: i32, args: &[&str]) -> Case {
    Case {
        golden,
        args: args.iter().map(|arg| (*arg).to_owned()).collect(),
        code,
    }
}

#[test]
fn every_command_prints_what_the_golden_files_hold() {
    let demo = demo_graph_file();
    let work = tempfile::tempdir().unwrap();
    let changed_data = work.path().join("graph-data");
    change_graph_data(&changed_data);
    let changed_graph = work.path().join("changed-graph.json");
    write_graph(&changed_data, &changed_graph);
    let broken_data = work.path().join("broken-graph-data");
    write_broken_graph_data(&broken_data);

    let graph_data = testdata_graph_data();
    let (graph_data, changed_data, broken_data) =
        (text(&graph_data), text(&changed_data), text(&broken_data));
    let (demo, changed_graph) = (text(&demo), text(&changed_graph));
    let releases = text(&demo_releases());
    let on_demo = |golden, code, args: &[&str]| {
        let mut all = vec!["--graph", demo.as_str()];
        all.extend_from_slice(args);
        case(golden, code, &all)
    };
    let cases = [
        on_demo(
            "updates.txt",
            0,
            &["updates", "--channel", "stable-4.18", "--version", "4.18.20"],
        ),
        on_demo(
            "updates-not-recommended.json",
            0,
            &[
                "updates",
                "--channel",
                "stable-4.18",
                "--version",
                "4.18.20",
                "--include-not-recommended",
                "-o",
                "json",
            ],
        ),
        on_demo("path.txt", 0, &["path", "--from", "4.17.48", "--to", "4.18.30"]),
        on_demo(
            "path-fast-all.json",
            0,
            &[
                "path", "--from", "4.16.40", "--to", "4.18.40", "--tier", "fast", "--all", "--limit", "3",
                "-o", "json",
            ],
        ),
        on_demo(
            "path-eus-no-path.txt",
            1,
            &["path", "--from", "4.14.60", "--to", "4.16.50", "--tier", "eus"],
        ),
        on_demo(
            "path-eus-no-path.json",
            1,
            &[
                "path", "--from", "4.14.60", "--to", "4.16.50", "--tier", "eus", "-o", "json",
            ],
        ),
        on_demo(
            "path-eus-risk-accepted.yaml",
            0,
            &[
                "path",
                "--from",
                "4.14.60",
                "--to",
                "4.16.50",
                "--tier",
                "eus",
                "--accept-risk",
                "ContinuousNodeRebootingDueToKernelPanic",
                "-o",
                "yaml",
            ],
        ),
        on_demo(
            "explain-conditional.txt",
            0,
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
        ),
        on_demo(
            "explain-blocked.json",
            1,
            &[
                "explain",
                "--channel",
                "stable-4.9",
                "--from",
                "4.9.37",
                "--to",
                "4.9.38",
                "--graph-data",
                &graph_data,
                "-o",
                "json",
            ],
        ),
        on_demo(
            "explain-not-in-channel.txt",
            1,
            &[
                "explain",
                "--channel",
                "stable-4.17",
                "--from",
                "4.16.30",
                "--to",
                "4.18.30",
            ],
        ),
        on_demo("channels.txt", 0, &["channels"]),
        on_demo(
            "channels-version.json",
            0,
            &["channels", "--version", "4.16.30", "-o", "json"],
        ),
        on_demo(
            "render.dot",
            0,
            &["render", "--channel", "stable-4.18", "--from", "4.18.25"],
        ),
        on_demo(
            "render.mmd",
            0,
            &[
                "render",
                "--channel",
                "stable-4.18",
                "--from",
                "4.18.25",
                "--format",
                "mermaid",
            ],
        ),
        case("diff.txt", 1, &["diff", &demo, &changed_graph]),
        case("diff.json", 1, &["diff", &demo, &changed_graph, "-o", "json"]),
        on_demo(
            "preview.txt",
            1,
            &["graph-data", "preview", &changed_data, "--releases", &releases],
        ),
        case("check.txt", 0, &["graph-data", "check", &graph_data]),
        case("check-broken.txt", 1, &["graph-data", "check", &broken_data]),
        case(
            "check-broken.json",
            1,
            &["graph-data", "check", &broken_data, "-o", "json"],
        ),
    ];

    let replacements = [
        (work.path().display().to_string(), "$TMP"),
        (demo.clone(), "$DEMO_GRAPH"),
        (
            repository("").canonicalize().unwrap().display().to_string(),
            "$REPO",
        ),
        (repository("").display().to_string(), "$REPO"),
    ];
    let mut golden_files = GoldenFiles::default();
    for case in &cases {
        let run = cincinnati(&case.args);
        if run.code != case.code {
            golden_files.fail(format!(
                "{}: exit code {} instead of {}; stderr: {}",
                case.golden, run.code, case.code, run.stderr
            ));
            continue;
        }
        let shown = replacements
            .iter()
            .fold(run.stdout, |text, (from, to)| text.replace(from.as_str(), to));
        golden_files.check(case.golden, &shown);
    }
    golden_files.assert_same();
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// testdata/graph-data, changed as a graph-data pull request might: a new
/// risk on updates into 4.18.30, and 4.18.52 taken out of stable-4.18.
fn change_graph_data(into: &Path) {
    copy_graph_data(into);
    std::fs::write(
        into.join("blocked-edges/4.18.30-GoldenRisk.yaml"),
        "to: 4.18.30\nfrom: 4[.]18[.]2[0-7][+]\nurl: https://issues.example.com/GOLDEN-1\nname: GoldenRisk\n\
         message: Clusters updating from 4.18.20-27 may see golden risks.\nmatchingRules:\n- type: Always\n",
    )
    .unwrap();
    let channel = into.join("channels/stable-4.18.yaml");
    let listed = std::fs::read_to_string(&channel).unwrap();
    std::fs::write(&channel, listed.replace("- 4.18.52\n", "")).unwrap();
}

/// The demo releases with the graph-data in `dir` applied, as a file.
fn write_graph(dir: &Path, into: &Path) {
    let file = std::fs::File::open(demo_releases()).unwrap();
    let mut graph = cincinnati_core::wire::parse_reader(flate2::read::GzDecoder::new(file))
        .unwrap()
        .graph;
    // The demo graph-data phases nothing: any moment gives its graph.
    apply_graph_data(&mut graph, dir, jiff::Timestamp::UNIX_EPOCH).unwrap();
    std::fs::write(into, cincinnati_core::wire::serialize(&graph, None)).unwrap();
}

/// Graph-data with a problem of each kind the check reports.
fn write_broken_graph_data(into: &Path) {
    for (path, text) in [
        ("version", "1.1.0\n"),
        ("raw/metadata.json", "{}"),
        (
            "channels/stable-4.18.yaml",
            "name: stable-4.18\nversions:\n- 4.18.1\n- 4.18.x\n",
        ),
        ("blocked-edges/4.18.1-Bad.yaml", "to: 4.18.1\nfrom: 4[.]17[.(\n"),
        (
            "blocked-edges/4.18.2.yaml",
            "to: 4.18.2\nfrom: .*\nfixedIn: 4.18.3\nowner: someone\n",
        ),
        ("blocked-edges/README", "not graph-data\n"),
        (
            "blocked-edges/4.18.3-leak.yaml",
            "to: 4.18.3\nfrom: 4[.]18[.]2[+]\nurl: http://issues.example.com/LEAK\nname: leaky\n\
             message: Connections leak.\nmatchingRules:\n- type: Always\n",
        ),
    ] {
        let path = into.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}
