//! Opening a store, recording checks, pruning; the one way a change is
//! made in a transaction ([`FleetStore::in_transaction`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use rollout_model::Lot;
use rollout_model::evidence::Evidence;
use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{Any, AnyPool, AssertSqlSafe, Connection as _, Row as _, Transaction};

/// Rows per statement: 9 columns each stays below SQLite's 32,766 and
/// PostgreSQL's 65,535 bound parameters.
const ROWS_PER_STATEMENT: usize = 1_000;

/// One update check, as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The cluster as stored: its id, or a keyed hash of it.
    pub cluster: String,
    pub channel: String,
    pub arch: String,
    pub version: String,
    /// The cluster's place in rollouts, in percent.
    pub place: f64,
    /// Unix seconds.
    pub at: i64,
}

/// What one [`FleetStore::record`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recorded {
    /// Clusters written (each once, however many of its checks the batch had).
    pub clusters: u64,
    /// Of those, clusters the store did not know.
    pub new_clusters: u64,
    /// Changes of version found.
    pub changes: u64,
    /// Clusters left as stored: their checks said nothing new within the
    /// seen step (see [`FleetStore::with_seen_step`]).
    pub unchanged: u64,
    /// Clusters the store did not know and was not allowed to take (the
    /// budget of new clusters given to [`FleetStore::record`]).
    pub refused_new: u64,
}

/// What one [`FleetStore::prune`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pruned {
    pub clusters: u64,
    pub changes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("fleet store {store}: not a sqlite: or postgres:// URL")]
    UnknownKind { store: String },
    #[error("connecting to the fleet store {store}")]
    Connect {
        store: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("the fleet store's password: {0}")]
    Password(String),
    #[error("applying the fleet store's schema migrations")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    #[error("fleet store: {what}")]
    Query {
        what: &'static str,
        #[source]
        source: sqlx::Error,
    },
    #[error("the fleet store's secret: {0}")]
    Secret(String),
}

pub(crate) fn failed(what: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |source| StoreError::Query { what, source }
}

/// Which database a store is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Sqlite,
    Postgres,
}

impl StoreKind {
    /// The kind of store `url` names, if one we keep.
    pub fn of(url: &str) -> Option<Self> {
        if url.starts_with("sqlite:") {
            Some(Self::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Self::Postgres)
        } else {
            None
        }
    }
}

/// A fleet store, open and migrated.
#[derive(Clone)]
pub struct FleetStore {
    pub(crate) pool: AnyPool,
    kind: StoreKind,
    /// Seconds: see [`FleetStore::with_seen_step`].
    seen_step: i64,
    /// The key of every cluster's lot: kept in the store, shared by the
    /// engines sharing it, never shown.
    secret: Arc<[u8]>,
    /// Seconds a cluster is recorded over before it counts as established,
    /// and a new version before it counts as settled: a check that would
    /// settle a version is written whatever the seen step.
    evidence: Evidence,
}

impl std::fmt::Debug for FleetStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetStore")
            .field("kind", &self.kind)
            .field("seen_step", &self.seen_step)
            .finish_non_exhaustive()
    }
}

impl FleetStore {
    /// Connects to the store at `url` (`shown` is how errors name it: the
    /// URL without its password) and applies the migrations it lacks. A
    /// SQLite file is created if missing and written in WAL mode.
    pub async fn open(url: &str, shown: &str) -> Result<Self, StoreError> {
        let kind = StoreKind::of(url).ok_or_else(|| StoreError::UnknownKind {
            store: shown.to_owned(),
        })?;
        install_default_drivers();
        let options = AnyPoolOptions::new()
            // A store that is down fails a batch soon; the recorder retries.
            .acquire_timeout(Duration::from_secs(5));
        let (options, url) = match kind {
            // One writer (the recorder) and readers beside it: WAL lets the
            // questions be answered while checks are written.
            StoreKind::Sqlite => (
                options.max_connections(4).after_connect(|connection, _| {
                    Box::pin(async move {
                        for pragma in [
                            "PRAGMA journal_mode = WAL",
                            "PRAGMA synchronous = NORMAL",
                            "PRAGMA busy_timeout = 5000",
                        ] {
                            sqlx::query(pragma).execute(&mut *connection).await?;
                        }
                        Ok(())
                    })
                }),
                created_if_missing(url),
            ),
            StoreKind::Postgres => (options.max_connections(8), url.to_owned()),
        };
        let pool = options
            .connect(&url)
            .await
            .map_err(|source| StoreError::Connect {
                store: shown.to_owned(),
                source,
            })?;
        sqlx::migrate!("./migrations")
            .run(&pool)
            .await
            .map_err(StoreError::Migrate)?;
        let secret = secret(&pool).await?;
        Ok(Self {
            pool,
            kind,
            seen_step: 0,
            secret,
            evidence: Evidence::default(),
        })
    }

