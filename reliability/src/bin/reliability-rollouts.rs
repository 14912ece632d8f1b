//! Rollouts under attack: issue 36's attacks on rollout control, replayed
//! by an outsider who has nothing but the public port, against engines of
//! the demo data (a graph-builder on `testdata/`) with a SQLite fleet
//! store, a policy file and rollout control (a token file):
//!
//! 1. **Canaries**: ids minted for the lowest public places check in, then
//!    a rollout gated by canaries is declared; are they chosen, and once
//!    they "arrive" at the target, is anyone else offered it?
//! 2. **Halts**: fakes that never take the target (`halt_when` stuck) and
//!    fakes that take it and go quiet (silent) against a rollout whose
//!    real fleet is healthy; and a rollout halted by its real fleet,
//!    resumed by an operator: does it fire again on the same evidence?
//! 3. **Rates**: fakes flood the fleet of rate-gated rollouts; how many
//!    real clusters are offered per period, with and without the flood?
//! 4. **Made-up architectures and channels**: how long `/v1/fleet/stuck`
//!    takes after them, while `/livez` and `/readyz` are polled throughout.
//! 5. **Random-id flood** (a second engine): the store's growth per hour,
//!    bounded by `fleet.new_clusters_per_hour` and then (restarted on the
//!    same store) `fleet.max_clusters`, and the refusals counted.
//! 6. **A full store** (a third engine, its store on a tmpfs filled up): a
//!    pause through the operator plane is in force at once and written
//!    once the store has room again.
//!
//! The real fleet is the store's past: its clusters' update checks over
//! the last days, written before the engine starts through fleet-store's
//! own API (`FleetStore::record`, what the recorder calls), because a
//! cluster is established only after a day of checks. The evidence rules
//! keep their defaults (`fleet.established_after_hours` 24,
//! `fleet.settled_after_minutes` 10); what is shortened is how often the
//! engine looks (`rollouts.halt_check_secs` 1 instead of 60,
//! `rollouts.refresh_ms` 200, `cluster_policy.reload_secs` 1,
//! `fleet.count_interval_secs` 0), so the run sees many rounds. The
//! service binaries come from `E2E_BIN_DIR`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context as _;
use clap::Parser;
use e2e::policy_engine;
use e2e::process::ServiceProcess;
use jiff::{SignedDuration, Timestamp};
use reliability::demo;
use reliability::metrics;
use reliability::minted;
use reliability::operator_plane::{OperatorPlane, await_rounds};
use reliability::probes::Prober;
use reliability::report::{Enforce, Report};
use reliability::seeded_fleet::{self, Past};
use reliability::tmpfs::Tmpfs;
use reliability::update_checks::{Check, PublicPort};
use serde_json::Value;

#[derive(Parser)]
struct Args {
    /// Real clusters of the gated rollouts' fleet (established, on 4.18.40).
    #[arg(long, default_value_t = 500)]
    real: usize,
    /// Real clusters of the rollout the halt attack is aimed at.
    #[arg(long, default_value_t = 10_000)]
    halt_real: usize,
    /// Ids minted for the lowest places (the canary and rate attacks).
    #[arg(long, default_value_t = 20)]
    minted: usize,
    /// Ids hashed to mint them.
    #[arg(long, default_value_t = 5_000_000)]
    mint_tries: u64,
    /// Fakes flooding the rate-gated rollouts' fleet.
    #[arg(long, default_value_t = 2_000)]
    rate_fakes: usize,
    /// A rate's cap: clusters newly offered a period.
    #[arg(long, default_value_t = 20)]
    rate_cap: usize,
    /// Fakes that never take the halting rollout's target.
    #[arg(long, default_value_t = 1_000)]
    stuck_fakes: usize,
    /// Fakes that take it and go quiet.
    #[arg(long, default_value_t = 100)]
    silent_fakes: usize,
    /// Seconds of halt rounds the fakes get.
    #[arg(long, default_value_t = 15)]
    halt_seconds: u64,
    /// Made-up architectures and channels asked for.
    #[arg(long, default_value_t = 600)]
    made_up: usize,
    /// `/v1/fleet/stuck` must answer within this many milliseconds after
    /// them (issue 36's target; CI's debug build on a shared machine gets
    /// more).
    #[arg(long, default_value_t = 1_000)]
    stuck_answer_ms: u64,
    /// Seconds of the random-id flood (the capped engine gets a third).
    #[arg(long, default_value_t = 60)]
    flood_seconds: u64,
    /// Ids sent between two readings of the store during the flood.
    #[arg(long, default_value_t = 5_000)]
    flood_round: usize,
    /// `fleet.new_clusters_per_hour` of the flooded engine (the default
    /// is 100,000: a minute's flood on a shared machine does not get past
    /// that bucket, this one it does).
    #[arg(long, default_value_t = 20_000)]
    new_per_hour: u64,
    /// Runs only these parts (`gates`: attacks 1 to 4; `flood`; `full-store`).
    #[arg(long, value_delimiter = ',', default_values_t = [Part::Gates, Part::Flood, Part::FullStore])]
    only: Vec<Part>,
}

/// The scenario's parts, each on engines of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Part {
    Gates,
    Flood,
    FullStore,
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Part::Gates => "gates",
            Part::Flood => "flood",
            Part::FullStore => "full-store",
        })
    }
}

const CHANNEL: &str = demo::CHANNEL;
/// The gated rollouts' fleet runs this…
const FROM: &str = "4.18.40";
/// …and these are their targets: canaries; a rate declared before the
/// fakes' flood and one after; a halt its real fleet trips.
const CANARY_TARGET: &str = "4.18.41";
const RATE_BEFORE: &str = "4.18.42";
const RATE_AFTER: &str = "4.18.43";
const TRIPPED: &str = "4.18.44";
/// A rollout gated by a canary, then by a rate.
const CANARY_THEN_RATE: &str = "4.18.45";
/// The halt attack's rollout: its real fleet came from here, mostly took it.
const HALT_FROM: &str = "4.18.47";
const HALT_TARGET: &str = "4.18.52";
/// The share of the halting rollout's real fleet that has not taken it.
const HALT_REAL_STUCK: f64 = 0.10;
/// Its `halt_when`.
const STUCK_PERCENT: f64 = 30.0;
const STUCK_HOURS: f64 = 24.0;
const SILENT_PERCENT: f64 = 5.0;
/// The evidence rules' defaults (the engines run with them).
const ESTABLISHED_AFTER_HOURS: f64 = 24.0;
const SETTLED_AFTER_MINUTES: f64 = 10.0;
const SILENT_HOURS: f64 = 6.0;
/// The gated rollouts' real fleet was first seen this long ago: established
/// for gates (a day of checks), not for a 24-hour stuck halt (which asks
/// for a day of checks before its cutoff, a day ago).
const GATE_FLEET_AGE_HOURS: f64 = 30.0;
/// The engine's defaults of `fleet.new_clusters_per_hour` and
/// `fleet.max_clusters`.
const DEFAULT_NEW_PER_HOUR: f64 = 100_000.0;
const DEFAULT_MAX_CLUSTERS: f64 = 2_000_000.0;
/// The halts-and-gates task of the engine, in `/status`.
const HALTS_TASK: &str = "rollout halts";

