//! The `docker-registry` child process and the output it writes.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use process_testkit::TestChild;

use crate::access_log::LoggedRequest;
use crate::error::Error;

const REGISTRY_BINARY: &str = "docker-registry";
/// How many stderr lines to keep for error messages.
const DIAGNOSTIC_LINES: usize = 40;

/// What the registry wrote, collected by reader threads. It outlives each
/// process, so the request log spans stops and restarts.
#[derive(Debug, Default)]
pub(crate) struct ProcessOutput {
    requests: Mutex<Vec<LoggedRequest>>,
    diagnostics: Mutex<VecDeque<String>>,
}

impl ProcessOutput {
    pub(crate) fn requests(&self) -> Vec<LoggedRequest> {
        lock(&self.requests).clone()
    }

    pub(crate) fn clear_requests(&self) {
        lock(&self.requests).clear();
    }

    pub(crate) fn has_request_from(&self, user_agent: &str) -> bool {
        lock(&self.requests)
            .iter()
            .any(|request| request.user_agent == user_agent)
    }

    pub(crate) fn diagnostics_tail(&self) -> String {
        lock(&self.diagnostics)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn record_access_line(&self, line: &str) {
        if let Some(request) = LoggedRequest::parse(line) {
            lock(&self.requests).push(request);
        }
    }

    fn record_diagnostic_line(&self, line: String) {
        let mut diagnostics = lock(&self.diagnostics);
        if diagnostics.len() == DIAGNOSTIC_LINES {
            diagnostics.pop_front();
        }
        diagnostics.push_back(line);
    }
}

/// The readers only push and clone, so a poisoned lock still holds consistent data.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running `docker-registry serve CONFIG`; killed when dropped, and by
/// the kernel when the test process dies (`process_testkit::TestChild`).
#[derive(Debug)]
pub(crate) struct RegistryProcess {
    child: TestChild,
}

impl RegistryProcess {
    pub(crate) fn spawn(config: &Path, output: &Arc<ProcessOutput>) -> Result<Self, Error> {
        let spawn_error = |source| Error::Spawn {
            binary: REGISTRY_BINARY.to_owned(),
            source,
        };
        if process_testkit::find_program(REGISTRY_BINARY).is_none() {
            return Err(spawn_error(std::io::ErrorKind::NotFound.into()));
        }
        let mut command = process_testkit::command(REGISTRY_BINARY);
        command
            .arg("serve")
            .arg(config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = TestChild::spawn(command).map_err(spawn_error)?;
        if let Some(stdout) = child.take_stdout() {
            let output = Arc::clone(output);
            read_lines(stdout, move |line| output.record_access_line(&line));
        }
        if let Some(stderr) = child.take_stderr() {
            let output = Arc::clone(output);
            read_lines(stderr, move |line| output.record_diagnostic_line(line));
        }
        Ok(Self { child })
    }

    /// `Some(description)` once the process has exited.
    pub(crate) fn exit_status(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(status) => status.map(|status| status.to_string()),
            Err(error) => Some(format!("unknown exit status: {error}")),
        }
    }

    pub(crate) fn terminate(mut self) -> std::io::Result<()> {
        self.child.kill()
    }
}

/// Reads `source` line by line on a thread that ends when the process closes it.
fn read_lines(source: impl Read + Send + 'static, mut on_line: impl FnMut(String) + Send + 'static) {
    thread::spawn(move || {
        for line in BufReader::new(source).lines().map_while(Result::ok) {
            on_line(line);
        }
    });
}