    /// With the evidence rules' durations (see `rollout_model::evidence`):
    /// a check that settles a cluster's new version is written whatever
    /// the seen step, and established clusters are told apart with them.
    pub fn with_evidence(self, evidence: Evidence) -> Self {
        Self { evidence, ..self }
    }

    pub fn evidence(&self) -> Evidence {
        self.evidence
    }

    /// The lot of the cluster stored as `cluster`.
    pub fn lot(&self, cluster: &str) -> Lot {
        Lot::draw(&self.secret, cluster)
    }

    /// Runs `work` in one transaction and commits it. A failure anywhere
    /// (a statement, the commit itself: a full disk) closes the connection
    /// instead of handing it back to the pool: a SQLite connection whose
    /// commit failed may still hold its transaction open, and every later
    /// transaction on it would nest inside, acknowledged and never
    /// committed. On SQLite the transaction takes the file's write lock as
    /// it begins: one that read first and wrote later could not get it
    /// while another handle writes, and would fail instead of waiting.
    pub(crate) async fn in_transaction<T>(
        &self,
        what: &'static str,
        work: impl AsyncFnOnce(&mut Transaction<'_, Any>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut connection = self.pool.acquire().await.map_err(failed(what))?;
        let done = async {
            let mut transaction = match self.kind {
                StoreKind::Sqlite => connection.begin_with("BEGIN IMMEDIATE").await,
                StoreKind::Postgres => connection.begin().await,
            }
            .map_err(failed(what))?;
            let value = work(&mut transaction).await?;
            transaction.commit().await.map_err(failed(what))?;
            Ok(value)
        }
        .await;
        if done.is_err() {
            connection.close_on_drop();
        }
        done
    }

    /// A cluster whose checks say nothing new (same channel, architecture,
    /// version and place) is written again only once its stored
    /// `last_seen` is `step` old: nearly every check only says "still
    /// here", and rewriting its row is most of what recording costs. Its
    /// `last_seen` is then up to `step` old. Zero (the default) writes
    /// every check.
    pub fn with_seen_step(self, step: Duration) -> Self {
        Self {
            seen_step: i64::try_from(step.as_secs()).unwrap_or(i64::MAX),
            ..self
        }
    }

    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// Closes the store's connections, waiting for those in use (a SQLite
    /// file's write-ahead log is checkpointed when its last connection
    /// closes).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// What a `SELECT` of a row about to be changed ends with: PostgreSQL
    /// locks the row; in SQLite, a transaction that wrote first (the row's
    /// insert-if-missing) is already the one writer.
    pub(crate) fn row_lock(&self) -> &'static str {
        match self.kind {
            StoreKind::Postgres => " FOR UPDATE",
            StoreKind::Sqlite => "",
        }
    }

