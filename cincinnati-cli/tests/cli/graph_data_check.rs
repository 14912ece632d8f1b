//! `graph-data check` is as strict as graph-data's own CI, and `preview`
//! as lenient as the graph-builder: one copy of the bundled graph-data with
//! a risk in a file not named for its target (which graph-data's CI
//! refuses, and the graph-builder serves).

use release_set_generator::demo_releases;

use crate::support::phased::{STABLE, STARTED, write_phased};
use crate::support::{cincinnati, copy_graph_data, demo_graph_file, write_releases};

const RISK: &str = "blocked-edges/4.11.2-PodmanTermStorageCorruption.yaml";
const MISPLACED: &str = "blocked-edges/4.11.3-PodmanTermStorageCorruption.yaml";

/// The bundled graph-data with [`RISK`] renamed to [`MISPLACED`].
fn misplaced_risk() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_graph_data(dir.path());
    std::fs::rename(dir.path().join(RISK), dir.path().join(MISPLACED)).unwrap();
    dir
}

#[test]
fn check_refuses_what_graph_data_ci_refuses_at_its_file_and_line() {
    let copy = misplaced_risk();
    let dir = copy.path().to_str().unwrap();
    let run = cincinnati(&["graph-data", "check", dir]);
    assert_eq!(run.code, 1, "{run:?}");
    let expected = format!(
        "{dir}/{MISPLACED}:1: error[misplaced_risk]: a risk to 4.11.2 belongs in a file named 4.11.2-<Name>.yaml\n\
         graph-data is refused: 1 error(s), 0 warning(s)\n"
    );
    assert_eq!(run.stdout, expected);
    assert_eq!(
        run.stderr,
        format!("cincinnati: graph-data in {dir} is refused: 1 error(s)\n")
    );

    let json = cincinnati(&["graph-data", "check", dir, "-o", "json"]).json();
    assert_eq!(json["valid"], false);
    assert_eq!(
        json["errors"][0],
        serde_json::json!({
            "file": MISPLACED,
            "line": 1,
            "kind": "misplaced_risk",
            "message": "a risk to 4.11.2 belongs in a file named 4.11.2-<Name>.yaml",
        })
    );
}

#[test]
fn preview_applies_what_the_graph_builder_would_serve() {
    let copy = misplaced_risk();
    let (demo, releases) = (demo_graph_file(), demo_releases());
    let [demo, dir, releases] =
        [demo.as_path(), copy.path(), releases.as_path()].map(|path| path.to_str().unwrap());
    let run = cincinnati(&[
        "--graph",
        demo,
        "graph-data",
        "preview",
        dir,
        "--releases",
        releases,
    ]);
    assert_eq!(run.code, 0, "the same declarations, only renamed: {run:?}");
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

/// A small graph-data: one channel of two releases, one blocked edge to a
/// release no registry has.
fn against_releases() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("graph-data");
    std::fs::create_dir_all(data.join("channels")).unwrap();
    std::fs::create_dir_all(data.join("blocked-edges")).unwrap();
    std::fs::create_dir_all(data.join("raw")).unwrap();
    std::fs::write(data.join("raw/metadata.json"), "{}").unwrap();
    std::fs::write(data.join("version"), "1.0.0\n").unwrap();
    std::fs::write(
        data.join("channels/stable-4.18.yaml"),
        "name: stable-4.18\nversions:\n- 4.18.1\n- 4.18.2\n",
    )
    .unwrap();
    std::fs::write(
        data.join("blocked-edges/4.18.9.yaml"),
        "to: 4.18.9\nfrom: 4[.]18[.]1\n",
    )
    .unwrap();
    let releases = dir.path().join("releases.json");
    write_releases(&releases, &["4.18.1", "4.18.2"], &[]);
    (dir, releases)
}

