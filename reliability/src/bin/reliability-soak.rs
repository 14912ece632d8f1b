//! Soak: constant load on engine B of a chain on the demo data
//! (graph-builder → engine A → engine B) for a long time (an hour by
//! default), with the graph-data — and so the graph B serves — changing
//! every minute. Every load window writes a row of the CSV: time, requests
//! per second, p50, p99, errors, and the RSS of the three services; the
//! script plots it. Reports RSS drift and latency early and late.
//!
//! The service binaries come from `E2E_BIN_DIR` (the script sets it).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Parser;
use reliability::demo;
use reliability::load::{Load, LoadResult};
use reliability::memory::rss_mib;
use reliability::report::{Enforce, Report};

#[derive(Parser)]
struct Args {
    /// Minutes of load.
    #[arg(long, default_value_t = 60)]
    minutes: u64,
    /// Seconds between two graph-data changes.
    #[arg(long, default_value_t = 60)]
    change_every: u64,
    /// Seconds of one load window (one CSV row).
    #[arg(long, default_value_t = 10)]
    window: u64,
    /// Where the CSV goes.
    #[arg(long)]
    csv: PathBuf,
    #[arg(long)]
    strict: bool,
}

const CONNECTIONS: u32 = 64;
/// RSS late in the run may exceed RSS early in the run by this fraction.
const DRIFT_TARGET: f64 = 0.10;

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let workdir = tempfile::tempdir()?;
    let graph_data = workdir.path().join("graph-data");
    copy_dir(&demo::testdata().join("graph-data"), &graph_data)?;
    let versions = channel_versions(&graph_data, demo::CHANNEL)?;
    let chain = demo::Chain::start(workdir.path(), &graph_data).await?;
    let pids = [
        chain.graph_builder.pid().context("the graph-builder runs")?,
        chain.engine_a.pid().context("A runs")?,
        chain.engine_b.pid().context("B runs")?,
    ];
    let url = demo::answer_url(&chain.engine_b, demo::CHANNEL);
    let http = reqwest::Client::new();
    let load = Load::json(&url, CONNECTIONS, Duration::from_secs(args.window));

    let mut csv = String::from(
        "seconds,requests_per_second,p50_ms,p99_ms,non_2xx,socket_errors,graph_builder_rss_mib,engine_a_rss_mib,engine_b_rss_mib,etag\n",
    );
    let started = Instant::now();
    let total = Duration::from_secs(args.minutes * 60);
    let mut changes = 0u64;
    let mut next_change = started + Duration::from_secs(args.change_every);
    let mut windows: Vec<(LoadResult, [f64; 3])> = Vec::new();
    let mut etags = std::collections::BTreeSet::new();
    while started.elapsed() < total {
        if Instant::now() >= next_change {
            changes += 1;
            change_graph_data(&graph_data, &versions, changes)?;
            next_change += Duration::from_secs(args.change_every);
        }
        let result = load.run().await?;
        let rss = [rss_mib(pids[0])?, rss_mib(pids[1])?, rss_mib(pids[2])?];
        let etag = etag(&http, &url).await?;
        etags.insert(etag.clone());
        writeln!(
            csv,
            "{:.0},{:.0},{:.2},{:.2},{},{},{:.1},{:.1},{:.1},{etag}",
            started.elapsed().as_secs_f64(),
            result.requests_per_second(),
            result.p50_ms,
            result.p99_ms,
            result.non_2xx,
            result.socket_errors,
            rss[0],
            rss[1],
            rss[2],
        )?;
        std::fs::write(&args.csv, &csv).with_context(|| format!("writing {}", args.csv.display()))?;
        windows.push((result, rss));
    }

    let mut report = Report::new("soak", args.strict);
    let total_load = windows
        .iter()
        .map(|(result, _)| result.clone())
        .reduce(|all, next| all.merge(&next))
        .context("no load window ran")?;
    report.figure(
        "duration",
        format!(
            "{:.0} min, {} windows of {} s",
            total_load.seconds / 60.0,
            windows.len(),
            args.window
        ),
    );
    report.figure(
        "requests",
        format!(
            "{} ({:.0}/s)",
            total_load.requests,
            total_load.requests_per_second()
        ),
    );
    report.check(
        "non-2xx",
        total_load.non_2xx,
        "0",
        total_load.non_2xx == 0,
        Enforce::Always,
    );
    report.check(
        "socket errors",
        total_load.socket_errors,
        "0",
        total_load.socket_errors == 0,
        Enforce::Always,
    );
    report.check(
        "graphs B served (distinct ETags)",
        etags.len(),
        format!("> 1 ({changes} graph-data changes)"),
        changes == 0 || etags.len() > 1,
        Enforce::Always,
    );
    // Early: the second tenth of the run (the first warms up); late: the last tenth.
    let tenth = (windows.len() / 10).max(1);
    let early = &windows[tenth.min(windows.len() - 1)..(2 * tenth).min(windows.len())];
    let late = &windows[windows.len() - tenth..];
    for (index, name) in [(1, "A"), (2, "B")] {
        let (early_rss, late_rss) = (
            mean(early, |(_, rss)| rss[index]),
            mean(late, |(_, rss)| rss[index]),
        );
        report.check(
            format!("{name}'s RSS early → late (MiB)"),
            format!("{early_rss:.1} → {late_rss:.1}"),
            format!("drift ≤ {:.0}%", DRIFT_TARGET * 100.0),
            late_rss <= early_rss * (1.0 + DRIFT_TARGET),
            Enforce::Strict,
        );
    }
    report.figure(
        "graph-builder's RSS early → late (MiB)",
        format!(
            "{:.1} → {:.1}",
            mean(early, |(_, rss)| rss[0]),
            mean(late, |(_, rss)| rss[0])
        ),
    );
    report.figure(
        "p99 early → late (ms)",
        format!(
            "{:.1} → {:.1}",
            mean(early, |(load, _)| load.p99_ms),
            mean(late, |(load, _)| load.p99_ms)
        ),
    );
    report.figure("CSV", args.csv.display());
    // Returned, not exit(): the services stop as the scenario's values drop.
    Ok(report.exit_code())
}