    /// The schema version: the newest migration applied.
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        sqlx::query("SELECT MAX(version) FROM _sqlx_migrations WHERE success = TRUE")
            .fetch_one(&self.pool)
            .await
            .and_then(|row| row.try_get(0))
            .map_err(failed("reading the schema version"))
    }

    /// Records `checks` (in the order they were made) in one transaction:
    /// each cluster's row brought up to date (with its lot), each change of
    /// version found (against the store, and within the batch) added once;
    /// of the clusters the store does not know, `new_allowed` at most are
    /// taken, the rest refused. A check older than what the store has of
    /// its cluster (another engine wrote a newer one first) changes
    /// nothing: a cluster is never put back on a version it left. (Checks
    /// are kept to the second: two in one second are not ordered.)
    pub async fn record(&self, checks: &[Check], new_allowed: u64) -> Result<Recorded, StoreError> {
        let clusters = by_cluster(checks);
        let rules = Written {
            seen_step: self.seen_step,
            settled_after: self.evidence.settled_after.as_secs(),
        };
        self.in_transaction("recording checks", async |transaction| {
            let mut recorded = Recorded::default();
            let mut new_left = new_allowed;
            for chunk in clusters.chunks(ROWS_PER_STATEMENT) {
                let stored = stored_clusters(transaction, chunk, self.kind).await?;
                let mut newer: Vec<ClusterChecks<'_>> = Vec::new();
                for cluster in chunk {
                    let known = stored.get(cluster.last.cluster.as_str());
                    if known.is_none() {
                        if new_left == 0 {
                            recorded.refused_new += 1;
                            continue;
                        }
                        new_left -= 1;
                    }
                    match cluster.since(known, rules) {
                        Since::Newer(checks) => newer.push(checks),
                        Since::Unchanged => recorded.unchanged += 1,
                        Since::Older => {}
                    }
                }
                let mut changes = Vec::new();
                for cluster in &newer {
                    let id = cluster.last.cluster.as_str();
                    let mut from = stored.get(id).map(|stored| stored.version.as_str());
                    recorded.new_clusters += u64::from(from.is_none());
                    for (version, at) in &cluster.versions {
                        if let Some(from) = from.filter(|from| *from != version) {
                            changes.push((id, from, version.as_str(), *at));
                        }
                        from = Some(version.as_str());
                    }
                }
                if !newer.is_empty() {
                    upsert_clusters(transaction, &newer, |cluster| self.lot(cluster)).await?;
                }
                insert_changes(transaction, &changes).await?;
                let moved: BTreeSet<&str> = changes.iter().map(|(cluster, ..)| *cluster).collect();
                trim_histories(transaction, moved).await?;
                recorded.clusters += newer.len() as u64;
                recorded.changes += changes.len() as u64;
            }
            Ok(recorded)
        })
        .await
    }

    /// Clusters in the store.
    pub async fn cluster_count(&self) -> Result<u64, StoreError> {
        let count: i64 = sqlx::query("SELECT COUNT(*) FROM fleet_clusters")
            .fetch_one(&self.pool)
            .await
            .and_then(|row| row.try_get(0))
            .map_err(failed("counting clusters"))?;
        Ok(u64::try_from(count).unwrap_or_default())
    }

    /// Removes the clusters not seen since `before` and the changes made
    /// before it (Unix seconds), and the clusters never established (seen
    /// over less than the evidence rules' time) that have not been seen
    /// for that time: an id sent once or twice does not stay for the whole
    /// retention.
    pub async fn prune(&self, before: i64, now: i64) -> Result<Pruned, StoreError> {
        let established_after = self.evidence.established_after.as_secs();
        let fleeting =
            sqlx::query("DELETE FROM fleet_clusters WHERE last_seen < $1 AND last_seen - first_seen < $2")
                .bind(now.saturating_sub(established_after))
                .bind(established_after)
                .execute(&self.pool)
                .await
                .map_err(failed("pruning clusters never established"))?
                .rows_affected();
        let changes = sqlx::query("DELETE FROM fleet_changes WHERE at < $1")
            .bind(before)
            .execute(&self.pool)
            .await
            .map_err(failed("pruning changes"))?
            .rows_affected();
        let clusters = sqlx::query("DELETE FROM fleet_clusters WHERE last_seen < $1")
            .bind(before)
            .execute(&self.pool)
            .await
            .map_err(failed("pruning clusters"))?
            .rows_affected();
        Ok(Pruned {
            clusters: clusters + fleeting,
            changes,
        })
    }
}

