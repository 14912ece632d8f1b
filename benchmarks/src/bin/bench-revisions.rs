//! Revision benchmark: what a graph revision costs a graph-builder and a
//! policy-engine, and how that grows with the graph (issue 39, item 3).
//!
//! At each scale (1, 3 and 10 times today's graph-data, see
//! `release_set_generator::scale`), a graph-builder reads a generated
//! release file and the scaled graph-data directory, and one engine
//! follows it; both are release binaries at their default settings, as
//! processes. Measured:
//!
//! - cold start: process start to ready and the first full answer (the
//!   graph-builder's graph; the engine's `stable-4.18`);
//! - sweeps: every (channel, arch) answer of the engine, identity and gzip,
//!   once to warm up (every answer computed) and once more (every answer
//!   kept): time, engine CPU, answer sizes;
//! - revisions: a blocked-edges file blocking one update of `stable-4.18`
//!   written, until the graph-builder serves the new graph, the engine the
//!   changed `stable-4.18`, and a sweep every answer of the new revision;
//!   the CPU of each process for it;
//! - peak and steady memory, and idle CPU, of each process.
//!
//!     scripts/bench-revisions.sh --scales 1,3,10
//!
//! See docs/benchmarks-revisions.md.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use benchmarks::{
    Binaries, GRAPH_BUILDER_GLIBC_TUNING, Offered, Service, cpu_seconds, free_port, load_average, percentiles,
};
use clap::Parser;
use futures::StreamExt as _;
use release_set_generator::scale::write_scaled_graph_data;
use release_set_generator::{Settings, release_graph, testdata_graph_data};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT_ENCODING, ETAG, IF_NONE_MATCH};
use serde::Deserialize;

/// What a graph revision costs a graph-builder and an engine, at several
/// sizes of the graph (docs/benchmarks-revisions.md).
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    binaries: Binaries,
    /// Sizes of the graph-data, in times today's.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 3, 10])]
    scales: Vec<u64>,
    /// Revisions measured at each scale, each blocking another update.
    #[arg(long, default_value_t = 5)]
    revisions: usize,
    /// Seconds without requests before steady memory and idle CPU are read.
    #[arg(long, default_value_t = 10)]
    settle_secs: u64,
    /// Record the revisions of each scale with `perf record` into this
    /// directory, one file per process and scale (perf's own CPU skews the
    /// figures: profile in a run of its own).
    #[arg(long)]
    perf: Option<PathBuf>,
}

/// The channel whose updates the revisions block.
const CHANNEL: &str = "stable-4.18";
/// How often a change is looked for.
const POLL_EVERY: Duration = Duration::from_millis(20);
/// How long a start or a revision may take before the run fails.
const LIMIT: Duration = Duration::from_secs(600);
/// Requests of a sweep in flight at once: enough to keep both of the
/// engine's workers busy.
const SWEEP_CONCURRENCY: usize = 4;
/// Pause before a revision, so that what the last one left running (a
/// dropped revision freed, the engine's next held fetch) is not counted.
const SETTLE_BEFORE_REVISION: Duration = Duration::from_secs(2);
/// Metadata naming a release's channels.
const CHANNELS_KEY: &str = "io.openshift.upgrades.graph.release.channels";

/// One answer: a channel of an architecture.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Pair {
    channel: String,
    arch: String,
}

/// The full graph, as far as the pairs to ask for go.
#[derive(Deserialize)]
struct FullGraph {
    nodes: Vec<Node>,
}

#[derive(Deserialize)]
struct Node {
    version: String,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
}

impl FullGraph {
    /// Every (channel, arch) that has a release.
    fn pairs(&self) -> Vec<Pair> {
        let pairs: BTreeSet<Pair> = self
            .nodes
            .iter()
            .flat_map(|node| {
                let arch = node.version.split_once('+').map_or("amd64", |(_, arch)| arch);
                let channels = node.metadata.get(CHANNELS_KEY).map_or("", String::as_str);
                channels
                    .split(',')
                    .filter(|channel| !channel.is_empty())
                    .map(|channel| Pair {
                        channel: channel.to_owned(),
                        arch: arch.to_owned(),
                    })
            })
            .collect();
        pairs.into_iter().collect()
    }
}

