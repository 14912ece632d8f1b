//! The store side: the fleet loaded into a [`FleetStore`] in batches as the
//! engine's recorder makes them, each question timed on the loaded store,
//! the store's size, and the query plans behind the times.
//!
//! The questions are asked as the engine asks them
//! (`policy-engine/src/fleet/count.rs`, `answers.rs`): the engine's count
//! is one `versions()` with every rollout's progress as a place and the
//! stuck window's start, plus each rollout's `arrivals()` (the whole
//! fleet's versions, rollouts and stuck answers are made of it); a question
//! about one channel and architecture is one `versions()`; `stuck` adds one
//! `unmoved()` (its examples) per (channel, arch, version) whose clusters
//! have an update (here: every version but its channel's newest) and were
//! on it before the stuck window.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use fleet_store::questions::Scope;
use fleet_store::{Check, FleetStore, StoreKind};
use sqlx::{AssertSqlSafe, Row as _};

use super::model::{CHANNELS, Model, ROLLOUT_TARGETS, Random, Stage};
use crate::percentiles;

/// `query` with `binds` bound in order: a query of either database (their
/// query types differ; binding them does not).
macro_rules! bound {
    ($query:expr, $binds:expr) => {{
        let mut query = $query;
        for bind in $binds {
            query = match bind {
                Bind::Text(text) => query.bind(*text),
                Bind::Int(number) => query.bind(*number),
                Bind::Float(number) => query.bind(*number),
            };
        }
        query
    }};
}

pub const DAY: i64 = 86_400;
/// The engine's defaults (`[fleet]`): active within a day, stuck after 14
/// days, adoption over a week.
pub const ACTIVE: i64 = DAY;
pub const STUCK: i64 = 14 * DAY;
pub const ADOPTION: i64 = 7 * DAY;
/// Clusters a stuck version lists as examples (the engine's `EXAMPLES`).
const EXAMPLES: u32 = 100;
/// Where the rollouts stand when their questions are timed, percent.
const PROGRESS: f64 = 30.0;

pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() as i64)
}

/// A store under test, with a connection of its own driver beside the
/// store's for what the store does not offer (plans, sizes, checkpoints).
pub struct StoreUnderTest {
    pub name: &'static str,
    pub url: String,
    pub store: FleetStore,
    pub raw: Raw,
}

pub enum Raw {
    Sqlite { pool: sqlx::SqlitePool, file: PathBuf },
    Postgres(sqlx::PgPool),
}

impl StoreUnderTest {
    /// Opens (and migrates) the store at `url`: a `sqlite:///path` file or
    /// a `postgres://` database.
    pub async fn open(name: &'static str, url: &str) -> anyhow::Result<Self> {
        let store = FleetStore::open(url, url).await?;
        let raw = match store.kind() {
            StoreKind::Sqlite => {
                let file = PathBuf::from(url.trim_start_matches("sqlite://"));
                Raw::Sqlite {
                    pool: sqlx::sqlite::SqlitePoolOptions::new()
                        .max_connections(1)
                        .connect(url)
                        .await?,
                    file,
                }
            }
            StoreKind::Postgres => Raw::Postgres(
                sqlx::postgres::PgPoolOptions::new()
                    .max_connections(1)
                    .connect(url)
                    .await?,
            ),
        };
        Ok(Self {
            name,
            url: url.to_owned(),
            store,
            raw,
        })
    }

