//! The fleet benchmark (issue 29): a synthetic fleet of `--clusters`
//! clusters (`benchmarks::fleet::model`) recorded in the fleet store and
//! asked the fleet questions, on a SQLite file and on a throw-away
//! PostgreSQL (postgres-testkit), then real release policy-engines
//! recording its update checks as the cluster-version operator sends them
//! (`benchmarks::fleet::cadence`: every 2 to 4 minutes, and at the peak
//! every 2).
//!
//! Parts (`--parts`, in this order):
//! - `store`: the fleet loaded with `FleetStore::record` in batches as the
//!   recorder makes them (first every cluster new, then every cluster again
//!   with 5% moving version, then the steady state of the engine's seen
//!   step: every cluster written once within the last hour, and checked
//!   again within it, left out), checks per second; each question timed on
//!   the loaded store; disk; with `--explain`, the queries' plans. The
//!   stores are loaded whatever the parts: the engines record into them.
//! - `engine`: engines with the same policy file (two rollouts in flight)
//!   before the same upstream graph: no store, the SQLite file, the
//!   PostgreSQL database, and the load split over two engines on that
//!   database; each loaded in turn for `--seconds` with the fleet's checks
//!   at the CVO's mean cadence, then at its peak (or at `--rate`),
//!   `--rounds` times: throughput, latency, the recording queue, drops,
//!   CPU; then the fleet answers over HTTP. With `--database-nice`,
//!   PostgreSQL runs below the engines, as a database on cores of its own
//!   would leave theirs.
//! - `shared`: two engines recording into one new PostgreSQL database,
//!   `--shared-ids` ids sent once to each (half first to one, half first to
//!   the other; some change version between): the versions total must be
//!   the distinct ids sent, each change counted once.
//!
//!     scripts/bench-fleet.sh [--clusters 100000]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use benchmarks::fleet::cadence::Cadence;
use benchmarks::fleet::engines::{
    Engine, EngineSettings, FleetCounters, PREFIX, Upstream, renice_server, server_cpu_seconds, written_bytes,
};
use benchmarks::fleet::model::{Model, ROLLOUT_TARGETS, Random, Stage};
use benchmarks::fleet::rate::{self, RateResult, Request, Requests};
use benchmarks::fleet::store::{self, DAY, Pass, PassPlan, StoreUnderTest, Timed};
use benchmarks::{CpuTime, cpu_seconds, load_average, percentiles};
use clap::{Parser, ValueEnum};
use postgres_testkit::PostgresServer;

