//! Every promise rollout control makes ("What rollout control guarantees"
//! in `docs/policy-engine.md`), checked from outside on a seeded random
//! run against an oracle written from the documentation alone
//! ([`crate::support::oracle`]): two engines sharing one store, operators
//! pausing, resuming, holding and releasing on either, Alertmanager's
//! alerts firing and resolving on one engine or on both at once (an HA
//! pair), engines restarted, the store going away and coming back. After
//! every step each engine is asked about a fixed fleet whose places spread
//! over 0-100%, and:
//!
//! - no cluster is offered a target above the most the rules allow (1: a
//!   pause never lets a new cluster in; 3: state that cannot be read again
//!   stops the clock), and where the engine knows the state every cluster
//!   below the least is offered it: the run fails both ways;
//! - an engine that has not read the state offers no target to anyone and
//!   says so in `/v1/rollouts`, `/status` and its metrics (2);
//! - a pause or a firing alert the store cannot take is answered 202 (the
//!   alert `pending`), in force at once on that engine, listed as pending,
//!   and written when the store is back; a resume, hold, release or
//!   resolved alert is refused with 503 (4);
//! - the audit holds exactly the changes the oracle accepted: an alert
//!   delivered to both engines pauses, and is audited, once;
//! - none of the questions asked is recorded (7);
//! - a rate never lets more than its cap of distinct clusters in within a
//!   period, across both engines, restarts and outages (6).
//!
//! Two rollouts under the operators and alerts: one that barely moves
//! (half way through 10,000 hours) and one that lets a cluster in every few
//! seconds, so that a pause, a stopped clock or a restart that moved on
//! would show. A third, at 100% behind a rate, has established takers
//! seeded in the store; its gates are judged every second.
//!
//! The store goes away for real. PostgreSQL is stopped: nothing can be
//! read or written. A SQLite file cannot be taken away from engines that
//! hold it open (in WAL mode its readers never wait, and root ignores
//! permissions), so there another connection holds its write lock:
//! nothing can be written, what is stored can still be read, as with a
//! full disk.
//!
//! `ROLLOUT_PROMISES_STEPS` (default [`STEPS`]) and
//! `ROLLOUT_PROMISES_SEED` set the run; `scripts/reliability/rollout-promises.sh`
//! runs a long one.

use std::collections::BTreeSet;
use std::time::Duration;

use cincinnati_client::rollout::Rollouts;
use futures::StreamExt as _;
use postgres_testkit::PostgresServer;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore as _, SeedableRng as _};
use reqwest::Method;
use serde_json::json;
use sqlx::Connection as _;

use crate::support::app::{TestApp, spawn};
use crate::support::oracle::{Alert, Ask, By, Decided, Schedule, Span, Timeline, View, secs};
use crate::support::rollouts::{
    ALERTMANAGER_TOKEN, change, clusters_at, control_settings, notification, offered_from, outcomes,
    post_notification, rollouts,
};
use crate::support::small_graph;
use crate::support::upstream::{Behaviour, FakeUpstream};

/// Steps of the default run on each store: every kind at least once.
const STEPS: usize = 16;
/// The default run's seed.
const SEED: u64 = 0x0c1c_1a77_1000;
/// Clusters asked about at every check: their places about 0.7% apart.
const CLUSTERS: usize = 150;
/// The slow rollout and the fast one, as [`Run::rollouts`] holds them.
const SLOW: usize = 0;
const FAST: usize = 1;
/// The fast rollout's pace, percent a second: a cluster in every few
/// seconds, and a long run before it is complete.
const FAST_PACE: f64 = 0.25;
/// The rollout behind a rate, its cap a period (24 hours: the run's only
/// period), and its takers: established clusters on 4.18.1.
const RATED: &str = "4.18.3";
const RATE_CAP: usize = 4;
const RATE_TAKERS: u32 = 24;

/// How long a step may wait for an engine to see the store as it is: a
/// bound on a hung run, not a measure (a refresh is 200 ms; one that
/// cannot write to a locked SQLite file waits 5 s for each brake).
const PATIENCE: Duration = Duration::from_secs(90);

/// The alerts of the run, two on each rollout; an alert is its fingerprint.
const ALERTS: [(usize, Alert); 4] = [
    (
        FAST,
        Alert {
            fingerprint: "0f1a",
            name: "UpdatesFailing",
        },
    ),
    (
        FAST,
        Alert {
            fingerprint: "0f2b",
            name: "StorageFailing",
        },
    ),
    (
        SLOW,
        Alert {
            fingerprint: "05a1",
            name: "UpdatesFailing",
        },
    ),
    (
        SLOW,
        Alert {
            fingerprint: "05b2",
            name: "NodesDegraded",
        },
    ),
];