    /// Bytes on disk: the SQLite file and its WAL after a checkpoint, or
    /// PostgreSQL's relations (tables, their indexes and TOAST), with each
    /// relation's share.
    pub async fn disk(&self) -> anyhow::Result<Disk> {
        match &self.raw {
            Raw::Sqlite { pool, file } => {
                sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                    .execute(pool)
                    .await?;
                let size = |path: PathBuf| std::fs::metadata(path).map_or(0, |meta| meta.len());
                let mut wal = file.clone().into_os_string();
                wal.push("-wal");
                let parts = sqlx::query("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")
                    .fetch_all(pool)
                    .await
                    .map(|rows| {
                        rows.iter()
                            .map(|row| (row.get::<String, _>(0), row.get::<i64, _>(1) as u64))
                            .collect()
                    })
                    // Without SQLite's dbstat table: the total only.
                    .unwrap_or_default();
                Ok(Disk {
                    total: size(file.clone()),
                    wal: size(wal.into()),
                    parts,
                })
            }
            Raw::Postgres(pool) => {
                let total: i64 = sqlx::query_scalar(
                    "SELECT pg_total_relation_size('fleet_clusters') + pg_total_relation_size('fleet_changes')",
                )
                .fetch_one(pool)
                .await?;
                let parts = sqlx::query(
                    "SELECT c.relname::text, pg_relation_size(c.oid) FROM pg_class c \
                     JOIN pg_namespace n ON n.oid = c.relnamespace \
                     WHERE n.nspname = 'public' AND c.relname LIKE 'fleet_%' AND c.relkind IN ('r', 'i') \
                     ORDER BY 2 DESC",
                )
                .fetch_all(pool)
                .await?
                .iter()
                .map(|row| (row.get::<String, _>(0), row.get::<i64, _>(1) as u64))
                .collect();
                Ok(Disk {
                    total: total as u64,
                    wal: 0,
                    parts,
                })
            }
        }
    }

    /// PostgreSQL's WAL position, for the WAL a pass writes.
    pub async fn wal_position(&self) -> anyhow::Result<Option<i64>> {
        match &self.raw {
            Raw::Postgres(pool) => Ok(Some(
                sqlx::query_scalar("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")
                    .fetch_one(pool)
                    .await?,
            )),
            Raw::Sqlite { .. } => Ok(None),
        }
    }