/// One response of a sweep.
struct Answered {
    etag: String,
    bytes: usize,
}

/// A sweep: every pair asked for, identity then gzip.
struct Sweep {
    took: f64,
    engine_cpu: f64,
    identity: Vec<Answered>,
    gzip: Vec<Answered>,
}

impl Sweep {
    /// Pairs whose gzip answer differs from `before`'s.
    fn changed_since(&self, before: &Sweep) -> usize {
        self.gzip
            .iter()
            .zip(&before.gzip)
            .filter(|(now, then)| now.etag != then.etag)
            .count()
    }
}

fn total_and_largest(answers: &[Answered]) -> (usize, usize) {
    let sizes = answers.iter().map(|answer| answer.bytes);
    (sizes.clone().sum(), sizes.max().unwrap_or(0))
}

/// What one revision cost.
struct Revision {
    /// From the write to the graph-builder serving the new graph.
    graph_builder_serves: f64,
    /// From then to the engine serving the changed `stable-4.18`.
    engine_serves: f64,
    /// From then to every answer served (the sweep).
    sweep: f64,
    graph_builder_cpu: f64,
    /// Engine CPU from the write to the changed `stable-4.18` served.
    engine_intake_cpu: f64,
    engine_sweep_cpu: f64,
    changed: usize,
}

/// Everything measured at one scale.
struct Figures {
    scale: u64,
    releases: usize,
    pairs: usize,
    graph_bytes: usize,
    graph_gzip_bytes: usize,
    graph_builder_start: f64,
    engine_start: f64,
    warm_up: Sweep,
    /// The sweep after it, every answer kept: seconds, engine CPU seconds.
    repeat: [f64; 2],
    revisions: Vec<Revision>,
    peak_mib: [f64; 2],
    steady_mib: [f64; 2],
    idle_cpu_percent: [f64; 2],
    load_start: String,
    load_end: String,
}

/// The HTTP side: one client (no automatic gzip: sizes are as sent), and
/// where each service answers.
struct Client {
    http: reqwest::Client,
    graph_builder: String,
    engine: String,
}

impl Client {
    fn answer_url(&self, pair: &Pair) -> String {
        format!("{}?channel={}&arch={}", self.engine, pair.channel, pair.arch)
    }

    /// Polls `ready` until it answers 200, then `answer` until it does;
    /// the body of the latter.
    async fn first_answer(&self, ready: &str, answer: &str, started: Instant) -> anyhow::Result<Vec<u8>> {
        self.until_ok(ready, started).await?;
        Ok(self.until_ok(answer, started).await?.bytes().await?.to_vec())
    }

    /// `url`'s first 200 response, asked every [`POLL_EVERY`] (not up
    /// yet, or a 503 while not ready: asked again).
    async fn until_ok(&self, url: &str, started: Instant) -> anyhow::Result<reqwest::Response> {
        loop {
            if let Ok(response) = self.http.get(url).send().await
                && response.status() == StatusCode::OK
            {
                return Ok(response);
            }
            anyhow::ensure!(started.elapsed() < LIMIT, "{url} not answered within {LIMIT:?}");
            tokio::time::sleep(POLL_EVERY).await;
        }
    }

    /// A GET, unconditional or not, with gzip or not: status, ETag, body.
    async fn get(
        &self,
        url: &str,
        gzip: bool,
        if_none_match: Option<&str>,
    ) -> anyhow::Result<(StatusCode, String, Vec<u8>)> {
        let mut request = self.http.get(url);
        if gzip {
            request = request.header(ACCEPT_ENCODING, "gzip");
        }
        if let Some(etag) = if_none_match {
            request = request.header(IF_NONE_MATCH, etag);
        }
        let response = request.send().await.with_context(|| format!("GET {url}"))?;
        let status = response.status();
        let etag = response
            .headers()
            .get(ETAG)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        Ok((status, etag, response.bytes().await?.to_vec()))
    }

