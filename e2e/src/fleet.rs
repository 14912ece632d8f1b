//! The fleet view across real processes: policy-engines recording the
//! update checks of simulated clusters in a store (a SQLite file, or a
//! throw-away PostgreSQL several engines share), the fleet answers read
//! back typed, and the test's own count of what the clusters said
//! ([`Census`]), which shares no code with the engines.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, ensure};
use cincinnati_client::fleet::{FleetAdoption, FleetCluster, FleetRollouts, FleetVersions};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::client_graph::ClientGraph;
use crate::graph_builder::PATH_PREFIX;
use crate::http;
use crate::policy_engine::{self, graph_url};
use crate::poll;
use crate::process::ServiceProcess;

/// Milliseconds between two writing rounds of the tests' engines: a check
/// reaches the store soon after its request.
const FLUSH_INTERVAL_MS: &str = "50";

/// How an engine records: its store and, for a small queue, its bounds.
#[derive(Debug, Clone)]
pub struct Recording {
    /// `sqlite:///path` or `postgres://...`.
    pub store: String,
    /// `fleet.queue_capacity` and `fleet.batch_size`; the defaults when
    /// `None`.
    pub bounds: Option<(usize, usize)>,
}

impl Recording {
    pub fn to(store: impl Into<String>) -> Self {
        Self {
            store: store.into(),
            bounds: None,
        }
    }

    /// The same store, with at most `queue_capacity` checks queued and
    /// `batch_size` per write.
    pub fn bounded(self, queue_capacity: usize, batch_size: usize) -> Self {
        Self {
            bounds: Some((queue_capacity, batch_size)),
            ..self
        }
    }

    fn flags(&self) -> Vec<String> {
        let mut flags = vec![
            "--fleet.store".to_owned(),
            self.store.clone(),
            "--fleet.flush_interval_ms".to_owned(),
            FLUSH_INTERVAL_MS.to_owned(),
            // Answers as of now: the tests compare them with their own count at once.
            "--fleet.count_interval_secs".to_owned(),
            "0".to_owned(),
        ];
        if let Some((queue_capacity, batch_size)) = self.bounds {
            flags.extend([
                "--fleet.queue_capacity".to_owned(),
                queue_capacity.to_string(),
                "--fleet.batch_size".to_owned(),
                batch_size.to_string(),
            ]);
        }
        flags
    }
}

/// Starts engine `id` on `upstream_graph_url`, recording as `recording`
/// says, with `extra` flags (a policy file, say), and waits until it is
/// ready.
pub async fn start_engine(
    workdir: &Path,
    id: &str,
    upstream_graph_url: &str,
    recording: &Recording,
    extra: &[&str],
) -> anyhow::Result<ServiceProcess> {
    let mut flags = recording.flags();
    flags.extend(extra.iter().map(|flag| (*flag).to_owned()));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    policy_engine::start_with(workdir, id, upstream_graph_url, &flags).await
}

/// What a cluster says when it asks for its updates.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reported {
    pub channel: String,
    pub arch: String,
    pub version: String,
}

impl Reported {
    pub fn new(channel: &str, arch: &str, version: &str) -> Self {
        Self {
            channel: channel.to_owned(),
            arch: arch.to_owned(),
            version: version.to_owned(),
        }
    }

    /// The same cluster on `version`.
    pub fn on(&self, version: &str) -> Self {
        Self {
            version: version.to_owned(),
            ..self.clone()
        }
    }
}

/// The test's own count: what each cluster said when it last asked, and
/// how many checks each engine was sent.
#[derive(Debug, Clone, Default)]
pub struct Census {
    clusters: BTreeMap<String, Reported>,
    /// Checks answered, by engine name.
    checks: BTreeMap<String, u64>,
}

