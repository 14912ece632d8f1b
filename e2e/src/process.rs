//! One service binary as a child process: listening on ports it picks itself
//! (port 0) the first time and on the same ports after a restart, logging
//! JSON lines to a file, and killed when dropped — also when a test panics —
//! and by the kernel when the test process dies (`process_testkit::TestChild`).
//!
//! Port 0 avoids the race of picking a free port and handing it over: the
//! service binds, then logs where (`"... listening"` with `api`, `status`
//! and every server, the graph-builder's `public` one included, in
//! `servers`), and the harness reads it there.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, Seek as _, SeekFrom};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};

use anyhow::{Context as _, anyhow, bail, ensure};
use process_testkit::TestChild;
use serde_json::Value;

use crate::poll;

/// Log lines shown when a service fails to start or a test fails.
const FAILURE_LOG_LINES: usize = 25;

/// The servers a service runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The Graph API.
    Api,
    /// Probes, metrics and `/status`.
    Status,
    /// The graph-builder's `{prefix}/graph-data`.
    Public,
}

/// Where a running service listens, as it logged it.
#[derive(Debug, Clone, Copy)]
struct Listening {
    api: SocketAddr,
    status: SocketAddr,
    public: Option<SocketAddr>,
}

/// How a start-up ended.
enum StartUp {
    Listening(Listening),
    Exited(ExitStatus),
}

impl Listening {
    fn port(&self, listener: Listener) -> u16 {
        let address = match listener {
            Listener::Api => Some(self.api),
            Listener::Status => Some(self.status),
            Listener::Public => self.public,
        };
        address.map_or(0, |address| address.port())
    }
}

/// How to start one service.
#[derive(Debug, Clone)]
pub struct ServiceCommand {
    /// For messages: `graph-builder`, `policy-engine A`, ...
    pub name: String,
    pub program: PathBuf,
    pub arguments: Vec<OsString>,
    /// The flag that sets each listener's port.
    pub port_flags: Vec<(&'static str, Listener)>,
    /// stdout and stderr of every start are appended here.
    pub log: PathBuf,
    /// The status path that answers 200 once the service serves
    /// (`/readiness`, `/readyz`).
    pub readiness_probe: &'static str,
}

impl ServiceCommand {
    /// `service` (a policy-engine or a metadata-helper: an API and a status
    /// port, ready at `/readyz`) as an operator runs it: `config` written to
    /// `<service>-<id>.toml` in `workdir`, JSON logs to `<service>-<id>.log`.
    pub fn configured(
        workdir: &Path,
        service: &str,
        id: &str,
        name: String,
        config: &str,
    ) -> anyhow::Result<Self> {
        let config_file = workdir.join(format!("{service}-{id}.toml"));
        std::fs::write(&config_file, config).with_context(|| format!("writing {}", config_file.display()))?;
        Ok(Self {
            name,
            program: crate::binaries::service_binary(service)?,
            arguments: vec![
                "-c".into(),
                config_file.into(),
                "--log_format".into(),
                "json".into(),
            ],
            port_flags: vec![
                ("--service.port", Listener::Api),
                ("--status.port", Listener::Status),
            ],
            log: workdir.join(format!("{service}-{id}.log")),
            readiness_probe: "/readyz",
        })
    }
}

/// A service process (or a stopped one that remembers its ports).
#[derive(Debug)]
pub struct ServiceProcess {
    command: ServiceCommand,
    child: Option<TestChild>,
    listening: Listening,
    http: reqwest::Client,
}

impl ServiceProcess {
    /// Starts the service on ports of its choosing and waits until it is ready.
    pub async fn start(command: ServiceCommand) -> anyhow::Result<Self> {
        let (child, listening) = launch(&command, None).await?;
        let process = Self {
            command,
            child: Some(child),
            listening,
            http: reqwest::Client::new(),
        };
        process.await_ready().await?;
        Ok(process)
    }

    pub fn name(&self) -> &str {
        &self.command.name
    }

    /// The process id, while it runs (to read its memory, say).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(TestChild::id)
    }

    /// `http://<api address><path>`.
    pub fn api_url(&self, path: &str) -> String {
        format!("http://{}{path}", self.listening.api)
    }

    /// `http://<public address><path>`: the graph-builder's graph-data port.
    pub fn public_url(&self, path: &str) -> Option<String> {
        self.listening
            .public
            .map(|public| format!("http://{public}{path}"))
    }

    /// `http://<status address><path>`.
    pub fn status_url(&self, path: &str) -> String {
        format!("http://{}{path}", self.listening.status)
    }

    /// Kills the process with SIGKILL, as a crash or the OOM killer would:
    /// nothing gets a chance to be cleaned up or flushed.
    pub fn kill(&mut self) -> anyhow::Result<()> {
        if let Some(mut child) = self.child.take() {
            child
                .kill()
                .with_context(|| format!("killing {}", self.command.name))?;
        }
        Ok(())
    }