    /// The graph-builder's ETag, once it is no longer `old`: a conditional
    /// HEAD every [`POLL_EVERY`], so the graph is not downloaded each time.
    async fn graph_builder_changed(&self, old: &str, since: Instant) -> anyhow::Result<String> {
        loop {
            let response = self
                .http
                .head(&self.graph_builder)
                .header(IF_NONE_MATCH, old)
                .send()
                .await?;
            let etag = response.headers().get(ETAG).and_then(|value| value.to_str().ok());
            if response.status() == StatusCode::OK
                && let Some(etag) = etag.filter(|etag| *etag != old)
            {
                return Ok(etag.to_owned());
            }
            anyhow::ensure!(
                since.elapsed() < LIMIT,
                "the graph-builder did not change within {LIMIT:?}"
            );
            tokio::time::sleep(POLL_EVERY).await;
        }
    }

    /// `url`'s answer once its ETag is no longer `old`: conditional GETs
    /// every [`POLL_EVERY`].
    async fn engine_changed(
        &self,
        url: &str,
        old: &str,
        since: Instant,
    ) -> anyhow::Result<(String, Vec<u8>)> {
        loop {
            let (status, etag, body) = self.get(url, false, Some(old)).await?;
            if status == StatusCode::OK && etag != old {
                return Ok((etag, body));
            }
            anyhow::ensure!(since.elapsed() < LIMIT, "{url} did not change within {LIMIT:?}");
            tokio::time::sleep(POLL_EVERY).await;
        }
    }

    /// Every pair's answer, identity and gzip, [`SWEEP_CONCURRENCY`] at
    /// once; the engine's CPU for it.
    async fn sweep(&self, pairs: &[Pair], engine_pid: u32) -> anyhow::Result<Sweep> {
        let cpu = cpu_seconds(engine_pid, false);
        let started = Instant::now();
        let requests = pairs.iter().flat_map(|pair| [(pair, false), (pair, true)]);
        let answers: Vec<anyhow::Result<Answered>> = futures::stream::iter(requests)
            .map(|(pair, gzip)| async move {
                let url = self.answer_url(pair);
                let (status, etag, body) = self.get(&url, gzip, None).await?;
                anyhow::ensure!(status == StatusCode::OK, "{url}: {status}");
                Ok(Answered {
                    etag,
                    bytes: body.len(),
                })
            })
            .buffered(SWEEP_CONCURRENCY)
            .collect()
            .await;
        let took = started.elapsed().as_secs_f64();
        let engine_cpu = cpu_seconds(engine_pid, false) - cpu;
        let (mut identity, mut gzip) = (Vec::new(), Vec::new());
        for (index, answer) in answers.into_iter().enumerate() {
            if index % 2 == 0 { &mut identity } else { &mut gzip }.push(answer?);
        }
        Ok(Sweep {
            took,
            engine_cpu,
            identity,
            gzip,
        })
    }
}

/// `perf record` of a process while it lives, stopped as perf wants to be
/// (SIGINT), so that its file is complete.
struct Recording(Child);

