//! The fleet documents: what a policy-engine with a fleet store answers on
//! its status port (`{prefix}/v1/fleet/...`) and `cincinnati fleet` prints.
//! Defined once here, written by the engine and read by the command. Times
//! are RFC 3339; every document carries its `kind` and `schemaVersion`.

use std::cmp::Ordering;

use cincinnati_core::Version;
use serde::{Deserialize, Serialize};

use crate::header::Header;
use crate::rollout::RolloutView;

/// `GET {prefix}/v1/fleet/versions`: clusters per version, active within
/// the window, by channel, architecture and release order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetVersions {
    #[serde(flatten)]
    pub header: Header,
    /// When the store was counted for this answer: answers about the
    /// whole fleet are made of a count taken every
    /// `fleet.count_interval_secs`. Absent from engines before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_at: Option<String>,
    pub active_hours: u64,
    pub channel: Option<String>,
    pub arch: Option<String>,
    /// Every cluster counted below.
    pub clusters: u64,
    pub versions: Vec<VersionClusters>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionClusters {
    pub channel: String,
    pub arch: String,
    pub version: String,
    pub clusters: u64,
}

/// `GET {prefix}/v1/fleet/adoption`: clusters arriving at a version per
/// hour (hours without arrivals left out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetAdoption {
    #[serde(flatten)]
    pub header: Header,
    pub version: String,
    pub hours: u64,
    /// Every arrival counted below.
    pub clusters: u64,
    pub arrivals: Vec<HourArrivals>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HourArrivals {
    /// The hour's start.
    pub hour: String,
    pub clusters: u64,
}

/// `GET {prefix}/v1/fleet/rollouts`: how the policy file's rollouts move
/// the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetRollouts {
    #[serde(flatten)]
    pub header: Header,
    /// When the store was counted for this answer: answers about the
    /// whole fleet are made of a count taken every
    /// `fleet.count_interval_secs`. Absent from engines before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_at: Option<String>,
    pub active_hours: u64,
    /// Hours without a check after arriving that make a cluster silent.
    pub silent_hours: u64,
    pub rollouts: Vec<RolloutFleet>,
}

/// A rollout and how it moved the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutFleet {
    #[serde(flatten)]
    pub rollout: RolloutView,
    /// Active clusters on a version with an update to the target in their
    /// channel, and those that arrived at it.
    pub in_scope: u64,
    /// Of those, clusters offered the target (placed below its progress,
    /// or named by its gates: canaries, admitted by its rate).
    pub offered: u64,
    /// Clusters that reported the target after it was offered to them.
    pub arrived: u64,
    /// The median time from offered to arrived, in hours.
    pub median_hours_to_arrive: Option<f64>,
    /// Arrived, on the target, and not seen for `silentHours`: the nearest
    /// sign of a failed update an update service gets.
    pub silent_after_arriving: u64,
}

/// `GET {prefix}/v1/fleet/stuck`: clusters with nowhere to go, and clusters
/// that do not take the update they are offered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetStuck {
    #[serde(flatten)]
    pub header: Header,
    /// When the store was counted for this answer: answers about the
    /// whole fleet are made of a count taken every
    /// `fleet.count_interval_secs`. Absent from engines before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_at: Option<String>,
    pub channel: Option<String>,
    pub arch: Option<String>,
    pub active_hours: u64,
    /// Days on a version with an update offered that make a cluster stuck.
    pub stuck_days: u64,
    /// Versions with no recommended update in their channel to a newer
    /// release.
    pub no_update: Vec<NoUpdate>,
    /// Versions with a recommended update whose clusters have been on them
    /// for more than `stuckDays`.
    pub not_moving: Vec<NotMoving>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NoUpdate {
    #[serde(flatten)]
    pub group: VersionClusters,
    /// "no recommended update", "version not in its channel", "channel not
    /// served for this architecture" or "not a release version".
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotMoving {
    pub channel: String,
    pub arch: String,
    pub version: String,
    /// The newest release a recommended update leads to.
    pub newest_offered: String,
    pub clusters: u64,
    /// The longest on the version first (at most a hundred).
    pub examples: Vec<ClusterSince>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSince {
    /// The cluster's id, or its keyed hash when ids are hashed.
    pub cluster: String,
    /// When it was first seen on its version.
    pub since: String,
}

/// `GET {prefix}/v1/fleet/clusters/{id}`: one cluster's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetCluster {
    #[serde(flatten)]
    pub header: Header,
    /// As stored: the id, or its keyed hash.
    pub cluster: String,
    pub channel: String,
    pub arch: String,
    pub version: String,
    /// Its place in rollouts, in percent.
    pub place: f64,
    pub first_seen: String,
    pub last_seen: String,
    pub version_since: String,
    /// Its changes of version, oldest first.
    pub changes: Vec<VersionChange>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionChange {
    pub from: String,
    pub to: String,
    pub at: String,
}

/// The order the fleet documents list versions in, as clusters report
/// them: releases in version order, and what is not a version after them,
/// as text.
pub fn release_order(a: &str, b: &str) -> Ordering {
    match (Version::parse(a), Version::parse(b)) {
        (Ok(a), Ok(b)) => a.cmp(&b),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_in_release_order_and_other_text_after() {
        let mut versions = vec!["4.18.10", "banana", "4.18.2", "4.18.2-rc.1"];
        versions.sort_by(|a, b| release_order(a, b));
        assert_eq!(versions, ["4.18.2-rc.1", "4.18.2", "4.18.10", "banana"]);
    }
}
