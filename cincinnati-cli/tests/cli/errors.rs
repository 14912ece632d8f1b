//! What a failure says: one line, the error and each of its causes once.

use crate::support::{Run, cincinnati, repository};

/// The reason a failed run gave, without the `cincinnati: ` label.
fn reason(run: &Run) -> &str {
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");
    run.stderr
        .trim_end()
        .strip_prefix("cincinnati: ")
        .unwrap_or_else(|| panic!("no label: {run:?}"))
}

/// No part of `reason` between `: ` separators comes twice (a cause said
/// again after the error naming it).
fn assert_each_part_once(reason: &str) {
    let parts: Vec<&str> = reason.split(": ").collect();
    for (at, part) in parts.iter().enumerate() {
        assert!(
            !parts[at + 1..].contains(part),
            "{part:?} is said twice in {reason:?}"
        );
    }
}

#[test]
fn a_missing_file_is_said_once() {
    let missing = repository("testdata/no-such-graph.json");
    let missing = missing.to_str().unwrap();
    for args in [
        vec!["--graph", missing, "channels"],
        vec!["diff", missing, missing],
    ] {
        let run = cincinnati(&args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert_eq!(
            reason(&run),
            format!("cannot read {missing}: No such file or directory (os error 2)"),
            "{args:?}"
        );
    }
    let run = cincinnati(&["graph-data", "check", "/no/such/graph-data"]);
    assert_eq!(run.code, 2, "{run:?}");
    let said = reason(&run);
    assert_eq!(said.matches("No such file or directory").count(), 1, "{said}");
    assert_each_part_once(said);
}

#[test]
fn a_document_that_is_not_a_graph_is_said_once() {
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("nodes.json");
    std::fs::write(&path, r#"{"nodes": 1}"#).unwrap();
    let run = cincinnati(&["--graph", path.to_str().unwrap(), "channels"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        reason(&run),
        format!(
            "{} is not a Graph API document: malformed Graph API JSON: invalid type: integer `1`, \
             expected a sequence at line 1 column 11",
            path.display()
        )
    );
}

#[test]
fn every_failure_says_each_cause_once() {
    let work = tempfile::tempdir().unwrap();
    let empty = work.path().join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let directory = work.path().display().to_string();
    let empty = empty.display().to_string();
    let version = repository("testdata/graph-data/version").display().to_string();
    for args in [
        vec!["--graph", &empty, "channels"],
        vec!["--graph", &directory, "channels"],
        vec!["--graph", &version, "path", "--from", "4.16.1", "--to", "4.17.1"],
        vec!["--cacert", &version, "channels"],
        vec!["--cacert", "/no/such/ca.pem", "channels"],
        vec!["--url", "http://127.0.0.1:9/graph", "channels"],
        vec!["--url", "http://[::1/graph", "channels"],
        vec!["path", "--from", "4.16.x", "--to", "4.17.1"],
        vec![
            "signatures",
            "verify",
            "--keyring",
            "/no/such/keyring.asc",
            "--release",
            "sha256:00",
        ],
    ] {
        let run = cincinnati(&args);
        assert!(run.code >= 2, "{args:?}: {run:?}");
        assert_each_part_once(reason(&run));
    }
}
