//! The engine side's processes: the upstream (a graph served from memory),
//! release policy-engines with and without a fleet store, their metrics,
//! and the CPU time and writes of a PostgreSQL server and of SQLite, read
//! from `/proc`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::{Service, cpu_seconds, free_port, metric, stat_fields};

pub const PREFIX: &str = "/api/upgrades_info";

/// A Graph API document served at any path, from memory, on a thread.
pub struct Upstream {
    server: Arc<tiny_http::Server>,
    pub port: u16,
}

impl Upstream {
    pub fn serve(graph: Vec<u8>) -> anyhow::Result<Self> {
        let server =
            Arc::new(tiny_http::Server::http("127.0.0.1:0").map_err(|error| anyhow::anyhow!("{error}"))?);
        let port = server
            .server_addr()
            .to_ip()
            .context("the upstream listens on TCP")?
            .port();
        let serving = server.clone();
        let graph = Arc::new(graph);
        std::thread::spawn(move || {
            let json =
                tiny_http::Header::from_bytes("Content-Type", "application/json").expect("a valid header");
            for request in serving.incoming_requests() {
                let response = tiny_http::Response::from_data(graph.as_slice()).with_header(json.clone());
                let _ = request.respond(response);
            }
        });
        Ok(Self { server, port })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/graph", self.port)
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

/// A release policy-engine, as a process.
pub struct Engine {
    pub name: String,
    pub service: Service,
    pub port: u16,
    pub status_port: u16,
    pub log: PathBuf,
    client: reqwest::Client,
}

/// How an engine is started.
pub struct EngineSettings<'a> {
    pub binary: &'a Path,
    pub upstream: &'a str,
    pub policy: &'a Path,
    /// `fleet.store`; none: not recording.
    pub store: Option<&'a str>,
    pub logs: &'a Path,
}

impl Engine {
    pub fn start(name: &str, settings: &EngineSettings<'_>) -> anyhow::Result<Self> {
        let (port, status_port) = (free_port()?, free_port()?);
        let log = settings.logs.join(format!("{name}.log"));
        let mut args = vec![
            "--service.address".to_owned(),
            "127.0.0.1".to_owned(),
            "--service.port".to_owned(),
            port.to_string(),
            "--status.address".to_owned(),
            "127.0.0.1".to_owned(),
            "--status.port".to_owned(),
            status_port.to_string(),
            "--service.path_prefix".to_owned(),
            PREFIX.to_owned(),
            "--upstream.cincinnati.url".to_owned(),
            settings.upstream.to_owned(),
            // The graph does not change during the run: no refetch to
            // measure.
            "--upstream.cincinnati.interval_secs".to_owned(),
            "3600".to_owned(),
            "--cluster_policy.file".to_owned(),
            settings.policy.display().to_string(),
        ];
        if let Some(store) = settings.store {
            args.extend(["--fleet.store".to_owned(), store.to_owned()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let service = Service::start_logged(settings.binary, &args, &log)?;
        Ok(Self {
            name: name.to_owned(),
            service,
            port,
            status_port,
            log,
            client: reqwest::Client::new(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.service.id()
    }

    /// A path on the status port.
    pub fn status_url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.status_port)
    }

    pub async fn wait_ready(&self, limit: Duration) -> anyhow::Result<()> {
        let url = self.status_url("/readyz");
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Ok(response) = self.client.get(&url).send().await
                && response.status().is_success()
            {
                return Ok(());
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "{} was not ready within {limit:?} (log: {})",
                self.name,
                self.log.display()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn metrics(&self) -> anyhow::Result<FleetCounters> {
        let text = self
            .client
            .get(self.status_url("/metrics"))
            .send()
            .await?
            .text()
            .await?;
        let checks = |outcome: &str| {
            metric(
                &text,
                &format!("cincinnati_pe_fleet_checks_total{{outcome=\"{outcome}\"}}"),
            ) as u64
        };
        Ok(FleetCounters {
            queued: checks("queued"),
            dropped: checks("dropped"),
            written: metric(&text, "cincinnati_pe_fleet_checks_written_total") as u64,
            unchanged: metric(&text, "cincinnati_pe_fleet_clusters_unchanged_total") as u64,
            store_errors: metric(&text, "cincinnati_pe_fleet_store_errors_total") as u64,
            queue_depth: metric(&text, "cincinnati_pe_fleet_queue_depth") as u64,
        })
    }

    /// `GET` of a status path, its body as JSON.
    pub async fn status_json(&self, path: &str) -> anyhow::Result<serde_json::Value> {
        let response = self.client.get(self.status_url(path)).send().await?;
        let status = response.status();
        let body = response.text().await?;
        anyhow::ensure!(status.is_success(), "{path}: {status}: {body}");
        Ok(serde_json::from_str(&body)?)
    }

    /// Waits until every queued check is written (or `limit` passed).
    pub async fn drained(&self, limit: Duration) -> anyhow::Result<FleetCounters> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let counters = self.metrics().await?;
            if counters.written >= counters.queued || tokio::time::Instant::now() >= deadline {
                return Ok(counters);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The fleet metrics of an engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct FleetCounters {
    pub queued: u64,
    pub dropped: u64,
    pub written: u64,
    /// Clusters left as stored (nothing new within the seen step).
    pub unchanged: u64,
    pub store_errors: u64,
    pub queue_depth: u64,
}

impl FleetCounters {
    /// The counts added since `before` (the queue depth as now).
    pub fn since(&self, before: &Self) -> Self {
        Self {
            queued: self.queued - before.queued,
            dropped: self.dropped - before.dropped,
            written: self.written - before.written,
            unchanged: self.unchanged - before.unchanged,
            store_errors: self.store_errors - before.store_errors,
            queue_depth: self.queue_depth,
        }
    }

    /// Two engines' counts together.
    pub fn plus(&self, other: &Self) -> Self {
        Self {
            queued: self.queued + other.queued,
            dropped: self.dropped + other.dropped,
            written: self.written + other.written,
            unchanged: self.unchanged + other.unchanged,
            store_errors: self.store_errors + other.store_errors,
            queue_depth: self.queue_depth + other.queue_depth,
        }
    }
}

/// CPU seconds of a PostgreSQL server: its postmaster (with the backends
/// that exited) and the processes it runs now.
pub fn server_cpu_seconds(postmaster: u32) -> f64 {
    cpu_seconds(postmaster, true)
        + server_children(postmaster)
            .map(|pid| cpu_seconds(pid, false))
            .sum::<f64>()
}

/// The processes PostgreSQL's `postmaster` has started (its backends,
/// checkpointer, autovacuum, ...), running now.
fn server_children(postmaster: u32) -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(move |pid| {
            stat_fields(*pid).is_some_and(|fields| fields.first() == Some(&u64::from(postmaster)))
        })
}

/// Runs PostgreSQL (the postmaster, its processes, and those it starts
/// later) at `niceness`: on two shared cores, the nearest thing to a
/// database on a machine of its own.
pub fn renice_server(postmaster: u32, niceness: i32) -> anyhow::Result<()> {
    let pids: Vec<String> = std::iter::once(postmaster)
        .chain(server_children(postmaster))
        .map(|pid| pid.to_string())
        .collect();
    let status = std::process::Command::new("renice")
        .args(["-n", &niceness.to_string(), "-p"])
        .args(&pids)
        .stdout(std::process::Stdio::null())
        .status()
        .context("running renice")?;
    anyhow::ensure!(status.success(), "renice of PostgreSQL's processes: {status}");
    Ok(())
}

/// Bytes process `pid` has written with `write` and its kin (`wchar` of
/// `/proc/{pid}/io`): for SQLite, its WAL and checkpoints.
pub fn written_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|line| line.strip_prefix("wchar:"))
                .and_then(|value| value.trim().parse().ok())
        })
        .unwrap_or(0)
}
