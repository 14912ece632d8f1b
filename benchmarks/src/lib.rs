//! Helpers the benchmark binaries share: child processes of the services,
//! their memory and CPU time, their Prometheus metrics, what a Graph API
//! answer offers; and the fleet benchmark's parts ([`fleet`]).

pub mod fleet;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::LazyLock;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;

/// The release binaries of the services a benchmark starts.
#[derive(clap::Args)]
pub struct Binaries {
    #[arg(long, default_value = "target/release/graph-builder")]
    pub graph_builder: PathBuf,
    #[arg(long, default_value = "target/release/policy-engine")]
    pub policy_engine: PathBuf,
}

/// The malloc settings of deploy/images/graph-builder.Dockerfile: one arena,
/// and large blocks always mapped, so they go back to the system when freed.
/// A benchmark runs the graph-builder as its image does.
pub const GRAPH_BUILDER_GLIBC_TUNING: [(&str, &str); 2] =
    [("MALLOC_ARENA_MAX", "1"), ("MALLOC_MMAP_THRESHOLD_", "131072")];

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

/// A free port on 127.0.0.1 (another process may take it before it is
/// bound: good enough for a benchmark).
pub fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Clock ticks per second of `/proc/*/stat` times, asked once.
static CLOCK_TICKS: LazyLock<f64> = LazyLock::new(|| {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
});

/// Fields of `/proc/{pid}/stat` after the command name (the first is the
/// state, field 3).
pub(crate) fn stat_fields(pid: u32) -> Option<Vec<u64>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    Some(
        after
            .split_whitespace()
            .skip(1)
            .map(|field| field.parse().unwrap_or(0))
            .collect(),
    )
}

/// User + system CPU seconds of process `pid` (and of its children waited
/// for, with `children`); 0 for a process that is gone.
pub fn cpu_seconds(pid: u32, children: bool) -> f64 {
    // After the state: ppid (4) is [0], utime (14) [10], stime [11],
    // cutime [12], cstime [13].
    let Some(fields) = stat_fields(pid) else {
        return 0.0;
    };
    let mut ticks = fields[10] + fields[11];
    if children {
        ticks += fields[12] + fields[13];
    }
    ticks as f64 / *CLOCK_TICKS
}

/// The 1-, 5- and 15-minute load averages.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The machine's CPU time so far, from `/proc/stat`: all of it and what
/// the hypervisor gave other guests (steal), in ticks. On a virtual
/// machine the load average does not show steal, and steal slows every
/// figure measured meanwhile: see [`CpuTime::stolen_percent`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTime {
    total: u64,
    stolen: u64,
}

impl CpuTime {
    pub fn now() -> Self {
        let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        // cpu user nice system idle iowait irq softirq steal guest guest_nice;
        // guest time is counted in user time already.
        let ticks: Vec<u64> = text
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .take(8)
            .filter_map(|field| field.parse().ok())
            .collect();
        Self {
            total: ticks.iter().sum(),
            stolen: ticks.get(7).copied().unwrap_or(0),
        }
    }

    /// The share of the machine's CPU time since `earlier` that was stolen.
    pub fn stolen_percent(&self, earlier: &Self) -> f64 {
        let total = self.total.saturating_sub(earlier.total);
        self.stolen.saturating_sub(earlier.stolen) as f64 * 100.0 / total.max(1) as f64
    }
}

/// p50, p99 and max of `values` (sorted in place); zeros when empty.
pub fn percentiles(values: &mut [f64]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    values.sort_by(f64::total_cmp);
    let at = |quantile: f64| values[((values.len() - 1) as f64 * quantile).round() as usize];
    (at(0.5), at(0.99), values[values.len() - 1])
}

/// The versions a Graph API answer offers (build metadata removed), and
/// its updates as (from, to).
pub struct Offered {
    pub versions: Vec<String>,
    pub updates: Vec<(String, String)>,
}

impl Offered {
    pub fn parse(graph: &Value) -> Self {
        let plain = |node: &Value| {
            let version = node["version"].as_str().unwrap_or_default();
            version.split('+').next().unwrap_or_default().to_owned()
        };
        let nodes = graph["nodes"].as_array().cloned().unwrap_or_default();
        let versions: Vec<String> = nodes.iter().map(plain).collect();
        let updates = graph["edges"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|edge| {
                let from = versions.get(usize::try_from(edge[0].as_u64()?).ok()?)?;
                let to = versions.get(usize::try_from(edge[1].as_u64()?).ok()?)?;
                Some((from.clone(), to.clone()))
            })
            .collect();
        Self { versions, updates }
    }

    pub fn offers_update(&self, from: &str, to: &str) -> bool {
        self.updates.iter().any(|(f, t)| f == from && t == to)
    }
}
