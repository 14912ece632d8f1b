//! Running the `cincinnati` binary as users do, on the demo graph; what
//! it prints held to docs/cli.md and to golden files.

pub mod golden;
pub mod phased;

use std::collections::BTreeSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::process::Command;

use e2e::client_graph::ClientUpdates;
use e2e::process::ServiceProcess;
use e2e::static_server::StaticServer;
use openshift_graph_data::GraphDataFiles;
use release_set_generator::{demo_graph, demo_releases, testdata_graph_data};

/// What a run of the binary left.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The JSON it printed.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|error| panic!("{error}: {self:?}"))
    }

    /// Asserts that it failed with `code` and one line on stderr saying
    /// each of `parts`.
    pub fn assert_failed_saying(&self, code: i32, parts: &[&str]) {
        assert_eq!(self.code, code, "{self:?}");
        assert!(
            self.stderr.starts_with("cincinnati: ")
                && self.stderr.lines().count() == 1
                && parts.iter().all(|part| self.stderr.contains(part)),
            "not all of {parts:?}: {}",
            self.stderr
        );
    }
}

/// Runs `cincinnati` with `args`. `CINCINNATI_URL` points at a closed
/// port, so a test that forgets `--graph` or `--url` fails instead of
/// asking the internet; colour is left to the terminal test.
pub fn cincinnati<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Run {
    cincinnati_with(args, &[])
}

pub fn cincinnati_with<S: AsRef<std::ffi::OsStr>>(args: &[S], env: &[(&str, &str)]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_cincinnati"))
        .args(args)
        .env("CINCINNATI_URL", "http://127.0.0.1:9/graph")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .envs(env.iter().copied())
        .output()
        .expect("cincinnati runs");
    Run {
        code: output.status.code().expect("cincinnati exits"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// `cincinnati <source> -o json updates --channel <channel> --version
/// <version> <extra>`.
pub fn updates(source: &[&str], channel: &str, version: &str, extra: &[&str]) -> Run {
    let question = [
        "-o",
        "json",
        "updates",
        "--channel",
        channel,
        "--version",
        version,
    ];
    cincinnati(&[source, &question, extra].concat())
}

/// The full graph the demo graph-builder serves, as a file. Built once per
/// content of its inputs and kept in the target directory, since building
/// it takes seconds in a debug build.
pub fn demo_graph_file() -> PathBuf {
    let mut fingerprint = DefaultHasher::new();
    std::fs::read(demo_releases())
        .expect("the demo releases read")
        .hash(&mut fingerprint);
    let graph_data = GraphDataFiles::from_dir(&testdata_graph_data()).expect("testdata/graph-data reads");
    graph_data.revision().as_str().hash(&mut fingerprint);
    let path =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("demo-graph-{:016x}.json", fingerprint.finish()));
    if !path.exists() {
        let json = cincinnati_core::wire::serialize(&demo_graph().expect("the demo graph builds"), None);
        // Tests run in parallel, in processes and threads: each writes a
        // file of its own whole, then renames it.
        let mut partial =
            tempfile::NamedTempFile::new_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary file is made");
        std::io::Write::write_all(&mut partial, &json).expect("the demo graph is written");
        partial.persist(&path).expect("the demo graph is renamed");
    }
    path
}

/// A copy of the bundled graph-data (`testdata/graph-data`) at `into`, to change.
pub fn copy_graph_data(into: &Path) {
    copy_dir(&testdata_graph_data(), into);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A path in the repository.
pub fn repository(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// What `updates -o json` printed, in the e2e suite's shape.
pub fn offered(document: &serde_json::Value) -> ClientUpdates {
    let version = |release: &serde_json::Value| release["version"].as_str().unwrap().to_owned();
    let available = document["recommended"]
        .as_array()
        .unwrap()
        .iter()
        .map(version)
        .collect();
    let conditional = document["conditional"]
        .as_array()
        .unwrap()
        .iter()
        .map(|update| {
            let mut risks: Vec<String> = update["risks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|risk| risk["name"].as_str().unwrap().to_owned())
                .collect();
            risks.sort();
            (version(&update["release"]), risks)
        })
        .collect();
    ClientUpdates {
        available,
        conditional,
    }
}

/// The fields every document has besides those the table lists.
pub const EVERY_DOCUMENT: [&str; 2] = ["kind", "schemaVersion"];

/// docs/cli.md, whose schema table the printed documents are held to.
const DOC: &str = include_str!("../../../../docs/cli.md");

/// The schema table's row whose first cell starts with `label`: the
/// backquoted names of its second cell outside parentheses (inside them are
/// the fields' shapes).
pub fn documented_fields(label: &str) -> BTreeSet<String> {
    let schema = &DOC[DOC
        .find("## JSON and YAML")
        .expect("a JSON section in docs/cli.md")..];
    let row = schema
        .lines()
        .find(|line| line.starts_with(&format!("| {label}")))
        .unwrap_or_else(|| panic!("no row {label} in docs/cli.md's schema table"));
    let cells: Vec<&str> = row.split(" | ").collect();
    let mut depth = 0;
    let mut outside = String::new();
    for character in cells[1].chars() {
        match character {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => outside.push(character),
            _ => {}
        }
    }
    outside.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The keys of a JSON object.
pub fn keys(value: &serde_json::Value) -> BTreeSet<String> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .cloned()
        .collect()
}

/// The engines' path prefix (the e2e harness's).
pub const PREFIX: &str = "/api/upgrades_info";

/// An amd64 release at `version` (without its architecture), as a Graph
/// API node.
fn amd64_release(version: &str) -> serde_json::Value {
    serde_json::json!({
        "version": format!("{version}+amd64"),
        "payload": format!("quay.io/r@sha256:{version}"),
        "metadata": {"io.openshift.upgrades.graph.release.arch": "amd64"},
    })
}

/// Writes at `path` a Graph API document of amd64 `releases` (versions
/// without their architecture) with `edges` between them, by index: the
/// releases graph-data is applied to.
pub fn write_releases(path: &Path, releases: &[&str], edges: &[(usize, usize)]) {
    let nodes: Vec<serde_json::Value> = releases.iter().map(|version| amd64_release(version)).collect();
    let document = serde_json::json!({"nodes": nodes, "edges": edges});
    std::fs::write(path, serde_json::to_vec(&document).unwrap()).unwrap();
}

/// A graph-builder's graph: 4.18.1 updates to 4.18.2 and 4.18.4, 4.18.2
/// to 4.18.4, all on stable-4.18; 4.18.4 leads nowhere.
pub fn small_graph() -> Vec<u8> {
    let node = |version: &str| {
        let mut release = amd64_release(version);
        release["metadata"]["io.openshift.upgrades.graph.release.channels"] = "stable-4.18".into();
        release
    };
    serde_json::to_vec(&serde_json::json!({
        "nodes": [node("4.18.1"), node("4.18.2"), node("4.18.4")],
        "edges": [[0, 1], [0, 2], [1, 2]],
    }))
    .unwrap()
}

/// A policy-engine (a process) named `id` on `upstream`'s graph with
/// `flags`, its files in `dir`.
pub async fn engine(dir: &Path, id: &str, upstream: &StaticServer, flags: &[&str]) -> ServiceProcess {
    e2e::policy_engine::start_with(dir, id, &format!("{}/graph", upstream.url()), flags)
        .await
        .expect("the engine starts")
}
