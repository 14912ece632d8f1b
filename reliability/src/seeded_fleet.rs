//! A real fleet's past, written to a fleet store before its engine starts:
//! the update checks its clusters made over the last days, through the
//! store's own public API (`fleet_store::FleetStore::record`, what the
//! engine's recorder calls), so the store holds exactly what an engine
//! that had been running would have written. A scenario cannot wait the
//! day it takes a cluster to be established; the checks carry their times.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use fleet_store::{Check, FleetStore};

/// Clusters written per transaction.
const BATCH: usize = 2_000;

/// One cluster's past: the versions it reported, from so many hours ago
/// each (oldest first), and its last check.
#[derive(Debug, Clone)]
pub struct Past {
    pub id: String,
    pub channel: String,
    pub history: Vec<(String, f64)>,
    pub last_seen_hours_ago: f64,
}

impl Past {
    /// A cluster of the amd64 `channel` on `history`, last seen
    /// `last_seen_hours_ago`.
    pub fn new(id: &str, channel: &str, history: &[(&str, f64)], last_seen_hours_ago: f64) -> Self {
        Self {
            id: id.to_owned(),
            channel: channel.to_owned(),
            history: history
                .iter()
                .map(|(version, hours)| ((*version).to_owned(), *hours))
                .collect(),
            last_seen_hours_ago,
        }
    }

    /// Its checks, as the recorder would have written them: one on each
    /// version when it was first reported, one when last seen.
    fn checks(&self, now: i64) -> anyhow::Result<Vec<Check>> {
        let place = crate::minted::place(&self.id).with_context(|| format!("{} is not a UUID", self.id))?;
        let at = |hours: f64| now - (hours * 3600.0) as i64;
        let check = |version: &str, hours: f64| Check {
            cluster: self.id.clone(),
            channel: self.channel.clone(),
            arch: "amd64".to_owned(),
            version: version.to_owned(),
            place,
            at: at(hours),
        };
        let mut checks: Vec<Check> = self
            .history
            .iter()
            .map(|(version, hours)| check(version, *hours))
            .collect();
        let (last, _) = self.history.last().context("a past has a version")?;
        checks.push(check(last, self.last_seen_hours_ago));
        Ok(checks)
    }
}

/// Unix seconds now.
pub fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() as i64)
}

/// Writes `fleet`'s past to the store at `url` (created and migrated if
/// new) and closes it; returns the clusters it holds.
pub async fn write(url: &str, fleet: &[Past]) -> anyhow::Result<u64> {
    let store = FleetStore::open(url, url).await?;
    let now = now_seconds();
    for chunk in fleet.chunks(BATCH) {
        let mut checks = Vec::with_capacity(chunk.len() * 3);
        for past in chunk {
            checks.extend(past.checks(now)?);
        }
        store.record(&checks, u64::MAX).await?;
    }
    let clusters = store.cluster_count().await?;
    store.close().await;
    Ok(clusters)
}

/// Opens the store at `url` and closes it: a SQLite file's write-ahead
/// log is checkpointed into the file when its last connection closes, so
/// the file's size is then what the store holds (call it with no engine
/// on the file).
pub async fn checkpoint(url: &str) -> anyhow::Result<()> {
    let store = FleetStore::open(url, url).await?;
    store.close().await;
    Ok(())
}
