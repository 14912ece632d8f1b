//! A security review's attacks on request bodies, against an engine of the
//! demo data with rollout control (so its status port has Alertmanager's
//! webhook and takes 1 MiB alerts), and, given `--before-bin`, the same
//! engine built from the commit before the front door refused bodies, side
//! by side in one run:
//!
//! 1. the public port: 9,000 clients each announcing a 64 KiB body on a GET
//!    route and sending all of it but its last byte, again as soon as their
//!    connection ends;
//! 2. the public port: the same clients sending the head and one byte;
//! 3. the status port: 800 clients each posting a 1 MiB alert without a
//!    token to the webhook, all of it but its last byte.
//!
//! Each engine's resident set is sampled during each attack: its growth
//! must stay under 64 MB (enforced for this build; the engine before is
//! reported). The engines live after everything. The service binaries come
//! from `E2E_BIN_DIR`, the engine before from `--before-bin`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use e2e::graph_builder::PATH_PREFIX;
use e2e::policy_engine;
use e2e::process::ServiceProcess;
use reliability::demo;
use reliability::held_bodies::{Attack, Outcome};
use reliability::report::{Enforce, Report};

#[derive(Parser)]
struct Args {
    /// Clients of the attacks on the public port.
    #[arg(long, default_value_t = 9_000)]
    connections: usize,
    /// Clients of the attack on the status port.
    #[arg(long, default_value_t = 800)]
    status_connections: usize,
    /// Seconds of each attack on each engine.
    #[arg(long, default_value_t = 15)]
    seconds: u64,
    /// The directory of a `policy-engine` built from the commit to compare
    /// with (the "before").
    #[arg(long)]
    before_bin: Option<PathBuf>,
}

/// The review's target for every attack.
const GROWTH_TARGET_MB: f64 = 64.0;
/// What a public body announces: the old bound on bodies.
const PUBLIC_BODY: usize = 64 * 1024;
/// What an alert announces: `rollouts.max_alert_bytes`' default.
const ALERT_BODY: usize = 1024 * 1024;
/// A rollout to control, and a token that is not the attackers'.
const POLICY: &str = "rollouts:\n  - target: 4.18.40\n    start: 2026-01-01T00:00:00Z\n    \
                      duration_hours: 800000\n    starting_percentage: 50\n";
const TOKENS: &str = "ops s3cret-0123456789abcdef\n";

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let workdir = tempfile::tempdir()?;
    let graph_builder = demo::graph_builder(workdir.path(), &demo::testdata().join("graph-data")).await?;
    let upstream = policy_engine::graph_url(&graph_builder);
    let mut engines = Vec::new();
    if let Some(before) = &args.before_bin {
        let program = before.join("policy-engine");
        let engine = start_engine(workdir.path(), "before", &upstream, Some(&program)).await?;
        engines.push(("before", engine));
    }
    engines.push((
        "after",
        start_engine(workdir.path(), "after", &upstream, None).await?,
    ));

    let mut report = Report::new("bodies", false);
    for kind in Kind::ALL {
        for (build, engine) in &engines {
            let pid = engine.pid().context("the engine runs")?;
            let attack = kind.against(engine, &args)?;
            let outcome = attack.run(pid).await?;
            record(&mut report, build, kind.name(), attack.connections, &outcome);
        }
    }
    let http = reqwest::Client::new();
    for (build, engine) in &engines {
        let ready = http
            .get(engine.status_url("/readyz"))
            .send()
            .await
            .is_ok_and(|answer| answer.status() == 200);
        let enforce = if *build == "after" {
            Enforce::Always
        } else {
            Enforce::Report
        };
        report.check(
            format!("{build}: the engine ready after the attacks"),
            ready,
            "true",
            ready,
            enforce,
        );
    }
    Ok(report.exit_code())
}

/// The attacks, in the order they are made.
#[derive(Debug, Clone, Copy)]
enum Kind {
    PublicBodies,
    PublicHeads,
    StatusAlerts,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::PublicBodies, Kind::PublicHeads, Kind::StatusAlerts];

    fn name(self) -> &'static str {
        match self {
            Kind::PublicBodies => "public port, 64 KiB bodies less a byte",
            Kind::PublicHeads => "public port, heads and one byte",
            Kind::StatusAlerts => "status port, 1 MiB alerts less a byte without a token",
        }
    }

    /// This attack on `engine`.
    fn against(self, engine: &ServiceProcess, args: &Args) -> anyhow::Result<Attack> {
        let lasting = Duration::from_secs(args.seconds);
        let public = authority(&engine.api_url(""));
        let public_head = format!(
            "GET {PATH_PREFIX}/v1/channels?arch=amd64 HTTP/1.1\r\nHost: {public}\r\n\
             Content-Length: {PUBLIC_BODY}\r\n\r\n"
        );
        let status = authority(&engine.status_url(""));
        Ok(match self {
            Kind::PublicBodies | Kind::PublicHeads => Attack {
                address: public.parse()?,
                head: public_head,
                sent: match self {
                    Kind::PublicBodies => PUBLIC_BODY - 1,
                    _ => 1,
                },
                connections: args.connections,
                lasting,
            },
            Kind::StatusAlerts => Attack {
                address: status.parse()?,
                head: format!(
                    "POST {PATH_PREFIX}/v1/alerts/alertmanager HTTP/1.1\r\nHost: {status}\r\n\
                     Content-Type: application/json\r\nContent-Length: {ALERT_BODY}\r\n\r\n"
                ),
                sent: ALERT_BODY - 1,
                connections: args.status_connections,
                lasting,
            },
        })
    }
}

/// An engine on `upstream` with rollout control (its status port takes
/// Alertmanager's webhook), from `program` or the suite's binary.
async fn start_engine(
    workdir: &Path,
    id: &str,
    upstream: &str,
    program: Option<&Path>,
) -> anyhow::Result<ServiceProcess> {
    let (policy, tokens) = (
        workdir.join(format!("policy-{id}.yaml")),
        workdir.join(format!("tokens-{id}")),
    );
    std::fs::write(&policy, POLICY)?;
    std::fs::write(&tokens, TOKENS)?;
    let store = format!("sqlite://{}", workdir.join(format!("fleet-{id}.db")).display());
    let flags = [
        "--fleet.store",
        &store,
        "--cluster_policy.file",
        policy.to_str().context("a UTF-8 path")?,
        "--rollouts.token_file",
        tokens.to_str().context("a UTF-8 path")?,
    ];
    match program {
        Some(program) => policy_engine::start_program(workdir, id, upstream, &flags, program).await,
        None => policy_engine::start_with(workdir, id, upstream, &flags).await,
    }
}

fn record(report: &mut Report, build: &str, attack: &str, clients: usize, outcome: &Outcome) {
    report.figure(
        format!("{build}: {attack}: connections opened by {clients} clients, answers"),
        format!("{} ({})", outcome.attempts, outcome.answers_text()),
    );
    let growth = outcome.growth_mb();
    let enforce = if build == "after" {
        Enforce::Always
    } else {
        Enforce::Report
    };
    report.check(
        format!("{build}: {attack}: RSS growth (MB; MiB before → peak)"),
        format!(
            "{growth:.1} ({:.1} → {:.1})",
            outcome.rss_before, outcome.rss_peak
        ),
        format!("< {GROWTH_TARGET_MB}"),
        growth < GROWTH_TARGET_MB,
        enforce,
    );
}

/// `127.0.0.1:port` of `http://127.0.0.1:port/...`.
fn authority(url: &str) -> String {
    let rest = url.trim_start_matches("http://");
    rest[..rest.find('/').unwrap_or(rest.len())].to_owned()
}
