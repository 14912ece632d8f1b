//! Constant load from `wrk` (Debian's package; the scripts install it):
//! keep-alive connections asking one URL as fast as it answers. A Lua
//! script counts the nodes of every answer, so a run also tells the
//! smallest graph it was served.

use std::io::Write as _;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde_json::Value;
use tokio::process::{Child, Command};

const SCRIPT: &str = include_str!("wrk.lua");

/// The nodes of a Graph API answer, counted as the load script counts them.
pub fn count_nodes(body: &[u8]) -> u64 {
    body.windows(NODE_MARK.len())
        .filter(|window| *window == NODE_MARK)
        .count() as u64
}

/// What starts every node of a serialised graph (and nothing else).
const NODE_MARK: &[u8] = br#""version":""#;

/// One load run's settings.
#[derive(Debug, Clone)]
pub struct Load {
    pub url: String,
    pub connections: u32,
    pub threads: u32,
    pub duration: Duration,
    /// `Name: value` headers every request carries.
    pub headers: Vec<String>,
    /// Count the nodes of every answer ([`LoadResult::smallest_nodes`]).
    /// Costs the load generator more CPU than a large answer costs the
    /// server: only for loads that need it.
    pub count_nodes: bool,
}

impl Load {
    /// `connections` connections asking `url` for JSON, identity-encoded
    /// (so the script can count nodes), for `duration`.
    pub fn json(url: impl Into<String>, connections: u32, duration: Duration) -> Self {
        Self {
            url: url.into(),
            connections,
            threads: 2,
            duration,
            headers: vec!["Accept: application/json".to_owned()],
            count_nodes: false,
        }
    }

    /// The same load, counting the nodes of every answer.
    pub fn counting_nodes(self) -> Self {
        Self {
            count_nodes: true,
            ..self
        }
    }

    /// Starts `wrk`; [`Running::finish`] waits for its figures.
    pub fn start(&self) -> anyhow::Result<Running> {
        let mut script = tempfile::Builder::new().suffix(".lua").tempfile()?;
        script.write_all(SCRIPT.as_bytes())?;
        let mut command = Command::new("wrk");
        command
            .arg(format!("-t{}", self.threads))
            .arg(format!("-c{}", self.connections))
            .arg(format!("-d{}s", self.duration.as_secs().max(1)))
            .arg("--timeout")
            .arg("10s")
            .arg("-s")
            .arg(script.path());
        for header in &self.headers {
            command.arg("-H").arg(header);
        }
        if self.count_nodes {
            command.env("WRK_COUNT_NODES", "1");
        }
        let child = command
            .arg(&self.url)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("starting wrk (scripts/reliability/ install it)")?;
        Ok(Running {
            child,
            _script: script,
        })
    }

    /// Runs the load to its end.
    pub async fn run(&self) -> anyhow::Result<LoadResult> {
        self.start()?.finish().await
    }
}

/// A `wrk` run under way.
pub struct Running {
    child: Child,
    /// Deleted when the run is dropped, after `wrk` has read it.
    _script: tempfile::NamedTempFile,
}

impl Running {
    pub async fn finish(self) -> anyhow::Result<LoadResult> {
        let output = self.child.wait_with_output().await.context("waiting for wrk")?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let Some(line) = stdout.lines().find_map(|line| line.strip_prefix("WRK-RESULT ")) else {
            bail!(
                "wrk printed no result ({}):\n{stdout}\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
        };
        LoadResult::parse(line)
    }
}

/// What one load run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadResult {
    pub requests: u64,
    pub non_2xx: u64,
    /// Connect, read and write errors and timeouts.
    pub socket_errors: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Nodes of the smallest and largest 2xx answer (`None`: none came).
    pub smallest_nodes: Option<u64>,
    pub largest_nodes: Option<u64>,
    pub seconds: f64,
}

impl LoadResult {
    fn parse(line: &str) -> anyhow::Result<Self> {
        let json: Value = serde_json::from_str(line).with_context(|| format!("wrk's result {line:?}"))?;
        let number = |key: &str| {
            json[key]
                .as_f64()
                .with_context(|| format!("no {key} in {line:?}"))
        };
        let count = |key: &str| number(key).map(|value| value as u64);
        let nodes = |key: &str| number(key).map(|value| (value >= 0.0).then_some(value as u64));
        Ok(Self {
            requests: count("requests")?,
            non_2xx: count("non_2xx")?,
            socket_errors: count("connect_errors")?
                + count("read_errors")?
                + count("write_errors")?
                + count("timeouts")?,
            p50_ms: number("p50_ms")?,
            p99_ms: number("p99_ms")?,
            max_ms: number("max_ms")?,
            smallest_nodes: nodes("smallest_nodes")?,
            largest_nodes: nodes("largest_nodes")?,
            seconds: number("seconds")?,
        })
    }

    /// This run followed by `next`, as one: counts add up, latencies and
    /// graph sizes are the worst of the two.
    pub fn merge(&self, next: &LoadResult) -> LoadResult {
        let smallest = match (self.smallest_nodes, next.smallest_nodes) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        LoadResult {
            requests: self.requests + next.requests,
            non_2xx: self.non_2xx + next.non_2xx,
            socket_errors: self.socket_errors + next.socket_errors,
            p50_ms: self.p50_ms.max(next.p50_ms),
            p99_ms: self.p99_ms.max(next.p99_ms),
            max_ms: self.max_ms.max(next.max_ms),
            smallest_nodes: smallest,
            largest_nodes: self.largest_nodes.max(next.largest_nodes),
            seconds: self.seconds + next.seconds,
        }
    }

    pub fn requests_per_second(&self) -> f64 {
        self.requests as f64 / self.seconds.max(f64::EPSILON)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_scripts_result_line() {
        let line = r#"{"requests":120,"non_2xx":2,"connect_errors":1,"read_errors":2,"write_errors":0,"timeouts":3,"p50_ms":1.5,"p99_ms":9.25,"max_ms":20.0,"smallest_nodes":-1,"largest_nodes":7,"seconds":2.0}"#;
        let result = LoadResult::parse(line).unwrap();
        assert_eq!(result.requests, 120);
        assert_eq!(result.non_2xx, 2);
        assert_eq!(result.socket_errors, 6);
        assert_eq!(result.smallest_nodes, None);
        assert_eq!(result.largest_nodes, Some(7));
        assert_eq!(result.requests_per_second(), 60.0);

        let merged = result.merge(&LoadResult {
            smallest_nodes: Some(5),
            largest_nodes: Some(3),
            ..result.clone()
        });
        assert_eq!(merged.requests, 240);
        assert_eq!(merged.smallest_nodes, Some(5));
        assert_eq!(merged.largest_nodes, Some(7));
    }

    #[test]
    fn counts_nodes_not_the_documents_version() {
        let answer = br#"{"version":1,"nodes":[{"version":"4.1.0","payload":"p"},{"metadata":{},"version":"4.1.1"}],"edges":[[0,1]]}"#;
        assert_eq!(count_nodes(answer), 2);
    }
}
