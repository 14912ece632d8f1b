//! The fleet documents (defined in `cincinnati_client::fleet`), from the
//! store's counts and the upstream graph: which versions have an update
//! to where is the graph's to say, as a cluster of that channel and
//! architecture is offered it (the CVO's rules, `cincinnati_client::view`),
//! before any per-cluster policy.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cincinnati_client::fleet::{
    ClusterSince, FleetAdoption, FleetCluster, FleetRollouts, FleetStuck, FleetVersions, HourArrivals,
    NoUpdate, NotMoving, RolloutFleet, VersionChange, VersionClusters,
};
use cincinnati_client::header::Header;
use cincinnati_client::rollout::RolloutView;
use cincinnati_client::view::Cluster;
use cincinnati_core::{ApiError, ErrorKind, Version};
use fleet_store::questions::{Scope, VersionCount};
use service_kit::timestamp::rfc3339;

use super::count::{Arrived, Asked, Counted};
use super::graphs::{Graphs, updates_to};
use super::{Fleet, unix_seconds};

/// Clusters a stuck version lists as examples at most.
const EXAMPLES: u32 = 100;

fn header(kind: &str, now: SystemTime) -> Header {
    Header::new(kind, rfc3339(now))
}

fn at(seconds: i64) -> String {
    rfc3339(UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).unwrap_or_default()))
}

fn hours(duration: Duration) -> u64 {
    duration.as_secs() / 3600
}

impl Fleet {
    /// `GET {prefix}/v1/fleet/versions`, from `counted` (of `asked`).
    pub fn versions(&self, asked: &Asked, counted: &Counted, now: SystemTime) -> FleetVersions {
        let versions: Vec<VersionClusters> = counted.versions.iter().map(version_clusters).collect();
        FleetVersions {
            header: header("FleetVersions", now),
            counted_at: Some(rfc3339(counted.at)),
            active_hours: hours(asked.active.unwrap_or(self.windows.active)),
            channel: asked.channel.clone(),
            arch: asked.arch.clone(),
            clusters: versions.iter().map(|version| version.clusters).sum(),
            versions,
        }
    }

    /// `GET {prefix}/v1/fleet/adoption`.
    pub async fn adoption(
        &self,
        version: &str,
        within: Duration,
        now: SystemTime,
    ) -> Result<FleetAdoption, ApiError> {
        let store = self.store().await?;
        let hours_counted = store
            .adoption(version, unix_seconds(now - within))
            .await
            .map_err(|error| self.failed(error))?;
        let arrivals: Vec<HourArrivals> = hours_counted
            .into_iter()
            .map(|hour| HourArrivals {
                hour: at(hour.hour),
                clusters: hour.clusters,
            })
            .collect();
        Ok(FleetAdoption {
            header: header("FleetAdoption", now),
            version: version.to_owned(),
            hours: hours(within),
            clusters: arrivals.iter().map(|hour| hour.clusters).sum(),
            arrivals,
        })
    }

    /// `GET {prefix}/v1/fleet/clusters/{id}`: `raw` is a cluster id, or a
    /// stored key when ids are hashed.
    pub async fn cluster(&self, raw: &str, now: SystemTime) -> Result<FleetCluster, ApiError> {
        let Some(key) = self.keys.lookup(raw) else {
            return Err(ApiError::invalid_param("id", raw, "a cluster's UUID"));
        };
        let store = self.store().await?;
        let (row, changes) = store
            .history(&key)
            .await
            .map_err(|error| self.failed(error))?
            .ok_or_else(|| {
                ApiError::new(
                    ErrorKind::DoesNotExist,
                    "no update check of this cluster is stored",
                )
            })?;
        Ok(FleetCluster {
            header: header("FleetCluster", now),
            cluster: row.cluster,
            channel: row.channel,
            arch: row.arch,
            version: row.version,
            place: row.place,
            first_seen: at(row.first_seen),
            last_seen: at(row.last_seen),
            version_since: at(row.version_since),
            changes: changes
                .into_iter()
                .map(|change| VersionChange {
                    from: change.from,
                    to: change.to,
                    at: at(change.at),
                })
                .collect(),
        })
    }