impl Census {
    /// Asks `engine` as cluster `id` reporting `reported` would (the CVO's
    /// query: channel, arch, id, version), counts the check, and returns
    /// the graph the engine answered.
    pub async fn check(
        &mut self,
        http: &reqwest::Client,
        engine: &ServiceProcess,
        id: &str,
        reported: &Reported,
    ) -> anyhow::Result<ClientGraph> {
        let graph = ask(http, engine, id, reported).await?;
        self.clusters.insert(id.to_owned(), reported.clone());
        *self.checks.entry(engine.name().to_owned()).or_default() += 1;
        Ok(graph)
    }

    /// What `id` last reported.
    pub fn reported(&self, id: &str) -> Option<&Reported> {
        self.clusters.get(id)
    }

    /// Checks sent to `engine` and answered.
    pub fn checks(&self, engine: &ServiceProcess) -> u64 {
        self.checks.get(engine.name()).copied().unwrap_or_default()
    }

    /// Clusters per (channel, arch, version), each once.
    pub fn versions(&self) -> BTreeMap<Reported, u64> {
        let mut counts = BTreeMap::new();
        for reported in self.clusters.values() {
            *counts.entry(reported.clone()).or_default() += 1;
        }
        counts
    }

    pub fn len(&self) -> usize {
        self.clusters.len()
    }

    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty()
    }
}

/// Asks `engine` as cluster `id` reporting `reported`; anything but a 200
/// with a graph is an error.
pub async fn ask(
    http: &reqwest::Client,
    engine: &ServiceProcess,
    id: &str,
    reported: &Reported,
) -> anyhow::Result<ClientGraph> {
    let url = format!(
        "{}?channel={}&arch={}&id={id}&version={}",
        graph_url(engine),
        reported.channel,
        reported.arch,
        reported.version
    );
    let answer = http::get(http, &url, Some("application/json")).await?;
    ensure!(
        answer.status == 200,
        "{} answered {url} with {}: {}",
        engine.name(),
        answer.status,
        String::from_utf8_lossy(&answer.body)
    );
    ClientGraph::from_served(&answer.json()?).with_context(|| format!("{}'s answer to {url}", engine.name()))
}

/// An engine's fleet answers (its status port).
pub struct FleetAnswers<'a> {
    engine: &'a ServiceProcess,
    http: &'a reqwest::Client,
}

impl<'a> FleetAnswers<'a> {
    pub fn of(engine: &'a ServiceProcess, http: &'a reqwest::Client) -> Self {
        Self { engine, http }
    }

    fn url(&self, route: &str) -> String {
        self.engine.status_url(&format!("{PATH_PREFIX}/v1/fleet/{route}"))
    }

    async fn document(&self, route: &str) -> anyhow::Result<Value> {
        let value = http::get_json(self.http, &self.url(route)).await?;
        ensure!(
            value["schemaVersion"] == 1,
            "{route}: schemaVersion {}",
            value["schemaVersion"]
        );
        Ok(value)
    }

    /// The status of `GET {prefix}/v1/fleet/{route}` (503 while the store
    /// cannot answer, say).
    pub async fn status_of(&self, route: &str) -> anyhow::Result<u16> {
        Ok(http::get(self.http, &self.url(route), None).await?.status)
    }

    pub async fn versions(&self) -> anyhow::Result<FleetVersions> {
        let document: FleetVersions = serde_json::from_value(self.document("versions").await?)?;
        ensure!(document.header.kind == "FleetVersions", "{:?}", document.header);
        Ok(document)
    }

    /// The versions answer as the [`Census`] counts: clusters per (channel,
    /// arch, version), after checking that its total is their sum.
    pub async fn counts(&self) -> anyhow::Result<BTreeMap<Reported, u64>> {
        let document = self.versions().await?;
        let counts: BTreeMap<Reported, u64> = document
            .versions
            .iter()
            .map(|count| {
                (
                    Reported::new(&count.channel, &count.arch, &count.version),
                    count.clusters,
                )
            })
            .collect();
        ensure!(
            counts.values().sum::<u64>() == document.clusters,
            "the total {} is not the sum of {counts:?}",
            document.clusters
        );
        Ok(counts)
    }

