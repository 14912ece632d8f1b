//! Bulk work runs below the answers (`service_kit::priority`): in the
//! running engine, the HTTP servers' threads and the main runtime's
//! (upstream polls, revisions) keep the process's priority; the fleet's
//! rounds, and the SQLite fleet store's threads they open, run lower.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use process_testkit::TestChild;
use registry_testkit::poll;
use service_kit::priority::BACKGROUND_NICENESS;

/// The nice value in a thread's or process's `stat` file: its 19th field
/// (the name before it, in brackets, may hold spaces).
fn niceness(stat: &std::path::Path) -> Option<i32> {
    let stat = std::fs::read_to_string(stat).ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    after_name.split(' ').nth(16)?.parse().ok()
}

/// Each thread of process `pid`: its name and nice value.
fn threads_of(pid: u32) -> Vec<(String, i32)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let name = std::fs::read_to_string(task.path().join("comm")).ok()?;
            Some((name.trim().to_owned(), niceness(&task.path().join("stat"))?))
        })
        .collect()
}

/// Nice values by thread name, the index (`api-http-0`) left out.
fn niceness_by_kind(threads: &[(String, i32)]) -> BTreeMap<String, Vec<i32>> {
    let mut kinds: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for (name, nice) in threads {
        let kind = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-');
        kinds.entry(kind.to_owned()).or_default().push(*nice);
    }
    kinds
}

#[tokio::test]
async fn the_threads_that_answer_keep_the_process_priority_and_the_fleet_rounds_run_lower() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = process_testkit::command(env!("CARGO_BIN_EXE_policy-engine"));
    command
        .args(["--service.port", "0", "--status.port", "0"])
        .args(["--upstream.cincinnati.url", "http://127.0.0.1:9/graph"])
        .arg("--fleet.store")
        .arg(format!("sqlite://{}", dir.path().join("fleet.db").display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut engine = TestChild::spawn(command).expect("the engine starts");
    let pid = engine.id();
    poll::eventually("the engine's store opened", Duration::from_secs(30), || {
        let opened = threads_of(pid)
            .iter()
            .any(|(name, _)| name.starts_with("sqlx-sqlite"));
        async move { opened }
    })
    .await;
    let threads = threads_of(pid);
    engine.kill().unwrap();

    let process = niceness("/proc/self/stat".as_ref()).expect("this test's nice value");
    let background = (process + BACKGROUND_NICENESS).min(19);
    let kinds = niceness_by_kind(&threads);
    for answering in [
        "api-accept",
        "api-http",
        "status-accept",
        "status-http",
        "tokio-rt-worker",
    ] {
        assert!(
            kinds
                .get(answering)
                .is_some_and(|nices| nices.iter().all(|nice| *nice == process)),
            "{answering} at {process}: {kinds:?}"
        );
    }
    for background_kind in ["fleet-rounds", "sqlx-sqlite-wor"] {
        assert!(
            kinds
                .get(background_kind)
                .is_some_and(|nices| nices.iter().all(|nice| *nice == background)),
            "{background_kind} at {background}: {kinds:?}"
        );
    }
}