    /// The plan of `sql` with `binds` (text or integers): SQLite's `EXPLAIN
    /// QUERY PLAN`, PostgreSQL's `EXPLAIN (ANALYZE, BUFFERS)`.
    pub async fn plan(&self, sql: &str, binds: &[Bind<'_>]) -> anyhow::Result<String> {
        let lines: Vec<String> = match &self.raw {
            Raw::Sqlite { pool, .. } => {
                let query = bound!(
                    sqlx::query(AssertSqlSafe(format!("EXPLAIN QUERY PLAN {sql}"))),
                    binds
                );
                query
                    .fetch_all(pool)
                    .await?
                    .iter()
                    .map(|row| format!("{} {}", row.get::<i64, _>(1), row.get::<String, _>(3)))
                    .collect()
            }
            Raw::Postgres(pool) => {
                let query = bound!(
                    sqlx::query(AssertSqlSafe(format!("EXPLAIN (ANALYZE, BUFFERS) {sql}"))),
                    binds
                );
                query
                    .fetch_all(pool)
                    .await?
                    .iter()
                    .map(|row| row.get::<String, _>(0))
                    .collect()
            }
        };
        Ok(lines.join("\n"))
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Bind<'a> {
    Text(&'a str),
    Int(i64),
    Float(f64),
}

#[derive(Debug, Clone, Default)]
pub struct Disk {
    pub total: u64,
    /// SQLite's WAL after a checkpoint.
    pub wal: u64,
    /// (table or index, bytes), largest first, where the store tells.
    pub parts: Vec<(String, u64)>,
}

/// What one pass of checks measured.
#[derive(Debug, Clone, Default)]
pub struct Pass {
    pub checks: u64,
    /// Time spent in `record()`, seconds.
    pub seconds: f64,
    pub new_clusters: u64,
    pub changes: u64,
    /// Clusters left as stored (nothing new within the seen step).
    pub unchanged: u64,
    /// Per batch, milliseconds.
    pub batch_p50_ms: f64,
    pub batch_p99_ms: f64,
    pub batch_max_ms: f64,
    /// Bytes written: PostgreSQL's WAL, or what this process wrote to the
    /// SQLite file and its WAL.
    pub written_bytes: Option<i64>,
}

impl Pass {
    pub fn per_second(&self) -> f64 {
        self.checks as f64 / self.seconds.max(f64::EPSILON)
    }
}

/// How a pass sends its checks.
#[derive(Debug, Clone, Copy)]
pub struct PassPlan {
    pub stage: Stage,
    /// Seed of the order the clusters check in.
    pub seed: u64,
    /// The checks are spread evenly over `from..to` (Unix seconds), in
    /// order.
    pub from: i64,
    pub to: i64,
    /// Checks sent: the first of the order (all clusters when `None`).
    pub limit: Option<u64>,
    pub batch: usize,
    /// The store's seen step (`fleet.seen_step_secs`; zero writes every
    /// check).
    pub seen_step: Duration,
}

/// Sends one check of each cluster (or the first `limit`), in a random
/// order, `batch` at a time, as the recorder writes its queue.
pub async fn pass(store: &StoreUnderTest, model: &Model, plan: PassPlan) -> anyhow::Result<Pass> {
    let order = Random::new(plan.seed).permutation(model.clusters);
    let count = plan
        .limit
        .map_or(order.len(), |limit| (limit as usize).min(order.len()));
    let wal_before = store.wal_position().await?;
    let written_before = super::engines::written_bytes(std::process::id());
    let fleet = store.store.clone().with_seen_step(plan.seen_step);
    let mut result = Pass::default();
    let mut batch_ms = Vec::new();
    for (start, chunk) in order[..count].chunks(plan.batch).enumerate() {
        let checks: Vec<Check> = chunk
            .iter()
            .enumerate()
            .map(|(offset, index)| {
                let position = (start * plan.batch + offset) as i64;
                let cluster = model.cluster(u64::from(*index));
                Check {
                    version: cluster.version(plan.stage),
                    cluster: cluster.id,
                    channel: cluster.channel.name.to_owned(),
                    arch: cluster.arch.to_owned(),
                    place: cluster.place,
                    at: plan.from + (plan.to - plan.from) * position / count.max(1) as i64,
                }
            })
            .collect();
        let started = Instant::now();
        let recorded = fleet
            .record(&checks, u64::MAX)
            .await
            .with_context(|| format!("recording a batch in {}", store.name))?;
        let elapsed = started.elapsed().as_secs_f64();
        result.seconds += elapsed;
        batch_ms.push(elapsed * 1e3);
        result.checks += checks.len() as u64;
        result.new_clusters += recorded.new_clusters;
        result.changes += recorded.changes;
        result.unchanged += recorded.unchanged;
    }
    let (p50, p99, max) = percentiles(&mut batch_ms);
    result.batch_p50_ms = p50;
    result.batch_p99_ms = p99;
    result.batch_max_ms = max;
    result.written_bytes = match (wal_before, store.wal_position().await?) {
        (Some(before), Some(after)) => Some(after - before),
        _ => Some((super::engines::written_bytes(std::process::id()) - written_before) as i64),
    };
    Ok(result)
}

/// One question's times.
#[derive(Debug, Clone)]
pub struct Timed {
    pub question: &'static str,
    pub target_ms: Option<f64>,
    /// Each run, milliseconds, in order.
    pub runs_ms: Vec<f64>,
    /// What the answer held (rows, clusters), to show it was not empty.
    pub answer: String,
}

impl Timed {
    pub fn median_ms(&self) -> f64 {
        let mut runs = self.runs_ms.clone();
        percentiles(&mut runs).0
    }

    pub fn max_ms(&self) -> f64 {
        self.runs_ms.iter().copied().fold(0.0, f64::max)
    }
}

async fn timed<F, Fut>(
    question: &'static str,
    target_ms: Option<f64>,
    repeat: usize,
    mut ask: F,
) -> anyhow::Result<Timed>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<String>>,
{
    let mut runs_ms = Vec::new();
    let mut answer = String::new();
    for _ in 0..repeat.max(1) {
        let started = Instant::now();
        answer = ask().await?;
        runs_ms.push(started.elapsed().as_secs_f64() * 1e3);
    }
    Ok(Timed {
        question,
        target_ms,
        runs_ms,
        answer,
    })
}

/// Times each question `repeat` times on the loaded store, at `now`.
pub async fn questions(
    store: &StoreUnderTest,
    model: &Model,
    now: i64,
    repeat: usize,
) -> anyhow::Result<Vec<Timed>> {
    let fleet = &store.store;
    let everyone = Scope {
        active_since: now - ACTIVE,
        channel: None,
        arch: None,
    };
    let stable = Scope {
        channel: Some("stable-4.18"),
        arch: Some("amd64"),
        ..everyone.clone()
    };
    let target = ROLLOUT_TARGETS[1];
    let one = model.cluster(model.clusters / 2).id;
    let cutoff = now - STUCK;
    let places = [PROGRESS; ROLLOUT_TARGETS.len()];
    let mut timings = Vec::new();
    timings.push(
        timed(
            "the engine's count (one scan with 2 rollouts' places and the stuck window, arrivals of each rollout)",
            None,
            repeat,
            || async {
                let counts = fleet.versions(&everyone, &places, cutoff).await?;
                let clusters: u64 = counts.iter().map(|count| count.clusters).sum();
                let mut arrived = 0;
                for target in ROLLOUT_TARGETS {
                    arrived += fleet.arrivals(target).await?.len();
                }
                Ok(format!("{} rows, {clusters} clusters, {arrived} arrivals", counts.len()))
            },
        )
        .await?,
    );
    timings.push(
        timed(
            "versions (channel=stable-4.18, arch=amd64), scanned when asked",
            Some(200.0),
            repeat,
            || async {
                let counts = fleet.versions(&stable, &[], cutoff).await?;
                let clusters: u64 = counts.iter().map(|count| count.clusters).sum();
                Ok(format!("{} rows, {clusters} clusters", counts.len()))
            },
        )
        .await?,
    );
    timings.push(
        timed("adoption (a target, 7 days)", None, repeat, || async {
            let hours = fleet.adoption(target, now - ADOPTION).await?;
            let clusters: u64 = hours.iter().map(|hour| hour.clusters).sum();
            Ok(format!("{} hours, {clusters} arrivals", hours.len()))
        })
        .await?,
    );
    let counts = fleet.versions(&everyone, &[], cutoff).await?;
    timings.push(
        timed(
            "stuck's examples (100 of each version not moving), after the count",
            Some(1000.0),
            repeat,
            || async {
                let (mut groups, mut examples) = (0, 0);
                for count in &counts {
                    let Some(channel) = CHANNELS.iter().find(|channel| channel.name == count.channel) else {
                        continue;
                    };
                    let newest = format!("4.{}.{}", channel.minor, channel.newest);
                    if count.version == newest || count.settled == 0 {
                        continue;
                    }
                    let group = Scope {
                        channel: Some(&count.channel),
                        arch: Some(&count.arch),
                        ..everyone.clone()
                    };
                    groups += 1;
                    examples += fleet
                        .unmoved(&group, &count.version, cutoff, EXAMPLES)
                        .await?
                        .len();
                }
                Ok(format!("{groups} versions, {examples} examples"))
            },
        )
        .await?,
    );
    timings.push(
        timed("history (one cluster)", None, repeat, || async {
            let found = fleet.history(&one).await?;
            Ok(format!(
                "{} changes",
                found.map_or(0, |(_, changes)| changes.len())
            ))
        })
        .await?,
    );
    Ok(timings)
}

/// The plans of the questions' queries (fleet-store's own statements), with
/// the values the timings use.
pub async fn plans(store: &StoreUnderTest, now: i64) -> anyhow::Result<Vec<(&'static str, String)>> {
    let active = now - ACTIVE;
    let cutoff = now - STUCK;
    let target = ROLLOUT_TARGETS[1];
    let mut plans = Vec::new();
    plans.push((
        "versions (the count's scan)",
        store
            .plan(
                &fleet_store::questions::versions_sql(2),
                &[
                    Bind::Int(active),
                    Bind::Text(""),
                    Bind::Text(""),
                    Bind::Int(cutoff),
                    Bind::Float(PROGRESS),
                    Bind::Float(PROGRESS),
                ],
            )
            .await?,
    ));
    plans.push((
        "unmoved (examples)",
        store
            .plan(
                fleet_store::questions::UNMOVED,
                &[
                    Bind::Int(active),
                    Bind::Text("stable-4.18"),
                    Bind::Text("amd64"),
                    Bind::Text("4.18.40"),
                    Bind::Int(cutoff),
                    Bind::Int(i64::from(EXAMPLES)),
                ],
            )
            .await?,
    ));
    plans.push((
        "arrivals",
        store
            .plan(fleet_store::questions::ARRIVALS, &[Bind::Text(target)])
            .await?,
    ));
    plans.push((
        "adoption",
        store
            .plan(
                fleet_store::questions::ADOPTION,
                &[Bind::Text(target), Bind::Int(now - ADOPTION)],
            )
            .await?,
    ));
    Ok(plans)
}