#[test]
fn check_with_releases_refuses_a_blocked_edge_to_no_release() {
    let (copy, releases) = against_releases();
    let data = copy.path().join("graph-data");
    let (data, releases) = (data.to_str().unwrap(), releases.to_str().unwrap());

    let alone = cincinnati(&["graph-data", "check", data]);
    assert_eq!(
        alone.code, 0,
        "without releases nothing is known to be missing: {alone:?}"
    );

    let run = cincinnati(&["graph-data", "check", data, "--releases", releases, "-o", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let json = run.json();
    assert_eq!(json["valid"], false);
    assert_eq!(json["revision"], serde_json::Value::Null);
    let kinds: Vec<&str> = json["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|error| error["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["unmatched_target"], "{json:#}");
    assert_eq!(json["errors"][0]["file"], "blocked-edges/4.18.9.yaml");
    assert_eq!(json["errors"][0]["line"], 1);
}

/// A change blocking 4.18.39 → 4.18.40, previewed against the bundled
/// graph-data as its base: a summary first, and the warnings the base had
/// already kept apart from the change's.
#[test]
fn preview_leads_with_a_summary_and_keeps_the_base_s_warnings_apart() {
    let (base, changed) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    copy_graph_data(base.path());
    copy_graph_data(changed.path());
    std::fs::write(
        changed.path().join("blocked-edges/4.18.40.yaml"),
        "to: 4.18.40\nfrom: ^4[.]18[.]39[+]\n",
    )
    .unwrap();
    let (demo, releases) = (demo_graph_file(), demo_releases());
    let [demo, changed, base, releases] =
        [demo.as_path(), changed.path(), base.path(), releases.as_path()].map(|path| path.to_str().unwrap());
    let preview = |extra: &[&str]| {
        let mut args = vec![
            "--graph",
            demo,
            "graph-data",
            "preview",
            changed,
            "--releases",
            releases,
        ];
        args.extend_from_slice(extra);
        cincinnati(&args)
    };

    let json = preview(&["--base", base, "-o", "json"]).json();
    let summary = json["summary"].as_array().unwrap();
    let stable = summary
        .iter()
        .find(|channel| channel["channel"] == "stable-4.18")
        .unwrap_or_else(|| panic!("{summary:?}"));
    assert_eq!(stable["updatesBlocked"], 1, "{stable}");
    assert_eq!(stable["releasesRemoved"], 0);
    assert_eq!(
        json["warnings"],
        serde_json::json!([]),
        "the change brings no warning"
    );
    let before = json["warningsBefore"].as_array().unwrap();

    let without_base = preview(&["-o", "json"]).json();
    assert_eq!(without_base["warningsBefore"], serde_json::Value::Null);
    assert_eq!(
        without_base["warnings"].as_array().unwrap().len(),
        before.len(),
        "without a base every warning is listed as the change's"
    );

    let text = preview(&["--base", base]);
    assert_eq!(text.code, 1, "{text:?}");
    assert!(text.stdout.starts_with("Summary (amd64)\n"), "{}", text.stdout);
    if !before.is_empty() {
        assert!(
            text.stdout.contains(&format!(
                "Warnings the base graph-data had already ({})",
                before.len()
            )),
            "{}",
            text.stdout
        );
    }
}

const MOVED: &str = "- name: 4.18.2\n  start: 2025-06-03T09:00:00Z\n";
const MOVED_LOCKED: &str = "- name: 4.18.2\n  start: 2025-06-03T09:00:00Z\n  locked: true\n";

#[test]
fn check_reads_schema_2_and_refuses_its_mistakes_at_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write_phased(dir.path(), STARTED);
    let path = dir.path().to_str().unwrap();
    let valid = cincinnati(&["graph-data", "check", path]);
    assert_eq!(valid.code, 0, "{valid:?}");

    write_phased(dir.path(), "- name: 4.18.2\n  start: tomorrow\n");
    let run = cincinnati(&["graph-data", "check", path, "-o", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let error = &run.json()["errors"][0];
    assert_eq!(error["file"], STABLE);
    assert_eq!(error["line"], 6);
    assert_eq!(error["kind"], "invalid_rollout_start");
}

/// `--against` the graph-data in use, with `--at` the moment to judge at:
/// (4.18.2's new entry, at, refused).
#[test]
fn check_against_the_previous_graph_data_refuses_moving_a_rollout_under_way() {
    let (previous, changed) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_phased(previous.path(), STARTED);
    let [previous, changed_dir] = [previous.path(), changed.path()].map(|path| path.to_str().unwrap());
    let under_way = "2025-06-03T00:00:00Z";
    for (entry, at, refused) in [
        (MOVED, under_way, true),
        (MOVED_LOCKED, under_way, false),
        (MOVED, "2025-06-01T00:00:00Z", false),
        (STARTED, under_way, false),
    ] {
        write_phased(changed.path(), entry);
        let run = cincinnati(&[
            "graph-data",
            "check",
            changed_dir,
            "--against",
            previous,
            "--at",
            at,
        ]);
        assert_eq!(run.code, i32::from(refused), "{entry} at {at}: {run:?}");
        if refused {
            assert!(
                run.stdout.starts_with(&format!(
                    "{changed_dir}/{STABLE}:5: error[moved_rollout]: the rollout of patch \
                     updates into 4.18.2 in channel stable-4.18 is under way"
                )),
                "{}",
                run.stdout
            );
        }
    }
}

#[test]
fn check_against_refused_graph_data_is_an_input_error() {
    let (previous, changed) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_phased(previous.path(), STARTED);
    std::fs::write(previous.path().join("version"), "3.0.0\n").unwrap();
    write_phased(changed.path(), STARTED);
    let [previous, changed] = [previous.path(), changed.path()].map(|path| path.to_str().unwrap());
    let run = cincinnati(&["graph-data", "check", changed, "--against", previous]);
    run.assert_failed_saying(2, &["the previous graph-data in", "is refused with 1 error(s)"]);
}
