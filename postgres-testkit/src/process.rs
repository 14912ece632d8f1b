//! The `postgres` child process, the log it writes, and the short-lived
//! commands around it (`initdb`, `pg_isready`, `createdb`).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use process_testkit::TestChild;
use rustix::process::Signal;

use crate::error::Error;

/// How many log lines to keep for error messages.
const LOG_LINES: usize = 60;
/// How long a signalled server may take to exit before it is killed outright.
/// PostgreSQL itself kills its children 5 s into an immediate shutdown.
const EXIT_TIMEOUT: Duration = Duration::from_secs(30);
const EXIT_POLL_INTERVAL: Duration = Duration::from_millis(10);
/// How long to wait, once the server has exited, for its last log lines.
const LOG_DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// The last lines the server wrote on stderr (where it logs), across restarts.
#[derive(Debug, Default)]
pub(crate) struct ServerLog {
    lines: Mutex<VecDeque<String>>,
}

impl ServerLog {
    pub(crate) fn tail(&self) -> String {
        self.lock()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn record(&self, line: String) {
        let mut lines = self.lock();
        if lines.len() == LOG_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The reader only pushes, so a poisoned lock still holds consistent lines.
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<String>> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running postmaster, our child: a `process_testkit::TestChild`, spawned
/// by a thread that lives as long as it, since the kernel's parent-death
/// signal (see [`crate::binaries::ServerUser::command`]) fires when the
/// *thread* that spawned a process ends, not the process. Spawned by a
/// test's thread (or a runtime's), the server would die with that thread:
/// at the end of the test that started a server shared by several tests,
/// or when a blocking-pool thread retires.
#[derive(Debug)]
pub(crate) struct Postmaster {
    child: TestChild,
    /// Disconnects when the log reader has read everything.
    log_read: mpsc::Receiver<()>,
}

impl Postmaster {
    pub(crate) fn spawn(mut command: Command, log: &Arc<ServerLog>) -> Result<Self, Error> {
        let description = describe(&command);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = TestChild::spawn(command).map_err(|source| Error::Spawn {
            command: description,
            source,
        })?;
        let log_read = match child.take_stderr() {
            Some(stderr) => {
                let log = Arc::clone(log);
                read_lines(stderr, move |line| log.record(line))
            }
            None => mpsc::channel().1,
        };
        Ok(Self { child, log_read })
    }

    /// `Some(description)` once the process has exited, and then its last
    /// words are in the log.
    pub(crate) fn exit_status(&mut self) -> Option<String> {
        let status = match self.child.try_wait() {
            Ok(status) => status?.to_string(),
            Err(error) => format!("unknown exit status: {error}"),
        };
        // Bounded: a child of the server that outlived it may hold the pipe.
        let _ = self.log_read.recv_timeout(LOG_DRAIN_TIMEOUT);
        Some(status)
    }

    /// Sends `signal` (PostgreSQL's shutdown modes: `INT` fast, `QUIT`
    /// immediate) and waits until the server has exited, which it does only
    /// after its own children; kills it outright if it takes longer than
    /// [`EXIT_TIMEOUT`].
    pub(crate) fn shut_down(&mut self, signal: Signal) -> std::io::Result<()> {
        self.child.signal(signal)?;
        let deadline = Instant::now() + EXIT_TIMEOUT;
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            thread::sleep(EXIT_POLL_INTERVAL);
        }
        self.child.kill()
    }
}

impl Drop for Postmaster {
    fn drop(&mut self) {
        // A destructor cannot report errors; the data is thrown away, so the
        // quickest shutdown will do. (The child, dropped next, kills what
        // is left of its process group.)
        let _ = self.shut_down(Signal::QUIT);
    }
}

/// Runs `command` to completion, without blocking the runtime, and returns
/// its output if it succeeded. Killed if the future is dropped.
pub(crate) async fn run(command: Command) -> Result<Output, Error> {
    let description = describe(&command);
    let mut command = tokio::process::Command::from(command);
    command.stdin(Stdio::null()).kill_on_drop(true);
    let output = command.output().await.map_err(|source| Error::Spawn {
        command: description.clone(),
        source,
    })?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(Error::CommandFailed {
            command: description,
            status: output.status.to_string(),
            output_tail: output_tail(&output),
        })
    }
}

/// A command with no `PG*` variables from the test's environment, which
/// would otherwise override its arguments' defaults (`PGHOST`, `PGOPTIONS`,
/// `PGSSLMODE`, `PGDATA`, ...).
pub(crate) fn clean_command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    without_pg_environment(&mut command);
    command
}

pub(crate) fn without_pg_environment(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"PG") {
            command.env_remove(name);
        }
    }
}

/// The program and its arguments, space-separated, for error messages.
pub(crate) fn describe(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The last lines of stdout and stderr, stderr last.
fn output_tail(output: &Output) -> String {
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout).trim_end(),
        String::from_utf8_lossy(&output.stderr).trim_end()
    );
    let lines: Vec<&str> = text.trim().lines().collect();
    lines[lines.len().saturating_sub(LOG_LINES)..].join("\n")
}

/// Reads `source` line by line on a thread that ends when every process
/// holding it open has exited; the receiver disconnects then.
fn read_lines(
    source: impl Read + Send + 'static,
    mut on_line: impl FnMut(String) + Send + 'static,
) -> mpsc::Receiver<()> {
    let (done, read) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(source).lines().map_while(Result::ok) {
            on_line(line);
        }
        drop(done);
    });
    read
}