#[tokio::test]
async fn rollout_promises_hold_for_two_engines_sharing_a_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("fleet.db").display());
    Run::start(Store::Sqlite { url, writer: None }, dir)
        .await
        .go()
        .await;
}

#[tokio::test]
async fn rollout_promises_hold_for_two_engines_sharing_postgresql() {
    let server = PostgresServer::start().await.unwrap();
    Run::start(Store::Postgres(server), tempfile::tempdir().unwrap())
        .await
        .go()
        .await;
}

/// The store the engines share, and how it goes away.
enum Store {
    /// Away: `writer` holds its write lock.
    Sqlite {
        url: String,
        writer: Option<sqlx::SqliteConnection>,
    },
    /// Away: stopped.
    Postgres(PostgresServer),
}

impl Store {
    fn url(&self) -> String {
        match self {
            Self::Sqlite { url, .. } => url.clone(),
            Self::Postgres(server) => server.url(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Sqlite { .. } => "sqlite",
            Self::Postgres(_) => "postgresql",
        }
    }

    /// Whether engines can still read it while it is away.
    fn readable_while_away(&self) -> bool {
        matches!(self, Self::Sqlite { .. })
    }

    async fn go_away(&mut self) {
        match self {
            Self::Sqlite { url, writer } => {
                let mut connection = sqlx::SqliteConnection::connect(url).await.unwrap();
                sqlx::query("BEGIN IMMEDIATE")
                    .execute(&mut connection)
                    .await
                    .unwrap();
                *writer = Some(connection);
            }
            Self::Postgres(server) => server.stop().unwrap(),
        }
    }

    async fn come_back(&mut self) {
        match self {
            Self::Sqlite { writer, .. } => {
                let mut connection = writer.take().expect("the store is away");
                sqlx::query("ROLLBACK").execute(&mut connection).await.unwrap();
                connection.close().await.unwrap();
            }
            Self::Postgres(server) => server.restart().await.unwrap(),
        }
    }
}

/// One step of a run.
#[derive(Debug, Clone)]
enum Step {
    /// An operator's pause, resume, hold or release, asked of an engine.
    Operator {
        engine: usize,
        rollout: usize,
        ask: Ask,
    },
    /// Alertmanager's notification of one alert (of [`ALERTS`]), to one
    /// engine or to both at once.
    Alert {
        engines: Vec<usize>,
        alert: usize,
        firing: bool,
    },
    Restart {
        engine: usize,
    },
    StoreAway,
    StoreBack,
    /// Time passes: the fast rollout's schedule passes another cluster.
    Wait,
}

/// A run's steps: one of every kind (an outage with a pause and an alert
/// pending, a restart losing one, a refusal), then random ones, shuffled.
/// An outage is the store going away, one to three steps, and its return.
fn plan(rng: &mut ChaCha8Rng, steps: usize) -> Vec<Step> {
    let engine = below(rng, 2);
    let mut episodes = vec![
        vec![Step::Operator {
            engine: below(rng, 2),
            rollout: FAST,
            ask: Ask::Pause,
        }],
        vec![Step::Operator {
            engine: below(rng, 2),
            rollout: FAST,
            ask: Ask::Resume,
        }],
        vec![Step::Operator {
            engine: below(rng, 2),
            rollout: below(rng, 2),
            ask: hold(rng),
        }],
        vec![Step::Operator {
            engine: below(rng, 2),
            rollout: below(rng, 2),
            ask: Ask::Release,
        }],
        vec![Step::Alert {
            engines: vec![0, 1],
            alert: below(rng, ALERTS.len()),
            firing: true,
        }],
        vec![Step::Alert {
            engines: vec![below(rng, 2)],
            alert: below(rng, ALERTS.len()),
            firing: false,
        }],
        vec![Step::Restart {
            engine: below(rng, 2),
        }],
        vec![Step::Wait],
        vec![
            Step::StoreAway,
            Step::Operator {
                engine,
                rollout: FAST,
                ask: Ask::Pause,
            },
            Step::Alert {
                engines: vec![0, 1],
                alert: below(rng, ALERTS.len()),
                firing: true,
            },
            Step::Restart { engine: 1 - engine },
            Step::Operator {
                engine,
                rollout: below(rng, 2),
                ask: Ask::Resume,
            },
            Step::StoreBack,
        ],
    ];
    let mut planned: usize = episodes.iter().map(Vec::len).sum();
    while planned < steps {
        let episode = if below(rng, 10) == 0 {
            let mut outage = vec![Step::StoreAway];
            outage.extend((0..1 + below(rng, 3)).map(|_| random_step(rng)));
            outage.push(Step::StoreBack);
            outage
        } else {
            vec![random_step(rng)]
        };
        planned += episode.len();
        episodes.push(episode);
    }
    for index in (1..episodes.len()).rev() {
        episodes.swap(index, below(rng, index + 1));
    }
    episodes.into_iter().flatten().collect()
}

fn random_step(rng: &mut ChaCha8Rng) -> Step {
    match below(rng, 20) {
        0..=8 => Step::Operator {
            engine: below(rng, 2),
            rollout: below(rng, 2),
            ask: match below(rng, 10) {
                0..=2 => Ask::Pause,
                3..=5 => Ask::Resume,
                6 | 7 => hold(rng),
                _ => Ask::Release,
            },
        },
        9..=15 => Step::Alert {
            engines: match below(rng, 3) {
                2 => vec![0, 1],
                engine => vec![engine],
            },
            alert: below(rng, ALERTS.len()),
            firing: below(rng, 5) < 3,
        },
        16 | 17 => Step::Restart {
            engine: below(rng, 2),
        },
        _ => Step::Wait,
    }
}

/// A hold at a percentage with one decimal.
fn hold(rng: &mut ChaCha8Rng) -> Ask {
    Ask::Hold(below(rng, 1001) as f64 / 10.0)
}

fn below(rng: &mut ChaCha8Rng, bound: usize) -> usize {
    (rng.next_u64() % bound as u64) as usize
}

/// What a run keeps of an engine.
struct Engine {
    name: &'static str,
    app: Option<TestApp>,
    /// Its `asOf` is at least this; `None`: it has not read the state
    /// since it started.
    read: Option<f64>,
    /// It has read every change up to this one.
    floor: usize,
    /// Started while the store could not be read: it cannot have read the
    /// state before the store is back.
    blind: bool,
    /// Its brakes the store has not taken, in the order asked.
    pending: Vec<Brake>,
}

/// A pause or firing alert an engine keeps until the store takes it.
#[derive(Debug, Clone)]
struct Brake {
    rollout: usize,
    ask: Ask,
    at: Span,
    /// An operator's reason.
    reason: Option<String>,
}

impl Engine {
    fn app(&self) -> &TestApp {
        self.app.as_ref().expect("the engine runs")
    }
}

/// An audit entry the oracle expects (any reason where it has none).
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    target: String,
    action: String,
    by: String,
    reason: Option<String>,
}