impl Recording {
    fn start(pid: u32, output: &Path) -> anyhow::Result<Self> {
        // DWARF call graphs: the release binaries keep no frame pointers;
        // 99 samples a second keeps a 10x sweep's file near 200 MB.
        let child = Command::new("perf")
            .args(["record", "-F", "99", "--call-graph", "dwarf,16384", "-p"])
            .arg(pid.to_string())
            .arg("-o")
            .arg(output)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting perf (apt-get install linux-perf)")?;
        Ok(Self(child))
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

/// The running services, and what the next revision is measured against.
struct Revising<'a> {
    client: &'a Client,
    pairs: &'a [Pair],
    graph_builder: &'a Service,
    engine: &'a Service,
    blocked_edges: PathBuf,
    /// The engine's `stable-4.18` answer.
    watched: &'a str,
    graph_builder_etag: String,
    watched_etag: String,
    last_sweep: Sweep,
}

impl Revising<'_> {
    /// Revision `index`: `from -> to` blocked, until every answer is served
    /// at the new revision.
    async fn block(&mut self, index: usize, from: &str, to: &str) -> anyhow::Result<Revision> {
        tokio::time::sleep(SETTLE_BEFORE_REVISION).await;
        let (gb_pid, engine_pid) = (self.graph_builder.id(), self.engine.id());
        let (gb_cpu, engine_cpu) = (cpu_seconds(gb_pid, false), cpu_seconds(engine_pid, false));
        let written = Instant::now();
        // `from` is matched against arch-suffixed versions, unanchored.
        let pattern = format!("^{}[+]", from.replace('.', "[.]"));
        std::fs::write(
            self.blocked_edges
                .join(format!("{to}-bench-revision-{index}.yaml")),
            format!("to: {to}\nfrom: {pattern}\n"),
        )?;
        let client = self.client;
        self.graph_builder_etag = client
            .graph_builder_changed(&self.graph_builder_etag, written)
            .await?;
        let graph_builder_serves = written.elapsed().as_secs_f64();
        let (etag, body) = client
            .engine_changed(self.watched, &self.watched_etag, written)
            .await?;
        let engine_serves = written.elapsed().as_secs_f64() - graph_builder_serves;
        let engine_intake_cpu = cpu_seconds(engine_pid, false) - engine_cpu;
        anyhow::ensure!(
            !Offered::parse(&serde_json::from_slice(&body)?).offers_update(from, to),
            "{CHANNEL}'s new answer still offers {from} -> {to}"
        );
        self.watched_etag = etag;
        let sweep = client.sweep(self.pairs, engine_pid).await?;
        let revision = Revision {
            graph_builder_serves,
            engine_serves,
            sweep: sweep.took,
            graph_builder_cpu: cpu_seconds(gb_pid, false) - gb_cpu,
            engine_intake_cpu,
            engine_sweep_cpu: sweep.engine_cpu,
            changed: sweep.changed_since(&self.last_sweep),
        };
        println!(
            "  block {from} -> {to}: graph-builder {:.2} s, engine +{:.2} s, sweep +{:.2} s ({} answers changed); \
             CPU graph-builder {:.2} s, engine {:.2} + {:.2} s; load average {}",
            revision.graph_builder_serves,
            revision.engine_serves,
            revision.sweep,
            revision.changed,
            revision.graph_builder_cpu,
            revision.engine_intake_cpu,
            revision.engine_sweep_cpu,
            load_average(),
        );
        self.last_sweep = sweep;
        Ok(revision)
    }
}

/// The graph-builder's configuration: the release file, the graph-data
/// directory, its stages; ports of our choosing, the rest its defaults.
fn graph_builder_config(releases: &Path, graph_data: &Path, ports: [u16; 3]) -> String {
    let [api, public, status] = ports;
    format!(
        "[service]\nport = {api}\npublic_port = {public}\n[status]\nport = {status}\n\
         [[plugin_settings]]\nname = \"release-graph-file\"\npath = {releases:?}\n\
         [[plugin_settings]]\nname = \"openshift-secondary-metadata-parse\"\ndata_directory = {graph_data:?}\n\
         [[plugin_settings]]\nname = \"edge-add-remove\"\n",
        releases = releases.display().to_string(),
        graph_data = graph_data.display().to_string(),
    )
}

/// `count` updates of `offered` into 4.18 releases, spread over them.
fn updates_to_block(offered: &Offered, count: usize) -> anyhow::Result<Vec<(String, String)>> {
    let mut updates: Vec<_> = offered
        .updates
        .iter()
        .filter(|(_, to)| to.starts_with("4.18."))
        .cloned()
        .collect();
    updates.sort();
    anyhow::ensure!(
        updates.len() >= count,
        "{CHANNEL} has {} updates into 4.18",
        updates.len()
    );
    Ok((0..count)
        .map(|i| updates[i * updates.len() / count].clone())
        .collect())
}

