//! `cincinnati rollout` against a real policy-engine with rollout control
//! (a process, as `fleet` is tested: a policy file with a rollout, a fleet
//! store in a SQLite file and a token file): listing, each change and its
//! audit under the token's name, the refusals (no token, a wrong one, a
//! change without a reason, a rollout the engine does not have), an engine
//! without control; and each table for a fixed document, against files in
//! `tests/golden/` (`CINCINNATI_BLESS=1` rewrites the tables).

use std::path::Path;

use cincinnati_client::rollout::{RolloutView, Rollouts};
use e2e::process::ServiceProcess;
use e2e::static_server::StaticServer;

use crate::support::golden::{GoldenFiles, golden};
use crate::support::{PREFIX, Run, cincinnati_with, small_graph};

const TOKEN: &str = "s3cret-ops-token";
/// What the CLI says of a token the engine refuses (403).
const NOT_ALLOWED: &str = "the token from CINCINNATI_TOKEN is not one of the engine's \
                           rollouts.token_file, or its scope does not allow this (read: the \
                           rollouts and the fleet; pause: also pause; operate: everything)";
/// A token that may read the rollouts, not change them.
const READ_TOKEN: &str = "s3cret-dashboard-token";

/// An engine with rollout control: a rollout of 4.18.4 that starts in
/// 2999 (at 0% whenever the test runs, unless held), a fleet store and a
/// token file naming the token `ops` (scope operate) and a read token.
async fn controlling_engine(dir: &Path, upstream: &StaticServer) -> ServiceProcess {
    let policy = dir.join("policy.yaml");
    std::fs::write(
        &policy,
        "rollouts:\n  - {target: 4.18.4, start: \"2999-01-01T00:00:00Z\", duration_hours: 24}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tokens"),
        format!("# operators\nops {TOKEN}\ndashboard {READ_TOKEN} read\n"),
    )
    .unwrap();
    let store = format!("sqlite://{}", dir.join("fleet.db").display());
    crate::support::engine(
        dir,
        "rollout",
        upstream,
        &[
            "--fleet.store",
            &store,
            "--cluster_policy.file",
            policy.to_str().unwrap(),
            "--rollouts.token_file",
            dir.join("tokens").to_str().unwrap(),
        ],
    )
    .await
}

/// The engine's rollout control, as `--rollouts-url` names it.
fn rollouts_url(engine: &ServiceProcess) -> String {
    engine.status_url(&format!("{PREFIX}/v1/rollouts"))
}

/// `cincinnati --url <engine> rollout --rollouts-url <its control>
/// <question>`, with `CINCINNATI_TOKEN` set to `token` (empty: none).
fn rollout(engine: &ServiceProcess, token: &str, question: &[&str]) -> Run {
    let graph_url = e2e::policy_engine::graph_url(engine);
    let control = rollouts_url(engine);
    let args = [
        &["--url", &graph_url, "rollout", "--rollouts-url", &control],
        question,
    ]
    .concat();
    let run = cincinnati_with(&args, &[("CINCINNATI_TOKEN", token)]);
    if !token.is_empty() {
        assert!(
            !run.stdout.contains(token) && !run.stderr.contains(token),
            "the token is printed: {run:?}"
        );
    }
    run
}

/// `rollout` with the token and `-o json`, read back as the document.
fn rollouts(engine: &ServiceProcess, question: &[&str]) -> Rollouts {
    let run = rollout(engine, TOKEN, &[question, &["-o", "json"]].concat());
    assert_eq!(run.code, 0, "{question:?}: {run:?}");
    serde_json::from_str(&run.stdout).unwrap_or_else(|error| panic!("{error}: {run:?}"))
}

/// The one rollout of the document, that of 4.18.4.
fn only(document: &Rollouts) -> &RolloutView {
    assert_eq!(document.rollouts.len(), 1, "{document:?}");
    &document.rollouts[0]
}