    /// Starts the service again on the ports it had, so whatever points at
    /// it finds it again (killing it first if it runs), and waits until it
    /// is ready.
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        self.kill()?;
        let (child, listening) = launch(&self.command, Some(self.listening)).await?;
        self.child = Some(child);
        self.listening = listening;
        self.await_ready().await
    }

    /// Waits until the status server answers the readiness probe with 200.
    async fn await_ready(&self) -> anyhow::Result<()> {
        let url = self.status_url(self.command.readiness_probe);
        let what = format!("{} to be ready", self.name());
        poll::until(&what, poll::STARTUP_TIMEOUT, || async {
            let answer = crate::http::get(&self.http, &url, None).await?;
            ensure!(answer.status == 200, "{url} answered {}", answer.status);
            Ok(())
        })
        .await
        .map(drop)
        .with_context(|| format!("its log ends with:\n{}", self.log_tail(FAILURE_LOG_LINES)))
    }

    /// The service's `/status` document.
    pub async fn status(&self) -> anyhow::Result<Value> {
        crate::http::get_json(&self.http, &self.status_url("/status")).await
    }

    /// Waits until the service's `/status` document satisfies `done`, and returns it.
    pub async fn await_status(&self, what: &str, done: impl Fn(&Value) -> bool) -> anyhow::Result<Value> {
        let what = format!("{}'s status to show {what}", self.name());
        let (status, _) = poll::until(&what, poll::CHANGE_TIMEOUT, || async {
            let status = self.status().await?;
            ensure!(done(&status), "{status:#}");
            Ok(status)
        })
        .await?;
        Ok(status)
    }

    /// The last `lines` lines of the log, for failure messages.
    fn log_tail(&self, lines: usize) -> String {
        tail(&self.command.log, lines)
    }
}

impl Drop for ServiceProcess {
    fn drop(&mut self) {
        // Kill only fails for a process that is already gone.
        let _ = self.kill();
        if std::thread::panicking() {
            eprintln!(
                "e2e: {} log ({}) ends with:\n{}\n",
                self.command.name,
                self.command.log.display(),
                self.log_tail(FAILURE_LOG_LINES)
            );
        }
    }
}

/// Spawns the service (on `ports`, or on free ports) and waits for its
/// "listening" log line. A service that exits first fails the start with
/// the end of its log.
async fn launch(
    command: &ServiceCommand,
    ports: Option<Listening>,
) -> anyhow::Result<(TestChild, Listening)> {
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&command.log)
        .with_context(|| format!("opening {}", command.log.display()))?;
    let start_of_this_run = log.metadata()?.len();
    let mut process = process_testkit::command(&command.program);
    process.args(&command.arguments);
    for (flag, listener) in &command.port_flags {
        let port = ports.map_or(0, |ports| ports.port(*listener));
        process.arg(flag).arg(port.to_string());
    }
    process
        // The harness chooses the log level; an inherited RUST_LOG could hide
        // the line that says where the service listens.
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    let mut child = TestChild::spawn(process)
        .with_context(|| format!("starting {} ({})", command.name, command.program.display()))?;
    let waited = poll::until(
        &format!("{} to log where it listens", command.name),
        poll::STARTUP_TIMEOUT,
        || {
            let exited = child.try_wait();
            async move {
                if let Some(status) = exited.context("checking on the process")? {
                    return Ok(StartUp::Exited(status));
                }
                read_listening(&command.log, start_of_this_run).map(StartUp::Listening)
            }
        },
    )
    .await;
    let failure = match waited {
        Ok((StartUp::Listening(listening), _)) => return Ok((child, listening)),
        Ok((StartUp::Exited(status), _)) => anyhow!("exited during start-up ({status})"),
        Err(timed_out) => {
            // Already failing: a kill error would hide the reason.
            let _ = child.kill();
            timed_out
        }
    };
    bail!(
        "{} did not start: {failure:#}\nits log ends with:\n{}",
        command.name,
        tail(&command.log, FAILURE_LOG_LINES)
    )
}

fn tail(log: &Path, lines: usize) -> String {
    match std::fs::read_to_string(log) {
        Ok(text) => {
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(error) => format!("(cannot read {}: {error})", log.display()),
    }
}

/// The addresses in the first "listening" line logged after `offset`.
fn read_listening(log: &Path, offset: u64) -> anyhow::Result<Listening> {
    let mut file = File::open(log).with_context(|| format!("opening {}", log.display()))?;
    file.seek(SeekFrom::Start(offset))?;
    for line in BufReader::new(file).lines() {
        let Ok(event) = serde_json::from_str::<Value>(&line?) else {
            continue;
        };
        let fields = &event["fields"];
        if fields["message"]
            .as_str()
            .is_some_and(|message| message.ends_with(" listening"))
        {
            return parse_listening(fields);
        }
    }
    bail!("no \"listening\" line in the log yet")
}

/// The addresses of a `"<service> listening"` line: `api` and `status` as
/// fields, every server (`public` too) in `servers` (`api=… public=…`).
fn parse_listening(fields: &Value) -> anyhow::Result<Listening> {
    let servers = fields["servers"].as_str().unwrap_or_default();
    let address = |key: &str| -> anyhow::Result<Option<SocketAddr>> {
        let listed = servers
            .split_whitespace()
            .find_map(|server| server.strip_prefix(key)?.strip_prefix('='));
        fields[key]
            .as_str()
            .or(listed)
            .map(|text| text.parse().with_context(|| format!("{key} = {text:?}")))
            .transpose()
    };
    Ok(Listening {
        api: address("api")?.context("no api address in the listening line")?,
        status: address("status")?.context("no status address in the listening line")?,
        public: address("public")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listening_line_gives_every_servers_address() {
        let fields = serde_json::json!({
            "message": "graph-builder listening",
            "api": "127.0.0.1:1",
            "status": "127.0.0.1:3",
            "servers": "api=127.0.0.1:1 public=127.0.0.1:2 status=127.0.0.1:3",
        });
        let listening = parse_listening(&fields).unwrap();
        assert_eq!(listening.public, Some("127.0.0.1:2".parse().unwrap()));
        assert_eq!(listening.status, "127.0.0.1:3".parse().unwrap());
        let engine = serde_json::json!({"api": "127.0.0.1:1", "status": "127.0.0.1:3"});
        assert_eq!(parse_listening(&engine).unwrap().public, None);
    }
}
