//! What the graph-builder's tests share: a graph-builder running in the
//! test process on free ports, polling its `/status` with a deadline, the
//! fixture it serves, and one with every metric registered.

pub mod every_metric;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::anyhow;

use graph_builder::settings::Settings;
use graph_builder::state::{GraphStatus, Status};
use graph_builder::{Application, StopHandle};
use registry_testkit::poll;

/// A file of the 2021-11 fixture: its releases (`graph-gb-raw.json`) and
/// graph-data (`cincinnati-graph-data`).
pub fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fixtures/secondary-metadata/20211124.083150")
        .join(path)
}

/// A running graph-builder; stopped when dropped.
pub struct Running {
    /// Base URLs of the API and public servers (with the path prefix), and
    /// of the status server.
    pub api: String,
    pub public: String,
    pub status: String,
    pub http: reqwest::Client,
    stop: StopHandle,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.stop();
    }
}

/// Starts a graph-builder whose routes are under `prefix`.
pub async fn spawn(settings: &Settings, prefix: &str) -> Running {
    let application = Application::build(settings).unwrap();
    let running = Running {
        api: format!("http://{}{prefix}", application.address("api")),
        public: format!("http://{}{prefix}", application.address("public")),
        status: format!("http://{}", application.address("status")),
        http: reqwest::Client::new(),
        stop: application.stop_handle(),
    };
    tokio::spawn(application.run_until_stopped());
    running
}

impl Running {
    pub async fn get(&self, url: &str) -> reqwest::Response {
        self.http.get(url).send().await.unwrap()
    }

    /// `/status`, typed: a field renamed or gone fails the test.
    pub async fn status_document(&self) -> Status {
        self.get(&format!("{}/status", self.status))
            .await
            .json()
            .await
            .unwrap()
    }

    /// Polls `/status` until `done` holds, failing after a deadline.
    pub async fn wait_for(&self, what: &str, done: impl Fn(&Status) -> bool) -> Status {
        let waited = poll::until(what, Duration::from_secs(60), || async {
            let status = self.status_document().await;
            if done(&status) {
                Ok(status)
            } else {
                Err(anyhow!("{status:#?}"))
            }
        })
        .await;
        waited.unwrap_or_else(|error| panic!("{error}")).0
    }

    pub async fn wait_until_ready(&self) -> Status {
        self.wait_for("the first graph", |status| status.ready).await
    }
}

/// What the tests read of a status document.
pub trait StatusExt {
    /// The graph served; the test expects one.
    fn graph(&self) -> &GraphStatus;
    fn graph_data_error(&self) -> Option<&str>;
}

impl StatusExt for Status {
    fn graph(&self) -> &GraphStatus {
        self.graph.as_ref().expect("a graph is served")
    }

    fn graph_data_error(&self) -> Option<&str> {
        let source = self
            .sources
            .graph_data
            .as_ref()
            .expect("a graph-data source is configured");
        source
            .freshness
            .last_error()
            .map(|failure| failure.message.as_str())
    }
}