/// Tokens of the three scopes; the attackers have none.
const OPERATE_TOKEN: &str = "s3cret-operate-0123456789";
const READ_TOKEN: &str = "s3cret-read-0123456789";
const PAUSE_TOKEN: &str = "s3cret-pause-0123456789";

/// Id families: each kind of cluster its own.
const REAL_GATES: u32 = 0x5ea1_0001;
const REAL_HALT: u32 = 0x5ea1_0002;
const MINTED: u32 = 0xbad0_0001;
const RATE_FAKES: u32 = 0xbad0_0002;
const STUCK_FAKES: u32 = 0xbad0_0003;
const SILENT_FAKES: u32 = 0xbad0_0004;
const MADE_UP: u32 = 0xbad0_0005;
const FLOOD: u32 = 0xbad0_0006;
const FULL_STORE: u32 = 0xbad0_0007;
const PROBED: u32 = 0x0b5e_0001;

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let workdir = tempfile::tempdir()?;
    let graph_builder = demo::graph_builder(workdir.path(), &demo::testdata().join("graph-data")).await?;
    let upstream = policy_engine::graph_url(&graph_builder);
    let mut report = Report::new("rollouts", false);

    let started = Instant::now();
    let took = |part: &str| {
        eprintln!(
            "rollouts: {part} done at {:.1} s",
            started.elapsed().as_secs_f64()
        )
    };
    if args.only.contains(&Part::Gates) {
        let gates = GatedEngine::start(workdir.path(), &upstream, &args, &mut report).await?;
        took("start");
        let minted = gates.canaries(&args, &mut report).await?;
        took("canaries");
        gates.halts(&args, &mut report).await?;
        took("halts");
        gates.rates(&args, &minted, &mut report).await?;
        took("rates");
        gates.made_up(&args, &mut report).await?;
        took("made up");
        gates.finish(&mut report).await?;
    }
    // The flood and the full store, each on engines of its own, side by
    // side.
    let (flooded, full) = tokio::join!(
        async {
            let mut figures = Figures::default();
            if args.only.contains(&Part::Flood) {
                flood(workdir.path(), &upstream, &args, &mut figures).await?;
                took("flood");
            }
            anyhow::Ok(figures)
        },
        async {
            let mut figures = Figures::default();
            if args.only.contains(&Part::FullStore) {
                full_store(workdir.path(), &upstream, &mut figures).await?;
                took("full store");
            }
            anyhow::Ok(figures)
        },
    );
    flooded?.into_report(&mut report);
    full?.into_report(&mut report);
    Ok(report.exit_code())
}

/// Figures of a part that runs beside another, added to the report in
/// order once both are done.
#[derive(Default)]
struct Figures(Vec<Taken>);

enum Taken {
    Figure(String, String),
    Check(String, String, String, bool, Enforce),
}

impl Figures {
    fn figure(&mut self, name: impl Into<String>, value: impl std::fmt::Display) {
        self.0.push(Taken::Figure(name.into(), value.to_string()));
    }

    fn check(
        &mut self,
        name: impl Into<String>,
        value: impl std::fmt::Display,
        target: impl Into<String>,
        met: bool,
        enforce: Enforce,
    ) {
        self.0.push(Taken::Check(
            name.into(),
            value.to_string(),
            target.into(),
            met,
            enforce,
        ));
    }

    fn into_report(self, report: &mut Report) {
        for taken in self.0 {
            match taken {
                Taken::Figure(name, value) => report.figure(name, value),
                Taken::Check(name, value, target, met, enforce) => {
                    report.check(name, value, target, met, enforce);
                }
            }
        }
    }
}

/// A policy file the scenario rewrites (atomically: the engine re-reads it
/// every second).
struct PolicyFile {
    path: PathBuf,
    rollouts: Vec<String>,
}

impl PolicyFile {
    fn new(path: PathBuf) -> Self {
        Self {
            path,
            rollouts: Vec::new(),
        }
    }

    /// Declares a rollout of `target` from `start` over `hours`, beginning
    /// at `starting` percent, with more YAML lines (`more`, indented four
    /// spaces).
    fn declare(
        &mut self,
        target: &str,
        start: Timestamp,
        (hours, starting): (f64, f64),
        more: &str,
    ) -> anyhow::Result<()> {
        self.rollouts.push(format!(
            "  - target: {target}\n    start: \"{start}\"\n    duration_hours: {hours}\n    \
             starting_percentage: {starting}\n{more}"
        ));
        let text = format!("rollouts:\n{}", self.rollouts.concat());
        let partial = self.path.with_extension("partial");
        std::fs::write(&partial, text)?;
        std::fs::rename(&partial, &self.path)?;
        Ok(())
    }
}

/// A rollout's rate of `cap` clusters a day, as the policy file says it.
fn rate_gate(cap: usize) -> String {
    format!("    max_offered_per_period: {{clusters: {cap}, period_hours: 24}}\n")
}

fn hours_ago(hours: f64) -> Timestamp {
    Timestamp::now() - SignedDuration::from_secs_f64(hours * 3600.0)
}

fn write_tokens(path: &Path) -> anyhow::Result<()> {
    std::fs::write(
        path,
        format!(
            "ops {OPERATE_TOKEN} operate\ndashboard {READ_TOKEN} read\nalertmanager {PAUSE_TOKEN} pause\n"
        ),
    )?;
    Ok(())
}

/// Flags of an engine with rollout control that looks often.
fn control_flags(store: &str, policy: &Path, tokens: &Path) -> anyhow::Result<Vec<String>> {
    let text = |path: &Path| path.to_str().map(str::to_owned).context("a UTF-8 path");
    Ok([
        "--fleet.store",
        store,
        "--fleet.count_interval_secs",
        "0",
        "--cluster_policy.file",
        &text(policy)?,
        "--cluster_policy.reload_secs",
        "1",
        "--rollouts.token_file",
        &text(tokens)?,
        "--rollouts.halt_check_secs",
        "1",
        "--rollouts.refresh_ms",
        "200",
    ]
    .map(str::to_owned)
    .to_vec())
}

async fn start_engine(
    workdir: &Path,
    id: &str,
    upstream: &str,
    flags: &[String],
) -> anyhow::Result<ServiceProcess> {
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    policy_engine::start_with(workdir, id, upstream, &flags).await
}

