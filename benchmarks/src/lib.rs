//! Helpers the benchmark binaries share: child processes of the services,
//! their peak memory, and their Prometheus metrics; and the fleet
//! benchmark's parts ([`fleet`]).

pub mod fleet;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::LazyLock;
use std::time::Duration;

use anyhow::Context as _;

/// A service started as a child process, killed when dropped.
pub struct Service {
    child: Child,
}

impl Service {
    pub fn start(binary: &Path, args: &[&str]) -> anyhow::Result<Self> {
        Self::start_with_env(binary, args, &[])
    }

    /// [`Service::start`] with `env` added to the environment it inherits.
    pub fn start_with_env(binary: &Path, args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<Self> {
        let child = Command::new(binary)
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        Ok(Self { child })
    }

    /// [`Service::start`] with the service's standard error written to `log`
    /// (the services log to standard error).
    pub fn start_logged(binary: &Path, args: &[&str], log: &Path) -> anyhow::Result<Self> {
        let log = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let child = Command::new(binary)
            .args(args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        Ok(Self { child })
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The process's peak resident set size in MiB (`VmHWM`).
    pub fn peak_rss_mib(&self) -> anyhow::Result<f64> {
        self.memory_mib("VmHWM:")
    }

    /// The process's resident set size now, in MiB (`VmRSS`).
    pub fn rss_mib(&self) -> anyhow::Result<f64> {
        self.memory_mib("VmRSS:")
    }

    fn memory_mib(&self, field: &str) -> anyhow::Result<f64> {
        process_memory_mib(self.child.id(), field)
    }
}

/// The resident set size of process `pid` now, in MiB (`VmRSS`).
pub fn rss_mib(pid: u32) -> anyhow::Result<f64> {
    process_memory_mib(pid, "VmRSS:")
}

fn process_memory_mib(pid: u32, field: &str) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in /proc/{pid}/status"))?;
    Ok(kib / 1024.0)
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of one sample in Prometheus text (`name{labels} value`), or 0.
pub fn metric(text: &str, sample: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(sample)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Polls `url` until `done` holds for its body, or fails after `limit`.
///
/// One client for every poll: a client per request (`reqwest::get`) sets up
/// TLS and a connection each time, and that CPU, spent fifty times a second,
/// is taken from the registry and the graph-builder being measured.
pub async fn poll(url: &str, limit: Duration, done: impl Fn(&str) -> bool) -> anyhow::Result<String> {
    static CLIENT: LazyLock<reqwest::Client> = LazyLock::new(reqwest::Client::new);
    let (body, _) = registry_testkit::poll::until(url, limit, || async {
        let body = CLIENT.get(url).send().await?.text().await?;
        anyhow::ensure!(done(&body), "not there yet");
        Ok(body)
    })
    .await?;
    Ok(body)
}
