//! The command line itself: help, completions, exit codes, colour.

use registry_testkit::{Body, CertificateShape, FileServer};

use crate::support::{cincinnati, cincinnati_with, demo_graph_file, repository};

const SUBCOMMANDS: [&str; 8] = [
    "updates",
    "path",
    "explain",
    "channels",
    "render",
    "diff",
    "graph-data",
    "signatures",
];
/// The subcommands grouping others, with theirs.
const GROUPS: [(&str, &[&str]); 2] = [("graph-data", &["check", "preview"]), ("signatures", &["verify"])];

#[test]
fn every_command_has_help_with_examples() {
    let is_group = |command: &&&str| GROUPS.iter().any(|(group, _)| group == *command);
    let commands = SUBCOMMANDS.iter().filter(|command| !is_group(command));
    for command in commands.chain(&["completions"]) {
        let run = cincinnati(&[command, "--help"]);
        assert_eq!(run.code, 0, "{command}: {run:?}");
        assert!(
            run.stdout.contains("Examples:\n  cincinnati "),
            "{command} --help has no examples:\n{}",
            run.stdout
        );
    }
    for (group, commands) in GROUPS {
        for command in commands {
            let run = cincinnati(&[group, command, "--help"]);
            assert!(
                run.stdout.contains("Examples:\n  cincinnati "),
                "{group} {command}"
            );
        }
    }
    assert!(cincinnati(&["--help"]).stdout.contains("Exit codes: 0 answered"));
}

#[test]
fn completions_cover_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let run = cincinnati(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}");
        for command in SUBCOMMANDS {
            assert!(run.stdout.contains(command), "{shell} completions lack {command}");
        }
    }
}

#[test]
fn usage_and_input_errors_exit_2_with_one_line_on_stderr() {
    let demo = demo_graph_file();
    let demo = demo.to_str().unwrap();
    let missing = repository("testdata/no-such-graph.json");
    let not_a_graph = repository("testdata/graph-data/version");
    for args in [
        vec!["path", "--from", "4.16.x", "--to", "4.17.1"],
        vec!["path", "--from", "4.16.1", "--to", "4.17.1", "--tier", "beta"],
        vec!["updates", "--channel", "stable-4.16"],
        vec!["--graph", missing.to_str().unwrap(), "channels"],
        vec!["--graph", not_a_graph.to_str().unwrap(), "channels"],
        vec![
            "--graph",
            demo,
            "explain",
            "--channel",
            "stable-4.16",
            "--from",
            "4.16.1",
            "--to",
            "4.16.2",
            "--graph-data",
            "/no/such/graph-data",
        ],
        vec!["graph-data", "check", "/no/such/graph-data"],
    ] {
        let run = cincinnati(&args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.starts_with("cincinnati: "), "{}", run.stderr);
    }
}

#[test]
fn a_server_that_cannot_be_reached_exits_3() {
    let run = cincinnati(&[
        "--url",
        "http://127.0.0.1:9/graph",
        "updates",
        "--channel",
        "stable-4.16",
        "--version",
        "4.16.1",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1);
    assert!(run.stderr.contains("127.0.0.1:9"), "{}", run.stderr);
}

#[test]
fn a_service_behind_a_private_ca_is_trusted_with_cacert_only() {
    let server = FileServer::start_tls(CertificateShape::CaSignedServer).unwrap();
    server.serve("/graph", Body::Bytes(std::fs::read(demo_graph_file()).unwrap()));
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), server.ca_pem().unwrap()).unwrap();
    let url = format!("{}/graph", server.url());
    let ask = |extra: &[&str]| {
        let mut args = vec!["--url", &url, "-o", "json"];
        args.extend(extra);
        args.extend(["channels", "--version", "4.16.30"]);
        cincinnati(&args)
    };

    let untrusted = ask(&[]);
    assert_eq!(untrusted.code, 3, "{untrusted:?}");
    assert!(untrusted.stderr.contains(server.url()), "{}", untrusted.stderr);

    let trusted = ask(&["--cacert", ca.path().to_str().unwrap()]);
    assert_eq!(trusted.code, 0, "{trusted:?}");
    assert!(
        trusted.json()["channels"]
            .as_array()
            .unwrap()
            .iter()
            .any(|channel| channel["name"] == "stable-4.16"),
        "{}",
        trusted.stdout
    );

    let not_a_certificate = ask(&[
        "--cacert",
        repository("testdata/graph-data/version").to_str().unwrap(),
    ]);
    assert_eq!(not_a_certificate.code, 2, "{not_a_certificate:?}");
}

#[test]
fn updates_asks_as_the_cvo_asks_with_the_cluster_id() {
    let server = FileServer::start().unwrap();
    server.serve("/graph", Body::Bytes(std::fs::read(demo_graph_file()).unwrap()));
    let id = "5b6f1e2a-9c3d-4e8f-a1b2-c3d4e5f60718";
    let url = format!("{}/graph", server.url());
    let run = cincinnati(&[
        "--url",
        &url,
        "--arch",
        "arm64",
        "updates",
        "--channel",
        "stable-4.18",
        "--version",
        "4.18.20",
        "--id",
        id,
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(
        requests[0].query,
        format!("arch=arm64&channel=stable-4.18&id={id}&version=4.18.20")
    );
    assert_eq!(requests[0].headers["accept"], "application/json");
}

#[test]
fn a_no_exits_1_with_the_reason_on_stderr() {
    let demo = demo_graph_file();
    let run = cincinnati(&[
        "--graph",
        demo.to_str().unwrap(),
        "updates",
        "--channel",
        "stable-4.14",
        "--version",
        "4.18.20",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "cincinnati: version 4.18.20 is not in channel stable-4.14\n"
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn tables_are_coloured_only_on_request_or_a_terminal() {
    let demo = demo_graph_file();
    let args = [
        "--graph",
        demo.to_str().unwrap(),
        "path",
        "--from",
        "4.17.48",
        "--to",
        "4.18.30",
    ];
    let piped = cincinnati(&args);
    assert!(
        !piped.stdout.contains('\u{1b}'),
        "colour in a pipe:\n{}",
        piped.stdout
    );
    let forced = cincinnati_with(&args, &[("CLICOLOR_FORCE", "1")]);
    assert!(
        forced.stdout.contains("\u{1b}["),
        "no colour when forced:\n{}",
        forced.stdout
    );
    let json = cincinnati_with(&[&args[..], &["-o", "json"]].concat(), &[("CLICOLOR_FORCE", "1")]);
    assert!(!json.stdout.contains('\u{1b}'), "JSON is never coloured");
}

#[test]
fn every_json_document_names_its_kind_and_schema_version() {
    let demo = demo_graph_file();
    let demo = demo.to_str().unwrap();
    for (args, kind) in [
        (
            vec!["updates", "--channel", "stable-4.18", "--version", "4.18.20"],
            "Updates",
        ),
        (vec!["path", "--from", "4.17.48", "--to", "4.18.30"], "Path"),
        (
            vec![
                "explain",
                "--channel",
                "stable-4.18",
                "--from",
                "4.17.48",
                "--to",
                "4.18.27",
            ],
            "Explanation",
        ),
        (vec!["channels"], "Channels"),
        (vec!["diff", demo, demo], "Diff"),
    ] {
        let run = cincinnati(&[&["--graph", demo, "-o", "json"][..], &args].concat());
        let document = run.json();
        assert_eq!(document["kind"], kind, "{args:?}");
        assert_eq!(document["schemaVersion"], 1, "{args:?}");
    }
}
