//! Who can take a rollout's target: the active clusters offered an update
//! to it in their channel (as the upstream graph says) that do not run it
//! yet, and those that arrived at it. A rollout's gates
//! (`crate::control::gates`) choose its canaries among them and count its
//! rate in them.

use std::sync::Arc;
use std::time::SystemTime;

use cincinnati_core::ApiError;
use fleet_store::gates::Canary;
use fleet_store::questions::ClusterRow;

use super::Fleet;
use super::answers::updates_to;
use super::count::Asked;
use super::graphs::upstream_graphs;
use crate::cluster_policy::policy::Rollout;
use crate::upstream::feeds::Feeds;

/// The clusters that can take one rollout's target, at one time.
#[derive(Debug)]
pub struct Takers {
    /// The (channel, arch, version) of the active clusters still to take it.
    versions: Vec<(String, String, String)>,
    /// The places of the clusters that arrived at it, lowest first.
    pub arrived: Vec<f64>,
    /// Unix seconds: active means seen since.
    active_since: i64,
}

impl Fleet {
    /// Who can take `rollout`'s target at `now`, from the fleet's count of
    /// `rollouts` (kept, or made now) and `feeds`' graphs.
    pub async fn takers(
        &self,
        rollout: &Rollout,
        rollouts: &[Rollout],
        feeds: &Arc<Feeds>,
        now: SystemTime,
    ) -> Result<Takers, ApiError> {
        let asked = Asked::default();
        let counted = self.counted(&asked, rollouts, now).await?;
        let graphs = upstream_graphs(feeds, &counted.pairs()).await?;
        let target = rollout.target.to_string();
        let versions = counted
            .versions
            .iter()
            .filter(|count| count.version != target && updates_to(&graphs, count, &rollout.target))
            .map(|count| (count.channel.clone(), count.arch.clone(), count.version.clone()))
            .collect();
        let store = self.store().await?;
        let mut arrived: Vec<f64> = store
            .arrivals(&target)
            .await
            .map_err(|error| self.failed(error))?
            .into_iter()
            .map(|arrival| arrival.place)
            .collect();
        arrived.sort_by(f64::total_cmp);
        Ok(Takers {
            versions,
            arrived,
            active_since: self.scope(&asked, now).active_since,
        })
    }

    /// Up to `limit` of `takers` still to take the target, placed at or
    /// above `from`, lowest first.
    pub async fn waiting(&self, takers: &Takers, from: f64, limit: u32) -> Result<Vec<Canary>, ApiError> {
        let store = self.store().await?;
        let scope = fleet_store::questions::Scope {
            active_since: takers.active_since,
            ..Default::default()
        };
        store
            .lowest_places(&scope, &takers.versions, from, limit)
            .await
            .map_err(|error| self.failed(error))
    }

    /// The stored rows of `clusters` (ids as stored) that the store has.
    pub async fn clusters(&self, clusters: &[String]) -> Result<Vec<ClusterRow>, ApiError> {
        let store = self.store().await?;
        store.clusters(clusters).await.map_err(|error| self.failed(error))
    }
}