async fn run_scale(args: &Args, scale: u64) -> anyhow::Result<Figures> {
    let load_start = load_average();
    let work = tempfile::tempdir()?;
    let graph_data = work.path().join("graph-data");
    let releases_file = work.path().join("releases.json");
    let generating = Instant::now();
    write_scaled_graph_data(&testdata_graph_data(), scale, &graph_data)?;
    let releases = release_graph(&graph_data, &Settings::default())?;
    std::fs::write(&releases_file, cincinnati_core::wire::serialize(&releases, None))?;
    println!(
        "\n{scale}x: {} releases, {} updates generated in {:.1} s (not measured); load average {load_start}",
        releases.release_count(),
        releases.edge_count(),
        generating.elapsed().as_secs_f64()
    );
    drop(releases);

    let gb_ports = [free_port()?, free_port()?, free_port()?];
    let gb_config = work.path().join("graph-builder.toml");
    std::fs::write(
        &gb_config,
        graph_builder_config(&releases_file, &graph_data, gb_ports),
    )?;
    let (engine_port, engine_status) = (free_port()?, free_port()?);
    let client = Client {
        http: reqwest::Client::builder().no_gzip().build()?,
        graph_builder: format!("http://127.0.0.1:{}/graph", gb_ports[0]),
        engine: format!("http://127.0.0.1:{engine_port}/graph"),
    };

    // Cold starts, one after the other: the engine's does not wait on the
    // graph-builder's.
    let started = Instant::now();
    let gb = Service::start_with_env(
        &args.binaries.graph_builder,
        &["-c", gb_config.to_str().context("path")?],
        &GRAPH_BUILDER_GLIBC_TUNING,
    )?;
    let graph = client
        .first_answer(
            &format!("http://127.0.0.1:{}/readiness", gb_ports[2]),
            &client.graph_builder,
            started,
        )
        .await
        .context("the graph-builder's first graph")?;
    let graph_builder_start = started.elapsed().as_secs_f64();
    let full: FullGraph = serde_json::from_slice(&graph).context("the graph-builder's graph")?;
    let pairs = full.pairs();
    let (_, _, gzipped) = client.get(&client.graph_builder, true, None).await?;
    let (graph_bytes, graph_gzip_bytes, graph_releases) = (graph.len(), gzipped.len(), full.nodes.len());
    drop((graph, gzipped, full));
    println!(
        "  graph-builder ready with its graph in {graph_builder_start:.2} s: {graph_releases} releases, \
         {:.1} MB ({:.1} MB gzip), {} (channel, arch) answers; load average {}",
        graph_bytes as f64 / 1e6,
        graph_gzip_bytes as f64 / 1e6,
        pairs.len(),
        load_average(),
    );

    let upstream = client.graph_builder.clone();
    let started = Instant::now();
    let engine = Service::start(
        &args.binaries.policy_engine,
        &[
            "--service.port",
            &engine_port.to_string(),
            "--status.port",
            &engine_status.to_string(),
            "--upstream.cincinnati.url",
            &upstream,
        ],
    )?;
    let watched = client.answer_url(&Pair {
        channel: CHANNEL.to_owned(),
        arch: "amd64".to_owned(),
    });
    client
        .first_answer(
            &format!("http://127.0.0.1:{engine_status}/readyz"),
            &watched,
            started,
        )
        .await
        .context("the engine's first answer")?;
    let engine_start = started.elapsed().as_secs_f64();
    println!(
        "  engine ready with {CHANNEL} in {engine_start:.2} s; load average {}",
        load_average()
    );

    let warm_up = client.sweep(&pairs, engine.id()).await?;
    let repeat = client.sweep(&pairs, engine.id()).await?;
    for (name, sweep) in [("warm-up", &warm_up), ("repeat", &repeat)] {
        println!(
            "  {name} sweep: {} requests in {:.2} s, engine CPU {:.2} s; load average {}",
            2 * pairs.len(),
            sweep.took,
            sweep.engine_cpu,
            load_average(),
        );
    }

    let (_, watched_etag, body) = client.get(&watched, false, None).await?;
    let edges = updates_to_block(&Offered::parse(&serde_json::from_slice(&body)?), args.revisions)?;
    let (_, graph_builder_etag, _) = client.get(&client.graph_builder, false, None).await?;
    let recordings = match &args.perf {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            vec![
                Recording::start(engine.id(), &dir.join(format!("engine-{scale}x.data")))?,
                Recording::start(gb.id(), &dir.join(format!("graph-builder-{scale}x.data")))?,
            ]
        }
        None => Vec::new(),
    };
    let repeat_figures = [repeat.took, repeat.engine_cpu];
    let mut revising = Revising {
        client: &client,
        pairs: &pairs,
        graph_builder: &gb,
        engine: &engine,
        blocked_edges: graph_data.join("blocked-edges"),
        watched: &watched,
        graph_builder_etag,
        watched_etag,
        last_sweep: repeat,
    };
    let mut revisions = Vec::new();
    for (i, (from, to)) in edges.iter().enumerate() {
        revisions.push(revising.block(i, from, to).await?);
    }
    drop(recordings);

    let processes = [&gb, &engine];
    let idle_from = processes.map(|process| cpu_seconds(process.id(), false));
    tokio::time::sleep(Duration::from_secs(args.settle_secs)).await;
    let mut idle_cpu_percent = [0.0; 2];
    for (index, process) in processes.iter().enumerate() {
        idle_cpu_percent[index] =
            100.0 * (cpu_seconds(process.id(), false) - idle_from[index]) / args.settle_secs as f64;
    }
    Ok(Figures {
        scale,
        releases: graph_releases,
        pairs: pairs.len(),
        graph_bytes,
        graph_gzip_bytes,
        graph_builder_start,
        engine_start,
        warm_up,
        repeat: repeat_figures,
        revisions,
        peak_mib: [gb.peak_rss_mib()?, engine.peak_rss_mib()?],
        steady_mib: [gb.rss_mib()?, engine.rss_mib()?],
        idle_cpu_percent,
        load_start,
        load_end: load_average(),
    })
}

