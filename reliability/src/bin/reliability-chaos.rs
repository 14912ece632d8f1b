//! Chaos: constant load on engine B of the e2e chain (registry →
//! graph-builder → engine A → engine B) while the registry is killed and
//! restarted twice, the graph-builder once and engine A once. Reports the
//! requests, non-2xx answers, socket errors, the smallest graph served and
//! the time each fault took to heal. See docs/reliability.md.
//!
//! The service binaries come from `E2E_BIN_DIR` (the script sets it).

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Parser;
use e2e::graph_builder::GraphBuilderOptions;
use e2e::process::ServiceProcess;
use e2e::scenario::{CANDIDATE, WATCHED};
use e2e::stack::Stack;
use reliability::load::{Load, LoadResult};
use reliability::report::{Enforce, Report};
use reliability::status;

#[derive(Parser)]
struct Args {
    /// Seconds of load; the faults are spread over them.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Keep-alive connections of the load.
    #[arg(long, default_value_t = 64)]
    connections: u32,
    /// Enforce the recovery-time target too.
    #[arg(long)]
    strict: bool,
}

/// The load runs in windows of this length, until every fault has healed and
/// the requested time has passed.
const LOAD_WINDOW: Duration = Duration::from_secs(5);

/// A fault heals within this many seconds (a few one-second refreshes per hop).
const RECOVERY_TARGET_SECS: f64 = 5.0;

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let mut stack = Stack::start(GraphBuilderOptions::default()).await?;
    stack.await_all_expected(&WATCHED).await?;
    let before = nodes_served(&stack).await?;
    let url = format!("{}?channel={CANDIDATE}&arch=amd64", stack.engines.graph_url());
    eprintln!("chaos: B serves {before} nodes for {CANDIDATE}/amd64; loading {url}");

    let stop = Arc::new(AtomicBool::new(false));
    let load = tokio::spawn(load_until(
        Load::json(url, args.connections, LOAD_WINDOW).counting_nodes(),
        Arc::clone(&stop),
    ));
    let started = Instant::now();
    let total = Duration::from_secs(args.seconds);
    // Six slots: calm, four faults, calm.
    let slot = total / 6;
    let hold = (slot / 3).max(Duration::from_secs(2));

    let mut recoveries = Vec::new();
    for round in 1..=2 {
        pause_until(started + slot * round).await;
        stack.registry.stop()?;
        stack
            .graph_builder
            .await_status("the registry unreachable", status::sources_failing)
            .await?;
        tokio::time::sleep(hold).await;
        let restarted = Instant::now();
        stack.registry.restart().await?;
        stack
            .graph_builder
            .await_status("both sources healthy", status::sources_healthy)
            .await?;
        recoveries.push((format!("registry killed ({round})"), restarted.elapsed()));
    }
    pause_until(started + slot * 3).await;
    recoveries.push((
        "graph-builder killed".to_owned(),
        kill_and_heal(&mut stack.graph_builder, &stack.engines.engine_a, hold).await?,
    ));
    pause_until(started + slot * 4).await;
    recoveries.push((
        "engine A killed".to_owned(),
        kill_and_heal(&mut stack.engines.engine_a, &stack.engines.engine_b, hold).await?,
    ));
    pause_until(started + total).await;
    stop.store(true, Ordering::Relaxed);
    let result = load.await.context("the load task")??;
    let after = nodes_served(&stack).await?;

    let mut report = Report::new("chaos", args.strict);
    report.figure(
        "load",
        format!("{} connections, {:.0} s", args.connections, result.seconds),
    );
    report.figure("requests", result.requests);
    report.figure("requests/s", format!("{:.0}", result.requests_per_second()));
    report.check(
        "non-2xx answers",
        result.non_2xx,
        "0",
        result.non_2xx == 0,
        Enforce::Always,
    );
    report.check(
        "socket errors",
        result.socket_errors,
        "0",
        result.socket_errors == 0,
        Enforce::Always,
    );
    let smallest = result.smallest_nodes.unwrap_or(0);
    report.check(
        "smallest graph served (nodes)",
        smallest,
        format!("≥ {before} (before the faults)"),
        smallest >= before,
        Enforce::Always,
    );
    report.check(
        "graph after the faults (nodes)",
        after,
        format!("{before}"),
        after == before,
        Enforce::Always,
    );
    for (fault, took) in recoveries {
        let seconds = took.as_secs_f64();
        report.check(
            format!("recovery after {fault} (s)"),
            format!("{seconds:.1}"),
            format!("≤ {RECOVERY_TARGET_SECS}"),
            seconds <= RECOVERY_TARGET_SECS,
            Enforce::Strict,
        );
    }
    // Returned, not exit(): the services stop as the scenario's values drop.
    Ok(report.exit_code())
}

/// Kills `faulty`, waits `hold`, restarts it, and returns the time from the
/// restart until `downstream` fetches from it again (no stale feed).
async fn kill_and_heal(
    faulty: &mut ServiceProcess,
    downstream: &ServiceProcess,
    hold: Duration,
) -> anyhow::Result<Duration> {
    faulty.kill()?;
    downstream
        .await_status("its upstream unreachable", status::all_stale)
        .await?;
    tokio::time::sleep(hold).await;
    let restarted = Instant::now();
    faulty.restart().await?;
    downstream
        .await_status("its upstream back", status::all_fresh)
        .await?;
    Ok(restarted.elapsed())
}

/// Loads in [`LOAD_WINDOW`]s until `stop` is set, and adds the windows up.
async fn load_until(load: Load, stop: Arc<AtomicBool>) -> anyhow::Result<LoadResult> {
    let mut total = load.run().await?;
    while !stop.load(Ordering::Relaxed) {
        total = total.merge(&load.run().await?);
    }
    Ok(total)
}

async fn pause_until(when: Instant) {
    tokio::time::sleep_until(when.into()).await;
}

/// Nodes of B's answer for the watched view, counted as the load counts them.
async fn nodes_served(stack: &Stack) -> anyhow::Result<u64> {
    let answer = stack
        .engines
        .answer(CANDIDATE, "amd64", Some("application/json"))
        .await?;
    anyhow::ensure!(answer.status == 200, "B answered {}", answer.status);
    Ok(reliability::load::count_nodes(&answer.body))
}
