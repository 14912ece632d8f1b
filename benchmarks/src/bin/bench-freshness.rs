//! Freshness benchmark: how long a change takes to reach clients through
//! the chain registry → graph-builder → engine A → engine B, all real
//! processes at their default schedules, on Debian's docker-registry.
//!
//! - time to block: a blocked edge written to the graph-data directory,
//!   until B's answer no longer offers the update;
//! - time to offer: a release image pushed (and listed in the channel),
//!   until B's answer offers it;
//! - cost while nothing changes: registry requests, engine-to-upstream
//!   requests and CPU time of each process over an idle window.
//!
//! With `--upstream-settings`, the same chain runs with the change checks
//! and the engines' waiting turned off: upstream's schedule (a scrape and a
//! graph-data refresh every `pause_secs`, engines polling every 30 s).
//!
//!     scripts/bench-freshness.sh

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use benchmarks::{Binaries, Offered, Service, cpu_seconds, free_port, load_average, metric, poll};
use clap::Parser;
use registry_testkit::LocalRegistry;
use release_images::{Image, PushOptions, Pusher, ReleaseMetadata};
use serde_json::Value;

/// Time to block and time to offer through a graph-builder and two
/// engines (docs/benchmarks-freshness.md).
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    binaries: Binaries,
    /// Changes of each kind measured.
    #[arg(long, default_value_t = 20)]
    changes: usize,
    /// Seconds of the idle window the cost is measured over.
    #[arg(long, default_value_t = 300)]
    idle_secs: u64,
    /// Release images in the repository before the first push.
    #[arg(long, default_value_t = 40)]
    releases: usize,
    /// Turn off the change checks and the engines' waiting.
    #[arg(long)]
    upstream_settings: bool,
}

const REPOSITORY: &str = "ocp/release";
const CHANNEL: &str = "stable-4.18";
/// How long one change may take before the run fails.
const CHANGE_LIMIT: Duration = Duration::from_secs(900);
/// How often B is asked while a change travels.
const POLL_EVERY: Duration = Duration::from_millis(100);

fn version(n: usize) -> String {
    format!("4.18.{n}")
}

/// Release `n`, updating from the three before it.
async fn push_release(pusher: &Pusher, n: usize) -> anyhow::Result<()> {
    let metadata = ReleaseMetadata::new(version(n)).previous((n.saturating_sub(3)..n).map(version));
    let image = Image::release(&metadata, "amd64");
    pusher
        .push(REPOSITORY, &format!("{}-x86_64", version(n)), image)
        .await
        .context("pushing a release")?;
    Ok(())
}