/// Waits until the engine has written at least `count` more checks than
/// `before` (its `cincinnati_pe_fleet_checks_written_total`).
async fn await_written(
    http: &reqwest::Client,
    engine: &ServiceProcess,
    before: f64,
    count: usize,
) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        let written = metrics::read(http, engine, "cincinnati_pe_fleet_checks_written_total").await?;
        if written >= before + count as f64 {
            return Ok(());
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(120),
            "{}: {written} checks written, waiting for {} more than {before}",
            engine.name(),
            count
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn written(http: &reqwest::Client, engine: &ServiceProcess) -> anyhow::Result<f64> {
    metrics::read(http, engine, "cincinnati_pe_fleet_checks_written_total").await
}

/// The engine of the gated and halting rollouts, on a store holding a real
/// fleet's past.
struct GatedEngine {
    engine: ServiceProcess,
    /// Its store's URL.
    store: String,
    policy: tokio::sync::Mutex<PolicyFile>,
    public: PublicPort,
    operator: OperatorPlane,
    dashboard: OperatorPlane,
    http: reqwest::Client,
    prober: Prober,
    /// The gated rollouts' real fleet, on [`FROM`].
    real: Vec<String>,
    started: Instant,
}

impl GatedEngine {
    async fn start(workdir: &Path, upstream: &str, args: &Args, report: &mut Report) -> anyhow::Result<Self> {
        let dir = workdir.join("gates");
        std::fs::create_dir_all(&dir)?;
        let store = format!("sqlite://{}", dir.join("fleet.db").display());
        // The real fleet's past: the gated rollouts' clusters checked in on
        // FROM for 30 hours; the halting rollout's came from HALT_FROM four
        // days ago, and 90% of them took HALT_TARGET 40 hours ago (its
        // rollout offered it to all 48 hours ago) and are still on it.
        let real = minted::ids(REAL_GATES, 0, args.real);
        let halt_real = minted::ids(REAL_HALT, 0, args.halt_real);
        let stuck_real = (args.halt_real as f64 * HALT_REAL_STUCK).round() as usize;
        let mut fleet: Vec<Past> = real
            .iter()
            .map(|id| Past::new(id, CHANNEL, &[(FROM, GATE_FLEET_AGE_HOURS)], 0.1))
            .collect();
        fleet.extend(halt_real.iter().enumerate().map(|(index, id)| {
            if index < stuck_real {
                Past::new(id, CHANNEL, &[(HALT_FROM, 96.0)], 0.1)
            } else {
                Past::new(id, CHANNEL, &[(HALT_FROM, 96.0), (HALT_TARGET, 40.0)], 0.1)
            }
        }));
        let seeded = Instant::now();
        let clusters = seeded_fleet::write(&store, &fleet).await?;
        report.figure(
            "real fleet written to the store before the engine starts (clusters, s)",
            format!(
                "{clusters}: {} on {FROM} first seen {GATE_FLEET_AGE_HOURS} h ago; {} first seen 96 h ago on {HALT_FROM}, {} of them on {HALT_TARGET} since 40 h ({:.1} s)",
                args.real,
                args.halt_real,
                args.halt_real - stuck_real,
                seeded.elapsed().as_secs_f64()
            ),
        );

        // The halting rollout (attacked) and one its real fleet trips (its
        // clusters on FROM, offered TRIPPED 47 hours ago, have not taken it).
        let mut policy = PolicyFile::new(dir.join("policy.yaml"));
        policy.declare(
            HALT_TARGET,
            hours_ago(48.0),
            (1.0, 100.0),
            &format!(
                "    halt_when: {{stuck_percent: {STUCK_PERCENT}, stuck_hours: {STUCK_HOURS}, min_offered: 20, \
                 silent_after_arriving_percent: {SILENT_PERCENT}, min_arrived: 20}}\n"
            ),
        )?;
        policy.declare(
            TRIPPED,
            hours_ago(48.0),
            (1.0, 100.0),
            "    halt_when: {stuck_percent: 50, stuck_hours: 1, min_offered: 20}\n",
        )?;
        // A rate-gated rollout in the file the engine starts with, half an
        // hour after its start: its first judgment admits by the rate too
        // (it once admitted, uncounted, everyone its schedule placed inside
        // when an engine had read its gates before their first round).
        policy.declare(
            RATE_BEFORE,
            hours_ago(0.5),
            (1.0, 100.0),
            &rate_gate(args.rate_cap),
        )?;
        // One gated by a canary, then a rate (its canary arrives in the rate
        // attack).
        policy.declare(
            CANARY_THEN_RATE,
            hours_ago(1.0),
            (168.0, 100.0),
            &format!("    canary: {{clusters: 1}}\n{}", rate_gate(args.rate_cap)),
        )?;
        let tokens = dir.join("tokens");
        write_tokens(&tokens)?;
        let engine = start_engine(
            &dir,
            "gates",
            upstream,
            &control_flags(&store, &policy.path, &tokens)?,
        )
        .await?;
        let prober = Prober::start(vec![engine.status_url("/livez"), engine.status_url("/readyz")])?;
        let gated = Self {
            public: PublicPort::of(&engine)?,
            operator: OperatorPlane::of(&engine, OPERATE_TOKEN)?,
            dashboard: OperatorPlane::of(&engine, READ_TOKEN)?,
            http: reqwest::Client::new(),
            prober,
            real,
            started: Instant::now(),
            policy: tokio::sync::Mutex::new(policy),
            store,
            engine,
        };
        gated.tripped(report).await?;
        Ok(gated)
    }

    /// The control: the rollout its real fleet trips halts; an operator
    /// resumes it.
    async fn tripped(&self, report: &mut Report) -> anyhow::Result<()> {
        let (halted, took) = self
            .dashboard
            .await_rollout(TRIPPED, "its halt", |rollout| rollout["state"] == "paused")
            .await?;
        report.check(
            format!("control: {TRIPPED}, whose real clusters did not take it, halted by the fleet's signal"),
            format!(
                "in {:.1} s: {}",
                took.as_secs_f64(),
                halted["control"]["paused"]["by"].as_str().unwrap_or("?")
            ),
            "halted",
            halted["control"]["paused"]["by"].as_str() == Some("fleet-signal"),
            Enforce::Always,
        );
        let (status, body, _) = self
            .operator
            .change(
                reqwest::Method::POST,
                TRIPPED,
                "resume",
                "reliability: the cause is known",
            )
            .await?;
        anyhow::ensure!(status == 200, "resuming {TRIPPED}: {status} {body}");
        Ok(())
    }

    /// Attack 1: minted ids try to become canaries and open the gate;
    /// returns them.
    async fn canaries(&self, args: &Args, report: &mut Report) -> anyhow::Result<Vec<String>> {
        let mining = Instant::now();
        let minted = minted::lowest_places(MINTED, args.mint_tries, args.minted);
        report.figure(
            "ids minted for the lowest places (hashes, s, places)",
            format!(
                "{} of {} in {:.1} s, at {:.5}%–{:.5}%",
                minted.len(),
                args.mint_tries,
                mining.elapsed().as_secs_f64(),
                minted.first().map_or(0.0, |(_, place)| *place),
                minted.last().map_or(0.0, |(_, place)| *place)
            ),
        );
        let ids: Vec<String> = minted.iter().map(|(id, _)| id.clone()).collect();
        // They check in, a few times each, before the rollout exists.
        let before = written(&self.http, &self.engine).await?;
        let mut checks = Vec::new();
        for _ in 0..3 {
            checks.extend(ids.iter().map(|id| Check::of(id, CHANNEL, FROM)));
        }
        let sent = self.public.send_all(&checks).await;
        await_written(&self.http, &self.engine, before, sent.ok).await?;

        self.policy.lock().await.declare(
            CANARY_TARGET,
            hours_ago(1.0),
            (168.0, 20.0),
            "    canary: {clusters: 3}\n    arrival_timeout_hours: 6\n",
        )?;
        let (rollout, took) = self
            .dashboard
            .await_rollout(CANARY_TARGET, "its canaries chosen", |rollout| {
                rollout["canaries"]["chosenAt"].is_string()
            })
            .await?;
        let chosen: Vec<String> = rollout["canaries"]["clusters"]
            .as_array()
            .map(|clusters| {
                clusters
                    .iter()
                    .filter_map(|canary| canary["cluster"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let minted_chosen = chosen.iter().filter(|id| ids.contains(id)).count();
        report.check(
            "canaries: minted ids chosen",
            format!(
                "{minted_chosen} of {} chosen ({:.1} s after the rollout was declared)",
                chosen.len(),
                took.as_secs_f64()
            ),
            "0",
            minted_chosen == 0,
            Enforce::Always,
        );
        let real_chosen = chosen.iter().filter(|id| self.real.contains(id)).count();
        report.check(
            "canaries: chosen among the real fleet",
            format!("{real_chosen} of {}", chosen.len()),
            "3 of 3",
            real_chosen == 3 && chosen.len() == 3,
            Enforce::Always,
        );
        // A minted id asks its own answer whether it was chosen…
        let learned = self
            .public
            .offered(&ids, (CHANNEL, FROM), CANARY_TARGET, true)
            .await?;
        report.check(
            format!("canaries: minted ids offered {CANARY_TARGET} in their own answers"),
            format!("{} of {}", learned.len(), ids.len()),
            "0",
            learned.is_empty(),
            Enforce::Always,
        );
        // …and "arrives" at the target anyway, checking in on it.
        let before = written(&self.http, &self.engine).await?;
        let mut arrivals = Vec::new();
        for _ in 0..3 {
            arrivals.extend(ids.iter().map(|id| Check::of(id, CHANNEL, CANARY_TARGET)));
        }
        let sent = self.public.send_all(&arrivals).await;
        await_written(&self.http, &self.engine, before, sent.ok).await?;
        // Two rounds: the second began after the arrivals were written.
        await_rounds(&self.engine, HALTS_TASK, SystemTime::now(), 2).await?;
        let rollout = self.dashboard.rollout(CANARY_TARGET).await?;
        let offered = self
            .public
            .offered(&self.real, (CHANNEL, FROM), CANARY_TARGET, false)
            .await?;
        let others: Vec<&String> = offered.iter().filter(|id| !chosen.contains(id)).collect();
        let inside = self
            .real
            .iter()
            .filter(|id| {
                minted::place(id)
                    .is_some_and(|place| place < rollout["scheduledProgress"].as_f64().unwrap_or(100.0))
            })
            .count();
        report.check(
            format!("canaries: real clusters offered {CANARY_TARGET} after the minted ids \"arrived\", no real canary arrived"),
            format!(
                "{} of {} ({} of them inside the schedule; the 3 canaries offered: {}); state {}, {} canaries arrived",
                others.len(),
                self.real.len() - chosen.len(),
                inside,
                offered.iter().filter(|id| chosen.contains(id)).count(),
                rollout["state"],
                rollout["canaries"]["clusters"]
                    .as_array()
                    .map_or(0, |clusters| clusters.iter().filter(|canary| canary["arrivedAt"].is_string()).count())
            ),
            "0",
            others.is_empty() && rollout["state"] == "awaiting-canaries",
            Enforce::Always,
        );
        Ok(ids)
    }

    /// Attack 2: fakes try to halt a rollout whose real fleet is healthy;
    /// the rollout its real fleet halted, resumed, stays resumed.
    async fn halts(&self, args: &Args, report: &mut Report) -> anyhow::Result<()> {
        let stuck = minted::ids(STUCK_FAKES, 0, args.stuck_fakes);
        let silent = minted::ids(SILENT_FAKES, 0, args.silent_fakes);
        let before = written(&self.http, &self.engine).await?;
        let mut checks: Vec<Check> = Vec::new();
        for _ in 0..2 {
            checks.extend(stuck.iter().map(|id| Check::of(id, CHANNEL, HALT_FROM)));
        }
        checks.extend(silent.iter().map(|id| Check::of(id, CHANNEL, HALT_FROM)));
        let sent = self.public.send_all(&checks).await;
        let arrivals: Vec<Check> = silent
            .iter()
            .map(|id| Check::of(id, CHANNEL, HALT_TARGET))
            .collect();
        let arrived = self.public.send_all(&arrivals).await;
        await_written(&self.http, &self.engine, before, sent.ok + arrived.ok).await?;
        report.figure(
            format!(
                "halts: fakes sent against {HALT_TARGET} ({} real clusters, {:.0}% of them not on it)",
                args.halt_real,
                HALT_REAL_STUCK * 100.0
            ),
            format!(
                "{} never taking it (2 checks each), {} taking it and going quiet: {}; {}",
                stuck.len(),
                silent.len(),
                sent,
                arrived
            ),
        );
        // Every round for the rest of the window (the first one after the
        // fakes were written may have begun before: not counted): the halt
        // must not fire.
        let window = Instant::now();
        let mut last = await_rounds(&self.engine, HALTS_TASK, SystemTime::now(), 1).await?;
        let mut rounds = 0;
        let mut halted = None;
        // At least two rounds, however short the window.
        while rounds < 2 || window.elapsed() < Duration::from_secs(args.halt_seconds) {
            last = await_rounds(&self.engine, HALTS_TASK, last, 1).await?;
            rounds += 1;
            let rollout = self.dashboard.rollout(HALT_TARGET).await?;
            if rollout["state"] == "paused" {
                halted = Some(rollout);
                break;
            }
        }
        report.check(
            format!("halts: {HALT_TARGET} halted by the fakes"),
            match &halted {
                Some(rollout) => format!("yes: {}", rollout["said"]),
                None => format!(
                    "no, after {rounds} rounds in {:.0} s",
                    window.elapsed().as_secs_f64()
                ),
            },
            "no",
            halted.is_none(),
            Enforce::Always,
        );
        // What it would take, by the rules the engine applies (not
        // measured: it takes days).
        let real = args.halt_real as f64;
        let not_moved = (real * HALT_REAL_STUCK).round();
        let stuck_needed =
            ((STUCK_PERCENT / 100.0 * real - not_moved) / (1.0 - STUCK_PERCENT / 100.0)).ceil();
        let arrived_real = real - not_moved;
        let silent_needed = (SILENT_PERCENT / 100.0 * arrived_real / (1.0 - SILENT_PERCENT / 100.0)).ceil();
        report.figure(
            "halts: what forging the stuck halt would take (from the rules, not measured)",
            format!(
                "{stuck_needed:.0} ids, each first seen ≥ {:.0} h before the halt (stuck_hours + established_after_hours), checking in at least every {ESTABLISHED_AFTER_HOURS:.0} h meanwhile (or pruned) and within active_hours of the halt",
                STUCK_HOURS + ESTABLISHED_AFTER_HOURS
            ),
        );
        report.figure(
            "halts: what forging the silent halt would take (from the rules, not measured)",
            format!(
                "{silent_needed:.0} ids, each recorded ≥ {ESTABLISHED_AFTER_HOURS:.0} h before reporting the target, settled on it ≥ {SETTLED_AFTER_MINUTES:.0} min, then silent ≥ {SILENT_HOURS:.0} h: ≥ {:.1} h",
                ESTABLISHED_AFTER_HOURS + SETTLED_AFTER_MINUTES / 60.0 + SILENT_HOURS
            ),
        );
        Ok(())
    }

    /// Attack 3: fakes flood the fleet of rate-gated rollouts.
    async fn rates(&self, args: &Args, minted: &[String], report: &mut Report) -> anyhow::Result<()> {
        let cap = args.rate_cap;
        let rate = rate_gate(cap);
        // Before the flood: the rollout in the file the engine started
        // with. Admitted in all, not only in the period: a first judgment
        // that lets in, uncounted, every cluster the schedule places inside
        // ("offered before the rate") is what the check below must show.
        let full =
            |rollout: &Value| rollout["rate"]["admitted"].as_u64() >= Some(cap.min(self.real.len()) as u64);
        let (before, _) = self
            .dashboard
            .await_rollout(RATE_BEFORE, "its first period's admissions", full)
            .await?;
        let offered_before = self
            .public
            .offered(&self.real, (CHANNEL, FROM), RATE_BEFORE, false)
            .await?;
        report.check(
            format!("rates: real clusters offered {RATE_BEFORE} in its first period, before the flood"),
            format!(
                "{} of {} ({} admitted in the period, {} in all)",
                offered_before.len(),
                self.real.len(),
                before["rate"]["inPeriod"],
                before["rate"]["admitted"]
            ),
            format!("{cap} (the cap)"),
            offered_before.len() == cap,
            Enforce::Always,
        );
        // The flood: fakes (the minted ones among them) check in, twice each.
        let fakes: Vec<String> = minted
            .iter()
            .cloned()
            .chain(minted::ids(RATE_FAKES, 0, args.rate_fakes))
            .collect();
        let before = written(&self.http, &self.engine).await?;
        let mut checks = Vec::new();
        for _ in 0..2 {
            checks.extend(fakes.iter().map(|id| Check::of(id, CHANNEL, FROM)));
        }
        let sent = self.public.send_all(&checks).await;
        await_written(&self.http, &self.engine, before, sent.ok).await?;
        report.figure(
            "rates: the fakes' flood",
            format!(
                "{} fakes ({} minted for low places): {sent}",
                fakes.len(),
                minted.len()
            ),
        );
        // After it: a rollout declared now, half an hour after its start
        // (its admissions are rounds that saw the fakes, written before it
        // was declared).
        self.policy
            .lock()
            .await
            .declare(RATE_AFTER, hours_ago(0.5), (1.0, 100.0), &rate)?;
        let (after, _) = self
            .dashboard
            .await_rollout(RATE_AFTER, "its first period's admissions", full)
            .await?;
        // One answer a cluster says both: the rollout declared before the
        // flood, during it, and the one declared after.
        let [still, offered_after]: [Vec<String>; 2] = self
            .public
            .offered_each(&self.real, (CHANNEL, FROM), &[RATE_BEFORE, RATE_AFTER], false)
            .await?
            .try_into()
            .map_err(|_| anyhow::anyhow!("two targets asked"))?;
        report.check(
            format!("rates: real clusters offered {RATE_AFTER} in its first period, after the flood"),
            format!(
                "{} of {} (starved: {}; {} admitted in the period, {} in all)",
                offered_after.len(),
                self.real.len(),
                cap.saturating_sub(offered_after.len()),
                after["rate"]["inPeriod"],
                after["rate"]["admitted"]
            ),
            format!("{cap} (starved 0)"),
            offered_after.len() == cap,
            Enforce::Always,
        );
        let sample: Vec<String> = fakes.iter().take(minted.len() + 200).cloned().collect();
        let [fakes_offered_before, fakes_offered]: [Vec<String>; 2] = self
            .public
            .offered_each(&sample, (CHANNEL, FROM), &[RATE_BEFORE, RATE_AFTER], true)
            .await?
            .try_into()
            .map_err(|_| anyhow::anyhow!("two targets asked"))?;
        report.check(
            format!("rates: fakes offered {RATE_BEFORE} or {RATE_AFTER} in their own answers"),
            format!(
                "{} and {} of {} asked",
                fakes_offered_before.len(),
                fakes_offered.len(),
                sample.len()
            ),
            "0",
            fakes_offered.is_empty() && fakes_offered_before.is_empty(),
            Enforce::Always,
        );
        let period = self.dashboard.rollout(RATE_BEFORE).await?;
        report.check(
            format!("rates: {RATE_BEFORE} during the flood: real clusters offered, admitted in the period"),
            format!("{}, {}", still.len(), period["rate"]["inPeriod"]),
            format!("{cap}, {cap}"),
            still.len() == cap && period["rate"]["inPeriod"].as_u64() == Some(cap as u64),
            Enforce::Always,
        );
        self.canary_then_rate(cap, &sample, report).await
    }

    /// The rollout gated by a canary and then a rate: once its real canary
    /// arrived, at most the cap may be offered in the period.
    async fn canary_then_rate(
        &self,
        cap: usize,
        fakes: &[String],
        report: &mut Report,
    ) -> anyhow::Result<()> {
        let (chosen, _) = self
            .dashboard
            .await_rollout(CANARY_THEN_RATE, "its canary chosen", |rollout| {
                rollout["canaries"]["chosenAt"].is_string()
            })
            .await?;
        let canary = chosen["canaries"]["clusters"][0]["cluster"]
            .as_str()
            .context("a canary")?
            .to_owned();
        // The canary takes the update and reports it, and again 15 minutes
        // later (the checks its cluster-version operator would send, with
        // their times; the run cannot wait the 10 minutes it takes to settle).
        let arrival = Past::new(
            &canary,
            CHANNEL,
            &[(FROM, GATE_FLEET_AGE_HOURS), (CANARY_THEN_RATE, -1.0 / 3600.0)],
            -0.25,
        );
        seeded_fleet::write(&self.store, &[arrival]).await?;
        let (judged, _) = self
            .dashboard
            .await_rollout(
                CANARY_THEN_RATE,
                "its canary arrived and its rate judged",
                |rollout| {
                    rollout["canaries"]["arrivedAt"].is_string() && rollout["rate"]["periodEnds"].is_string()
                },
            )
            .await?;
        // A round after: whatever it admits counts too.
        await_rounds(&self.engine, HALTS_TASK, SystemTime::now(), 1).await?;
        let offered = self
            .public
            .offered(&self.real, (CHANNEL, FROM), CANARY_THEN_RATE, false)
            .await?;
        let fakes_offered = self
            .public
            .offered(fakes, (CHANNEL, FROM), CANARY_THEN_RATE, true)
            .await?;
        report.check(
            format!(
                "rates: {CANARY_THEN_RATE} (a canary, then {cap} a day): real clusters offered once the canary arrived; fakes"
            ),
            format!(
                "{} of {} ({} admitted in the period, {} in all); {} of {} fakes asked",
                offered.len(),
                self.real.len(),
                judged["rate"]["inPeriod"],
                judged["rate"]["admitted"],
                fakes_offered.len(),
                fakes.len()
            ),
            format!("≤ {} (the canary and the cap); 0", cap + 1),
            offered.len() <= cap + 1 && fakes_offered.is_empty(),
            Enforce::Always,
        );
        Ok(())
    }

    /// Attack 4: made-up architectures and channels, while the probes are
    /// asked.
    async fn made_up(&self, args: &Args, report: &mut Report) -> anyhow::Result<()> {
        let target = Duration::from_millis(args.stuck_answer_ms);
        let stuck_route = format!("/v1/fleet/stuck?channel={CHANNEL}&arch=amd64");
        let (_, baseline) = self.dashboard.get("/v1/fleet/stuck").await?;
        let (_, channel_baseline) = self.dashboard.get(&stuck_route).await?;
        let probes = self.prober.tally();
        let ids = minted::ids(MADE_UP, 0, args.made_up);
        let checks: Vec<Check> = ids
            .iter()
            .enumerate()
            .map(|(number, id)| Check {
                id: id.clone(),
                channel: format!("made-up-{number}"),
                arch: format!("arch{number}"),
                version: FROM.to_owned(),
            })
            .collect();
        let before = written(&self.http, &self.engine).await?;
        let sent = self.public.send_all(&checks).await;
        await_written(&self.http, &self.engine, before, sent.ok).await?;
        report.figure("made up: requests, each a new architecture and channel", sent);
        let mut slowest = Duration::ZERO;
        for _ in 0..3 {
            let (_, took) = self.dashboard.get("/v1/fleet/stuck").await?;
            slowest = slowest.max(took);
        }
        let (_, channel_took) = self.dashboard.get(&stuck_route).await?;
        report.check(
            "made up: /v1/fleet/stuck after them, slowest of 3 (s)",
            format!(
                "{:.3} (before them {:.3}; for {CHANNEL}/amd64 {:.3}, before {:.3})",
                slowest.as_secs_f64(),
                baseline.as_secs_f64(),
                channel_took.as_secs_f64(),
                channel_baseline.as_secs_f64()
            ),
            format!("< {}", target.as_secs_f64()),
            slowest < target,
            Enforce::Always,
        );
        let (versions, _) = self.dashboard.get("/v1/fleet/versions").await?;
        let names: BTreeSet<String> = versions["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|count| [count["channel"].as_str(), count["arch"].as_str()])
            .flatten()
            .map(str::to_owned)
            .collect();
        let made_up_kept = names
            .iter()
            .filter(|name| name.starts_with("made-up-") || name.starts_with("arch"))
            .count();
        report.check(
            "made up: channels and architectures recorded under their own name",
            format!(
                "{made_up_kept} (the fleet's names: {})",
                names.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
            "0",
            made_up_kept == 0,
            Enforce::Always,
        );
        let probes = self.prober.tally().since(probes);
        report.check(
            "made up: /livez and /readyz failed meanwhile (slowest ms)",
            format!("{probes} ({} ms)", probes.slowest_ms),
            "0",
            probes.failed == 0,
            Enforce::Always,
        );
        Ok(())
    }

    /// The end of the run on this engine: the resumed halt stayed resumed,
    /// the probes never failed.
    async fn finish(&self, report: &mut Report) -> anyhow::Result<()> {
        let tripped = self.dashboard.rollout(TRIPPED).await?;
        let (history, _) = self.dashboard.get("/v1/rollouts").await?;
        let halts = history["history"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|entry| {
                entry["target"] == TRIPPED && entry["action"] == "pause" && entry["by"] == "fleet-signal"
            })
            .count();
        report.check(
            format!("halts: {TRIPPED}, resumed by an operator, halted again on the same evidence"),
            format!(
                "{} ({halts} halt in its history over the {:.0} s since; state {})",
                if tripped["state"] == "paused" { "yes" } else { "no" },
                self.started.elapsed().as_secs_f64(),
                tripped["state"]
            ),
            "no",
            tripped["state"] != "paused" && halts == 1,
            Enforce::Always,
        );
        let probes = self.prober.tally();
        report.figure("the gated engine's /livez and /readyz over the whole run", probes);
        Ok(())
    }
}

/// Attack 5: a flood of random ids on an engine of default bounds (but
/// `--new-per-hour`), then on one restarted on the same store with a cap.
async fn flood(workdir: &Path, upstream: &str, args: &Args, report: &mut Figures) -> anyhow::Result<()> {
    let dir = workdir.join("flood");
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("fleet.db");
    let store = format!("sqlite://{}", file.display());
    let per_hour = args.new_per_hour.to_string();
    let flags: Vec<String> = [
        "--fleet.store",
        &store,
        "--fleet.count_interval_secs",
        "0",
        "--fleet.new_clusters_per_hour",
        &per_hour,
    ]
    .map(str::to_owned)
    .to_vec();
    let http = reqwest::Client::new();
    let engine = start_engine(&dir, "flood", upstream, &flags).await?;
    let mut next = 0_u64;
    let flooded = flood_for(
        &engine,
        &mut next,
        (
            Duration::from_secs(args.flood_seconds),
            // Past the bucket, however slowly the machine lets it go.
            2 * args.new_per_hour as usize,
            args.flood_round,
        ),
    )
    .await?;
    let refused = refused_new(&http, &engine).await?;
    let stored = stored_clusters(&engine).await?;
    let wal = wal_bytes(&file);
    // The store's own size: its log checkpointed into the file, the engine
    // stopped.
    drop(engine);
    seeded_fleet::checkpoint(&store).await?;
    let bytes = std::fs::metadata(&file).map_or(0, |metadata| metadata.len());
    // What an empty store takes (its schema), made beside it.
    let empty_file = dir.join("empty.db");
    seeded_fleet::checkpoint(&format!("sqlite://{}", empty_file.display())).await?;
    let empty = std::fs::metadata(&empty_file).map_or(0, |metadata| metadata.len());
    // The bucket, and its refill until the recorder's last round.
    let allowed = args.new_per_hour as f64 * (1.0 + (flooded.seconds + 2.0) / 3600.0);
    report.figure(
        format!(
            "flood: random new ids (fleet.new_clusters_per_hour {})",
            args.new_per_hour
        ),
        format!(
            "{} in {:.0} s ({:.0}/s)",
            flooded.ok,
            flooded.seconds,
            flooded.ok as f64 / flooded.seconds
        ),
    );
    report.check(
        "flood: clusters the store took",
        format!(
            "{stored} (the file {:.1} MB once its log of {:.1} MB is checkpointed: {:.0} B a cluster beyond an empty store's {:.0} KB)",
            bytes as f64 / 1e6,
            wal as f64 / 1e6,
            bytes.saturating_sub(empty) as f64 / stored.max(1) as f64,
            empty as f64 / 1e3
        ),
        format!(
            "≤ {allowed:.0} (a bucket of {} plus {}/h)",
            args.new_per_hour, args.new_per_hour
        ),
        stored as f64 <= allowed,
        Enforce::Always,
    );
    report.check(
        "flood: cincinnati_pe_fleet_checks_total{outcome=\"refused_new\"} + taken = ids answered",
        format!("{refused} + {stored} = {} of {}", refused + stored, flooded.ok),
        "equal",
        refused + stored == flooded.ok as u64,
        Enforce::Always,
    );
    let each = bytes.saturating_sub(empty) as f64 / stored.max(1) as f64;
    report.figure(
        "flood: what the default bounds allow, at the bytes a cluster took here",
        format!(
            "{:.0} MB an hour (fleet.new_clusters_per_hour 100,000), {:.0} MB in all (fleet.max_clusters 2,000,000)",
            DEFAULT_NEW_PER_HOUR * each / 1e6,
            DEFAULT_MAX_CLUSTERS * each / 1e6
        ),
    );
    report.check(
        "flood: the bucket emptied (a refusal counted)",
        refused > 0,
        "true",
        refused > 0,
        Enforce::Always,
    );
    if let Some((rows, seconds)) = flooded.after_bucket {
        let per_hour = rows as f64 / seconds * 3600.0;
        report.check(
            "flood: growth once the bucket was empty (clusters an hour, measured)",
            format!(
                "{per_hour:.0} ({rows} in {seconds:.0} s): {:.1} MB an hour",
                per_hour * each / 1e6
            ),
            format!("≤ {} (± 2 s of the recorder's rounds)", args.new_per_hour),
            rows as f64 <= args.new_per_hour as f64 * (seconds + 2.0) / 3600.0 + 1.0,
            Enforce::Always,
        );
    }

    // The cap: the same store, room for a few more than it holds.
    let cap = stored + (args.new_per_hour / 2).clamp(1, 1_000);
    let cap_flag = cap.to_string();
    let mut flags = flags;
    flags.extend(["--fleet.max_clusters".to_owned(), cap_flag]);
    let engine = start_engine(&dir, "flood-capped", upstream, &flags).await?;
    let flooded = flood_for(
        &engine,
        &mut next,
        (
            Duration::from_secs((args.flood_seconds / 3).max(1)),
            2 * (cap - stored) as usize,
            args.flood_round,
        ),
    )
    .await?;
    let stored_capped = stored_clusters(&engine).await?;
    report.check(
        "flood: clusters the store holds once capped (fleet.max_clusters)",
        format!("{stored_capped} after {} more ids", flooded.ok),
        format!("≤ {cap}"),
        stored_capped <= cap,
        Enforce::Always,
    );
    Ok(())
}

/// What a flood did.
struct Flooded {
    ok: usize,
    seconds: f64,
    /// Clusters the store took, and in how many seconds, from when the
    /// bucket first refused to the end (none if it never did).
    after_bucket: Option<(u64, f64)>,
}

/// Sends new ids (from `next` on) to `engine` for `lasting`, and at least
/// `at_least` of them, in rounds of `round`; once the first is refused
/// (the bucket is empty), the store's clusters are counted, and again at
/// the end, every check written.
async fn flood_for(
    engine: &ServiceProcess,
    next: &mut u64,
    (lasting, at_least, round): (Duration, usize, usize),
) -> anyhow::Result<Flooded> {
    let http = reqwest::Client::new();
    let public = PublicPort::of(engine)?;
    let started = Instant::now();
    let mut ok = 0;
    let written_before = written(&http, engine).await?;
    let mut empty_bucket: Option<(u64, Instant)> = None;
    // However slow, not for ever.
    let deadline = lasting + Duration::from_secs(300);
    while (started.elapsed() < lasting || ok < at_least) && started.elapsed() < deadline {
        let ids = minted::ids(FLOOD, *next, round);
        *next += ids.len() as u64;
        let checks: Vec<Check> = ids.iter().map(|id| Check::of(id, CHANNEL, FROM)).collect();
        ok += public.send_all(&checks).await.ok;
        if empty_bucket.is_none() && refused_new(&http, engine).await? > 0 {
            await_written(&http, engine, written_before, ok).await?;
            empty_bucket = Some((stored_clusters(engine).await?, Instant::now()));
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    await_written(&http, engine, written_before, ok).await?;
    let after_bucket = match empty_bucket {
        Some((stored, at)) => {
            let now = stored_clusters(engine).await?;
            Some((now - stored, at.elapsed().as_secs_f64()))
        }
        None => None,
    };
    Ok(Flooded {
        ok,
        seconds,
        after_bucket,
    })
}

async fn refused_new(http: &reqwest::Client, engine: &ServiceProcess) -> anyhow::Result<u64> {
    let refused = metrics::read(
        http,
        engine,
        "cincinnati_pe_fleet_checks_total{outcome=\"refused_new\"}",
    )
    .await
    .unwrap_or(0.0);
    Ok(refused as u64)
}

/// The clusters the store holds, as the fleet's versions answer counts them.
async fn stored_clusters(engine: &ServiceProcess) -> anyhow::Result<u64> {
    let plane = OperatorPlane::of(engine, "")?;
    let (versions, _) = plane.get("/v1/fleet/versions").await?;
    versions["clusters"]
        .as_u64()
        .with_context(|| format!("no clusters in {versions}"))
}

/// Bytes of a SQLite store's write-ahead log.
fn wal_bytes(file: &Path) -> u64 {
    let mut name = file.as_os_str().to_owned();
    name.push("-wal");
    std::fs::metadata(PathBuf::from(name)).map_or(0, |metadata| metadata.len())
}

/// Attack 6 (rather: the brake under a full disk): the store on a tmpfs
/// filled to the last byte, a pause through the operator plane.
async fn full_store(workdir: &Path, upstream: &str, report: &mut Figures) -> anyhow::Result<()> {
    let dir = workdir.join("full");
    let disk = Tmpfs::mount(&dir.join("disk"), "32m")?;
    let store = format!("sqlite://{}", disk.path().join("fleet.db").display());
    // A rollout whose progress moves fast: 0 to 100% over six minutes.
    const TARGET: &str = "4.18.41";
    const HOURS: f64 = 0.1;
    let start = hours_ago(30.0 / 3600.0);
    let mut policy = PolicyFile::new(dir.join("policy.yaml"));
    policy.declare(TARGET, start, (HOURS, 0.0), "")?;
    // Where its schedule alone would be now (a paused rollout's own
    // figures stand still).
    let schedule = || Timestamp::now().duration_since(start).as_secs_f64() / (HOURS * 3600.0) * 100.0;
    let tokens = dir.join("tokens");
    write_tokens(&tokens)?;
    let flags = control_flags(&store, &policy.path, &tokens)?;
    let mut engine = start_engine(&dir, "full", upstream, &flags).await?;
    let prober = Prober::start(vec![engine.status_url("/livez"), engine.status_url("/readyz")])?;
    let http = reqwest::Client::new();
    let public = PublicPort::of(&engine)?;
    let alertmanager = OperatorPlane::of(&engine, PAUSE_TOKEN)?;
    let dashboard = OperatorPlane::of(&engine, READ_TOKEN)?;
    dashboard
        .await_rollout(TARGET, "its state known", |rollout| {
            rollout["state"] == "on-schedule"
        })
        .await?;

    // The disk fills; clusters keep checking in until the store refuses them.
    let filled = disk.fill("filler")?;
    let mut next = 0;
    let refusing = Instant::now();
    let errors = loop {
        let ids = minted::ids(FULL_STORE, next, 500);
        next += ids.len() as u64;
        let checks: Vec<Check> = ids.iter().map(|id| Check::of(id, CHANNEL, FROM)).collect();
        public.send_all(&checks).await;
        let mut errors = 0.0;
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            errors = metrics::read(&http, &engine, "cincinnati_pe_fleet_store_errors_total").await?;
            if errors > 0.0 {
                break;
            }
        }
        if errors > 0.0 || refusing.elapsed() > Duration::from_secs(60) {
            break errors;
        }
    };
    report.check(
        "full store: the store refuses writes (tmpfs filled, cincinnati_pe_fleet_store_errors_total)",
        format!(
            "{errors} errors, {} checks after filling {:.1} MB",
            next,
            filled as f64 / 1e6
        ),
        "> 0",
        errors > 0.0,
        Enforce::Always,
    );
    // What the engine answers with right before the pause: clusters placed
    // below this are offered (its clock is its last read of the state, at
    // most `rollouts.refresh_ms` old).
    let answering = dashboard.rollout(TARGET).await?["progress"]
        .as_f64()
        .unwrap_or(0.0);
    let (status, body, took) = alertmanager
        .change(
            reqwest::Method::POST,
            TARGET,
            "pause",
            "reliability: the disk is full",
        )
        .await?;
    report.check(
        "full store: a pause with a pause-scoped token (status, s)",
        format!("{status} in {:.2} s", took.as_secs_f64()),
        "202 (in force, pending)",
        status == 202,
        Enforce::Always,
    );
    let paused: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let rollout = dashboard.rollout(TARGET).await?;
    let paused_at = rollout["control"]["paused"]["progress"]
        .as_f64()
        .or_else(|| rollout["progress"].as_f64())
        .unwrap_or(0.0);
    let document = dashboard.rollouts().await?;
    report.figure(
        "full store: the rollout once paused",
        format!(
            "state {}, paused at {paused_at:.4}%, progress {}, state as of {} ({}), pending {}",
            rollout["state"],
            rollout["progress"],
            document["state"]["asOf"],
            document["state"]["known"],
            document["state"]["pending"]
        ),
    );
    anyhow::ensure!(
        paused.is_object() || status != 202,
        "a 202 without a document: {body}"
    );
    // In force at once: who was offered keeps the offer; nobody new is let
    // in while the schedule moves on.
    let inside = minted::placed_within(PROBED, 0.0..answering, 20);
    let kept = public.offered(&inside, (CHANNEL, FROM), TARGET, false).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let scheduled = schedule();
    let due = minted::placed_within(PROBED + 1, paused_at..scheduled, 20);
    let new = public.offered(&due, (CHANNEL, FROM), TARGET, false).await?;
    let withdrawn: Vec<String> = inside
        .iter()
        .filter(|id| !kept.contains(id))
        .map(|id| format!("{id} at {:.4}%", minted::place(id).unwrap_or_default()))
        .collect();
    report.check(
        format!(
            "full store: clusters placed below the progress answered before the pause ({answering:.2}%) offered after it, of {}",
            inside.len()
        ),
        if withdrawn.is_empty() {
            kept.len().to_string()
        } else {
            format!("{} (not: {})", kept.len(), withdrawn.join(", "))
        },
        inside.len().to_string(),
        withdrawn.is_empty(),
        Enforce::Always,
    );
    report.check(
        format!("full store: clusters the schedule let in since the pause ({paused_at:.2}% → {scheduled:.2}%) offered"),
        format!("{} of {}", new.len(), due.len()),
        "0",
        new.is_empty() && !due.is_empty(),
        Enforce::Always,
    );
    // Room again: the pause is written.
    disk.free("filler")?;
    let freed = Instant::now();
    let written_after = loop {
        let document = dashboard.rollouts().await?;
        let pending = document["state"]["pending"].as_array().map_or(0, Vec::len);
        if pending == 0 {
            break Some(freed.elapsed());
        }
        if freed.elapsed() > Duration::from_secs(60) {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let document = dashboard.rollouts().await?;
    let pauses = document["history"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|entry| entry["target"] == TARGET && entry["action"] == "pause")
        .count();
    report.check(
        "full store: the pause written once the disk has room (s, pauses in the history)",
        match written_after {
            Some(took) => format!("after {:.1} s, {pauses}", took.as_secs_f64()),
            None => format!("not within 60 s, {pauses}"),
        },
        "written, 1",
        written_after.is_some() && pauses == 1,
        Enforce::Always,
    );
    let probes = prober.tally();
    drop(prober);
    engine.restart().await?;
    let dashboard = OperatorPlane::of(&engine, READ_TOKEN)?;
    let (rollout, _) = dashboard
        .await_rollout(TARGET, "its state read", |rollout| rollout["state"] != "unknown")
        .await?;
    report.check(
        "full store: the rollout after a restart of the engine",
        rollout["state"].clone(),
        "\"paused\"",
        rollout["state"] == "paused",
        Enforce::Always,
    );
    report.figure(
        "full store: /livez and /readyz while full and after, beside the flood (slowest)",
        format!("{probes} ({} ms)", probes.slowest_ms),
    );
    Ok(())
}