/// The store's secret (see [`FleetStore::lot`]): made by the first engine
/// to open the store, from the operating system's generator.
async fn secret(pool: &AnyPool) -> Result<Arc<[u8]>, StoreError> {
    let mut fresh = [0_u8; 32];
    getrandom::fill(&mut fresh).map_err(|error| StoreError::Secret(error.to_string()))?;
    let fresh: String = fresh.iter().map(|byte| format!("{byte:02x}")).collect();
    sqlx::query("INSERT INTO fleet_secret (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING")
        .bind(fresh)
        .execute(pool)
        .await
        .map_err(failed("making the store's secret"))?;
    let kept: String = sqlx::query("SELECT secret FROM fleet_secret WHERE id = 1")
        .fetch_one(pool)
        .await
        .and_then(|row| row.try_get(0))
        .map_err(failed("reading the store's secret"))?;
    Ok(kept.into_bytes().into())
}

/// `url` with SQLite's "create the file if missing" mode, unless it names a
/// mode itself.
fn created_if_missing(url: &str) -> String {
    if url.contains("mode=") {
        url.to_owned()
    } else if url.contains('?') {
        format!("{url}&mode=rwc")
    } else {
        format!("{url}?mode=rwc")
    }
}

/// One cluster's checks in a batch: the versions it reported in order
/// (repeats collapsed, each with when it was first reported) and its last
/// check.
#[derive(Clone)]
struct ClusterChecks<'a> {
    versions: Vec<(String, i64)>,
    last: &'a Check,
}

/// What the store has of a cluster.
struct Stored {
    version: String,
    last_seen: i64,
    channel: String,
    arch: String,
    place: f64,
    version_since: i64,
    /// Whether its row has a lot (rows written before schema 6 have none
    /// until written again).
    has_lot: bool,
}

/// When a check that says nothing new is written anyway (seconds).
#[derive(Clone, Copy)]
struct Written {
    /// Once the stored `last_seen` is this old.
    seen_step: i64,
    /// While the stored version is not settled yet (seen over this long):
    /// the check that settles it is written at once.
    settled_after: i64,
}

/// A cluster's checks in a batch, against what the store has of it.
enum Since<'a> {
    /// These are newer: to write.
    Newer(ClusterChecks<'a>),
    /// Newer, but saying nothing new within the seen step.
    Unchanged,
    /// The store has a newer check.
    Older,
}

impl<'a> ClusterChecks<'a> {
    /// The checks newer than what the store has (`stored`), unless they
    /// only say "still here" within the seen step of its `last_seen` (and
    /// the stored row has its lot and a settled version).
    fn since(&self, stored: Option<&Stored>, written: Written) -> Since<'a> {
        let Some(stored) = stored else {
            return Since::Newer(self.clone());
        };
        if self.last.at < stored.last_seen {
            return Since::Older;
        }
        let nothing_new = self
            .versions
            .iter()
            .all(|(version, _)| *version == stored.version)
            && self.last.channel == stored.channel
            && self.last.arch == stored.arch
            && self.last.place == stored.place;
        let settles = stored.last_seen < stored.version_since.saturating_add(written.settled_after)
            && self.last.at >= stored.version_since.saturating_add(written.settled_after);
        if nothing_new
            && stored.has_lot
            && !settles
            && self.last.at < stored.last_seen.saturating_add(written.seen_step)
        {
            return Since::Unchanged;
        }
        let mut versions: Vec<(String, i64)> = self
            .versions
            .iter()
            .filter(|(_, at)| *at >= stored.last_seen)
            .cloned()
            .collect();
        // Its version reported before what the store has, and again since.
        if versions.last().map(|(version, _)| version) != Some(&self.last.version) {
            let first_reported = self.versions.last().map_or(self.last.at, |(_, at)| *at);
            versions.push((self.last.version.clone(), first_reported));
        }
        Since::Newer(Self {
            versions,
            last: self.last,
        })
    }
}

