//! `cincinnati channels` against a service answering one channel at a
//! time: a policy-engine lists its channels at `{prefix}/v1/channels`
//! beside `{prefix}/graph`; a service without that list needs `--version`.
//! (Against a real engine: `real_servers.rs`.)

use registry_testkit::{Body, FileServer};

use crate::support::{cincinnati, demo_graph_file};

/// A server answering its `/graph` with 400 (a channel is wanted), as a
/// policy-engine with a mandatory channel does.
fn one_channel_at_a_time() -> FileServer {
    let server = FileServer::start().unwrap();
    server.serve("/api/upgrades_info/graph", Body::Status(400));
    server
}

#[test]
fn a_policy_engines_channel_list_is_printed_as_the_full_graphs() {
    let demo = demo_graph_file();
    let saved = |output: &str| cincinnati(&["--graph", demo.to_str().unwrap(), "-o", output, "channels"]);
    let (json, table) = (saved("json"), saved("table"));
    assert_eq!((json.code, table.code), (0, 0), "{json:?} {table:?}");

    // The engine's document is this command's: serve the saved graph's.
    let engine = one_channel_at_a_time();
    engine.serve(
        "/api/upgrades_info/v1/channels",
        Body::Bytes(json.stdout.clone().into_bytes()),
    );
    let url = format!("{}/api/upgrades_info/graph", engine.url());
    let asked = |output: &str| cincinnati(&["--url", &url, "-o", output, "channels"]);
    let from_engine = asked("json");
    assert_eq!(from_engine.code, 0, "{from_engine:?}");
    assert_eq!(from_engine.stdout, json.stdout);
    assert_eq!(asked("table").stdout, table.stdout);
    assert_eq!(asked("yaml").code, 0);

    let requests = engine.requests();
    let list = requests
        .iter()
        .find(|request| request.path == "/api/upgrades_info/v1/channels")
        .expect("the list is asked for");
    assert_eq!(list.query, "arch=amd64");
    assert_eq!(list.headers["accept"], "application/json");
}

#[test]
fn without_a_channel_list_a_version_is_needed() {
    let server = one_channel_at_a_time();
    let url = format!("{}/api/upgrades_info/graph", server.url());
    let run = cincinnati(&["--url", &url, "channels"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "cincinnati: {url} answers one channel at a time and lists no channels: give --version \
             to list the channels holding a version\n"
        )
    );

    // A list that is not one is the server's fault.
    server.serve(
        "/api/upgrades_info/v1/channels",
        Body::Bytes(b"<html>channels</html>".to_vec()),
    );
    let run = cincinnati(&["--url", &url, "channels"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr
            .contains("/api/upgrades_info/v1/channels?arch=amd64 is not a policy-engine's list of channels"),
        "{}",
        run.stderr
    );
}
