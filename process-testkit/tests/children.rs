//! Children started through the testkit stop with what started them: when
//! dropped, with everything they started; when the process that started
//! them is killed; and `leftover-processes` names and kills what a suite
//! left.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use process_testkit::processes::{self, Process};
use process_testkit::{RUN_MARKER, TestChild, command};
use rustix::process::Signal;

/// Generous: a bound on a hung test, not a measurement.
const DEADLINE: Duration = Duration::from_secs(30);

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < DEADLINE, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_dropped_child_takes_what_it_started_with_it() {
    let mut shell = command("sh");
    shell.args(["-c", "sleep 600 & sleep 600 & wait"]);
    let child = TestChild::spawn(shell).unwrap();
    let group = child.id();
    wait_until("the shell and its two sleeps run", || {
        processes::running_in_group(group).len() == 3
    });

    drop(child);
    assert_eq!(processes::running_in_group(group), []);
}

#[test]
fn a_signal_reaches_the_program_itself() {
    let mut sleep = command("sleep");
    sleep.arg("600");
    let mut child = TestChild::spawn(sleep).unwrap();
    wait_until("setpriv has exec'd sleep", || {
        Process::read(child.id()).is_some_and(|process| process.name == "sleep")
    });

    child.signal(Signal::TERM).unwrap();
    let mut status = None;
    wait_until("sleep exits", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status.unwrap()),
        Some(Signal::TERM.as_raw())
    );
}

#[test]
fn children_die_with_the_process_that_started_them() {
    let mut owner = Command::new(env!("CARGO_BIN_EXE_process-testkit-owner"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(owner.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let groups: Vec<u32> = line
        .trim()
        .strip_prefix("groups=")
        .unwrap_or_else(|| panic!("the owner said {line:?}"))
        .split(' ')
        .map(|group| group.parse().unwrap())
        .collect();
    let (sleep, tree) = (groups[0], groups[1]);
    wait_until("the owner's children run", || {
        processes::running_in_group(sleep).len() == 1 && processes::running_in_group(tree).len() == 3
    });

    owner.kill().unwrap();
    owner.wait().unwrap();
    wait_until("both groups are gone", || {
        processes::running_in_group(sleep).is_empty() && processes::running_in_group(tree).is_empty()
    });
}

#[test]
fn the_check_names_and_kills_what_was_left_and_nothing_that_ran_before() {
    let work = tempfile::tempdir().unwrap();
    let snapshot = work.path().join("before");
    let leftover_processes = env!("CARGO_BIN_EXE_leftover-processes");
    // Ran before: not left over, though orphaned and in this session.
    let earlier = Orphan::start(&[], false);
    let status = Command::new(leftover_processes)
        .arg("snapshot")
        .arg(&snapshot)
        .status()
        .unwrap();
    assert!(status.success());
    let marker = format!("check-test-{}", std::process::id());
    // One marked (in a session of its own, as a daemon would be) and one
    // that cleared its environment, orphaned in this session.
    let marked = Orphan::start(&[(RUN_MARKER, marker.as_str())], true);
    let unmarked = Orphan::start(&[], false);

    let output = Command::new(leftover_processes)
        .arg("check")
        .arg(&snapshot)
        .arg(&marker)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{said}");
    for left in [&*marked, &*unmarked] {
        assert!(said.contains(&format!("pid {} (sleep)", left.pid)), "{said}");
        assert!(!left.runs(), "{left:?} was not killed");
    }
    assert!(!said.contains(&format!("pid {} ", earlier.pid)), "{said}");
    assert!(earlier.runs());
}

/// A `sleep` whose parent shell has exited; killed when dropped, so a
/// failing test leaves none.
struct Orphan(Process);

impl std::ops::Deref for Orphan {
    type Target = Process;

    fn deref(&self) -> &Process {
        &self.0
    }
}

impl Drop for Orphan {
    fn drop(&mut self) {
        if self.0.runs()
            && let Some(pid) = rustix::process::Pid::from_raw(self.0.pid as i32)
        {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
}

impl Orphan {
    /// With `environment` only, in this session or in one of its own.
    fn start(environment: &[(&str, &str)], own_session: bool) -> Self {
        Self(orphan(environment, own_session))
    }
}

fn orphan(environment: &[(&str, &str)], own_session: bool) -> Process {
    let mut shell = if own_session {
        let mut setsid = Command::new("setsid");
        setsid.arg("sh");
        setsid
    } else {
        Command::new("sh")
    };
    let output = shell
        .args(["-c", "sleep 600 >/dev/null 2>&1 & echo $!"])
        .env_clear()
        .envs(environment.iter().copied())
        .env("PATH", std::env::var_os("PATH").unwrap())
        .output()
        .unwrap();
    let pid = String::from_utf8(output.stdout).unwrap().trim().parse().unwrap();
    let orphan = Process::read(pid).expect("the orphan runs");
    let this_session = Process::read(std::process::id()).unwrap().session;
    assert_eq!(orphan.session != this_session, own_session, "{orphan:?}");
    orphan
}