/// Graph-data whose channel lists every version the run may push.
fn write_graph_data(dir: &Path, versions: usize) -> anyhow::Result<()> {
    for sub in ["channels", "blocked-edges", "raw"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    std::fs::write(dir.join("version"), "1.1.0\n")?;
    std::fs::write(dir.join("raw/metadata.json"), "{}")?;
    let listed: String = (0..versions).map(|n| format!("- {}\n", version(n))).collect();
    std::fs::write(
        dir.join(format!("channels/{CHANNEL}.yaml")),
        format!("name: {CHANNEL}\nversions:\n{listed}"),
    )?;
    Ok(())
}

/// Asks B until `done` holds for what it offers (an error or a 503 is not
/// yet); the time it took.
async fn time_until(
    client: &reqwest::Client,
    url: &str,
    since: Instant,
    done: impl Fn(&Offered) -> bool,
) -> anyhow::Result<Duration> {
    loop {
        // Not up yet, or not ready (503): ask again.
        let answer = match client.get(url).send().await {
            Ok(response) if response.status().is_success() => response.json::<Value>().await.ok(),
            _ => None,
        };
        if answer.is_some_and(|graph| done(&Offered::parse(&graph))) {
            return Ok(since.elapsed());
        }
        anyhow::ensure!(since.elapsed() < CHANGE_LIMIT, "no change after {CHANGE_LIMIT:?}");
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// A spread of waits between changes, so that changes fall at every point
/// of the checks' and scrapes' cycles (deterministic, to repeat runs).
fn gap(i: usize) -> Duration {
    Duration::from_millis(((i * 3_701) % 7_000) as u64 + 500)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn summary(label: &str, mut seconds: Vec<f64>) {
    seconds.sort_by(f64::total_cmp);
    println!(
        "{label}: n={} p50={:.2} s p99={:.2} s max={:.2} s min={:.2} s",
        seconds.len(),
        percentile(&seconds, 50.0),
        percentile(&seconds, 99.0),
        seconds[seconds.len() - 1],
        seconds[0],
    );
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    println!(
        "chain at {} settings; load average at start: {}",
        if args.upstream_settings {
            "upstream's"
        } else {
            "default"
        },
        load_average()
    );
    let registry = LocalRegistry::start().await?;
    let pusher = Pusher::new(&registry.url(), PushOptions::default())?;
    for n in 0..args.releases {
        push_release(&pusher, n).await?;
    }
    let work = tempfile::tempdir()?;
    let graph_data = work.path().join("graph-data");
    write_graph_data(&graph_data, args.releases + args.changes + 1)?;

    let (gb_api, gb_public, gb_status) = (free_port()?, free_port()?, free_port()?);
    let checks = if args.upstream_settings {
        "release_check_secs = 0\ngraph_data_check_secs = 0\n"
    } else {
        ""
    };
    let gb_config = work.path().join("gb.toml");
    std::fs::write(
        &gb_config,
        format!(
            "[service]\nport = {gb_api}\npublic_port = {gb_public}\n{checks}[status]\nport = {gb_status}\n\
             [[plugin_settings]]\nname = \"release-scrape-dockerv2\"\nregistry = \"{url}\"\nrepository = \"{REPOSITORY}\"\n\
             [[plugin_settings]]\nname = \"openshift-secondary-metadata-parse\"\ndata_directory = {data:?}\n\
             [[plugin_settings]]\nname = \"edge-add-remove\"\n",
            url = registry.url(),
            data = graph_data.display().to_string(),
        ),
    )?;
    let engine_config = |name: &str, upstream: &str| -> anyhow::Result<(PathBuf, u16, u16)> {
        let (api, status) = (free_port()?, free_port()?);
        let path = work.path().join(format!("{name}.toml"));
        let follow = if args.upstream_settings {
            "wait_for_change = false\n"
        } else {
            ""
        };
        std::fs::write(
            &path,
            format!(
                "[service]\nport = {api}\n[status]\nport = {status}\n\
                 [upstream.cincinnati]\nurl = \"{upstream}\"\n{follow}"
            ),
        )?;
        Ok((path, api, status))
    };
    let logs = work.path();
    let gb = Service::start_logged(
        &args.binaries.graph_builder,
        &["-c", gb_config.to_str().context("path")?],
        &logs.join("gb.log"),
    )?;
    let (a_config, a_api, a_status) = engine_config("a", &format!("http://127.0.0.1:{gb_api}/graph"))?;
    let a = Service::start_logged(
        &args.binaries.policy_engine,
        &["-c", a_config.to_str().context("path")?],
        &logs.join("a.log"),
    )?;
    let (b_config, b_api, b_status) = engine_config("b", &format!("http://127.0.0.1:{a_api}/graph"))?;
    let b = Service::start_logged(
        &args.binaries.policy_engine,
        &["-c", b_config.to_str().context("path")?],
        &logs.join("b.log"),
    )?;

    let client = reqwest::Client::new();
    let b_graph = format!("http://127.0.0.1:{b_api}/graph?channel={CHANNEL}");
    let started = Instant::now();
    let last = version(args.releases - 1);
    time_until(&client, &b_graph, started, |offered| {
        offered.versions.contains(&last)
    })
    .await
    .context("the chain's first answer")?;
    println!("chain serving after {:.1} s", started.elapsed().as_secs_f64());

    let mut to_block = Vec::new();
    for i in 0..args.changes {
        tokio::time::sleep(gap(i)).await;
        let (from, to) = (version(i), version(i + 1));
        let file = graph_data.join(format!("blocked-edges/{to}-bench-{i}.yaml"));
        let written = Instant::now();
        // `from` is matched against arch-suffixed versions, unanchored.
        let pattern = format!("^{}[+]", from.replace('.', "[.]"));
        std::fs::write(&file, format!("to: {to}\nfrom: {pattern}\n"))?;
        let took = time_until(&client, &b_graph, written, |offered| {
            !offered.offers_update(&from, &to)
        })
        .await
        .with_context(|| format!("blocking {from} -> {to}"))?;
        println!("  block {from} -> {to}: {:.2} s", took.as_secs_f64());
        to_block.push(took.as_secs_f64());
    }
    summary("time to block", to_block);

    let mut to_offer = Vec::new();
    for i in 0..args.changes {
        tokio::time::sleep(gap(i)).await;
        let n = args.releases + i;
        push_release(&pusher, n).await?;
        let pushed = Instant::now();
        let wanted = version(n);
        let took = time_until(&client, &b_graph, pushed, |offered| {
            offered.versions.contains(&wanted)
        })
        .await
        .with_context(|| format!("offering {wanted}"))?;
        println!("  offer {wanted}: {:.2} s", took.as_secs_f64());
        to_offer.push(took.as_secs_f64());
    }
    summary("time to offer", to_offer);

    // Idle: nothing changes; what does the chain cost?
    tokio::time::sleep(Duration::from_secs(10)).await;
    let processes = [("graph-builder", &gb), ("engine A", &a), ("engine B", &b)];
    let statuses = [gb_status, a_status, b_status].map(|port| format!("http://127.0.0.1:{port}/metrics"));
    let snapshot = async || -> anyhow::Result<(Vec<f64>, Vec<String>)> {
        let mut cpu = Vec::new();
        let mut metrics = Vec::new();
        for ((_, process), url) in processes.iter().zip(&statuses) {
            cpu.push(cpu_seconds(process.id(), false));
            metrics.push(poll(url, Duration::from_secs(10), |_| true).await?);
        }
        Ok((cpu, metrics))
    };
    registry.clear_request_log();
    let (cpu_before, metrics_before) = snapshot().await?;
    let window_started = Instant::now();
    tokio::time::sleep(Duration::from_secs(args.idle_secs)).await;
    let window = window_started.elapsed().as_secs_f64();
    let (cpu_after, metrics_after) = snapshot().await?;
    let per_hour = |count: f64| count * 3600.0 / window;
    let registry_requests: Vec<_> = registry
        .request_log()
        .await?
        .into_iter()
        .filter(|request| request.user_agent.starts_with("cincinnati-rs-graph-builder"))
        .collect();
    println!(
        "idle for {window:.0} s: registry requests {} ({:.0}/hour)",
        registry_requests.len(),
        per_hour(registry_requests.len() as f64)
    );
    let tags = args.releases + args.changes;
    println!(
        "  upstream's full scrape every 300 s on this repository: 1 tag list + {tags} manifests = {}/scrape, {}/hour",
        1 + tags,
        12 * (1 + tags)
    );
    let upstream_requests = "cincinnati_pe_http_upstream_requests_total";
    for (index, (name, _)) in processes.iter().enumerate() {
        let cpu = cpu_after[index] - cpu_before[index];
        let requests = metric(&metrics_after[index], upstream_requests)
            - metric(&metrics_before[index], upstream_requests);
        let upstream = if index == 0 {
            String::new()
        } else {
            format!(
                ", upstream requests {requests:.0} ({:.0}/hour)",
                per_hour(requests)
            )
        };
        println!(
            "  {name}: CPU {cpu:.2} s ({:.3} % of a core){upstream}",
            100.0 * cpu / window
        );
    }
    println!("load average at end: {}", load_average());
    Ok(())
}