/// `(action, by, reason)` of the last change of the rollout, and who
/// paused it, if it is paused.
fn last_change(rollout: &RolloutView) -> (&str, &str, &str, Option<&str>) {
    let control = rollout.control.as_ref().expect("the rollout is under control");
    let last = control.last.as_ref().expect("a change was made");
    (
        last.action.as_str(),
        last.by.as_str(),
        last.reason.as_str(),
        control.paused.as_ref().map(|pause| pause.by.as_str()),
    )
}

/// The table row of 4.18.4: target, line, offered, declared, where it is.
fn row(table: &str) -> Vec<&str> {
    let line = table
        .lines()
        .find(|line| line.starts_with("  4.18.4 "))
        .unwrap_or_else(|| panic!("no row of 4.18.4:\n{table}"));
    split_cells(line)
}

/// A table row's cells, split at runs of two spaces.
fn split_cells(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|cell| !cell.is_empty())
        .collect()
}

/// A token holder lists the rollout, pauses, resumes, holds and releases
/// it, each change answered with the rollouts after it and audited under
/// the token's name, in order.
#[tokio::test]
async fn a_token_holder_pauses_resumes_holds_and_releases_a_rollout_and_reads_the_audit() {
    let upstream = StaticServer::start(small_graph(), "application/json").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = controlling_engine(dir.path(), &upstream).await;

    let document = rollouts(&engine, &["list"]);
    assert_eq!(document.header.kind, "Rollouts");
    let untouched = only(&document);
    assert!(untouched.control.is_none() && document.history.is_empty());
    assert_eq!(
        (untouched.state.as_str(), untouched.progress),
        ("not-started", 0.0)
    );
    let listed = rollout(&engine, TOKEN, &["list"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    assert_eq!(
        row(&listed.stdout),
        ["4.18.4", "line 2", "0.0%", "0.0%", untouched.said.as_str()],
        "{}",
        listed.stdout
    );
    assert!(
        listed.stdout.ends_with("\nNo change made at run time.\n"),
        "{}",
        listed.stdout
    );

    // Paused with a reason: by the token's name.
    let paused = rollout(&engine, TOKEN, &["pause", "4.18.4", "--reason", "storage alarms"]);
    assert_eq!(paused.code, 0, "{paused:?}");
    let document = rollouts(&engine, &["list"]);
    let rollout_paused = only(&document);
    assert_eq!(rollout_paused.state, "paused");
    assert_eq!(
        last_change(rollout_paused),
        ("pause", "ops", "storage alarms", Some("ops"))
    );
    assert_eq!(
        paused.stdout.lines().next().unwrap_or_default(),
        format!("4.18.4: {}", rollout_paused.said),
        "the change's answer starts with where the rollout is"
    );
    let listed = rollout(&engine, TOKEN, &["list"]);
    assert_eq!(row(&listed.stdout)[4], rollout_paused.said, "{}", listed.stdout);

    let resumed = rollouts(&engine, &["resume", "4.18.4", "--reason", "firmware fixed"]);
    assert_eq!(
        last_change(only(&resumed)),
        ("resume", "ops", "firmware fixed", None)
    );
    assert_eq!(only(&resumed).state, "not-started");

    // Held at 90%: the progress is the hold, whatever the schedule.
    let held = rollouts(
        &engine,
        &["hold", "4.18.4", "--percent", "90", "--reason", "weekend push"],
    );
    assert_eq!(last_change(only(&held)), ("hold", "ops", "weekend push", None));
    assert_eq!((only(&held).state.as_str(), only(&held).progress), ("held", 90.0));
    let listed = rollout(&engine, TOKEN, &["list"]);
    let cells = row(&listed.stdout);
    assert_eq!((cells[2], cells[3]), ("90.0%", "0.0%"), "{}", listed.stdout);

    let released = rollouts(
        &engine,
        &["release", "4.18.4", "--reason", "let the clock decide"],
    );
    assert_eq!(
        last_change(only(&released)),
        ("release", "ops", "let the clock decide", None)
    );
    assert_eq!(
        (only(&released).state.as_str(), only(&released).progress),
        ("not-started", 0.0)
    );

    // The audit, oldest first, in the document and the table.
    let expected = [
        ("pause", "storage alarms"),
        ("resume", "firmware fixed"),
        ("hold", "weekend push"),
        ("release", "let the clock decide"),
    ];
    for question in [&["history"][..], &["history", "4.18.4"]] {
        let history = rollouts(&engine, question);
        let changes: Vec<(&str, &str)> = history
            .history
            .iter()
            .map(|entry| {
                assert_eq!((entry.target.as_str(), entry.by.as_str()), ("4.18.4", "ops"));
                (entry.action.as_str(), entry.reason.as_str())
            })
            .collect();
        assert_eq!(changes, expected, "{question:?}");
        assert_eq!(history.history[2].held_progress, Some(90.0));
    }
    let table = rollout(&engine, TOKEN, &["history"]);
    assert_eq!(table.code, 0, "{table:?}");
    let actions: Vec<&str> = table
        .stdout
        .lines()
        .filter(|line| line.contains("  4.18.4  "))
        .map(|line| split_cells(line)[2])
        .collect();
    assert_eq!(
        actions,
        ["pause", "resume", "hold at 90.0%", "release"],
        "{}",
        table.stdout
    );
    assert!(
        table
            .stdout
            .starts_with("4 changes of the rollouts at run time, oldest first:\n"),
        "{}",
        table.stdout
    );

    // A rollout the engine does not have: the answer is no.
    let stranger = rollout(&engine, TOKEN, &["history", "4.19.9"]);
    assert_eq!(
        (stranger.code, stranger.stderr.as_str()),
        (
            1,
            "cincinnati: the engine has no rollout of 4.19.9 and no change of one recorded\n"
        )
    );
    let stranger = rollout(&engine, TOKEN, &["pause", "4.19.9", "--reason", "x"]);
    assert_eq!(stranger.code, 1, "{stranger:?}");
    assert!(
        stranger.stderr.starts_with("cincinnati: cannot pause 4.19.9: "),
        "{}",
        stranger.stderr
    );
    assert_eq!(
        rollouts(&engine, &["history"]).history.len(),
        4,
        "nothing more audited"
    );
}

/// Without a token, with a wrong one, without a reason: refused, each
/// saying what to do, the token never printed; a token is read from
/// `--token-file` as the engine reads its own.
#[tokio::test]
async fn refusals_say_what_is_missing_and_a_token_file_is_read_as_the_engine_reads_it() {
    let upstream = StaticServer::start(small_graph(), "application/json").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = controlling_engine(dir.path(), &upstream).await;
    let control = rollouts_url(&engine);

    // What the engine said, then what to do about it.
    let refused = |run: &Run, status: &str, url: &str, what_to_do: &str| {
        assert_eq!(run.code, 3, "{run:?}");
        let said = format!("cincinnati: {url} answered {status} (");
        assert!(
            run.stderr.starts_with(&said)
                && run.stderr.ends_with(&format!("): {what_to_do}\n"))
                && run.stderr.lines().count() == 1,
            "{}",
            run.stderr
        );
    };
    refused(
        &rollout(&engine, "", &["list"]),
        "401",
        &control,
        "no token given: --token-file FILE or the environment variable CINCINNATI_TOKEN gives one of \
         the engine's rollouts.token_file",
    );
    refused(
        &rollout(&engine, "not-the-token", &["pause", "4.18.4", "--reason", "x"]),
        "403",
        &format!("{control}/4.18.4/pause?reason=x"),
        NOT_ALLOWED,
    );

    // A read token reads, and changes nothing.
    assert_eq!(rollout(&engine, READ_TOKEN, &["list"]).code, 0);
    refused(
        &rollout(&engine, READ_TOKEN, &["pause", "4.18.4", "--reason", "x"]),
        "403",
        &format!("{control}/4.18.4/pause?reason=x"),
        NOT_ALLOWED,
    );

    // A reason is needed, and something in it; a percentage is one.
    for (change, needs) in [
        (&["pause", "4.18.4"][..], "--reason <REASON>"),
        (&["hold", "4.18.4", "--reason", "x"], "--percent <PERCENT>"),
        (&["resume", "4.18.4", "--reason", "  "], "it cannot be blank"),
        (
            &["hold", "4.18.4", "--reason", "x", "--percent", "150"],
            "a number from 0 to 100",
        ),
    ] {
        rollout(&engine, TOKEN, change).assert_failed_saying(2, &[needs]);
    }
    assert!(
        rollouts(&engine, &["history"]).history.is_empty(),
        "nothing changed"
    );

    // --token-file: its first token, which the engine names in the audit.
    let token_file = dir.path().join("my-token");
    std::fs::write(&token_file, format!("# mine\n\nops {TOKEN}\nother token\n")).unwrap();
    let graph_url = e2e::policy_engine::graph_url(&engine);
    let args = [
        "--url",
        &graph_url,
        "rollout",
        "--rollouts-url",
        &control,
        "--token-file",
        token_file.to_str().unwrap(),
        "pause",
        "4.18.4",
        "--reason",
        "from a file",
    ];
    let run = cincinnati_with(&args, &[("CINCINNATI_TOKEN", "not-the-token")]);
    assert_eq!(run.code, 0, "--token-file wins over the environment: {run:?}");
    assert!(!run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN));
    let history = rollouts(&engine, &["history"]);
    assert_eq!(
        (history.history[0].by.as_str(), history.history[0].reason.as_str()),
        ("ops", "from a file")
    );
    std::fs::write(&token_file, "# none yet\n").unwrap();
    let run = cincinnati_with(&args, &[]);
    assert_eq!(
        (run.code, run.stderr),
        (
            2,
            format!(
                "cincinnati: --token-file {} holds no token (a line `name token [scope]`, or the token alone)\n",
                token_file.display()
            )
        )
    );
}

/// An engine without `rollouts.token_file` has no rollout control: the
/// answer says what it needs.
#[tokio::test]
async fn an_engine_without_rollout_control_is_told_apart_and_named() {
    let upstream = StaticServer::start(small_graph(), "application/json").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = crate::support::engine(dir.path(), "rollout", &upstream, &[]).await;
    for question in [&["list"][..], &["pause", "4.18.4", "--reason", "x"]] {
        rollout(&engine, TOKEN, question).assert_failed_saying(
            3,
            &[
                "answered 404 (does_not_exist: does not exist: path ",
                "no rollout control there",
                "only with rollouts.token_file in its settings",
            ],
        );
    }
}

/// Each table for a fixed document (an engine's answer, served as it is,
/// whatever the method): the JSON printed is the document received, or,
/// for one target's history, that target's part of it.
#[test]
fn every_rollout_table_prints_what_the_golden_files_hold() {
    let document = golden("rollouts.json");
    let server = StaticServer::start(document.clone().into_bytes(), "application/json").unwrap();
    let control = format!("{}{PREFIX}/v1/rollouts", server.url());
    let ask = |question: &[&str]| {
        let args = [&["rollout", "--rollouts-url", &control], question].concat();
        let run = cincinnati_with(&args, &[("CINCINNATI_TOKEN", TOKEN)]);
        assert_eq!(run.code, 0, "{question:?}: {run:?}");
        run.stdout
    };
    assert_eq!(ask(&["list", "-o", "json"]), document, "the document as received");
    let one: Rollouts = serde_json::from_str(&ask(&["history", "4.18.52", "-o", "json"])).unwrap();
    assert_eq!(
        (one.rollouts.len(), one.rollouts[0].target.as_str()),
        (1, "4.18.52")
    );
    assert!(one.history.iter().all(|entry| entry.target == "4.18.52"));

    let cases: [(&[&str], &str); 4] = [
        (&["list"], "rollout-list.txt"),
        (&["history"], "rollout-history.txt"),
        (&["history", "4.18.52"], "rollout-history-target.txt"),
        (
            &["pause", "4.18.52", "--reason", "storage alarms on 4.18.52"],
            "rollout-pause.txt",
        ),
    ];
    let mut golden_files = GoldenFiles::default();
    for (question, name) in cases {
        golden_files.check(name, &ask(question));
    }
    golden_files.assert_same();
}
