//! What the fleet store's record of a cluster must show before that
//! cluster steers a rollout: is chosen as a canary, is admitted by a rate,
//! counts as having arrived, or counts toward a halt.
//!
//! Anyone who can reach the public port can send an update check with any
//! id, channel and version, so a record proves only what it would cost an
//! outsider real time to forge:
//!
//! - **Established**: the cluster was seen over at least
//!   [`Evidence::established_after`] (a day by default): its last check is
//!   that long after its first. A minted id cannot be chosen, admitted or
//!   counted for a day, and a surge of new ids moves no gate meanwhile.
//! - **Settled on its version**: it reported its current version over at
//!   least [`Evidence::settled_after`] (checks at least that far apart,
//!   with no other version between). A forged check for a real cluster's
//!   id is undone by the cluster's own next check, which resets this.
//! - **Arrived** at a target: runs the target (or a later release), took
//!   it after it was offered the target, and settled on it.
//!
//! Gates choose among established clusters by their secret lots
//! ([`crate::place::Lot`]), never by their public places; halts count
//! only established clusters that were seen before their offer, and only
//! evidence gathered after the rollout's last resume.

use semver::Version;

use crate::time::{SignedDuration, Timestamp};

/// The evidence rules' durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evidence {
    pub established_after: SignedDuration,
    pub settled_after: SignedDuration,
}

impl Default for Evidence {
    fn default() -> Self {
        Self {
            established_after: SignedDuration::from_hours(24),
            settled_after: SignedDuration::from_mins(10),
        }
    }
}

/// A cluster as the fleet store records it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterRecord {
    /// Its name in the store (its id, or the keyed hash of it).
    pub cluster: String,
    pub version: String,
    /// Its place (percent).
    pub place: f64,
    pub first_seen: Timestamp,
    pub last_seen: Timestamp,
    /// When it was first seen on its current version.
    pub version_since: Timestamp,
}

impl Evidence {
    /// Whether `record` shows an established cluster.
    pub fn established(&self, record: &ClusterRecord) -> bool {
        record.last_seen.duration_since(record.first_seen) >= self.established_after
    }

    /// Whether `record` shows it settled on its current version.
    pub fn settled(&self, record: &ClusterRecord) -> bool {
        record.last_seen.duration_since(record.version_since) >= self.settled_after
    }

    /// Whether `record` shows it arrived at `target`, offered it at
    /// `offered_at`: on the target or a later release since the offer (or
    /// after it), and settled there.
    pub fn arrived(&self, record: &ClusterRecord, target: &Version, offered_at: Timestamp) -> bool {
        at_or_past(&record.version, target) && record.version_since >= offered_at && self.settled(record)
    }
}

/// Whether a cluster on `version` arrived at `target`: runs it, or a
/// later release.
pub fn at_or_past(version: &str, target: &Version) -> bool {
    Version::parse(version).is_ok_and(|version| {
        let release = |version: &Version| (version.major, version.minor, version.patch);
        release(&version) > release(target)
            || (release(&version) == release(target) && version.pre >= target.pre)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(first_seen: &str, version_since: &str, last_seen: &str, version: &str) -> ClusterRecord {
        ClusterRecord {
            cluster: "c".into(),
            version: version.into(),
            place: 1.0,
            first_seen: first_seen.parse().unwrap(),
            last_seen: last_seen.parse().unwrap(),
            version_since: version_since.parse().unwrap(),
        }
    }

    #[test]
    fn a_cluster_is_established_after_a_day_of_checks() {
        let evidence = Evidence::default();
        let minted = record(
            "2026-11-28T10:00:00Z",
            "2026-11-28T10:00:00Z",
            "2026-11-28T10:00:00Z",
            "4.18.51",
        );
        assert!(!evidence.established(&minted));
        let a_day = record(
            "2026-11-27T10:00:00Z",
            "2026-11-27T10:00:00Z",
            "2026-11-28T10:00:00Z",
            "4.18.51",
        );
        assert!(evidence.established(&a_day));
        let almost = record(
            "2026-11-27T10:00:01Z",
            "2026-11-27T10:00:01Z",
            "2026-11-28T10:00:00Z",
            "4.18.51",
        );
        assert!(!evidence.established(&almost));
    }

    #[test]
    fn an_arrival_is_after_the_offer_and_settled() {
        let evidence = Evidence::default();
        let target = Version::parse("4.18.52").unwrap();
        let offered: Timestamp = "2026-11-28T09:00:00Z".parse().unwrap();
        let settled = record(
            "2026-11-20T00:00:00Z",
            "2026-11-28T10:00:00Z",
            "2026-11-28T10:10:00Z",
            "4.18.52",
        );
        assert!(evidence.arrived(&settled, &target, offered));
        let just = record(
            "2026-11-20T00:00:00Z",
            "2026-11-28T10:00:00Z",
            "2026-11-28T10:09:59Z",
            "4.18.52",
        );
        assert!(
            !evidence.arrived(&just, &target, offered),
            "one check: not settled"
        );
        let before = record(
            "2026-11-20T00:00:00Z",
            "2026-11-28T08:00:00Z",
            "2026-11-28T10:10:00Z",
            "4.18.52",
        );
        assert!(
            !evidence.arrived(&before, &target, offered),
            "there before the offer"
        );
        let later = record(
            "2026-11-20T00:00:00Z",
            "2026-11-28T10:00:00Z",
            "2026-11-28T11:00:00Z",
            "4.19.0-rc.1",
        );
        assert!(evidence.arrived(&later, &target, offered), "a later release");
    }

    #[test]
    fn a_later_release_has_arrived_and_an_earlier_one_not() {
        let target = Version::parse("4.18.52").unwrap();
        assert!(at_or_past("4.18.52", &target));
        assert!(at_or_past("4.18.53", &target));
        assert!(at_or_past("4.19.0-rc.1", &target));
        assert!(!at_or_past("4.18.51", &target));
        assert!(!at_or_past("4.18.52-rc.0", &target));
        assert!(!at_or_past("not a version", &target));
    }
}
