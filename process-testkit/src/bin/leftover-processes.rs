//! Whether a test suite left processes running (`scripts/test.sh`).
//!
//! ```text
//! leftover-processes snapshot FILE        # before the suite
//! leftover-processes check FILE MARKER    # after it; MARKER: the suite's
//!                                         # CINCINNATI_TEST_RUN value
//! ```
//!
//! `check` runs in the suite's session (the rules are in
//! `process_testkit::leftovers`). It allows what is left a few seconds to
//! exit (a process killed at the end of the last test may not be gone
//! yet), then names every process still running, kills it, and fails. It
//! prints nothing when nothing is left, so the suite's summary stays the
//! last line of the log.

use std::collections::HashSet;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use process_testkit::RUN_MARKER;
use process_testkit::leftovers::{Seen, Suite};
use process_testkit::processes::{self, Process};

/// How long what is left may take to exit, and what is killed to be gone.
const GRACE: Duration = Duration::from_secs(10);
const POLL_INTERVAL: Duration = Duration::from_millis(200);

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let result = match arguments.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["snapshot", file] => snapshot(file),
        ["check", file, marker] => check(file, marker),
        _ => Err("usage: leftover-processes snapshot FILE | check FILE MARKER".to_owned()),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("leftover-processes: {error}");
            ExitCode::from(2)
        }
    }
}

fn snapshot(file: &str) -> Result<bool, String> {
    let lines: String = processes::all()
        .iter()
        .map(|process| format!("{} {}\n", process.pid, process.start_time))
        .collect();
    std::fs::write(file, lines).map_err(|error| format!("writing {file}: {error}"))?;
    Ok(true)
}

fn check(file: &str, marker: &str) -> Result<bool, String> {
    let text = std::fs::read_to_string(file).map_err(|error| format!("reading {file}: {error}"))?;
    let before = text
        .lines()
        .map(|line| {
            let (pid, start_time) = line.split_once(' ')?;
            Some((pid.parse().ok()?, start_time.parse().ok()?))
        })
        .collect::<Option<HashSet<(u32, u64)>>>()
        .ok_or_else(|| format!("{file} is not a snapshot"))?;
    let me = Process::read(std::process::id()).ok_or("this process is not in /proc")?;
    let suite = Suite {
        before,
        session: me.session,
    };
    let entry = format!("{RUN_MARKER}={marker}");
    let started = Instant::now();
    loop {
        let now: Vec<Seen> = processes::all()
            .into_iter()
            .filter(|process| process.pid != me.pid)
            .map(|process| Seen {
                marked: process.has_environment_entry(&entry),
                process,
            })
            .collect();
        let left: Vec<&Seen> = suite.left_over(&now);
        if left.is_empty() {
            return Ok(true);
        }
        if started.elapsed() >= GRACE {
            report_and_kill(&left);
            return Ok(false);
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

fn report_and_kill(left: &[&Seen]) {
    eprintln!(
        "leftover-processes: the test suite left {} process(es) running (killed now):",
        left.len()
    );
    for seen in left {
        let process = &seen.process;
        eprintln!(
            "  pid {} ({}), parent {}, group {}{}: {}",
            process.pid,
            process.name,
            process.parent,
            process.group,
            if seen.marked {
                ", started by the suite"
            } else {
                ", orphaned in the suite's session"
            },
            process.command_line()
        );
    }
    for seen in left {
        if let Some(pid) = rustix::process::Pid::from_raw(seen.process.pid as i32)
            && seen.process.runs()
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
    let killed = Instant::now();
    while killed.elapsed() < GRACE && left.iter().any(|seen| seen.process.runs()) {
        std::thread::sleep(POLL_INTERVAL);
    }
}
