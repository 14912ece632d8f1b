//! The fleet counted: one scan of the store gives the clusters per
//! (channel, arch, version), how many are placed below each rollout's
//! progress and how many have been on their version since before the stuck
//! window; with each rollout's arrivals, that is every figure the
//! versions, rollouts and stuck answers need.
//!
//! At a million clusters the scan takes most of a second, too slow for
//! each question, so a round counts every `fleet.count_interval_secs` and
//! those answers are made of the kept count, saying when it was taken
//! (`countedAt`); a question about one channel or architecture takes its
//! part of the count. A fleet smaller than [`KEPT_FROM`] is counted at
//! each question instead: its answers are as of now at little cost. A
//! question about another window scans when asked.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use cincinnati_client::fleet::release_order;
use fleet_store::questions::{Arrival, Scope, VersionCount};
use rollout_model::Rollout;
use rollout_model::time::{from_system, seconds};

use super::{Fleet, unix_seconds};
use crate::operator::OperatorError;

/// What a question is asked about.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    pub channel: Option<String>,
    pub arch: Option<String>,
    /// The window of activity; the fleet's default when `None`.
    pub active: Option<Duration>,
}

/// A count of fewer clusters is made again at each question: at 1,000,000
/// clusters the count takes 0.7-0.8 s on this project's 2-core machine
/// (docs/benchmarks-fleet.md), at this size about 40 ms.
const KEPT_FROM: u64 = 50_000;

/// The fleet's figures at one time.
#[derive(Debug)]
pub struct Counted {
    pub at: SystemTime,
    /// Clusters per (channel, arch, version), in release order;
    /// `below_places[i]` is placed below `rollouts[i]`'s progress.
    pub versions: Vec<VersionCount>,
    pub rollouts: Arc<Vec<RolloutCounted>>,
    /// `settled` counts the clusters on their version since before this
    /// (Unix seconds): the stuck window's start.
    pub settled_before: i64,
}

/// One rollout as counted.
#[derive(Debug)]
pub struct RolloutCounted {
    pub target: String,
    /// Its threshold when counted (percent): clusters placed below were
    /// offered its target.
    pub progress: f64,
    /// Clusters its gates name (canaries, admitted by its rate).
    pub named: u64,
    pub arrived: Arrived,
}

impl Counted {
    /// Whether this count, kept, still answers with `rollouts`' figures at
    /// `now`: recent (under two intervals: one round may run late), of a
    /// fleet worth keeping it for, and with a figure for each rollout.
    fn still_serves(&self, rollouts: &[Rollout], interval: Duration, now: SystemTime) -> bool {
        let age = now.duration_since(self.at).unwrap_or_default();
        age < interval * 2
            && self.versions.iter().map(|count| count.clusters).sum::<u64>() >= KEPT_FROM
            && self.rollouts.len() == rollouts.len()
            && self
                .rollouts
                .iter()
                .zip(rollouts)
                .all(|(counted, rollout)| counted.target == rollout.declaration().target.to_string())
    }