    pub async fn adoption(&self, version: &str) -> anyhow::Result<FleetAdoption> {
        let document: FleetAdoption =
            serde_json::from_value(self.document(&format!("adoption?version={version}")).await?)?;
        ensure!(document.header.kind == "FleetAdoption", "{:?}", document.header);
        Ok(document)
    }

    pub async fn rollouts(&self) -> anyhow::Result<FleetRollouts> {
        let document: FleetRollouts = serde_json::from_value(self.document("rollouts").await?)?;
        ensure!(document.header.kind == "FleetRollouts", "{:?}", document.header);
        Ok(document)
    }

    pub async fn cluster(&self, id: &str) -> anyhow::Result<FleetCluster> {
        let document: FleetCluster = serde_json::from_value(self.document(&format!("clusters/{id}")).await?)?;
        ensure!(document.header.kind == "FleetCluster", "{:?}", document.header);
        Ok(document)
    }

    /// Waits until the engine has written `checks` update checks and holds
    /// none (queued or to retry), and returns its recorder then.
    pub async fn await_written(&self, checks: u64) -> anyhow::Result<Recorder> {
        let what = format!("{} to have written {checks} update checks", self.engine.name());
        let (recorder, _) = poll::until(&what, poll::CHANGE_TIMEOUT, || async {
            let recorder = self.recorder().await?;
            ensure!(
                recorder.written == checks && recorder.queued == 0 && recorder.retrying == 0,
                "{recorder:?}"
            );
            Ok(recorder)
        })
        .await?;
        Ok(recorder)
    }

    /// The `fleet` object of the engine's `/status`.
    pub async fn status(&self) -> anyhow::Result<Value> {
        let status = self.engine.status().await?;
        ensure!(status["fleet"].is_object(), "no fleet in {status:#}");
        Ok(status["fleet"].clone())
    }

    /// `fleet.recorder` of the engine's `/status`.
    pub async fn recorder(&self) -> anyhow::Result<Recorder> {
        let recorder = &self.status().await?["recorder"];
        let number = |key: &str| {
            recorder[key]
                .as_u64()
                .with_context(|| format!("recorder.{key} in {recorder:#}"))
        };
        Ok(Recorder {
            queued: number("queued")?,
            queue_capacity: number("queue_capacity")?,
            retrying: number("retrying")?,
            written: number("written")?,
            dropped: number("dropped")?,
            stale: recorder["stale"]
                .as_bool()
                .with_context(|| format!("recorder.stale in {recorder:#}"))?,
            last_error: recorder["last_error"]["message"].as_str().map(str::to_owned),
        })
    }

    /// The value of one series of the engine's `/metrics` (`name{labels}`,
    /// as exposed); 0 for a series not exposed (a counter never counted).
    pub async fn metric(&self, series: &str) -> anyhow::Result<f64> {
        let text = http::get(self.http, &self.engine.status_url("/metrics"), None).await?;
        let text = String::from_utf8(text.body).context("the metrics are not UTF-8")?;
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
            .map_or(Ok(0.0), |value| {
                value.trim().parse().with_context(|| format!("{series} {value}"))
            })
    }
}

/// What `/status` shows of an engine's recorder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorder {
    pub queued: u64,
    pub queue_capacity: u64,
    pub retrying: u64,
    pub written: u64,
    pub dropped: u64,
    pub stale: bool,
    pub last_error: Option<String>,
}

/// The documented rollout place of cluster `id`, in percent
/// (docs/policy-engine.md, "Per-cluster policy"), computed apart from the
/// engine.
pub fn place_percent(id: &str) -> f64 {
    let digest = Sha256::digest(id.to_lowercase().as_bytes());
    u64::from_be_bytes(digest[..8].try_into().expect("a digest has 8 bytes")) as f64 / 2f64.powi(64) * 100.0
}
