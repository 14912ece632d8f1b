//! What the fleet answers are made of: counts grouped in the store, rows
//! only where an answer lists clusters. Times are Unix seconds.

use rollout_model::time::{Timestamp, from_millis};
use rollout_model::{Lot, Place, Rollout, Who};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row as _};

use crate::store::{FleetStore, HISTORY_CHANGES, StoreError, failed};

/// Clusters on one version of one channel and architecture.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionCount {
    pub channel: String,
    pub arch: String,
    pub version: String,
    pub clusters: u64,
    /// Of those, for each place asked (percent), how many are placed below
    /// it in rollouts.
    pub below_places: Vec<u64>,
    /// Of those, how many are on the version since before the time asked.
    pub settled: u64,
    /// The earliest time one of them was first seen on this version.
    pub oldest_since: i64,
}

/// Clusters arriving at a version in one hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HourCount {
    /// The hour's start.
    pub hour: i64,
    pub clusters: u64,
}

/// One cluster, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterRow {
    pub cluster: String,
    pub channel: String,
    pub arch: String,
    pub version: String,
    pub place: f64,
    pub first_seen: i64,
    pub last_seen: i64,
    pub version_since: i64,
}

/// One change of a cluster's version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub from: String,
    pub to: String,
    pub at: i64,
}

/// A cluster that reported a version after reporting another one.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrival {
    /// The cluster as stored.
    pub cluster: String,
    pub place: f64,
    /// When it reported the version (its change).
    pub at: i64,
    /// When the cluster was first seen.
    pub first_seen: i64,
    /// The cluster's current version, since when, and when it was last
    /// seen.
    pub version: String,
    pub version_since: i64,
    pub last_seen: i64,
    /// When the rollout of the version (a target) admitted it, if its
    /// rate did (Unix milliseconds).
    pub admitted_at_ms: Option<i64>,
}

impl Arrival {
    /// When `rollout` offered its target to this cluster (`lot`, its secret
    /// lot): the rollout model says, from its place and its admission.
    pub fn offered_at(&self, rollout: &Rollout, lot: Lot) -> Option<Timestamp> {
        let who = Who {
            place: Some(Place::from_percent(self.place)),
            lot: Some(lot),
        };
        rollout.offered_at(who, self.admitted_at_ms.map(from_millis))
    }
}

/// Of a rollout's clusters offered its target by a time, how many (and how
/// many are on the target now).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offered {
    pub offered: u64,
    pub arrived: u64,
}

/// Which clusters a question is about.
#[derive(Debug, Clone, Default)]
pub struct Scope<'a> {
    /// Seen at or after this time.
    pub active_since: i64,
    pub channel: Option<&'a str>,
    pub arch: Option<&'a str>,
}

/// The columns [`cluster_row`] reads, in its order.
macro_rules! cluster_columns {
    () => {
        "id, channel, arch, version, place, first_seen, last_seen, version_since"
    };
}