/// The engine's default `fleet.seen_step_secs`.
const SEEN_STEP: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Part {
    Store,
    Engine,
    Shared,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Kind {
    Sqlite,
    Postgres,
}

#[derive(Parser)]
struct Args {
    /// Clusters in the synthetic fleet.
    #[arg(long, default_value_t = 1_000_000)]
    clusters: u64,
    /// What to run (comma-separated).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "store,engine,shared"
    )]
    parts: Vec<Part>,
    /// Stores to measure (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "sqlite,postgres")]
    stores: Vec<Kind>,
    /// Checks per `record()`, as the recorder batches (`fleet.batch_size`).
    #[arg(long, default_value_t = 5_000)]
    batch: usize,
    /// Times each question is asked.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Print the questions' query plans.
    #[arg(long)]
    explain: bool,
    /// The policy-engine binary (a release build).
    #[arg(long, default_value = "target/release/policy-engine")]
    engine: PathBuf,
    /// The upstream graph the engines serve (graph-builder output).
    #[arg(long)]
    graph: Option<PathBuf>,
    /// Checks per second of each engine phase (comma-separated), instead
    /// of the CVO's mean and peak for `--clusters` (N/180 and N/120).
    #[arg(long, value_delimiter = ',')]
    rate: Vec<f64>,
    /// Seconds each engine is loaded per round.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// Rounds of (no store, SQLite, PostgreSQL, two on PostgreSQL) per phase.
    #[arg(long, default_value_t = 2)]
    rounds: u32,
    /// Seconds each engine is loaded first, unmeasured.
    #[arg(long, default_value_t = 5)]
    warmup: u64,
    /// Connections the load is sent over (each waits for its answers).
    #[arg(long, default_value_t = 32)]
    lanes: u64,
    /// Ids of the shared-store part.
    #[arg(long, default_value_t = 50_000)]
    shared_ids: u64,
    /// PostgreSQL's processes run at this niceness in the engine part:
    /// on two shared cores, a database off the answers' cores, as on a
    /// machine of its own.
    #[arg(long)]
    database_nice: Option<i32>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let model = Model::new(args.clusters);
    let work = tempfile::TempDir::with_prefix("bench-fleet-")?;
    let wants = |part| args.parts.contains(&part);
    println!(
        "# Fleet benchmark: {} clusters, batches of {}; load average {}",
        args.clusters,
        args.batch,
        load_average()
    );
    let needs_postgres = (args.stores.contains(&Kind::Postgres)
        && !args.parts.iter().all(|part| *part == Part::Shared))
        || wants(Part::Shared);
    let postgres = if needs_postgres {
        Some(PostgresServer::start().await.context("starting PostgreSQL")?)
    } else {
        None
    };
    let mut stores = Vec::new();
    if wants(Part::Store) || wants(Part::Engine) {
        for kind in &args.stores {
            let store = match kind {
                Kind::Sqlite => {
                    let url = format!("sqlite://{}/fleet.db", work.path().display());
                    StoreUnderTest::open("SQLite", &url).await?
                }
                Kind::Postgres => {
                    let server = postgres.as_ref().context("PostgreSQL")?;
                    let url = server.create_database("fleet").await?;
                    StoreUnderTest::open("PostgreSQL", &url).await?
                }
            };
            stores.push(store);
        }
        load(&stores, &model, &args).await?;
    }
    if wants(Part::Store) {
        questions(&stores, &model, &args).await?;
    }
    if wants(Part::Engine) {
        engines(&stores, &model, &args, &work, postgres.as_ref()).await?;
    }
    if wants(Part::Shared) {
        shared(&model, &args, &work, postgres.as_ref().context("PostgreSQL")?).await?;
    }
    println!("\nload average at the end: {}", load_average());
    Ok(())
}

fn pass_row(store: &str, what: &str, pass: &Pass) {
    println!(
        "| {store} | {what} | {} | {} | {} | {} | **{:.0}** | {:.0} / {:.0} / {:.0} | {} | {} |",
        pass.checks,
        pass.new_clusters,
        pass.changes,
        pass.unchanged,
        pass.per_second(),
        pass.batch_p50_ms,
        pass.batch_p99_ms,
        pass.batch_max_ms,
        pass.written_bytes.map_or("".to_owned(), |bytes| format!(
            "{:.0}",
            bytes as f64 / pass.checks.max(1) as f64
        )),
        load_average()
    );
}