/// What a run did, printed at its end.
#[derive(Debug, Default)]
struct Figures {
    steps: usize,
    checks: usize,
    questions: usize,
    changes: usize,
    alerts: usize,
    alerts_to_both: usize,
    restarts: usize,
    outages: usize,
    pending: usize,
    lost: usize,
    refused: usize,
    waits: usize,
    /// Distinct takers offered the rated target so far.
    rate_offered: usize,
}

struct Run {
    seed: u64,
    steps: Vec<Step>,
    store: Store,
    dir: tempfile::TempDir,
    upstream: FakeUpstream,
    engines: [Engine; 2],
    rollouts: [Timeline; 2],
    /// Cluster ids and their places.
    clusters: Vec<(String, f64)>,
    /// The rated rollout's takers, and those either engine offered it.
    takers: Vec<String>,
    rate_offered: BTreeSet<String>,
    /// Changes the store took, numbered from 1.
    changes: usize,
    audit: Vec<Entry>,
    /// When the store went away, while it is.
    away: Option<f64>,
    figures: Figures,
    log: Vec<String>,
    violations: Vec<String>,
}

impl Run {
    /// Two engines over `store`, with a policy file in `dir` declaring the
    /// slow rollout (of 4.18.4) and the fast one (of 4.18.2, with
    /// `auto_resume`).
    async fn start(store: Store, dir: tempfile::TempDir) -> Self {
        let steps = std::env::var("ROLLOUT_PROMISES_STEPS").map_or(STEPS, |steps| {
            steps.parse().expect("ROLLOUT_PROMISES_STEPS is a number")
        });
        let seed = std::env::var("ROLLOUT_PROMISES_SEED").map_or(SEED, |seed| {
            seed.parse().expect("ROLLOUT_PROMISES_SEED is a number")
        });
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let steps = plan(&mut rng, steps);
        // Whole seconds, so that the file says exactly what the oracle
        // computes with; the fast rollout's duration in whole seconds of
        // hundredths of an hour, long enough for the run not to complete it.
        let now = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).unwrap();
        let slow_start = now - jiff::SignedDuration::from_hours(5000);
        let fast_hours = ((90.0 / FAST_PACE + 6.0 * steps.len() as f64) / 36.0).ceil() / 100.0;
        let slow = Schedule {
            start: secs(slow_start),
            duration_secs: 10_000.0 * 3600.0,
            starting_percentage: 0.0,
        };
        let fast = Schedule {
            start: secs(now),
            duration_secs: fast_hours * 3600.0,
            starting_percentage: 10.0,
        };
        std::fs::write(
            dir.path().join("policy.yaml"),
            format!(
                "rollouts:\n  - target: 4.18.4\n    start: \"{slow_start}\"\n    duration_hours: 10000\n  \
                 - target: 4.18.2\n    start: \"{now}\"\n    duration_hours: {fast_hours}\n    \
                 starting_percentage: 10\n    auto_resume: true\n  \
                 - target: {RATED}\n    start: \"{slow_start}\"\n    duration_hours: 1\n    \
                 starting_percentage: 100\n    max_offered_per_period: {{clusters: {RATE_CAP}, period_hours: 24}}\n"
            ),
        )
        .unwrap();
        let takers: Vec<String> = (0..RATE_TAKERS)
            .map(|n| format!("{n:08x}-7a7e-4e2f-8a3b-4c5d6e7f8091"))
            .collect();
        let seeded = fleet_store::FleetStore::open(&store.url(), &store.url())
            .await
            .unwrap();
        for id in &takers {
            let place = crate::support::place_percent(id);
            crate::support::rollouts::seed(&seeded, (id, place), &[("4.18.1", 72.0)], 0.0).await;
        }
        seeded.close().await;
        let upstream = FakeUpstream::start(Behaviour::Graph(small_graph())).await;
        let mut run = Self {
            seed,
            steps,
            store,
            dir,
            upstream,
            engines: ["A", "B"].map(|name| Engine {
                name,
                app: None,
                read: None,
                floor: 0,
                blind: false,
                pending: Vec::new(),
            }),
            rollouts: [
                Timeline::new("4.18.4", slow, false),
                Timeline::new("4.18.2", fast, true),
            ],
            clusters: clusters_at(0.0..100.0, CLUSTERS)
                .into_iter()
                .map(|id| {
                    let place = crate::support::place_percent(&id);
                    (id, place)
                })
                .collect(),
            takers,
            rate_offered: BTreeSet::new(),
            changes: 0,
            audit: Vec::new(),
            away: None,
            figures: Figures::default(),
            log: Vec::new(),
            violations: Vec::new(),
        };
        for engine in 0..2 {
            run.launch(engine).await;
        }
        run
    }

    /// Takes every step, checking after each; fails with every violation
    /// of the first step that had any.
    async fn go(mut self) {
        let started = std::time::Instant::now();
        for step in std::mem::take(&mut self.steps) {
            self.figures.steps += 1;
            self.log.push(format!("{}: {step:?}", self.figures.steps));
            self.take(step).await;
            if !self.violations.is_empty() {
                break;
            }
        }
        if self.violations.is_empty() {
            self.nothing_recorded().await;
        }
        println!(
            "rollout-promises: {} seed {}: {:?}, 2 engines, {} violations, {:.0?}",
            self.store.name(),
            self.seed,
            self.figures,
            self.violations.len(),
            started.elapsed()
        );
        assert!(
            self.violations.is_empty(),
            "{} seed {} (ROLLOUT_PROMISES_SEED={} ROLLOUT_PROMISES_STEPS={}), steps:\n{}\nviolations:\n{}",
            self.store.name(),
            self.seed,
            self.seed,
            self.figures.steps,
            self.log.join("\n"),
            self.violations.join("\n")
        );
        for engine in &mut self.engines {
            engine.app.take().expect("the engine runs").shut_down().await;
        }
    }

    fn violation(&mut self, what: String) {
        self.violations
            .push(format!("step {}: {what}", self.figures.steps));
    }

    async fn take(&mut self, step: Step) {
        match step {
            Step::Operator { engine, rollout, ask } => self.operator(engine, rollout, ask).await,
            Step::Alert {
                engines,
                alert,
                firing,
            } => self.alert(&engines, alert, firing).await,
            Step::Restart { engine } => self.restart(engine).await,
            Step::StoreAway => {
                self.store.go_away().await;
                self.away = Some(secs(jiff::Timestamp::now()));
                self.figures.outages += 1;
            }
            Step::StoreBack => self.store_back().await,
            Step::Wait => self.wait().await,
        }
        let settled = jiff::Timestamp::now();
        for engine in 0..2 {
            self.settle(engine, settled).await;
        }
        let mut documents = Vec::new();
        for engine in 0..2 {
            documents.push(self.check(engine).await);
        }
        self.check_audit(&documents[0]);
    }

    async fn operator(&mut self, engine: usize, rollout: usize, ask: Ask) {
        let target = self.rollouts[rollout].target;
        let reason = format!("step {} on {}", self.figures.steps, self.engines[engine].name);
        let percent = match ask {
            Ask::Hold(percent) => Some(percent.to_string()),
            _ => None,
        };
        let (method, route) = match ask {
            Ask::Pause => (Method::POST, "pause"),
            Ask::Resume => (Method::POST, "resume"),
            Ask::Hold(_) | Ask::Release => (Method::PUT, "progress"),
            Ask::Firing(_) | Ask::Resolved(_) => unreachable!("alerts come from Alertmanager"),
        };
        let mut query = vec![("reason", reason.as_str())];
        if let Some(percent) = &percent {
            query.push(("percent", percent));
        }
        let sent = jiff::Timestamp::now();
        let (status, body) = change(
            self.engines[engine].app(),
            method,
            &format!("{target}/{route}"),
            &query,
        )
        .await;
        let at = Span::between(sent, jiff::Timestamp::now());
        let expected = match self.away {
            Some(_) if ask.brakes() => 202,
            Some(_) => 503,
            None => 200,
        };
        if status != expected {
            self.violation(format!(
                "{ask:?} of {target} on {} answered {status}, not {expected}: {body}",
                self.engines[engine].name
            ));
            return;
        }
        match status {
            200 => {
                let decided = self.accept(rollout, &ask, at);
                self.audited(rollout, decided, Some(reason));
                self.saw_change(engine, at);
            }
            202 => {
                self.engines[engine].pending.push(Brake {
                    rollout,
                    ask,
                    at,
                    reason: Some(reason),
                });
                self.figures.pending += 1;
            }
            _ => self.figures.refused += 1,
        }
        // In force on the engine asked at once.
        self.check(engine).await;
    }

    async fn alert(&mut self, engines: &[usize], index: usize, firing: bool) {
        let (rollout, alert) = ALERTS[index];
        let target = self.rollouts[rollout].target;
        let status = if firing { "firing" } else { "resolved" };
        let body = notification(&[crate::support::rollouts::alert(
            status,
            json!({"alertname": alert.name, "rollout_target": target}),
            &summary(alert, target),
            alert.fingerprint,
        )])
        .to_string();
        self.figures.alerts += 1;
        if engines.len() > 1 {
            self.figures.alerts_to_both += 1;
        }
        let sent = jiff::Timestamp::now();
        let answers = futures::future::join_all(engines.iter().map(|&engine| {
            post_notification(self.engines[engine].app(), Some(ALERTMANAGER_TOKEN), body.clone())
        }))
        .await;
        let at = Span::between(sent, jiff::Timestamp::now());
        let ask = if firing {
            Ask::Firing(alert)
        } else {
            Ask::Resolved(alert)
        };
        let said: Vec<String> = answers
            .iter()
            .map(|answer| match answer.status {
                200 => outcomes(answer).join(","),
                status => format!("status {status}"),
            })
            .collect();
        let mut expected: Vec<String> = match self.away {
            Some(_) if firing => {
                for &engine in engines {
                    self.engines[engine].pending.push(Brake {
                        rollout,
                        ask: ask.clone(),
                        at,
                        reason: None,
                    });
                    self.figures.pending += 1;
                }
                vec!["pending".to_owned(); engines.len()]
            }
            Some(_) => {
                self.figures.refused += engines.len();
                vec!["status 503".to_owned(); engines.len()]
            }
            None => {
                let mut expected = Vec::new();
                for _ in engines {
                    let decided = self.accept(rollout, &ask, at);
                    expected.push(decided.outcome.to_owned());
                    self.audited(rollout, decided, None);
                }
                for &engine in engines {
                    self.saw_change(engine, at);
                }
                expected
            }
        };
        let mut said_sorted = said.clone();
        said_sorted.sort();
        expected.sort();
        if said_sorted != expected {
            self.violation(format!(
                "{status} {} on {target} to {:?}: the webhook said {said:?}, not {expected:?}",
                alert.name,
                engines
                    .iter()
                    .map(|&engine| self.engines[engine].name)
                    .collect::<Vec<_>>()
            ));
        }
        for &engine in engines {
            self.check(engine).await;
        }
    }

    /// The store took `ask` on `rollout`, decided within `at`.
    fn accept(&mut self, rollout: usize, ask: &Ask, at: Span) -> Decided {
        self.changes += 1;
        self.figures.changes += 1;
        self.rollouts[rollout].take(ask, at, at, self.changes)
    }

    /// An engine made a change within `at`, and read the state after it.
    fn saw_change(&mut self, engine: usize, at: Span) {
        let engine = &mut self.engines[engine];
        engine.floor = self.changes;
        engine.read = Some(engine.read.map_or(at.early, |read| read.max(at.early)));
    }

    /// The audit entry `decided` makes, if any.
    fn audited(&mut self, rollout: usize, decided: Decided, reason: Option<String>) {
        let Some((action, by)) = decided.audited else {
            return;
        };
        let target = self.rollouts[rollout].target;
        let (by, reason) = match by {
            By::Operator => ("ops".to_owned(), reason),
            By::Alert(name) => {
                let alert = ALERTS
                    .iter()
                    .map(|(_, alert)| *alert)
                    .find(|alert| alert.name == name)
                    .expect("one of the run's alerts");
                // The documentation names the reason of an alert's pause.
                let reason = (action == "pause").then(|| format!("{name}: {}", summary(alert, target)));
                (format!("alertmanager:alertmanager/{name}"), reason)
            }
        };
        self.audit.push(Entry {
            target: target.to_owned(),
            action: action.to_owned(),
            by,
            reason,
        });
    }

    async fn launch(&mut self, engine: usize) {
        let mut settings = control_settings(&self.upstream, self.dir.path(), &self.store.url());
        settings.rollouts.halt_check_secs = 1;
        let started = jiff::Timestamp::now();
        let app = spawn(settings).await;
        app.wait_ready().await;
        let readable = self.away.is_none() || self.store.readable_while_away();
        let engine = &mut self.engines[engine];
        engine.app = Some(app);
        engine.blind = !readable;
        // Ready once its first read was attempted: with the store there,
        // it read the state.
        engine.read = self.away.is_none().then(|| secs(started));
        engine.floor = self.changes;
    }

    async fn restart(&mut self, engine: usize) {
        self.figures.restarts += 1;
        let app = self.engines[engine].app.take().expect("the engine runs");
        app.shut_down().await;
        // Pending brakes live in the engine's memory until written.
        self.figures.lost += self.engines[engine].pending.len();
        self.engines[engine].pending.clear();
        self.launch(engine).await;
        self.check(engine).await;
    }

    /// The store back: every engine writes its pending brakes, each
    /// decided on the stored state at the time it was asked.
    async fn store_back(&mut self) {
        let back = jiff::Timestamp::now();
        self.store.come_back().await;
        for engine in 0..2 {
            let app = self.engines[engine].app();
            let waited = registry_testkit::poll::until("pending brakes written", PATIENCE, async || {
                let document = rollouts(app).await;
                match (document.state.known.as_str(), document.state.pending.len()) {
                    ("read", 0) => Ok(()),
                    (known, pending) => Err(anyhow::anyhow!("{known}, {pending} pending")),
                }
            })
            .await;
            if let Err(error) = waited {
                self.violation(format!("{}: {error:#}", self.engines[engine].name));
            }
        }
        let written = Span::between(back, jiff::Timestamp::now());
        let mut brakes: Vec<Brake> = self
            .engines
            .iter_mut()
            .flat_map(|engine| std::mem::take(&mut engine.pending))
            .collect();
        brakes.sort_by(|left, right| left.at.early.total_cmp(&right.at.early));
        for brake in brakes {
            self.changes += 1;
            self.figures.changes += 1;
            let decided = self.rollouts[brake.rollout].take(&brake.ask, brake.at, written, self.changes);
            self.audited(brake.rollout, decided, brake.reason);
        }
        self.away = None;
        let settled = jiff::Timestamp::now();
        for engine in 0..2 {
            self.engines[engine].blind = false;
            self.settle(engine, settled).await;
            self.engines[engine].floor = self.changes;
        }
    }

    /// Waits until the fast rollout's schedule passes the next cluster
    /// (as the engine says its file's schedule stands).
    async fn wait(&mut self) {
        self.figures.waits += 1;
        let schedule = *self.rollouts[FAST].schedule();
        let now = schedule.progress(secs(jiff::Timestamp::now()));
        let Some(next) = self
            .clusters
            .iter()
            .map(|(_, place)| *place)
            .filter(|place| *place > now)
            .min_by(f64::total_cmp)
        else {
            return;
        };
        let app = self.engines[0].app();
        let waited = registry_testkit::poll::until("the schedule passes a cluster", PATIENCE, async || {
            let declared = declared_progress(app, self.rollouts[FAST].target).await;
            if declared > next {
                Ok(())
            } else {
                Err(anyhow::anyhow!("{declared}% declared, waiting for {next}%"))
            }
        })
        .await;
        if let Err(error) = waited {
            self.violation(format!("{error:#}"));
        }
    }

    /// Waits until `engine` has read the store after `after`, where it can.
    async fn settle(&mut self, engine: usize, after: jiff::Timestamp) {
        let readable = self.away.is_none() || self.store.readable_while_away();
        if !readable || (self.away.is_some() && self.engines[engine].read.is_none()) {
            return;
        }
        let app = self.engines[engine].app();
        let waited = registry_testkit::poll::until("a read after the step", PATIENCE, async || {
            let document = rollouts(app).await;
            match as_of(&document) {
                Some(as_of) if as_of > secs(after) => Ok(as_of),
                as_of => Err(anyhow::anyhow!("{} as of {as_of:?}", document.state.known)),
            }
        })
        .await;
        match waited {
            Ok((as_of, _)) => {
                let engine = &mut self.engines[engine];
                engine.read = Some(engine.read.map_or(as_of, |read| read.max(as_of)));
                engine.floor = self.changes;
            }
            Err(error) => self.violation(format!("{}: {error:#}", self.engines[engine].name)),
        }
    }

    /// Asks `engine` about every cluster and checks its answers, and what
    /// it says of its state, against the oracle; the rollouts document it
    /// answered.
    async fn check(&mut self, engine: usize) -> Rollouts {
        self.figures.checks += 1;
        let name = self.engines[engine].name;
        let app = self.engines[engine].app();
        let sent = jiff::Timestamp::now();
        let document = rollouts(app).await;
        let answers: Vec<BTreeSet<String>> = futures::stream::iter(&self.clusters)
            .map(|(id, _)| offered_from(app, id, "4.18.1"))
            .buffered(8)
            .collect()
            .await;
        let answered = jiff::Timestamp::now();
        let rated: Vec<BTreeSet<String>> = futures::stream::iter(&self.takers)
            .map(|id| offered_from(app, id, "4.18.1"))
            .buffered(8)
            .collect()
            .await;
        let mut problems = if document.state.known == "unknown" {
            self.unknown_observables(engine).await
        } else {
            Vec::new()
        };
        self.rate_offered.extend(
            self.takers
                .iter()
                .zip(&rated)
                .filter(|(_, offered)| offered.contains(RATED))
                .map(|(id, _)| id.clone()),
        );
        self.figures.rate_offered = self.rate_offered.len();
        if self.rate_offered.len() > RATE_CAP {
            problems.push(format!(
                "{} distinct clusters offered {RATED} in its period, its rate {RATE_CAP} (guarantee 6): {:?}",
                self.rate_offered.len(),
                self.rate_offered
            ));
        }
        let pending_metric = app.metric("cincinnati_pe_rollout_control_pending").await;
        let age = app.metric("cincinnati_pe_rollout_state_age_seconds").await;
        self.figures.questions += answers.len() + rated.len();
        problems.extend(self.learn(engine, &document));
        let state = &self.engines[engine];
        let cap = match self.away {
            Some(away) if !self.store.readable_while_away() => {
                let least = (secs(sent) - away).floor();
                if state.read.is_some() && age < least {
                    problems.push(format!(
                        "cincinnati_pe_rollout_state_age_seconds is {age}, the store away for {least} s (guarantee 3)"
                    ));
                }
                away
            }
            _ => secs(answered),
        };
        let window = state.read.map(|read| (read, cap));
        if let Some((read, cap)) = window
            && read > cap + 0.001
        {
            problems.push(format!(
                "it read the state at {read}, after the store went away at {cap} (guarantee 3)"
            ));
        }
        for (rollout, timeline) in self.rollouts.iter().enumerate() {
            let pending: Vec<(Ask, Span)> = state
                .pending
                .iter()
                .filter(|brake| brake.rollout == rollout)
                .map(|brake| (brake.ask.clone(), brake.at))
                .collect();
            let view = View {
                read: window,
                floor: state.floor,
                pending: &pending,
            };
            let bounds = timeline.bounds(&view);
            let wrong: Vec<String> = self
                .clusters
                .iter()
                .zip(&answers)
                .filter(|((_, place), offered)| {
                    !bounds.allow(*place, offered.contains(timeline.target), window.is_some())
                })
                .map(|((id, place), offered)| {
                    format!(
                        "{id} at {place:.4}% offered: {}",
                        offered.contains(timeline.target)
                    )
                })
                .collect();
            if !wrong.is_empty() {
                problems.push(format!(
                    "{} asked between {sent} and {answered}: {} clusters outside {bounds:?} \
                     (read {window:?}, floor {}, pending {pending:?}): {}",
                    timeline.target,
                    wrong.len(),
                    state.floor,
                    wrong.join("; ")
                ));
            }
            let said = document
                .rollouts
                .iter()
                .find(|view| view.target == timeline.target)
                .map(|view| view.state.clone());
            if let Some(expected) = timeline.state(&view)
                && said.as_deref() != Some(expected)
            {
                problems.push(format!(
                    "{} is {said:?} in /v1/rollouts, not {expected}",
                    timeline.target
                ));
            }
        }
        if document.state.pending.len() != state.pending.len() || pending_metric != state.pending.len() as f64
        {
            problems.push(format!(
                "{} brakes pending, /v1/rollouts lists {:?}, cincinnati_pe_rollout_control_pending is {pending_metric}",
                state.pending.len(),
                document.state.pending
            ));
        }
        for problem in problems {
            self.violation(format!("{name}: {problem}"));
        }
        document
    }

    /// What `document` says `engine` knows of the state, taken in; what
    /// contradicts the oracle.
    fn learn(&mut self, engine: usize, document: &Rollouts) -> Option<String> {
        let changes = self.changes;
        let state = &mut self.engines[engine];
        match (document.state.known.as_str(), state.read, as_of(document)) {
            ("read", _, _) if state.blind => Some(
                "it says it read the state, but it started while the store was away, and the store is not back"
                    .to_owned(),
            ),
            ("read", read, Some(as_of)) => {
                if read.is_none() {
                    // Started after every change so far.
                    state.floor = changes;
                }
                state.read = Some(read.map_or(as_of, |read| read.max(as_of)));
                None
            }
            ("unknown", None, _) => None,
            (known, read, as_of) => Some(format!(
                "it says the state is {known} as of {as_of:?}, it read it as of {read:?} at least"
            )),
        }
    }

    /// What an engine that has not read the state says, and that clusters
    /// already on a target keep it.
    async fn unknown_observables(&self, engine: usize) -> Vec<String> {
        let app = self.engines[engine].app();
        let mut problems = Vec::new();
        let control = app
            .status_document()
            .await
            .rollout_control
            .expect("rollout control");
        if control.known {
            problems.push("/status says the state is known, /v1/rollouts unknown".to_owned());
        }
        let known = app.metric("cincinnati_pe_rollout_state_known").await;
        if known != 0.0 {
            problems.push(format!("cincinnati_pe_rollout_state_known is {known}"));
        }
        for target in ["4.18.2", "4.18.4"] {
            let question = [("cincinnati-question", "1")];
            let graph = crate::support::rollouts::ask(app, &self.clusters[0].0, target, &question).await;
            let nodes: Vec<&str> = graph["nodes"]
                .as_array()
                .expect("a graph has nodes")
                .iter()
                .filter_map(|node| node["version"].as_str())
                .collect();
            if !nodes.contains(&target) {
                problems.push(format!("a cluster on {target} does not find it in {nodes:?}"));
            }
        }
        problems
    }

    /// The audit as `document` has it against the changes the oracle
    /// accepted (the last of them, as many as the 100 entries shown hold
    /// besides the rate's admissions), unless it could not be read.
    fn check_audit(&mut self, document: &Rollouts) {
        if document.state.error.is_some() {
            return;
        }
        let history: Vec<_> = document
            .history
            .iter()
            .filter(|entry| entry.target != RATED)
            .collect();
        let shown = if document.history.len() < 100 {
            self.audit.len()
        } else {
            history.len()
        };
        let expected = &self.audit[self.audit.len().saturating_sub(shown)..];
        let matches = history.len() == expected.len()
            && history.iter().zip(expected).all(|(entry, expected)| {
                entry.target == expected.target
                    && entry.action == expected.action
                    && entry.by == expected.by
                    && expected
                        .reason
                        .as_ref()
                        .is_none_or(|reason| *reason == entry.reason)
            });
        if !matches {
            let said: Vec<String> = history
                .iter()
                .map(|entry| {
                    format!(
                        "{} {} by {} ({})",
                        entry.target, entry.action, entry.by, entry.reason
                    )
                })
                .collect();
            self.violation(format!(
                "the audit holds\n  {}\nthe oracle accepted\n  {}",
                said.join("\n  "),
                expected
                    .iter()
                    .map(|entry| format!("{entry:?}"))
                    .collect::<Vec<_>>()
                    .join("\n  ")
            ));
        }
    }

    /// Guarantee 7: the questions asked were not recorded.
    async fn nothing_recorded(&mut self) {
        let url = self.store.url();
        let store = fleet_store::FleetStore::open(&url, &url).await.unwrap();
        for (id, _) in &self.clusters {
            if store.history(id).await.unwrap().is_some() {
                self.violations
                    .push(format!("the questions about {id} were recorded as its checks"));
            }
        }
    }
}

/// The summary of an alert's notifications.
fn summary(alert: Alert, target: &str) -> String {
    format!("{} on clusters that took {target}", alert.name)
}

/// The instant `document` says the state was read at (to the second).
fn as_of(document: &Rollouts) -> Option<f64> {
    let as_of: jiff::Timestamp = document.state.as_of.as_deref()?.parse().ok()?;
    Some(secs(as_of))
}

/// What the policy file's schedule alone gives the rollout of `target`
/// now, as the engine says.
async fn declared_progress(app: &TestApp, target: &str) -> f64 {
    rollouts(app)
        .await
        .rollouts
        .iter()
        .find(|rollout| rollout.target == target)
        .expect("the rollout is declared")
        .declared_progress
}
