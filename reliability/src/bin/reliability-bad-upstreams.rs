//! Bad upstreams: an engine whose upstream (a graph-builder's full graph on
//! the demo data, served by a loopback server that misbehaves on command)
//! turns to garbage, a 1 GiB body, a body at one byte a second, a redirect
//! loop, 500s, a graph with a cycle and a graph with a dangling edge (and,
//! with `--tls-certificates`, an HTTPS upstream whose certificate turns
//! untrusted). For
//! each: clients keep getting the last good graph, and the engine's
//! `/status` and metrics show the problem; then the upstream heals.
//!
//! The service binaries come from `E2E_BIN_DIR` (the script sets it).

use std::cell::RefCell;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, ensure};
use clap::Parser;
use e2e::process::ServiceProcess;
use reliability::demo;
use reliability::faulty_upstream::{Behaviour, FaultyUpstream};
use reliability::load::count_nodes;
use reliability::metrics;
use reliability::report::{Enforce, Report};
use reliability::status;
use reliability::tls_upstream::{Certificate, TlsUpstream};
use serde_json::Value;

#[derive(Parser)]
struct Args {
    /// Seconds each fault lasts once the engine has noticed it.
    #[arg(long, default_value_t = 10)]
    hold: u64,
    /// A directory with `good.pem`/`.key` (signed by a CA the process
    /// trusts through `SSL_CERT_FILE`) and `rogue.pem`/`.key` (self-signed):
    /// adds the untrusted-certificate fault.
    #[arg(long)]
    tls_certificates: Option<PathBuf>,
    #[arg(long)]
    strict: bool,
}

/// The engine gives up on a fetch after this long (the trickle fault).
const UPSTREAM_TIMEOUT_SECS: &str = "3";
const ONE_GIB: u64 = 1 << 30;
const ERRORS_METRIC: &str = "cincinnati_pe_http_upstream_errors_total";
const STALE_METRIC: &str = "cincinnati_pe_upstream_stale";

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let workdir = tempfile::tempdir()?;
    let good = Arc::new(full_graph(workdir.path()).await?);
    let upstream = FaultyUpstream::start(Behaviour::Json(Arc::clone(&good))).await?;
    let engine = e2e::policy_engine::start_with(
        workdir.path(),
        "a",
        &upstream.url(),
        &["--upstream.cincinnati.timeout_secs", UPSTREAM_TIMEOUT_SECS],
    )
    .await?;
    let mut report = Report::new("bad-upstreams", args.strict);
    let watched = Watched::new(&engine, Duration::from_secs(args.hold)).await?;
    report.figure(
        format!("last good answer ({}/amd64)", demo::CHANNEL),
        format!(
            "{} nodes, {} bytes",
            watched.baseline.nodes, watched.baseline.bytes
        ),
    );
    let faults = [
        ("garbage", Behaviour::Garbage),
        ("a 1 GiB body", Behaviour::Huge(ONE_GIB)),
        (
            "a body at one byte a second",
            Behaviour::Trickle(Arc::clone(&good)),
        ),
        ("a redirect loop", Behaviour::RedirectLoop),
        ("500s", Behaviour::ServerError),
        (
            "a graph with a cycle",
            Behaviour::Json(Arc::new(with_cycle(&good)?)),
        ),
        (
            "a graph with a dangling edge",
            Behaviour::Json(Arc::new(with_dangling_edge(&good)?)),
        ),
    ];
    for (name, behaviour) in faults {
        let inject = || {
            upstream.behave(behaviour);
            Ok(())
        };
        let heal = || {
            upstream.behave(Behaviour::Json(Arc::clone(&good)));
            Ok(())
        };
        watched.through(&mut report, name, inject, heal).await?;
    }
    let alive = engine.status().await.is_ok();

    match &args.tls_certificates {
        Some(certificates) => {
            let tls = RefCell::new(TlsUpstream::start(certificates, &good)?);
            let url = tls.borrow().url();
            let engine = e2e::policy_engine::start(workdir.path(), "tls", &url).await?;
            let watched = Watched::new(&engine, Duration::from_secs(args.hold)).await?;
            watched
                .through(
                    &mut report,
                    "an untrusted TLS certificate",
                    || tls.borrow_mut().present(Certificate::Untrusted),
                    || tls.borrow_mut().present(Certificate::Trusted),
                )
                .await?;
        }
        None => report.figure(
            "an untrusted TLS certificate",
            "not run (needs --tls-certificates; the script gives it)",
        ),
    }
    report.check(
        "the engine alive after everything",
        alive,
        "true",
        alive,
        Enforce::Always,
    );
    // Returned, not exit(): the services stop as the scenario's values drop.
    Ok(report.exit_code())
}

/// An engine, its answer for the demo channel before any fault, and how
/// long each fault is watched.
struct Watched<'a> {
    engine: &'a ServiceProcess,
    http: reqwest::Client,
    url: String,
    baseline: Answer,
    hold: Duration,
}