/// Median and max of `values`.
fn median_max(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut values: Vec<f64> = values.collect();
    let (median, _, max) = percentiles(&mut values);
    vec![median, max]
}

/// A row of the table: its name, decimals, and its figure at a scale (two:
/// median / max over the revisions).
type Row = (&'static str, usize, fn(&Figures) -> Vec<f64>);

const ROWS: [Row; 27] = [
    ("releases", 0, |f| vec![f.releases as f64]),
    ("(channel, arch) answers", 0, |f| vec![f.pairs as f64]),
    ("full graph, MB", 1, |f| vec![f.graph_bytes as f64 / 1e6]),
    ("full graph gzip, MB", 1, |f| {
        vec![f.graph_gzip_bytes as f64 / 1e6]
    }),
    ("graph-builder: start to its graph served, s", 2, |f| {
        vec![f.graph_builder_start]
    }),
    ("engine: start to one answer served, s", 2, |f| {
        vec![f.engine_start]
    }),
    ("warm-up sweep (every answer computed), s", 2, |f| {
        vec![f.warm_up.took]
    }),
    ("warm-up sweep, engine CPU s", 2, |f| vec![f.warm_up.engine_cpu]),
    ("repeat sweep (every answer kept), s", 2, |f| vec![f.repeat[0]]),
    ("repeat sweep, engine CPU s", 2, |f| vec![f.repeat[1]]),
    ("all answers, identity, MB", 1, |f| {
        vec![total_and_largest(&f.warm_up.identity).0 as f64 / 1e6]
    }),
    ("all answers, gzip, MB", 1, |f| {
        vec![total_and_largest(&f.warm_up.gzip).0 as f64 / 1e6]
    }),
    ("largest answer, identity, kB", 0, |f| {
        vec![total_and_largest(&f.warm_up.identity).1 as f64 / 1e3]
    }),
    ("largest answer, gzip, kB", 0, |f| {
        vec![total_and_largest(&f.warm_up.gzip).1 as f64 / 1e3]
    }),
    ("revision: write to graph-builder serving it, s", 2, |f| {
        median_max(f.revisions.iter().map(|r| r.graph_builder_serves))
    }),
    ("then to the engine serving the changed answer, s", 2, |f| {
        median_max(f.revisions.iter().map(|r| r.engine_serves))
    }),
    ("then to every answer served (a sweep), s", 2, |f| {
        median_max(f.revisions.iter().map(|r| r.sweep))
    }),
    ("answers changed by the revision", 0, |f| {
        median_max(f.revisions.iter().map(|r| r.changed as f64))
    }),
    ("graph-builder CPU per revision, s", 2, |f| {
        median_max(f.revisions.iter().map(|r| r.graph_builder_cpu))
    }),
    ("engine CPU taking the revision in, s", 2, |f| {
        median_max(f.revisions.iter().map(|r| r.engine_intake_cpu))
    }),
    ("engine CPU for the sweep after it, s", 2, |f| {
        median_max(f.revisions.iter().map(|r| r.engine_sweep_cpu))
    }),
    ("graph-builder peak RSS, MiB", 0, |f| vec![f.peak_mib[0]]),
    ("engine peak RSS, MiB", 0, |f| vec![f.peak_mib[1]]),
    ("graph-builder steady RSS, MiB", 0, |f| vec![f.steady_mib[0]]),
    ("engine steady RSS, MiB", 0, |f| vec![f.steady_mib[1]]),
    ("graph-builder idle CPU, % of a core", 1, |f| {
        vec![f.idle_cpu_percent[0]]
    }),
    ("engine idle CPU, % of a core", 1, |f| vec![f.idle_cpu_percent[1]]),
];

/// The figures as a Markdown table: a column per scale (median / max for
/// the revisions'), then each figure (the median) at every scale divided by
/// its value at the first.
fn table(all: &[Figures]) -> String {
    let mut out = String::from("| measure |");
    for figures in all {
        out.push_str(&format!(" {}x |", figures.scale));
    }
    out.push_str(&format!(
        " growth (÷ {}x) |\n|---|{}---|\n",
        all[0].scale,
        "---|".repeat(all.len())
    ));
    for (name, decimals, value) in ROWS {
        let values: Vec<Vec<f64>> = all.iter().map(value).collect();
        out.push_str(&format!("| {name} |"));
        for figures in &values {
            let shown: Vec<String> = figures
                .iter()
                .map(|figure| format!("{figure:.decimals$}"))
                .collect();
            out.push_str(&format!(" {} |", shown.join(" / ")));
        }
        let growth: Vec<String> = values[1..]
            .iter()
            .map(|figures| match values[0][0] {
                0.0 => "–".to_owned(),
                base => format!("×{:.1}", figures[0] / base),
            })
            .collect();
        out.push_str(&format!(" {} |\n", growth.join(", ")));
    }
    for (name, load) in [
        (
            "load average at start",
            (|f: &Figures| f.load_start.clone()) as fn(&Figures) -> String,
        ),
        ("load average at end", |f| f.load_end.clone()),
    ] {
        let loads: Vec<String> = all.iter().map(load).collect();
        out.push_str(&format!("| {name} | {} | |\n", loads.join(" | ")));
    }
    out
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut all = Vec::new();
    for &scale in &args.scales {
        all.push(
            run_scale(&args, scale)
                .await
                .with_context(|| format!("at {scale}x"))?,
        );
    }
    println!("\n{}", table(&all));
    Ok(())
}
