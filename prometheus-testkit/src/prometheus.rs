//! Prometheus scraping test targets.

use std::net::SocketAddr;
use std::path::Path;

use crate::Error;
use crate::daemon::{Daemon, Program, quoted};

/// A running Prometheus; see the crate documentation.
pub struct Prometheus(Daemon);

impl Prometheus {
    /// Starts Prometheus scraping `targets` (`host:port`, their `/metrics`)
    /// every second, as the job `test`, and waits until it is ready. Call
    /// it within a tokio runtime.
    pub async fn start(targets: &[String]) -> Result<Self, Error> {
        Daemon::start(Program {
            name: "Prometheus",
            binaries: &["prometheus"],
            config: ("prometheus.yml", configuration(targets)),
            arguments,
        })
        .await
        .map(Self)
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        self.0.url()
    }

    /// What Prometheus logged so far, for a failing test's message.
    pub fn log(&self) -> String {
        self.0.log()
    }
}

fn configuration(targets: &[String]) -> String {
    let targets: Vec<String> = targets.iter().map(|target| quoted(target)).collect();
    format!(
        "global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: test
    static_configs:
      - targets: [{}]
",
        targets.join(", ")
    )
}

fn arguments(dir: &Path, config: &Path, address: SocketAddr) -> Vec<String> {
    vec![
        format!("--config.file={}", config.display()),
        format!("--storage.tsdb.path={}", dir.join("data").display()),
        format!("--web.listen-address={address}"),
        "--log.level=debug".to_owned(),
    ]
}
