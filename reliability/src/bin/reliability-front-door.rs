//! The services' front door (issue 26) under what the internet sends it, on
//! an engine of the demo data, directly and behind HAProxy and nginx as
//! reverse proxies that keep backend connections alive:
//!
//! 1. every conformance case of `http1-probes` (each naming its rule of RFC
//!    9112): directly, answered as the rule says; through a proxy, nothing
//!    smuggled and every well-formed case answered alike; then well-formed
//!    requests on fresh connections all answered 200 (no desynchronised
//!    backend connection);
//! 2. a pipelining flood (2 connections writing 2,000 requests per write
//!    while reading as fast as they can): another client, on new and
//!    kept-alive connections, is answered throughout (p99 < 50 ms, max <
//!    200 ms), and the engine's liveness probe stays green;
//! 3. a storm of silent sockets (10,000, opened again every 5 s; directly,
//!    twice the engine's connection limit) beside 64 keep-alive clients
//!    admitted before it: those clients get no answer but 2xx.
//!
//! The service binaries come from `E2E_BIN_DIR`, the proxies from Debian
//! (the script installs them).

use std::io::Write as _;
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Parser;
use e2e::graph_builder::PATH_PREFIX;
use e2e::policy_engine;
use e2e::process::ServiceProcess;
use http1_probes::cases;
use http1_probes::flood::{Flood, SilentSockets};
use http1_probes::run::{self, Target};
use http1_probes::wire;
use reliability::demo;
use reliability::load::Load;
use reliability::metrics;
use reliability::proxies::{Kind, Proxy};
use reliability::report::{Enforce, Report};

#[derive(Parser)]
struct Args {
    /// Seconds of each pipelining flood.
    #[arg(long, default_value_t = 30)]
    flood_seconds: u64,
    /// Silent sockets of each storm (the engine admits half as many).
    #[arg(long, default_value_t = 10_000)]
    sockets: usize,
    /// Seconds between the storm's rounds of reopening its sockets.
    #[arg(long, default_value_t = 5)]
    reopen_every: u64,
    /// Seconds of each storm.
    #[arg(long, default_value_t = 20)]
    storm_seconds: u64,
    /// Enforce the latency targets too (a benchmark run on a release build).
    #[arg(long)]
    strict: bool,
}