impl<'a> Watched<'a> {
    async fn new(engine: &'a ServiceProcess, hold: Duration) -> anyhow::Result<Self> {
        let http = reqwest::Client::new();
        let url = demo::answer_url(engine, demo::CHANNEL);
        let baseline = answer(&http, &url).await?;
        ensure!(
            baseline.status == 200,
            "the engine answered {} before any fault",
            baseline.status
        );
        Ok(Self {
            engine,
            http,
            url,
            baseline,
            hold,
        })
    }

    /// Injects a fault, waits until the engine's status shows it, watches
    /// the answers for `hold`, heals it and waits until the engine is fresh
    /// again; reports what it saw.
    async fn through(
        &self,
        report: &mut Report,
        name: &str,
        inject: impl FnOnce() -> anyhow::Result<()>,
        heal: impl FnOnce() -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let errors_before = self.metric(ERRORS_METRIC).await?;
        let noticed = Instant::now();
        inject()?;
        let status = self
            .engine
            .await_status("the upstream failing", status::all_stale)
            .await?;
        let noticed = noticed.elapsed();
        let (answers, all_good) = self.answers_for(self.hold).await?;
        let errors = self.metric(ERRORS_METRIC).await? - errors_before;
        let stale = self.metric(STALE_METRIC).await?;
        heal()?;
        let healing = Instant::now();
        self.engine
            .await_status("the upstream back", status::all_fresh)
            .await?;
        report.check(
            format!("{name}: answers that were the last good graph"),
            format!("{all_good} of {answers}"),
            "all",
            all_good == answers && answers > 0,
            Enforce::Always,
        );
        let message = status["feeds"][0]["last_error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        report.check(
            format!("{name}: /status"),
            format!(
                "stale after {:.1} s: {}",
                noticed.as_secs_f64(),
                shorten(&message)
            ),
            "stale, with the error",
            !message.is_empty(),
            Enforce::Always,
        );
        report.check(
            format!("{name}: metrics"),
            format!("{ERRORS_METRIC} +{errors}, {STALE_METRIC} {stale}"),
            "errors counted, stale 1",
            errors > 0.0 && stale == 1.0,
            Enforce::Always,
        );
        report.figure(
            format!("{name}: healed after (s)"),
            format!("{:.1}", healing.elapsed().as_secs_f64()),
        );
        Ok(())
    }

    /// Asks for the answer every 100 ms for `window`; returns how many
    /// answers came and how many were the baseline (200, same ETag and nodes).
    async fn answers_for(&self, window: Duration) -> anyhow::Result<(usize, usize)> {
        let deadline = Instant::now() + window;
        let (mut answers, mut good) = (0, 0);
        while Instant::now() < deadline {
            let now = answer(&self.http, &self.url).await?;
            answers += 1;
            let baseline = &self.baseline;
            good +=
                usize::from(now.status == 200 && now.etag == baseline.etag && now.nodes == baseline.nodes);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok((answers, good))
    }

    async fn metric(&self, name: &str) -> anyhow::Result<f64> {
        metrics::read(&self.http, self.engine, name).await
    }
}

/// The full graph a graph-builder serves on the demo data.
async fn full_graph(workdir: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    let graph_builder = demo::graph_builder(workdir, &demo::testdata().join("graph-data")).await?;
    let answer = reqwest::get(e2e::policy_engine::graph_url(&graph_builder)).await?;
    ensure!(
        answer.status().is_success(),
        "the graph-builder answered {}",
        answer.status()
    );
    Ok(answer.bytes().await?.to_vec())
}

struct Answer {
    status: u16,
    nodes: u64,
    bytes: usize,
    etag: Option<String>,
}

async fn answer(http: &reqwest::Client, url: &str) -> anyhow::Result<Answer> {
    let response = http.get(url).header("Accept", "application/json").send().await?;
    let status = response.status().as_u16();
    let etag = response
        .headers()
        .get("etag")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let body = response.bytes().await?;
    Ok(Answer {
        status,
        nodes: count_nodes(&body),
        bytes: body.len(),
        etag,
    })
}

/// The graph with one more edge, from the target of its first edge back to
/// the source: a cycle.
fn with_cycle(graph: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut document: Value = serde_json::from_slice(graph)?;
    let edges = document["edges"].as_array_mut().context("no edges")?;
    let first = edges.first().context("no edge to reverse")?.clone();
    edges.push(serde_json::json!([first[1], first[0]]));
    Ok(serde_json::to_vec(&document)?)
}

/// The graph with one more edge, to a node that does not exist.
fn with_dangling_edge(graph: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut document: Value = serde_json::from_slice(graph)?;
    let nodes = document["nodes"].as_array().context("no nodes")?.len();
    document["edges"]
        .as_array_mut()
        .context("no edges")?
        .push(serde_json::json!([0, nodes + 10]));
    Ok(serde_json::to_vec(&document)?)
}

fn shorten(message: &str) -> String {
    let short: String = message.chars().take(160).collect();
    if short.len() < message.len() {
        format!("{short}…")
    } else {
        short
    }
}