    /// This count's part for `asked`'s channel and architecture.
    fn part(&self, asked: &Asked) -> Self {
        let wanted =
            |wanted: &Option<String>, value: &str| wanted.as_deref().is_none_or(|wanted| wanted == value);
        Self {
            at: self.at,
            versions: self
                .versions
                .iter()
                .filter(|count| wanted(&asked.channel, &count.channel) && wanted(&asked.arch, &count.arch))
                .cloned()
                .collect(),
            rollouts: self.rollouts.clone(),
            settled_before: self.settled_before,
        }
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
    /// kept count (or its part for a channel and architecture) while it
    /// serves (see [`Counted::still_serves`]), else a scan made now; a
    /// question about another window than the default always scans.
    pub async fn counted(
        &self,
        asked: &Asked,
        rollouts: &[Rollout],
        now: SystemTime,
    ) -> Result<Arc<Counted>, OperatorError> {
        if asked.active.is_some_and(|active| active != self.windows.active) {
            return self.scan(asked, rollouts, now).await.map(Arc::new);
        }
        let whole = asked.channel.is_none() && asked.arch.is_none();
        match self.counted.load_full() {
            Some(kept) if kept.still_serves(rollouts, self.count_interval, now) => {
                Ok(if whole { kept } else { Arc::new(kept.part(asked)) })
            }
            _ if whole => self.count(rollouts, now).await,
            _ => self.scan(asked, rollouts, now).await.map(Arc::new),
        }
    }

    /// Counts the whole fleet now and keeps the count (the round's work):
    /// the per-version gauges are set from it.
    pub async fn count(&self, rollouts: &[Rollout], now: SystemTime) -> Result<Arc<Counted>, OperatorError> {
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
    async fn scan(
        &self,
        asked: &Asked,
        rollouts: &[Rollout],
        now: SystemTime,
    ) -> Result<Counted, OperatorError> {
        let store = self.store().await?;
        let at = from_system(now);
        let progress: Vec<f64> = rollouts
            .iter()
            .map(|rollout| rollout.position(at).threshold)
            .collect();
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
                target: rollout.declaration().target.to_string(),
                progress,
                named: rollout.position(at).named.len() as u64,
            });
        }
        Ok(Counted {
            at: now,
            versions,
            rollouts: Arc::new(counted_rollouts),
            settled_before,
        })
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

/// The clusters of a rollout's target, as the fleet store saw them arrive.
#[derive(Debug)]
pub struct Arrived {
    /// Of each that arrived after it was offered the target, how long
    /// arriving took (seconds), shortest first.
    pub waits: Vec<i64>,
    /// Of those, still on the target and not seen since the silent window.
    pub silent: u64,
    /// Every cluster recorded arriving, offered or not.
    pub recorded: u64,
}

impl Arrived {
    /// The share (percent) of those arrived after the offer that went
    /// silent.
    pub fn silent_percent(&self) -> f64 {
        if self.waits.is_empty() {
            return 0.0;
        }
        self.silent as f64 * 100.0 / self.waits.len() as f64
    }
}

/// What `arrivals` (the store's, of `rollout`'s target) say of the
/// rollout, clusters last seen before `silent_since` counting as silent;
/// `lot` gives a stored cluster's lot.
fn arrived(
    rollout: &Rollout,
    arrivals: &[Arrival],
    silent_since: i64,
    lot: impl Fn(&str) -> rollout_model::Lot,
) -> Arrived {
    let target = rollout.declaration().target.to_string();
    let mut waits = Vec::new();
    let mut silent = 0;
    for arrival in arrivals {
        let Some(offered_at) = arrival.offered_at(rollout, lot(&arrival.cluster)).map(seconds) else {
            continue;
        };
        if arrival.at < offered_at {
            continue;
        }
        // Arriving is timed from the offer, or from when the store first
        // saw the cluster if that is later (it may have been offered before
        // anything was recorded).
        let offered_at = offered_at.max(arrival.first_seen);
        waits.push(arrival.at - offered_at);
        if arrival.version == target && arrival.last_seen < silent_since {
            silent += 1;
        }
    }
    waits.sort_unstable();
    Arrived {
        waits,
        silent,
        recorded: arrivals.len() as u64,
    }
}

impl Fleet {
    /// How `rollout`'s target arrived (see [`Arrived`]), at `now`.
    pub async fn arrived(&self, rollout: &Rollout, now: SystemTime) -> Result<Arrived, OperatorError> {
        let store = self.store().await?;
        let arrivals = store
            .arrivals(&rollout.declaration().target.to_string())
            .await
            .map_err(|error| self.failed(error))?;
        Ok(arrived(
            rollout,
            &arrivals,
            unix_seconds(now - self.windows.silent),
            |cluster| store.lot(cluster),
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    fn counted(at: u64, clusters: u64) -> Counted {
        let count = |channel: &str, arch: &str, clusters| VersionCount {
            channel: channel.to_owned(),
            arch: arch.to_owned(),
            version: "4.18.1".to_owned(),
            clusters,
            below_places: Vec::new(),
            settled: 0,
            oldest_since: 0,
        };
        Counted {
            at: UNIX_EPOCH + Duration::from_secs(at),
            versions: vec![
                count("stable-4.18", "amd64", clusters - 1),
                count("fast-4.18", "arm64", 1),
            ],
            rollouts: Arc::default(),
            settled_before: 0,
        }
    }

    #[test]
    fn a_kept_count_serves_while_recent_and_of_a_fleet_worth_keeping_it_for() {
        let minute = Duration::from_secs(60);
        let at = |seconds| UNIX_EPOCH + Duration::from_secs(seconds);
        let large = counted(1_000, KEPT_FROM);
        assert!(large.still_serves(&[], minute, at(1_000)));
        assert!(large.still_serves(&[], minute, at(1_119)), "one round late");
        assert!(!large.still_serves(&[], minute, at(1_120)), "two intervals old");
        assert!(
            !large.still_serves(&[], Duration::ZERO, at(1_000)),
            "no interval: counted at each question"
        );
        let small = counted(1_000, KEPT_FROM - 1);
        assert!(
            !small.still_serves(&[], minute, at(1_001)),
            "small: counted again"
        );
    }

    #[test]
    fn a_channel_or_an_architecture_takes_its_part_of_the_count() {
        let kept = counted(1_000, 10);
        let asked = |channel: Option<&str>, arch: Option<&str>| Asked {
            channel: channel.map(str::to_owned),
            arch: arch.map(str::to_owned),
            active: None,
        };
        let clusters = |part: Counted| part.versions.iter().map(|count| count.clusters).sum::<u64>();
        assert_eq!(clusters(kept.part(&asked(Some("stable-4.18"), None))), 9);
        assert_eq!(clusters(kept.part(&asked(None, Some("arm64")))), 1);
        assert_eq!(clusters(kept.part(&asked(Some("stable-4.18"), Some("arm64")))), 0);
        assert_eq!(clusters(kept.part(&asked(None, None))), 10);
    }
}