/// The flood's requests: unknown paths, the cheapest answer there is.
const FLOOD_REQUEST: &str = "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n";
const FLOOD_CONNECTIONS: usize = 2;
const FLOOD_PER_WRITE: usize = 2_000;
/// The other client asks this often during a flood.
const SAMPLE_EVERY: Duration = Duration::from_millis(20);
/// Issue 26's targets for the other client during a flood.
const P99_TARGET: Duration = Duration::from_millis(50);
const MAX_TARGET: Duration = Duration::from_millis(200);
/// Keep-alive clients beside a storm.
const ACTIVE: u32 = 64;
const REFUSED_METRIC: &str = "cincinnati_pe_connections_refused_total";
const OPEN_METRIC: &str = "cincinnati_pe_open_connections";

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let workdir = tempfile::tempdir()?;
    let graph_builder = demo::graph_builder(workdir.path(), &demo::testdata().join("graph-data")).await?;
    let limit = (args.sockets / 2).max(ACTIVE as usize * 2);
    let engine = policy_engine::start_with(
        workdir.path(),
        "front-door",
        &policy_engine::graph_url(&graph_builder),
        &["--service.max_open_connections", &limit.to_string()],
    )
    .await?;
    let path = format!("{PATH_PREFIX}/v1/channels?arch=amd64");
    let direct: SocketAddr = engine.api_url("").trim_start_matches("http://").parse()?;
    let proxies = Kind::ALL
        .iter()
        .map(|kind| Proxy::start(*kind, direct, workdir.path()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut fronts = vec![("direct", direct)];
    fronts.extend(proxies.iter().map(|proxy| (proxy.kind.name(), proxy.address)));

    let mut report = Report::new("front-door", args.strict);
    report.figure("engine's connection limit (max_open_connections)", limit);
    for (front, address) in &fronts {
        let target = if *front == "direct" {
            Target::new(*address, &path)
        } else {
            Target::proxied(*address, &path)
        };
        conformance(&mut report, front, target).await?;
    }
    for (front, address) in &fronts {
        flood(&mut report, front, Target::new(*address, &path), &engine, &args).await?;
    }
    let http = reqwest::Client::new();
    for (front, address) in &fronts {
        storm(
            &mut report,
            &http,
            front,
            Target::new(*address, &path),
            &engine,
            &args,
        )
        .await?;
    }
    let alive = engine.status().await.is_ok() && graph_builder.status().await.is_ok();
    report.check(
        "services alive after everything",
        alive,
        "true",
        alive,
        Enforce::Always,
    );
    Ok(report.exit_code())
}

/// Every case through `front`; then well-formed requests on new connections.
async fn conformance(report: &mut Report, front: &str, target: Target) -> anyhow::Result<()> {
    let direct = front == "direct";
    let (outcomes, victims) = tokio::task::spawn_blocking(move || {
        let outcomes: Vec<_> = cases::all().iter().map(|case| run::run(case, &target)).collect();
        let victims: Vec<u16> = (0..20)
            .map(|_| target.well_formed_status().unwrap_or(0))
            .collect();
        (outcomes, victims)
    })
    .await?;
    let smuggled: Vec<&str> = outcomes
        .iter()
        .filter(|outcome| outcome.smuggled())
        .map(|outcome| outcome.case.name)
        .collect();
    report.check(
        format!("{front}: requests smuggled in a body answered"),
        smuggled.len(),
        "0",
        smuggled.is_empty(),
        Enforce::Always,
    );
    let failing: Vec<String> = outcomes
        .iter()
        .filter_map(|outcome| {
            let verdict = if direct {
                outcome.conforms()
            } else {
                outcome.safe()
            };
            verdict
                .err()
                .map(|error| format!("{}: {error}", outcome.case.name))
        })
        .collect();
    for failure in &failing {
        eprintln!("front-door: {front}: {failure}");
    }
    let (what, target_text) = if direct {
        ("cases not answered as their rule says", "0")
    } else {
        ("well-formed cases answered otherwise, or unsafe", "0")
    };
    report.check(
        format!("{front}: {what} (of {})", outcomes.len()),
        failing.len(),
        target_text,
        failing.is_empty(),
        Enforce::Always,
    );
    if !direct {
        let answered_by_proxy = outcomes
            .iter()
            .filter(|outcome| outcome.conforms().is_err())
            .count();
        report.figure(
            format!("{front}: cases the proxy answered its own way"),
            answered_by_proxy,
        );
    }
    let bad_victims = victims.iter().filter(|status| **status != 200).count();
    report.check(
        format!("{front}: well-formed requests after the cases not answered 200"),
        bad_victims,
        "0 of 20",
        bad_victims == 0,
        Enforce::Always,
    );
    Ok(())
}

/// A pipelining flood through `front`, another client asking meanwhile.
async fn flood(
    report: &mut Report,
    front: &str,
    target: Target,
    engine: &ServiceProcess,
    args: &Args,
) -> anyhow::Result<()> {
    let flood = Flood::start(target.address, FLOOD_REQUEST, FLOOD_CONNECTIONS, FLOOD_PER_WRITE)?;
    let lasting = Duration::from_secs(args.flood_seconds);
    let sampling = tokio::task::spawn_blocking(move || sample_other_client(&target, lasting));
    tokio::time::sleep(lasting / 2).await;
    let live = reqwest::get(engine.status_url("/livez")).await?.status() == 200;
    let samples = sampling.await??;
    let read = flood.stop();
    let mut latencies: Vec<Duration> = samples.iter().map(|(latency, _)| *latency).collect();
    latencies.sort_unstable();
    let unanswered = samples.iter().filter(|(_, status)| *status != 200).count();
    report.figure(
        format!("{front}: flood answers read (MB/s, {FLOOD_CONNECTIONS} connections)"),
        format!("{:.1}", read as f64 / 1e6 / lasting.as_secs_f64()),
    );
    report.check(
        format!("{front}: other client's requests during the flood not answered 200"),
        format!("{unanswered} of {}", samples.len()),
        "0",
        unanswered == 0 && !samples.is_empty(),
        Enforce::Always,
    );
    let (p50, p99, max) = (
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
    );
    report.figure(format!("{front}: other client's p50 (ms)"), millis(p50));
    report.check(
        format!("{front}: other client's p99 (ms)"),
        millis(p99),
        format!("< {}", P99_TARGET.as_millis()),
        p99 < P99_TARGET,
        Enforce::Strict,
    );
    report.check(
        format!("{front}: other client's max (ms)"),
        millis(max),
        format!("< {}", MAX_TARGET.as_millis()),
        max < MAX_TARGET,
        Enforce::Strict,
    );
    report.check(
        format!("{front}: engine's liveness during the flood"),
        if live { "200" } else { "not 200" },
        "200",
        live,
        Enforce::Always,
    );
    Ok(())
}

/// Asks `target` every [`SAMPLE_EVERY`] for `lasting`, alternating new
/// connections and one kept alive: each request's time and status (0:
/// no answer).
fn sample_other_client(target: &Target, lasting: Duration) -> anyhow::Result<Vec<(Duration, u16)>> {
    let request = format!("GET {} HTTP/1.1\r\nHost: {}\r\n\r\n", target.path, target.host);
    let connect = || -> anyhow::Result<TcpStream> {
        let stream = TcpStream::connect(target.address)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        stream.set_nodelay(true)?;
        Ok(stream)
    };
    let mut kept = (connect()?, Vec::new());
    let mut samples = Vec::new();
    let until = Instant::now() + lasting;
    while Instant::now() < until {
        let fresh = samples.len() % 2 == 0;
        let started = Instant::now();
        let status = if fresh {
            let mut stream = connect()?;
            stream.write_all(request.as_bytes())?;
            wire::read_response(&mut stream, &mut Vec::new(), false).map_or(0, |response| response.status)
        } else {
            let (stream, pending) = &mut kept;
            let answered = stream
                .write_all(request.as_bytes())
                .map_err(anyhow::Error::from)
                .and_then(|()| Ok(wire::read_response(stream, pending, false)?));
            match answered {
                Ok(response) => response.status,
                Err(_) => {
                    kept = (connect()?, Vec::new());
                    0
                }
            }
        };
        samples.push((started.elapsed(), status));
        std::thread::sleep(SAMPLE_EVERY);
    }
    Ok(samples)
}

/// Silent sockets through `front` beside keep-alive clients admitted first.
async fn storm(
    report: &mut Report,
    http: &reqwest::Client,
    front: &str,
    target: Target,
    engine: &ServiceProcess,
    args: &Args,
) -> anyhow::Result<()> {
    let url = format!("http://{}{}", target.host, target.path);
    // Each front starts from a quiet engine: the sockets of the storm before
    // (closed, but perhaps not yet accepted and read) hold no place in the
    // engine's limit that a proxy's connections would then be refused.
    let deadline = Instant::now() + Duration::from_secs(30);
    while metrics::read(http, engine, OPEN_METRIC).await? > f64::from(ACTIVE) {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the engine's connections never went quiet"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused_before = metrics::read(http, engine, REFUSED_METRIC).await?;
    let load = Load::json(&url, ACTIVE, Duration::from_secs(args.storm_seconds)).start()?;
    // The clients are admitted before the storm begins.
    let deadline = Instant::now() + Duration::from_secs(30);
    if front == "direct" {
        while metrics::read(http, engine, OPEN_METRIC).await? < f64::from(ACTIVE) {
            anyhow::ensure!(Instant::now() < deadline, "wrk's connections never opened");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    } else {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let storm = SilentSockets::start(
        target.address,
        args.sockets,
        Duration::from_secs(args.reopen_every),
    );
    let active = load.finish().await.context("the clients beside the storm")?;
    let opened = storm.opened();
    storm.stop();
    let refused = metrics::read(http, engine, REFUSED_METRIC).await? - refused_before;
    report.figure(
        format!("{front}: silent sockets opened during the storm"),
        format!("{opened} ({} every {} s)", args.sockets, args.reopen_every),
    );
    if front == "direct" {
        report.check(
            format!("{front}: connections refused at the engine's limit"),
            refused,
            "> 0 (the storm reached the limit)",
            refused > 0.0,
            Enforce::Always,
        );
    } else {
        // Silent sockets stop at the proxy; a refusal here would be the
        // proxy's own connections.
        report.figure(format!("{front}: connections the engine refused"), refused);
    }
    report.check(
        format!("{front}: keep-alive clients' answers other than 2xx during the storm"),
        format!(
            "{} non-2xx, {} socket errors of {} requests",
            active.non_2xx, active.socket_errors, active.requests
        ),
        "0",
        active.non_2xx == 0 && active.socket_errors == 0 && active.requests > 0,
        Enforce::Always,
    );
    report.figure(
        format!("{front}: keep-alive clients' p99 during the storm (ms)"),
        format!("{:.1}", active.p99_ms),
    );
    Ok(())
}

fn percentile(sorted: &[Duration], quantile: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * quantile).round() as usize;
    sorted[index]
}

fn millis(duration: Duration) -> String {
    format!("{:.1}", duration.as_secs_f64() * 1000.0)
}
