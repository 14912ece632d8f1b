//! The fleet counted: one scan of the store gives the clusters per
//! (channel, arch, version), how many are placed below each rollout's
//! progress and how many have been on their version since before the stuck
//! window; with each rollout's arrivals, that is every figure the
//! versions, rollouts and stuck answers of the whole fleet need.
//!
//! At a million clusters the scan takes a few hundred milliseconds, too
//! slow for each question, so a round counts every `fleet.count_interval_secs`
//! and those answers are made of the kept count, saying when it was taken
//! (`countedAt`). A fleet that counts in under [`CHEAP`] is counted at
//! each question instead: its answers are as of now at no real cost. A
//! question about part of the fleet (a channel, an architecture, another
//! window) scans that part when asked.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use cincinnati_client::fleet::release_order;
use cincinnati_core::ApiError;
use fleet_store::questions::{Scope, VersionCount};

use super::answers::{Arrived, Asked};
use super::{Fleet, unix_seconds};
use crate::cluster_policy::policy::Rollout;

/// A count taking less than this is made at each question: about 50,000
/// clusters on this project's 2-core machine.
const CHEAP: Duration = Duration::from_millis(20);

/// The fleet's figures at one time.
#[derive(Debug)]
pub struct Counted {
    pub at: SystemTime,
    /// How long counting took.
    took: Duration,
    /// Clusters per (channel, arch, version), in release order;
    /// `below_places[i]` is placed below `rollouts[i]`'s progress.
    pub versions: Vec<VersionCount>,
    pub rollouts: Vec<RolloutCounted>,
    /// `settled` counts the clusters on their version since before this
    /// (Unix seconds): the stuck window's start.
    pub settled_before: i64,
}

/// One rollout as counted.
#[derive(Debug)]
pub struct RolloutCounted {
    pub target: String,
    /// Its progress when counted (percent).
    pub progress: f64,
    pub arrived: Arrived,
}

impl Counted {
    /// Whether this count, kept, still answers for the whole fleet with
    /// `rollouts`' figures at `now`: recent (under two intervals: one round
    /// may run late), not cheap to make again, and with a figure for each
    /// rollout.
    fn still_serves(&self, rollouts: &[Rollout], interval: Duration, now: SystemTime) -> bool {
        let age = now.duration_since(self.at).unwrap_or_default();
        age < interval * 2
            && self.took >= CHEAP
            && self.rollouts.len() == rollouts.len()
            && self
                .rollouts
                .iter()
                .zip(rollouts)
                .all(|(counted, rollout)| counted.target == rollout.target.to_string())
    }

    /// The (channel, architecture) pairs counted: the graphs an answer
    /// made of this count needs.
    pub fn pairs(&self) -> BTreeSet<(String, String)> {
        self.versions
            .iter()
            .map(|count| (count.channel.clone(), count.arch.clone()))
            .collect()
    }
}

impl Fleet {
    /// The figures `asked` is answered from, with `rollouts`' places: the
    /// kept count for the whole fleet in the default window while it is
    /// recent (under two intervals: one round may run late) and was not
    /// cheap, else a scan made now.
    pub async fn counted(
        &self,
        asked: &Asked,
        rollouts: &[Rollout],
        now: SystemTime,
    ) -> Result<Arc<Counted>, ApiError> {
        if !self.is_whole_fleet(asked) {
            return self.scan(asked, rollouts, now).await.map(Arc::new);
        }
        if let Some(kept) = self.counted.load_full()
            && kept.still_serves(rollouts, self.count_interval, now)
        {
            return Ok(kept);
        }
        self.count(rollouts, now).await
    }

    /// Counts the whole fleet now and keeps the count (the round's work):
    /// the per-version gauges are set from it.
    pub async fn count(&self, rollouts: &[Rollout], now: SystemTime) -> Result<Arc<Counted>, ApiError> {
        let counted = Arc::new(self.scan(&Asked::default(), rollouts, now).await?);
        self.metrics.set_clusters(
            counted
                .versions
                .iter()
                .map(|count| (count.channel.clone(), count.version.clone(), count.clusters))
                .collect(),
        );
        self.counted.store(Some(counted.clone()));
        Ok(counted)
    }

    /// The clusters `asked` is about, counted now, with `rollouts`' places
    /// and arrivals.
    async fn scan(&self, asked: &Asked, rollouts: &[Rollout], now: SystemTime) -> Result<Counted, ApiError> {
        let started = Instant::now();
        let store = self.store().await?;
        let progress: Vec<f64> = rollouts.iter().map(|rollout| rollout.progress(now)).collect();
        let settled_before = unix_seconds(now - self.windows.stuck);
        let mut versions = store
            .versions(&self.scope(asked, now), &progress, settled_before)
            .await
            .map_err(|error| self.failed(error))?;
        versions.sort_by(|a, b| {
            (&a.channel, &a.arch)
                .cmp(&(&b.channel, &b.arch))
                .then_with(|| release_order(&a.version, &b.version))
        });
        let mut counted_rollouts = Vec::with_capacity(rollouts.len());
        for (rollout, progress) in rollouts.iter().zip(progress) {
            counted_rollouts.push(RolloutCounted {
                arrived: self.arrived(rollout, now).await?,
                target: rollout.target.to_string(),
                progress,
            });
        }
        Ok(Counted {
            at: now,
            took: started.elapsed(),
            versions,
            rollouts: counted_rollouts,
            settled_before,
        })
    }

    fn is_whole_fleet(&self, asked: &Asked) -> bool {
        asked.channel.is_none()
            && asked.arch.is_none()
            && asked.active.is_none_or(|active| active == self.windows.active)
    }

    pub(super) fn scope<'a>(&self, asked: &'a Asked, now: SystemTime) -> Scope<'a> {
        let active = asked.active.unwrap_or(self.windows.active);
        Scope {
            active_since: unix_seconds(now - active),
            channel: asked.channel.as_deref(),
            arch: asked.arch.as_deref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    fn counted(at: u64, took: Duration) -> Counted {
        Counted {
            at: UNIX_EPOCH + Duration::from_secs(at),
            took,
            versions: Vec::new(),
            rollouts: Vec::new(),
            settled_before: 0,
        }
    }

    #[test]
    fn a_kept_count_serves_while_recent_and_costly_to_make_again() {
        let minute = Duration::from_secs(60);
        let at = |seconds| UNIX_EPOCH + Duration::from_secs(seconds);
        let costly = counted(1_000, Duration::from_millis(300));
        assert!(costly.still_serves(&[], minute, at(1_000)));
        assert!(costly.still_serves(&[], minute, at(1_119)), "one round late");
        assert!(!costly.still_serves(&[], minute, at(1_120)), "two intervals old");
        assert!(
            !costly.still_serves(&[], Duration::ZERO, at(1_000)),
            "no interval: counted at each question"
        );
        let cheap = counted(1_000, Duration::from_millis(2));
        assert!(
            !cheap.still_serves(&[], minute, at(1_001)),
            "cheap: counted again"
        );
    }
}