impl FleetStore {
    /// Clusters per (channel, arch, version) within `scope`, in one scan:
    /// how many are placed below each of `places` (percent, in rollouts),
    /// and how many are on their version since before `settled_before`.
    pub async fn versions(
        &self,
        scope: &Scope<'_>,
        places: &[f64],
        settled_before: i64,
    ) -> Result<Vec<VersionCount>, StoreError> {
        let what = "counting clusters per version";
        // Safe: only placeholders are generated; the values are bound.
        let mut query = sqlx::query(AssertSqlSafe(versions_sql(places.len())))
            .bind(scope.active_since)
            .bind(scope.channel.unwrap_or_default())
            .bind(scope.arch.unwrap_or_default())
            .bind(settled_before);
        for place in places {
            query = query.bind(*place);
        }
        let rows = query.fetch_all(&self.pool).await.map_err(failed(what))?;
        let oldest = 5 + places.len();
        rows.iter()
            .map(|row| {
                Ok(VersionCount {
                    channel: row.try_get(0)?,
                    arch: row.try_get(1)?,
                    version: row.try_get(2)?,
                    clusters: count(row, 3)?,
                    settled: count(row, 4)?,
                    below_places: (5..oldest)
                        .map(|index| count(row, index))
                        .collect::<Result<_, _>>()?,
                    oldest_since: row.try_get(oldest)?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(failed(what))
    }

    /// Clusters arriving at `version` per hour since `since`, oldest first
    /// (hours without arrivals left out).
    pub async fn adoption(&self, version: &str, since: i64) -> Result<Vec<HourCount>, StoreError> {
        let rows = sqlx::query(ADOPTION)
            .bind(version)
            .bind(since)
            .fetch_all(&self.pool)
            .await
            .map_err(failed("counting arrivals per hour"))?;
        rows.iter()
            .map(|row| {
                Ok(HourCount {
                    hour: row.try_get(0)?,
                    clusters: count(row, 1)?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(failed("counting arrivals per hour"))
    }

    /// One cluster and its changes of version, oldest first: the last
    /// [`HISTORY_CHANGES`] of them.
    pub async fn history(&self, cluster: &str) -> Result<Option<(ClusterRow, Vec<Change>)>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            cluster_columns!(),
            " FROM fleet_clusters WHERE id = $1"
        ))
        .bind(cluster)
        .fetch_optional(&self.pool)
        .await
        .map_err(failed("reading a cluster"))?;
        let Some(row) = row else { return Ok(None) };
        let cluster_row = cluster_row(&row).map_err(failed("reading a cluster"))?;
        let changes = sqlx::query(
            "SELECT from_version, to_version, at FROM fleet_changes WHERE cluster = $1 ORDER BY at DESC LIMIT $2",
        )
        .bind(cluster)
        .bind(i64::from(HISTORY_CHANGES))
        .fetch_all(&self.pool)
        .await
        .map_err(failed("reading a cluster's changes"))?;
        let changes = changes
            .iter()
            .map(|row| {
                Ok(Change {
                    from: row.try_get(0)?,
                    to: row.try_get(1)?,
                    at: row.try_get(2)?,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(failed("reading a cluster's changes"))?;
        Ok(Some((cluster_row, changes.into_iter().rev().collect())))
    }

    /// Up to `limit` clusters within `scope` on `version` since before
    /// `since_before`, those longest on it first (how many there are is
    /// [`FleetStore::versions`]' `settled`).
    pub async fn unmoved(
        &self,
        scope: &Scope<'_>,
        version: &str,
        since_before: i64,
        limit: u32,
    ) -> Result<Vec<ClusterRow>, StoreError> {
        let rows = sqlx::query(UNMOVED)
            .bind(scope.active_since)
            .bind(scope.channel.unwrap_or_default())
            .bind(scope.arch.unwrap_or_default())
            .bind(version)
            .bind(since_before)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(failed("listing clusters that have not moved"))?;
        rows.iter()
            .map(cluster_row)
            .collect::<Result<_, sqlx::Error>>()
            .map_err(failed("listing clusters that have not moved"))
    }

    /// The rows of the clusters stored as `clusters` that the store has.
    pub async fn clusters_on(&self, clusters: &[String]) -> Result<Vec<ClusterRow>, StoreError> {
        let what = "reading clusters";
        let mut rows = Vec::with_capacity(clusters.len());
        // A statement a few hundred at a time stays within both databases'
        // bound parameters.
        for chunk in clusters.chunks(500) {
            let placeholders: Vec<String> = (1..=chunk.len()).map(|index| format!("${index}")).collect();
            // Safe: only placeholders are generated; the values are bound.
            let mut query = sqlx::query(AssertSqlSafe(format!(
                concat!(
                    "SELECT ",
                    cluster_columns!(),
                    " FROM fleet_clusters WHERE id IN ({})"
                ),
                placeholders.join(", ")
            )));
            for cluster in chunk {
                query = query.bind(cluster);
            }
            for row in &query.fetch_all(&self.pool).await.map_err(failed(what))? {
                rows.push(cluster_row(row).map_err(failed(what))?);
            }
        }
        Ok(rows)
    }

    /// Every cluster that changed to `version`, with its place and how it
    /// is now.
    pub async fn arrivals(&self, version: &str) -> Result<Vec<Arrival>, StoreError> {
        let rows = sqlx::query(ARRIVALS)
            .bind(version)
            .fetch_all(&self.pool)
            .await
            .map_err(failed("listing arrivals"))?;
        rows.iter()
            .map(|row| {
                Ok(Arrival {
                    cluster: row.try_get(0)?,
                    place: row.try_get(1)?,
                    at: row.try_get(2)?,
                    first_seen: row.try_get(3)?,
                    version: row.try_get(4)?,
                    version_since: row.try_get(5)?,
                    last_seen: row.try_get(6)?,
                    admitted_at_ms: row.try_get(7)?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(failed("listing arrivals"))
    }

    /// Of the clusters of `versions` (channel, arch, version) and those on
    /// `target`, active since `active_since` and established by `cutoff`
    /// (seen over the evidence rules' time before it), those the rollout
    /// of `target` offered its target by `cutoff`: placed below
    /// `threshold` (percent), or named by its gates by then (admitted by
    /// its rate, or its canaries).
    pub async fn offered_by(
        &self,
        target: &str,
        versions: &[(String, String, String)],
        (active_since, cutoff): (i64, i64),
        threshold: f64,
    ) -> Result<Offered, StoreError> {
        let what = "counting the clusters offered a rollout's target";
        let established_by = cutoff.saturating_sub(self.evidence().established_after.as_secs());
        let cutoff_ms = cutoff.saturating_mul(1000);
        let mut offered = Offered::default();
        for chunk in versions.chunks(100).map(Some).chain(std::iter::once(None)) {
            // The versions of the chunk, or (last) the target itself.
            let scope = match chunk {
                Some(chunk) => (0..chunk.len())
                    .map(|index| {
                        format!(
                            "(channel = ${} AND arch = ${} AND version = ${})",
                            7 + index * 3,
                            8 + index * 3,
                            9 + index * 3
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(" OR "),
                None => "version = $1".to_owned(),
            };
            if scope.is_empty() {
                continue;
            }
            // Safe: only placeholders are generated; the values are bound.
            let mut query = sqlx::query(AssertSqlSafe(format!(
                "SELECT COUNT(*) FROM fleet_clusters c \
                 WHERE ({scope}) AND c.last_seen >= $2 AND c.first_seen <= $3 \
                 AND (c.place < $4 \
                      OR EXISTS (SELECT 1 FROM rollout_admissions a WHERE a.target = $1 AND a.cluster = c.id AND a.at_ms <= $5) \
                      OR EXISTS (SELECT 1 FROM rollout_gate_canaries g JOIN rollout_gate_state s ON s.target = g.target \
                                 WHERE g.target = $1 AND g.cluster = c.id AND s.canaries_at_ms <= $6))"
            )))
            .bind(target)
            .bind(active_since)
            .bind(established_by)
            .bind(threshold)
            .bind(cutoff_ms)
            .bind(cutoff_ms);
            for (channel, arch, version) in chunk.unwrap_or_default() {
                query = query.bind(channel).bind(arch).bind(version);
            }
            let count = query
                .fetch_one(&self.pool)
                .await
                .and_then(|row| count(&row, 0))
                .map_err(failed(what))?;
            offered.offered += count;
            if chunk.is_none() {
                offered.arrived = count;
            }
        }
        Ok(offered)
    }
}

pub(crate) fn cluster_row(row: &AnyRow) -> Result<ClusterRow, sqlx::Error> {
    Ok(ClusterRow {
        cluster: row.try_get(0)?,
        channel: row.try_get(1)?,
        arch: row.try_get(2)?,
        version: row.try_get(3)?,
        place: row.try_get(4)?,
        first_seen: row.try_get(5)?,
        last_seen: row.try_get(6)?,
        version_since: row.try_get(7)?,
    })
}

/// The statements of the questions, as the store asks them (the fleet
/// benchmark asks for their plans): [`FleetStore::versions`]' with this
/// many places.
pub fn versions_sql(places: usize) -> String {
    let below: String = (0..places)
        .map(|index| format!("SUM(CASE WHEN place < ${} THEN 1 ELSE 0 END), ", index + 5))
        .collect();
    format!(
        "SELECT channel, arch, version, COUNT(*), \
             SUM(CASE WHEN version_since < $4 THEN 1 ELSE 0 END), {below}MIN(version_since) \
         FROM fleet_clusters \
         WHERE last_seen >= $1 AND ($2 = '' OR channel = $2) AND ($3 = '' OR arch = $3) \
         GROUP BY channel, arch, version \
         ORDER BY channel, arch, version"
    )
}

/// [`FleetStore::adoption`]'s statement.
pub const ADOPTION: &str = "SELECT (at / 3600) * 3600, COUNT(*) FROM fleet_changes \
     WHERE to_version = $1 AND at >= $2 GROUP BY 1 ORDER BY 1";

/// [`FleetStore::unmoved`]'s statement.
pub const UNMOVED: &str = concat!(
    "SELECT ",
    cluster_columns!(),
    " FROM fleet_clusters WHERE last_seen >= $1 AND channel = $2 AND arch = $3 \
     AND version = $4 AND version_since < $5 ORDER BY version_since LIMIT $6"
);

/// [`FleetStore::arrivals`]' statement.
pub const ARRIVALS: &str = "SELECT c.id, c.place, ch.at, c.first_seen, c.version, c.version_since, c.last_seen, a.at_ms \
     FROM fleet_changes ch JOIN fleet_clusters c ON c.id = ch.cluster \
     LEFT JOIN rollout_admissions a ON a.target = ch.to_version AND a.cluster = c.id \
     WHERE ch.to_version = $1";

/// A count or sum of counts: never negative.
fn count(row: &AnyRow, index: usize) -> Result<u64, sqlx::Error> {
    let value: i64 = row.try_get(index)?;
    Ok(u64::try_from(value).unwrap_or_default())
}
