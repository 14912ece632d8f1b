//! What rollout control asks of the fleet about one rollout, under the
//! evidence rules (`rollout_model::evidence`): who can take its target
//! (the active clusters offered an update to it in their channel, as the
//! upstream graph says), the candidates its gates choose among, its
//! canaries' records, and the figures its halts are judged on.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::SystemTime;

use fleet_store::gates::Pool;
use rollout_model::evidence::ClusterRecord;
use rollout_model::halts::{SilentFigures, StuckFigures, evidence_since};
use rollout_model::rounds::Candidate;
use rollout_model::time::{Timestamp, from_seconds, seconds};
use rollout_model::{ClusterId, Lot, Rollout};

use super::Fleet;
use super::count::Asked;
use super::graphs::{updates_to, upstream_graphs};
use crate::client::Feeds;
use crate::operator::OperatorError;

/// The clusters that can take one rollout's target, at one time.
#[derive(Debug)]
pub struct Takers {
    /// The (channel, arch, version) of the active clusters still to take it.
    versions: Vec<(String, String, String)>,
    /// Unix seconds: active means seen since.
    active_since: i64,
}

impl Takers {
    /// Its clusters placed below `below` (percent).
    fn pool(&self, below: f64) -> Pool<'_> {
        Pool {
            versions: &self.versions,
            active_since: self.active_since,
            below,
        }
    }
}

impl Fleet {
    /// Who can take `rollout`'s target at `now` (from the fleet's count,
    /// kept or made now, and `feeds`' graphs).
    pub async fn takers(
        &self,
        rollout: &Rollout,
        feeds: &Arc<Feeds>,
        now: SystemTime,
    ) -> Result<Takers, OperatorError> {
        let asked = Asked::default();
        let counted = self.counted(&asked, &[], now).await?;
        let graphs = upstream_graphs(feeds, &counted.pairs()).await?;
        let target = &rollout.declaration().target;
        let versions = counted
            .versions
            .iter()
            .filter(|count| count.version != target.to_string() && updates_to(&graphs, count, target))
            .map(|count| (count.channel.clone(), count.arch.clone(), count.version.clone()))
            .collect();
        Ok(Takers {
            versions,
            active_since: self.scope(&asked, now).active_since,
        })
    }

    /// Up to `limit` established takers placed below `below` that the
    /// rollout of `target` has not admitted, first in its order of lots.
    pub async fn candidates(
        &self,
        target: &str,
        takers: &Takers,
        (below, offset): (f64, u64),
        limit: u32,
    ) -> Result<Vec<Candidate>, OperatorError> {
        let store = self.store().await?;
        store
            .candidates(target, takers.pool(below), offset, limit)
            .await
            .map_err(|error| self.failed(error))
    }

    /// Of `members` (clusters an operator named), those that are takers
    /// (active, on a version with an update to the target), first in the
    /// order of lots rotated by `offset`: no evidence is asked of them.
    pub async fn named_candidates(
        &self,
        members: &[ClusterId],
        takers: &Takers,
        offset: u64,
    ) -> Result<Vec<Candidate>, OperatorError> {
        let store = self.store().await?;
        let names: Vec<String> = members.iter().map(|id| self.keys.key(id)).collect();
        let pool: BTreeSet<(&str, &str, &str)> = takers
            .versions
            .iter()
            .map(|(channel, arch, version)| (channel.as_str(), arch.as_str(), version.as_str()))
            .collect();
        let rows = store
            .clusters_on(&names)
            .await
            .map_err(|error| self.failed(error))?;
        let mut candidates: Vec<Candidate> = rows
            .iter()
            .filter(|row| row.last_seen >= takers.active_since)
            .filter(|row| pool.contains(&(row.channel.as_str(), row.arch.as_str(), row.version.as_str())))
            .map(|row| Candidate {
                cluster: row.cluster.clone(),
                lot: store.lot(&row.cluster),
                place: row.place,
            })
            .collect();
        candidates.sort_by_key(|candidate| candidate.lot.rank(offset));
        Ok(candidates)
    }

    /// Every taker placed below `below`: those a rollout under way had
    /// offered its target to when its rate is first counted.
    pub async fn offered_before(&self, takers: &Takers, below: f64) -> Result<Vec<Candidate>, OperatorError> {
        let store = self.store().await?;
        store
            .offered_before(takers.pool(below))
            .await
            .map_err(|error| self.failed(error))
    }

    /// The stored records of `clusters` (as stored).
    pub async fn records(&self, clusters: &[String]) -> Result<Vec<ClusterRecord>, OperatorError> {
        let store = self.store().await?;
        store.records(clusters).await.map_err(|error| self.failed(error))
    }

    /// `halt_when`'s silent figures of `rollout` at `now`: of the
    /// established clusters that arrived at its target after their offer
    /// (and after its last resume), settled there, how many went silent.
    pub async fn silent_figures(
        &self,
        rollout: &Rollout,
        now: SystemTime,
    ) -> Result<SilentFigures, OperatorError> {
        let store = self.store().await?;
        let target = rollout.declaration().target.to_string();
        let arrivals = store
            .arrivals(&target)
            .await
            .map_err(|error| self.failed(error))?;
        let silent_since = seconds(rollout_model::time::from_system(now - self.windows.silent));
        let since = evidence_since(rollout);
        let evidence = store.evidence();
        let mut figures = SilentFigures::default();
        for arrival in &arrivals {
            let Some(offered) = arrival.offered_at(rollout, store.lot(&arrival.cluster)) else {
                continue;
            };
            let arrived = from_seconds(arrival.at);
            let record = ClusterRecord {
                cluster: arrival.cluster.clone(),
                version: arrival.version.clone(),
                place: arrival.place,
                first_seen: from_seconds(arrival.first_seen),
                last_seen: from_seconds(arrival.last_seen),
                version_since: from_seconds(arrival.version_since),
            };
            let established_before = arrived
                .checked_sub(evidence.established_after)
                .is_ok_and(|before| record.first_seen <= before);
            if arrived < offered || arrived < since || !established_before || !evidence.settled(&record) {
                continue;
            }
            figures.arrived += 1;
            if arrival.version == target && arrival.last_seen < silent_since {
                figures.silent += 1;
            }
        }
        Ok(figures)
    }

    /// `halt_when`'s stuck figures of `rollout`: of the established active
    /// takers (and those on the target) it offered its target by `cutoff`,
    /// how many have not taken it.
    pub async fn stuck_figures(
        &self,
        rollout: &Rollout,
        takers: &Takers,
        cutoff: Timestamp,
    ) -> Result<StuckFigures, OperatorError> {
        let store = self.store().await?;
        let threshold = rollout.position(cutoff).threshold;
        let offered = store
            .offered_by(
                &rollout.declaration().target.to_string(),
                &takers.versions,
                (takers.active_since, seconds(cutoff)),
                threshold,
            )
            .await
            .map_err(|error| self.failed(error))?;
        Ok(StuckFigures {
            offered: offered.offered,
            not_arrived: offered.offered - offered.arrived,
        })
    }

    /// The lot of the cluster of `id`, once the store is open.
    pub fn lot(&self, id: &ClusterId) -> Option<Lot> {
        Some(self.store.current()?.lot(&self.keys.key(id)))
    }
}