fn pass_header() {
    println!(
        "| store | pass | checks | new clusters | changes | left out | checks/s | batch ms p50 / p99 / max | bytes written per check (PostgreSQL: WAL) | load average after |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
}

/// Loads the fleet: every cluster first seen 60 to 1 days ago (all new),
/// then every cluster again within the last 23 hours (5% moved); then the
/// steady state of a fleet asking every few minutes under the engine's
/// seen step (an hour): every cluster written once within the last hour,
/// and asking again a minute later, which is left out. The engines' checks
/// that follow are written as their clusters' last write turns an hour old
/// (about 1 in 20 in a fleet asking every 3 minutes; more here, where an
/// engine is loaded a fraction of the time).
async fn load(stores: &[StoreUnderTest], model: &Model, args: &Args) -> anyhow::Result<()> {
    let now = store::now();
    println!("\n## Loading: record() in batches of {}\n", args.batch);
    pass_header();
    for store in stores {
        let first = PassPlan {
            stage: Stage::First,
            seed: 1,
            from: now - 60 * DAY,
            to: now - DAY,
            limit: None,
            batch: args.batch,
            seen_step: Duration::ZERO,
        };
        let result = store::pass(store, model, first).await?;
        pass_row(store.name, "first seen (every cluster new)", &result);
        let again = PassPlan {
            stage: Stage::Moved,
            seed: 2,
            from: now - 23 * 3600,
            to: now - 60,
            ..first
        };
        let result = store::pass(store, model, again).await?;
        pass_row(store.name, "checked again (known, 5% moved)", &result);
        // Spread over the hour before this store's engine is loaded (its
        // own time: the passes above take minutes), and each cluster asking
        // again a minute after its write.
        let steady = store::now();
        let written = PassPlan {
            seed: 3,
            from: steady - 3600,
            to: steady - 60,
            ..again
        };
        let result = store::pass(store, model, written).await?;
        pass_row(store.name, "steady state: written within the last hour", &result);
        let left_out = PassPlan {
            from: steady - 3540,
            to: steady,
            seen_step: SEEN_STEP,
            ..written
        };
        let result = store::pass(store, model, left_out).await?;
        pass_row(
            store.name,
            "steady state: checked again, nothing new (seen step 1 h)",
            &result,
        );
    }
    Ok(())
}

fn questions_table(stores: &[StoreUnderTest], timings: &[Vec<Timed>]) {
    let names: Vec<&str> = stores.iter().map(|store| store.name).collect();
    println!(
        "| question | target | {} | answer |",
        names
            .iter()
            .map(|name| format!("{name} median (max)"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|---:|{}---|", "---:|".repeat(names.len()));
    let Some(first) = timings.first() else { return };
    for (row, question) in first.iter().enumerate() {
        let cells: Vec<String> = timings
            .iter()
            .map(|store| {
                let timed = &store[row];
                let missed = timed.target_ms.is_some_and(|target| timed.median_ms() > target);
                format!(
                    "{}{:.1} ms ({:.1}){}",
                    if missed { "**" } else { "" },
                    timed.median_ms(),
                    timed.max_ms(),
                    if missed { "**" } else { "" }
                )
            })
            .collect();
        let answers: Vec<&str> = timings.iter().map(|store| store[row].answer.as_str()).collect();
        println!(
            "| {} | {} | {} | {} |",
            question.question,
            question
                .target_ms
                .map_or("".to_owned(), |target| format!("< {target:.0} ms")),
            cells.join(" | "),
            answers.join("; ")
        );
    }
}

async fn questions(stores: &[StoreUnderTest], model: &Model, args: &Args) -> anyhow::Result<()> {
    let now = store::now();
    println!(
        "\n## Questions on {} clusters ({} runs each; load average {})\n",
        model.clusters,
        args.repeat,
        load_average()
    );
    let mut timings = Vec::new();
    for store in stores {
        timings.push(store::questions(store, model, now, args.repeat).await?);
    }
    questions_table(stores, &timings);
    println!("\nload average after: {}", load_average());
    println!("\n## Disk\n");
    println!("| store | bytes | per million clusters | parts |");
    println!("|---|---:|---:|---|");
    for store in stores {
        let disk = store.disk().await?;
        let parts: Vec<String> = disk
            .parts
            .iter()
            .map(|(name, bytes)| format!("{name} {:.1} MB", *bytes as f64 / 1e6))
            .collect();
        println!(
            "| {} | {} (WAL after checkpoint: {}) | {:.0} MB | {} |",
            store.name,
            disk.total,
            disk.wal,
            (disk.total + disk.wal) as f64 / model.clusters as f64,
            parts.join(", ")
        );
    }
    if args.explain {
        for store in stores {
            println!("\n## Plans, {}\n", store.name);
            for (question, plan) in store::plans(store, now).await? {
                println!("{question}:\n```\n{plan}\n```");
            }
        }
    }
    Ok(())
}

/// The policy every engine runs: two rollouts in flight (30% in, a month
/// long), so the rollouts answer has something to count.
fn write_policy(path: &std::path::Path) -> anyhow::Result<()> {
    let start = time_rfc3339(store::now() - 3600);
    let mut policy = String::from("rollouts:\n");
    for target in ROLLOUT_TARGETS {
        policy.push_str(&format!(
            "  - {{target: {target}, start: {start}, duration_hours: 720, starting_percentage: 30}}\n"
        ));
    }
    std::fs::write(path, policy)?;
    Ok(())
}

/// `2026-01-02T03:04:05Z` from Unix seconds.
fn time_rfc3339(seconds: i64) -> String {
    let days = seconds.div_euclid(DAY);
    let rest = seconds.rem_euclid(DAY);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

fn request_query(model: &Model, index: u64, stage: Stage) -> String {
    let cluster = model.cluster(index);
    format!(
        "channel={}&arch={}&version={}&id={}",
        cluster.channel.name,
        cluster.arch,
        cluster.version(stage),
        cluster.id
    )
}

/// `{prefix}/graph?{query}`.
fn graph_path(query: &str) -> String {
    format!("{PREFIX}/graph?{query}")
}

fn postmaster_pid(server: &PostgresServer) -> Option<u32> {
    std::fs::read_to_string(server.directory().join("data/postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

/// One phase of the engine part: the fleet's checks at one cadence.
struct Phase {
    name: String,
    cadence: Cadence,
}

/// The CVO's mean and peak cadence for the fleet, or `--rate`'s rates
/// (each the CVO's spread of waits, stretched to it).
fn phases(model: &Model, args: &Args) -> Vec<Phase> {
    if args.rate.is_empty() {
        return vec![
            Phase {
                name: "mean: waits of 2 to 4 minutes".to_owned(),
                cadence: Cadence::MEAN,
            },
            Phase {
                name: "peak: every wait at the 2-minute minimum".to_owned(),
                cadence: Cadence::PEAK,
            },
        ];
    }
    args.rate
        .iter()
        .map(|rate| {
            let cadence = Cadence::MEAN.scaled_to(model.clusters, *rate);
            Phase {
                name: format!("waits of {:.0} to {:.0} s", cadence.shortest, cadence.longest),
                cadence,
            }
        })
        .collect()
}

/// What one run loads: an engine, or engines sharing a store that the load
/// is split over (alternate checks, as a round-robin balancer).
struct Target<'a> {
    name: String,
    engines: Vec<&'a Engine>,
}

/// One target loaded for one round.
struct Run {
    load: RateResult,
    /// Checks per second the window held.
    offered: f64,
    /// The engines' counters over the run, added.
    counters: FleetCounters,
    queue_max: u64,
    engine_cpu: f64,
    server_cpu: f64,
    generator_cpu: f64,
    engine_written: u64,
    load_average: String,
    /// The machine's CPU time stolen by the hypervisor during the load.
    stolen_percent: f64,
}

impl Run {
    fn per_request(&self, value: f64) -> f64 {
        value / self.load.ok.max(1) as f64
    }
}

/// The largest fleet queue an engine reports while `stop` is unset, read
/// every 200 ms.
fn sample_queue(engine: &Engine, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<u64> {
    let url = engine.status_url("/metrics");
    tokio::spawn(async move {
        let client = reqwest::Client::new();
        let mut max = 0;
        while !stop.load(Ordering::Relaxed) {
            if let Ok(response) = client.get(&url).send().await
                && let Ok(text) = response.text().await
            {
                max = max.max(benchmarks::metric(&text, "cincinnati_pe_fleet_queue_depth") as u64);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        max
    })
}

async fn load_target(
    target: &Target<'_>,
    model: &Model,
    cadence: Cadence,
    seconds: u64,
    seed: u64,
    lanes: u64,
    postmaster: Option<u32>,
) -> anyhow::Result<Run> {
    let checks = Arc::new(cadence.window(model.clusters, seed, seconds as f64));
    let offered = checks.len() as f64 / seconds as f64;
    let load_average = load_average();
    let machine_before = CpuTime::now();
    let engine_cpu = || {
        target
            .engines
            .iter()
            .map(|engine| cpu_seconds(engine.pid(), false))
            .sum::<f64>()
    };
    let engine_written = || {
        target
            .engines
            .iter()
            .map(|engine| written_bytes(engine.pid()))
            .sum::<u64>()
    };
    let mut before = Vec::new();
    for engine in &target.engines {
        before.push(engine.metrics().await?);
    }
    let (cpu_before, server_before, generator_before, written_before) = (
        engine_cpu(),
        postmaster.map_or(0.0, server_cpu_seconds),
        cpu_seconds(std::process::id(), false),
        engine_written(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let samplers: Vec<_> = target
        .engines
        .iter()
        .map(|engine| sample_queue(engine, stop.clone()))
        .collect();
    let ports: Vec<u16> = target.engines.iter().map(|engine| engine.port).collect();
    let model = *model;
    let requests: Requests = Arc::new(move |number| {
        let check = checks.get(number as usize)?;
        Some(Request {
            due: Duration::from_secs_f64(check.at),
            port: ports[number as usize % ports.len()],
            path: graph_path(&request_query(&model, u64::from(check.cluster), Stage::Engine)),
        })
    });
    let load = tokio::task::spawn_blocking(move || rate::drive(lanes, requests)).await?;
    stop.store(true, Ordering::Relaxed);
    let mut queue_max = 0;
    for sampler in samplers {
        queue_max = queue_max.max(sampler.await?);
    }
    let mut counters = FleetCounters::default();
    for (engine, before) in target.engines.iter().zip(&before) {
        let after = engine.drained(Duration::from_secs(30)).await?;
        counters = counters.plus(&after.since(before));
    }
    Ok(Run {
        load,
        offered,
        counters,
        queue_max,
        engine_cpu: engine_cpu() - cpu_before,
        server_cpu: postmaster.map_or(0.0, server_cpu_seconds) - server_before,
        generator_cpu: cpu_seconds(std::process::id(), false) - generator_before,
        engine_written: engine_written() - written_before,
        load_average,
        stolen_percent: CpuTime::now().stolen_percent(&machine_before),
    })
}

async fn engines(
    stores: &[StoreUnderTest],
    model: &Model,
    args: &Args,
    work: &tempfile::TempDir,
    postgres: Option<&PostgresServer>,
) -> anyhow::Result<()> {
    let graph_path = args.graph.as_ref().context("--graph: the upstream graph")?;
    let graph = std::fs::read(graph_path).with_context(|| format!("reading {}", graph_path.display()))?;
    let upstream = Upstream::serve(graph)?;
    let policy = work.path().join("policy.yaml");
    write_policy(&policy)?;
    let upstream_url = upstream.url();
    let settings = |store| EngineSettings {
        binary: &args.engine,
        upstream: &upstream_url,
        policy: &policy,
        store,
        logs: work.path(),
    };
    let mut engines = vec![Engine::start("no store", &settings(None))?];
    for store in stores {
        engines.push(Engine::start(store.name, &settings(Some(&store.url)))?);
    }
    // A second engine on the loaded PostgreSQL: the load split over two.
    let postgres_store = stores.iter().position(|store| store.name == "PostgreSQL");
    if let Some(position) = postgres_store {
        engines.push(Engine::start(
            "PostgreSQL B",
            &settings(Some(&stores[position].url)),
        )?);
    }
    for engine in &engines {
        engine.wait_ready(Duration::from_secs(120)).await?;
    }
    let mut targets: Vec<Target> = engines[..=stores.len()]
        .iter()
        .map(|engine| Target {
            name: engine.name.clone(),
            engines: vec![engine],
        })
        .collect();
    if let Some(position) = postgres_store {
        targets.push(Target {
            name: "PostgreSQL, two engines".to_owned(),
            engines: vec![&engines[position + 1], &engines[stores.len() + 1]],
        });
    }
    let postmaster = postgres.and_then(postmaster_pid);
    if let (Some(postmaster), Some(niceness)) = (postmaster, args.database_nice) {
        renice_server(postmaster, niceness)?;
        println!("\nPostgreSQL runs at niceness {niceness} in the engine part");
    }
    let phases = phases(model, args);
    for (number, target) in targets.iter().enumerate() {
        let cadence = phases[0].cadence;
        load_target(
            target,
            model,
            cadence,
            args.warmup,
            1000 + number as u64,
            args.lanes,
            postmaster,
        )
        .await?;
    }
    for (phase_number, phase) in phases.iter().enumerate() {
        engines_phase(&targets, model, args, phase, phase_number as u64, postmaster).await?;
    }
    fleet_answers(&engines[1..=stores.len()], args).await?;
    println!("\nload average at the end of the engine part: {}", load_average());
    Ok(())
}

async fn engines_phase(
    targets: &[Target<'_>],
    model: &Model,
    args: &Args,
    phase: &Phase,
    phase_number: u64,
    postmaster: Option<u32>,
) -> anyhow::Result<()> {
    println!(
        "\n## Engines at the CVO's cadence, {}: {:.0} checks/s ({} clusters; {} s per target per round, {} rounds)\n",
        phase.name,
        phase.cadence.rate(model.clusters),
        model.clusters,
        args.seconds,
        args.rounds,
    );
    println!(
        "| round | engine | load average at start | CPU stolen % | offered/s | answered/s | failed | late | p50 ms | p99 ms | max ms | queue max | dropped | written | of which left as stored | store errors | engine CPU µs/request | PostgreSQL CPU µs/request | load generator CPU µs/request | engine bytes written/request |"
    );
    println!(
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let mut runs: Vec<Vec<Run>> = targets.iter().map(|_| Vec::new()).collect();
    for round in 1..=args.rounds {
        for (number, target) in targets.iter().enumerate() {
            let seed = phase_number * 10_000 + u64::from(round) * 100 + number as u64;
            let run = load_target(
                target,
                model,
                phase.cadence,
                args.seconds,
                seed,
                args.lanes,
                postmaster,
            )
            .await?;
            println!(
                "| {round} | {} | {} | {:.0} | {:.0} | **{:.0}** | {} | {} | {:.2} | **{:.2}** | {:.1} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.0} |",
                target.name,
                run.load_average,
                run.stolen_percent,
                run.offered,
                run.load.ok_per_second(),
                run.load.failed,
                run.load.late,
                run.load.p50_ms,
                run.load.p99_ms,
                run.load.max_ms,
                run.queue_max,
                run.counters.dropped,
                run.counters.written,
                run.counters.unchanged,
                run.counters.store_errors,
                run.per_request(run.engine_cpu * 1e6),
                run.per_request(run.server_cpu * 1e6),
                run.per_request(run.generator_cpu * 1e6),
                run.per_request(run.engine_written as f64),
            );
            runs[number].push(run);
        }
    }
    println!("\nSummary over the rounds (means; ratios against the engine without a store):\n");
    println!(
        "| engine | CPU stolen % | offered/s | answered/s | of offered | of no store | p50 ms | p99 ms | p99 − no store | p99 median of rounds − no store's | queue max | dropped | engine CPU µs/request | + PostgreSQL | + load generator |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mean = |runs: &[Run], value: &dyn Fn(&Run) -> f64| {
        runs.iter().map(value).sum::<f64>() / runs.len().max(1) as f64
    };
    let baseline_rate = mean(&runs[0], &|run| run.load.ok_per_second());
    let median_p99 = |runs: &[Run]| {
        let mut p99s: Vec<f64> = runs.iter().map(|run| run.load.p99_ms).collect();
        percentiles(&mut p99s).0
    };
    let baseline_p99 = mean(&runs[0], &|run| run.load.p99_ms);
    let baseline_median_p99 = median_p99(&runs[0]);
    for (target, runs) in targets.iter().zip(&runs) {
        let offered = mean(runs, &|run| run.offered);
        let throughput = mean(runs, &|run| run.load.ok_per_second());
        let p99 = mean(runs, &|run| run.load.p99_ms);
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.1}% | {:.1}% | {:.2} | {:.2} | {:+.2} ms | {:+.2} ms | {} | {} | {:.1} | {:.1} | {:.1} |",
            target.name,
            mean(runs, &|run| run.stolen_percent),
            offered,
            throughput,
            throughput / offered.max(f64::EPSILON) * 100.0,
            throughput / baseline_rate.max(f64::EPSILON) * 100.0,
            mean(runs, &|run| run.load.p50_ms),
            p99,
            p99 - baseline_p99,
            median_p99(runs) - baseline_median_p99,
            runs.iter().map(|run| run.queue_max).max().unwrap_or(0),
            runs.iter().map(|run| run.counters.dropped).sum::<u64>(),
            mean(runs, &|run| run.per_request(run.engine_cpu * 1e6)),
            mean(runs, &|run| run.per_request(run.server_cpu * 1e6)),
            mean(runs, &|run| run.per_request(run.generator_cpu * 1e6)),
        );
    }
    Ok(())
}

async fn fleet_answers(recording: &[Engine], args: &Args) -> anyhow::Result<()> {
    println!(
        "\n## Fleet answers over HTTP (status port, {} runs each)\n",
        args.repeat
    );
    println!("| engine | answer | target | median ms | max ms | clusters in the answer |");
    println!("|---|---|---:|---:|---:|---|");
    for engine in recording {
        for (path, target) in [
            ("versions", 200.0),
            ("rollouts", 200.0),
            ("stuck", 1000.0),
            ("versions?channel=stable-4.18&arch=amd64", 200.0),
        ] {
            let mut runs_ms = Vec::new();
            let mut summary = String::new();
            for _ in 0..args.repeat.max(1) {
                let started = std::time::Instant::now();
                let answer = engine.status_json(&format!("{PREFIX}/v1/fleet/{path}")).await?;
                runs_ms.push(started.elapsed().as_secs_f64() * 1e3);
                summary = answer_summary(&answer);
            }
            let (median, _, max) = percentiles(&mut runs_ms);
            let missed = median > target;
            println!(
                "| {} | {path} | < {target:.0} ms | {}{median:.1}{} | {max:.1} | {summary} |",
                engine.name,
                if missed { "**" } else { "" },
                if missed { "**" } else { "" },
            );
        }
    }
    Ok(())
}

/// What a fleet answer counted, in a few words.
fn answer_summary(answer: &serde_json::Value) -> String {
    if let Some(clusters) = answer.get("clusters").and_then(serde_json::Value::as_u64) {
        return format!("{clusters} clusters");
    }
    if let Some(rollouts) = answer.get("rollouts").and_then(serde_json::Value::as_array) {
        return rollouts
            .iter()
            .map(|rollout| {
                format!(
                    "{}: {} offered, {} arrived",
                    rollout["target"].as_str().unwrap_or("?"),
                    rollout["offered"],
                    rollout["arrived"]
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
    }
    let count = |key: &str| {
        answer
            .get(key)
            .and_then(serde_json::Value::as_array)
            .map_or(0, Vec::len)
    };
    format!(
        "{} versions without an update, {} not moving",
        count("noUpdate"),
        count("notMoving")
    )
}

async fn shared(
    model: &Model,
    args: &Args,
    work: &tempfile::TempDir,
    postgres: &PostgresServer,
) -> anyhow::Result<()> {
    let url = postgres.create_database("fleet_shared").await?;
    let graph = args.graph.as_ref().context("--graph: the upstream graph")?;
    let upstream = Upstream::serve(std::fs::read(graph)?)?;
    let policy = work.path().join("shared-policy.yaml");
    write_policy(&policy)?;
    let upstream_url = upstream.url();
    let settings = EngineSettings {
        binary: &args.engine,
        upstream: &upstream_url,
        policy: &policy,
        store: Some(&url),
        logs: work.path(),
    };
    let pair = [
        Engine::start("shared A", &settings)?,
        Engine::start("shared B", &settings)?,
    ];
    for engine in &pair {
        engine.wait_ready(Duration::from_secs(120)).await?;
    }
    let ids = args.shared_ids.min(model.clusters);
    let order = Random::new(77).permutation(ids);
    // At the first phase's rate: what is checked here is the count, not the
    // cadence.
    let rate = phases(model, args)[0].cadence.rate(model.clusters);
    // First half: each id to one engine (alternating), as first seen; second
    // half: each id to the other engine, as after the moves.
    let mut list = Vec::with_capacity(2 * order.len());
    for (second, stage) in [(false, Stage::First), (true, Stage::Moved)] {
        for (position, index) in order.iter().enumerate() {
            let engine = &pair[(position % 2) ^ usize::from(second)];
            list.push(Request {
                due: rate::fixed_rate(rate, list.len() as u64),
                port: engine.port,
                path: graph_path(&request_query(model, u64::from(*index), stage)),
            });
        }
    }
    let moved = (0..ids)
        .filter(|index| {
            let cluster = model.cluster(*index);
            cluster.patch(Stage::First) != cluster.patch(Stage::Moved)
        })
        .count();
    println!(
        "\n## Two engines, one PostgreSQL: {ids} ids, each sent once to each engine at {:.0} requests/s ({} change version between)\n",
        rate, moved
    );
    let list = Arc::new(list);
    let requests: Requests = Arc::new(move |number| list.get(number as usize).cloned());
    let lanes = args.lanes;
    let load = tokio::task::spawn_blocking(move || rate::drive(lanes, requests)).await?;
    let mut counters = Vec::new();
    for engine in &pair {
        counters.push(engine.drained(Duration::from_secs(60)).await?);
    }
    let versions: Vec<u64> = {
        let mut totals = Vec::new();
        for engine in &pair {
            let answer = engine
                .status_json(&format!("{PREFIX}/v1/fleet/versions?active_hours=24"))
                .await?;
            totals.push(answer["clusters"].as_u64().unwrap_or(0));
        }
        totals
    };
    let direct = StoreUnderTest::open("shared", &url).await?;
    let changes = {
        let store::Raw::Postgres(pool) = &direct.raw else {
            anyhow::bail!("the shared store is PostgreSQL")
        };
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM fleet_changes")
            .fetch_one(pool)
            .await?
    };
    println!("| measure | value | expected |");
    println!("|---|---:|---:|");
    println!(
        "| requests answered (failed) | {} ({}) | {} |",
        load.ok,
        load.failed,
        2 * ids
    );
    println!("| p50 / p99 ms | {:.2} / {:.2} | |", load.p50_ms, load.p99_ms);
    for (engine, counter) in pair.iter().zip(&counters) {
        println!(
            "| {}: checks queued, written, dropped, store errors | {}, {}, {}, {} | {ids}, {ids}, 0, 0 |",
            engine.name, counter.queued, counter.written, counter.dropped, counter.store_errors
        );
    }
    for (engine, total) in pair.iter().zip(&versions) {
        println!(
            "| {}: versions total (active_hours=24) | **{total}** | {ids} |",
            engine.name
        );
    }
    println!("| changes of version stored | **{changes}** | {moved} |");
    let ok = versions.iter().all(|total| *total == ids) && changes == moved as i64;
    println!(
        "\nEach cluster counted once: {}",
        if ok { "yes" } else { "**NO**" }
    );
    Ok(())
}
