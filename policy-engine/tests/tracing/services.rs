//! The services as child processes: one `service.name` per process is what
//! tells them apart in a trace, which services sharing one process (and one
//! global tracer) could not do.

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::eventually;

/// The `graph-builder` binary, built next to this test's directory
/// (`target/<profile>/deps/..`), as `cargo build` or a workspace test run
/// leaves it.
pub fn graph_builder_binary() -> PathBuf {
    let test = std::env::current_exe().expect("the test knows its executable");
    let binary = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test runs from target/<profile>/deps")
        .join("graph-builder");
    assert!(
        binary.is_file(),
        "{} is missing: run `cargo build -p graph-builder` first",
        binary.display()
    );
    binary
}

pub fn policy_engine_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_policy-engine"))
}

/// A running service, killed when dropped.
pub struct Service {
    pub name: &'static str,
    pub api: SocketAddr,
    pub status: SocketAddr,
    child: Child,
    log: Arc<Mutex<String>>,
}

impl Service {
    /// Starts `program` on free loopback ports, exporting spans to
    /// `otlp_endpoint` as `service.instance.id` `name`, and waits until it
    /// logs where it listens.
    pub async fn start(
        name: &'static str,
        program: PathBuf,
        arguments: &[&str],
        otlp_endpoint: &str,
    ) -> Self {
        let mut command = Command::new(&program);
        command
            .args(arguments)
            .args(["-v", "--log_format", "json"])
            .args(["--service.address", "127.0.0.1", "--service.port", "0"])
            .args(["--status.address", "127.0.0.1", "--status.port", "0"]);
        // Whatever the environment says about telemetry, the test decides.
        for (variable, _) in std::env::vars_os() {
            if variable.to_string_lossy().starts_with("OTEL_") || variable == "RUST_LOG" {
                command.env_remove(variable);
            }
        }
        let mut child = command
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_endpoint)
            .env("OTEL_RESOURCE_ATTRIBUTES", format!("service.instance.id={name}"))
            .env("OTEL_BSP_SCHEDULE_DELAY", "100")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("starting {name} ({}): {error}", program.display()));
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let (api, status) = eventually(&format!("{name} to listen"), async || {
            let log = log.lock().unwrap();
            listening(&log).ok_or_else(|| format!("no \"listening\" line yet; log:\n{log}"))
        })
        .await;
        Self {
            name,
            api,
            status,
            child,
            log,
        }
    }

    pub fn url(&self, path_and_query: &str) -> String {
        format!("http://{}{path_and_query}", self.api)
    }

    /// Waits until the readiness probe at `path` answers 200.
    pub async fn wait_ready(&self, path: &str) {
        let url = format!("http://{}{path}", self.status);
        eventually(
            &format!("{} to be ready", self.name),
            async || match reqwest::get(&url).await {
                Ok(response) if response.status() == 200 => Ok(()),
                _ => Err(format!("not ready; log:\n{}", self.log())),
            },
        )
        .await;
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        // Fails only for a process that already exited.
        let _ = self.child.kill().and_then(|()| self.child.wait().map(drop));
    }
}

/// The API and status addresses from the "... listening" log line.
fn listening(log: &str) -> Option<(SocketAddr, SocketAddr)> {
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|event| event["fields"].clone())
        .find(|fields| {
            fields["message"]
                .as_str()
                .is_some_and(|message| message.ends_with(" listening"))
        })
        .and_then(|fields| {
            let address = |key: &str| fields[key].as_str()?.parse().ok();
            Some((address("api")?, address("status")?))
        })
}