    /// `GET {prefix}/v1/fleet/stuck`, from `counted` (of `asked`): versions
    /// with nowhere to go in their channel, and versions with an update
    /// whose clusters have not moved for the stuck window (their examples
    /// read from the store now).
    pub async fn stuck(
        &self,
        asked: &Asked,
        counted: &Counted,
        graphs: &dyn Graphs,
        now: SystemTime,
    ) -> Result<FleetStuck, ApiError> {
        let store = self.store().await?;
        let scope = self.scope(asked, counted.at);
        let (mut no_update, mut not_moving) = (Vec::new(), Vec::new());
        for count in &counted.versions {
            let newest = match recommended(graphs, count) {
                Offered::Newest(newest) => newest,
                Offered::Nothing(reason) => {
                    no_update.push(NoUpdate {
                        reason: reason.to_owned(),
                        group: version_clusters(count),
                    });
                    continue;
                }
            };
            if count.settled == 0 {
                continue;
            }
            let group = Scope {
                channel: Some(&count.channel),
                arch: Some(&count.arch),
                ..scope.clone()
            };
            let examples = store
                .unmoved(&group, &count.version, counted.settled_before, EXAMPLES)
                .await
                .map_err(|error| self.failed(error))?;
            not_moving.push(NotMoving {
                newest_offered: newest.to_string(),
                clusters: count.settled,
                examples: examples
                    .into_iter()
                    .map(|row| ClusterSince {
                        cluster: row.cluster,
                        since: at(row.version_since),
                    })
                    .collect(),
                channel: count.channel.clone(),
                arch: count.arch.clone(),
                version: count.version.clone(),
            });
        }
        Ok(FleetStuck {
            header: header("FleetStuck", now),
            counted_at: Some(rfc3339(counted.at)),
            channel: asked.channel.clone(),
            arch: asked.arch.clone(),
            active_hours: hours(asked.active.unwrap_or(self.windows.active)),
            stuck_days: self.windows.stuck.as_secs() / 86_400,
            no_update,
            not_moving,
        })
    }

    /// `GET {prefix}/v1/fleet/rollouts`, from `counted` (which counted
    /// the rollouts `views` show): for each rollout, its scope (active
    /// clusters with an update to the target in their channel, and those
    /// that arrived), offered (placed below its threshold, or named by its
    /// gates), arrived (after being offered), how long arriving took, and
    /// who went silent after.
    pub fn rollouts(
        &self,
        views: Vec<RolloutView>,
        counted: &Counted,
        graphs: &dyn Graphs,
        now: SystemTime,
    ) -> FleetRollouts {
        let mut answers = Vec::new();
        for (place, (view, counted_rollout)) in views.into_iter().zip(counted.rollouts.iter()).enumerate() {
            let target = counted_rollout.target.as_str();
            let Ok(version) = Version::parse(target) else {
                continue;
            };
            let (mut waiting, mut waiting_offered) = (0, 0);
            for count in counted.versions.iter().filter(|count| count.version != target) {
                if updates_to(graphs, count, &version) {
                    waiting += count.clusters;
                    waiting_offered += count.below_places.get(place).copied().unwrap_or_default();
                }
            }
            let Arrived {
                waits,
                silent,
                recorded,
            } = &counted_rollout.arrived;
            let arrived = waits.len() as u64;
            let offered = if counted_rollout.progress > 0.0 {
                waiting_offered + arrived
            } else {
                counted_rollout.named
            };
            self.metrics
                .rollout_offered
                .with_label_values(&[target])
                .set(offered as i64);
            self.metrics
                .rollout_arrived
                .with_label_values(&[target])
                .set(arrived as i64);
            answers.push(RolloutFleet {
                rollout: view,
                in_scope: waiting + recorded,
                offered,
                arrived,
                median_hours_to_arrive: median(waits).map(|seconds| seconds / 3600.0),
                silent_after_arriving: *silent,
            });
        }
        FleetRollouts {
            header: header("FleetRollouts", now),
            counted_at: Some(rfc3339(counted.at)),
            active_hours: hours(self.windows.active),
            silent_hours: hours(self.windows.silent),
            rollouts: answers,
        }
    }
}

fn version_clusters(count: &VersionCount) -> VersionClusters {
    VersionClusters {
        channel: count.channel.clone(),
        arch: count.arch.clone(),
        version: count.version.clone(),
        clusters: count.clusters,
    }
}

/// What a cluster of a version count is recommended.
enum Offered {
    Newest(Version),
    Nothing(&'static str),
}

fn recommended(graphs: &dyn Graphs, count: &VersionCount) -> Offered {
    let Ok(version) = Version::parse(&count.version) else {
        return Offered::Nothing("not a release version");
    };
    let Some(view) = graphs
        .graph(&count.arch)
        .and_then(|graph| graph.channel(&count.channel))
    else {
        return Offered::Nothing("channel not served for this architecture");
    };
    let cluster = Cluster {
        version: version.clone(),
        arch: count.arch.clone(),
    };
    match view.updates_for(&cluster) {
        Err(_) => Offered::Nothing("version not in its channel"),
        Ok(updates) => updates
            .recommended
            .into_iter()
            .map(|release| release.version)
            .filter(|newer| *newer > version)
            .max()
            .map_or(Offered::Nothing("no recommended update"), Offered::Newest),
    }
}

/// The median of `values` (seconds, sorted), as a float.
fn median(values: &[i64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let middle = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[middle] as f64
    } else {
        (values[middle - 1] + values[middle]) as f64 / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_between_the_middle_two() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1, 3, 5]), Some(3.0));
        assert_eq!(median(&[1, 2, 3, 4]), Some(2.5));
    }
}