fn by_cluster(checks: &[Check]) -> Vec<ClusterChecks<'_>> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut clusters: Vec<ClusterChecks<'_>> = Vec::new();
    for check in checks {
        let position = *index.entry(&check.cluster).or_insert_with(|| {
            clusters.push(ClusterChecks {
                versions: Vec::new(),
                last: check,
            });
            clusters.len() - 1
        });
        let cluster = &mut clusters[position];
        cluster.last = check;
        if cluster.versions.last().map(|(version, _)| version) != Some(&check.version) {
            cluster.versions.push((check.version.clone(), check.at));
        }
    }
    clusters
}

/// `($1, $2, …), (…), …`: `rows` groups of `columns` placeholders.
fn placeholders(rows: usize, columns: usize) -> String {
    (0..rows)
        .map(|row| {
            let row: Vec<String> = (1..=columns)
                .map(|column| format!("${}", row * columns + column))
                .collect();
            format!("({})", row.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the store has of the clusters of `chunk`. On PostgreSQL their
/// rows are locked (in id order, so engines writing the same clusters take
/// turns rather than deadlock) until the transaction ends.
async fn stored_clusters(
    transaction: &mut Transaction<'_, Any>,
    chunk: &[ClusterChecks<'_>],
    kind: StoreKind,
) -> Result<HashMap<String, Stored>, StoreError> {
    let list: Vec<String> = (1..=chunk.len()).map(|number| format!("${number}")).collect();
    let lock = match kind {
        StoreKind::Postgres => " ORDER BY id FOR UPDATE",
        StoreKind::Sqlite => "",
    };
    let sql = format!(
        "SELECT id, version, last_seen, channel, arch, place, version_since, lot \
         FROM fleet_clusters WHERE id IN ({}){lock}",
        list.join(", ")
    );
    // Safe: only placeholders are generated; the values are bound.
    let mut query = sqlx::query(AssertSqlSafe(sql));
    for cluster in chunk {
        query = query.bind(&cluster.last.cluster);
    }
    let rows = query
        .fetch_all(&mut **transaction)
        .await
        .map_err(failed("reading the clusters' versions"))?;
    rows.iter()
        .map(|row| {
            let stored = Stored {
                version: row.try_get(1)?,
                last_seen: row.try_get(2)?,
                channel: row.try_get(3)?,
                arch: row.try_get(4)?,
                place: row.try_get(5)?,
                version_since: row.try_get(6)?,
                has_lot: row.try_get::<Option<i64>, _>(7)?.is_some(),
            };
            Ok((row.try_get(0)?, stored))
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(failed("reading the clusters' versions"))
}

async fn upsert_clusters(
    transaction: &mut Transaction<'_, Any>,
    chunk: &[ClusterChecks<'_>],
    lot: impl Fn(&str) -> Lot,
) -> Result<(), StoreError> {
    let sql = format!(
        "INSERT INTO fleet_clusters \
             (id, channel, arch, version, place, first_seen, last_seen, version_since, lot) \
         VALUES {} \
         ON CONFLICT (id) DO UPDATE SET \
             channel = excluded.channel, \
             arch = excluded.arch, \
             place = excluded.place, \
             lot = excluded.lot, \
             last_seen = excluded.last_seen, \
             version_since = CASE WHEN excluded.version = fleet_clusters.version \
                 THEN fleet_clusters.version_since ELSE excluded.version_since END, \
             version = excluded.version \
         WHERE excluded.last_seen >= fleet_clusters.last_seen",
        placeholders(chunk.len(), 9)
    );
    // Safe: only placeholders are generated; the values are bound.
    let mut query = sqlx::query(AssertSqlSafe(sql));
    for cluster in chunk {
        let check = cluster.last;
        let first_seen = cluster.versions.first().map_or(check.at, |(_, at)| *at);
        let version_since = cluster.versions.last().map_or(check.at, |(_, at)| *at);
        query = query
            .bind(&check.cluster)
            .bind(&check.channel)
            .bind(&check.arch)
            .bind(&check.version)
            .bind(check.place)
            .bind(first_seen)
            .bind(check.at)
            .bind(version_since)
            .bind(lot(&check.cluster).to_stored());
    }
    query
        .execute(&mut **transaction)
        .await
        .map_err(failed("writing clusters"))?;
    Ok(())
}

async fn insert_changes(
    transaction: &mut Transaction<'_, Any>,
    changes: &[(&str, &str, &str, i64)],
) -> Result<(), StoreError> {
    for chunk in changes.chunks(ROWS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO fleet_changes (cluster, from_version, to_version, at) VALUES {} \
             ON CONFLICT (cluster, from_version, to_version) DO NOTHING",
            placeholders(chunk.len(), 4)
        );
        // Safe: only placeholders are generated; the values are bound.
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for (cluster, from, to, at) in chunk {
            query = query.bind(*cluster).bind(*from).bind(*to).bind(*at);
        }
        query
            .execute(&mut **transaction)
            .await
            .map_err(failed("writing changes of version"))?;
    }
    Ok(())
}

/// The changes of version kept of a cluster, and so its history's longest.
pub const HISTORY_CHANGES: u32 = 100;

/// Keeps the newest [`HISTORY_CHANGES`] changes of each of `clusters`: one
/// id's history must not grow the store (anyone may report a new version
/// on every check).
async fn trim_histories(
    transaction: &mut Transaction<'_, Any>,
    clusters: BTreeSet<&str>,
) -> Result<(), StoreError> {
    for cluster in clusters {
        sqlx::query(
            "DELETE FROM fleet_changes WHERE cluster = $1 AND (at, from_version, to_version) < \
             (SELECT at, from_version, to_version FROM fleet_changes WHERE cluster = $1 \
              ORDER BY at DESC, from_version DESC, to_version DESC LIMIT 1 OFFSET $2)",
        )
        .bind(cluster)
        // Older than the oldest of those kept.
        .bind(i64::from(HISTORY_CHANGES) - 1)
        .execute(&mut **transaction)
        .await
        .map_err(failed("trimming a cluster's history"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_number_every_column_of_every_row() {
        assert_eq!(placeholders(2, 3), "($1, $2, $3), ($4, $5, $6)");
    }

    #[test]
    fn a_batch_keeps_each_clusters_versions_in_order_without_repeats() {
        let check = |cluster: &str, version: &str, at| Check {
            cluster: cluster.into(),
            channel: "stable-4.18".into(),
            arch: "amd64".into(),
            version: version.into(),
            place: 1.0,
            at,
        };
        let checks = [
            check("a", "4.18.1", 1),
            check("b", "4.18.1", 2),
            check("a", "4.18.1", 3),
            check("a", "4.18.2", 4),
            check("a", "4.18.2", 5),
        ];
        let clusters = by_cluster(&checks);
        assert_eq!(clusters.len(), 2);
        assert_eq!(
            clusters[0].versions,
            [("4.18.1".to_owned(), 1), ("4.18.2".to_owned(), 4)]
        );
        assert_eq!(clusters[0].last.at, 5);
        assert_eq!(clusters[1].versions, [("4.18.1".to_owned(), 2)]);
    }

    #[test]
    fn only_sqlite_and_postgres_urls_are_stores() {
        assert_eq!(
            StoreKind::of("sqlite:///var/lib/fleet.db"),
            Some(StoreKind::Sqlite)
        );
        assert_eq!(StoreKind::of("postgres://u@h/db"), Some(StoreKind::Postgres));
        assert_eq!(StoreKind::of("postgresql://u@h/db"), Some(StoreKind::Postgres));
        assert_eq!(StoreKind::of("mysql://u@h/db"), None);
        assert_eq!(created_if_missing("sqlite:///a.db"), "sqlite:///a.db?mode=rwc");
        assert_eq!(
            created_if_missing("sqlite:///a.db?mode=ro"),
            "sqlite:///a.db?mode=ro"
        );
    }
}