fn mean<T>(items: &[T], value: impl Fn(&T) -> f64) -> f64 {
    items.iter().map(value).sum::<f64>() / items.len().max(1) as f64
}

/// The versions `channel` lists (plain `- x.y.z` lines of its YAML file).
fn channel_versions(graph_data: &Path, channel: &str) -> anyhow::Result<Vec<String>> {
    let path = graph_data.join(format!("channels/{channel}.yaml"));
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let versions: Vec<String> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- "))
        .map(|version| version.trim().trim_matches('\'').trim_matches('"').to_owned())
        .collect();
    anyhow::ensure!(!versions.is_empty(), "{} lists no versions", path.display());
    Ok(versions)
}

/// Replaces the soak's own blocked edge with one on another version of the
/// channel: a new risk, so the graph changes.
fn change_graph_data(graph_data: &Path, versions: &[String], change: u64) -> anyhow::Result<()> {
    let blocked_edges = graph_data.join("blocked-edges");
    if change > 1 {
        std::fs::remove_file(blocked_edges.join(format!("soak-{}.yaml", change - 1)))?;
    }
    let to = &versions[change as usize % versions.len()];
    let yaml = format!(
        "to: {to}\nfrom: .*\nurl: https://example.com/soak/{change}\nname: SoakRisk{change}\n\
         message: A risk the soak run declares (change {change}).\nmatchingRules:\n- type: Always\n"
    );
    std::fs::write(blocked_edges.join(format!("soak-{change}.yaml")), yaml)?;
    Ok(())
}

async fn etag(http: &reqwest::Client, url: &str) -> anyhow::Result<String> {
    let answer = http.head(url).header("Accept", "application/json").send().await?;
    Ok(answer
        .headers()
        .get("etag")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .trim_matches('"')
        .to_owned())
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
