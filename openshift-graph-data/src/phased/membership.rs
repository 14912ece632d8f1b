//! Where a release listed in a channel stands at a moment, as the full
//! graph says it: the graph's edges are not per channel, so a phased
//! rollout shows in the channel membership of its release.
//!
//! A release with a `start` is not in its channel before it. From `start`
//! until every update into it has reached every cluster (the end of its
//! longest window, `settled`), it is *phasing*: `release.channels` does not
//! list the channel yet, so a client that does not know phasing (upstream's
//! policy-engine, the CVO) sees the release in the channel only once every
//! update into it may be offered to every cluster; the
//! [`published`](super::published) key carries the rollout for the engines
//! that phase. From `settled` on, the channel is listed. A release without
//! `start`, or whose updates all take zero, is never phasing.

use std::collections::BTreeSet;

use cincinnati_core::Version;
use jiff::Timestamp;

use super::{ChannelRollout, RolloutDurations, UpdateKind};
use crate::model::{Channel, ChannelVersion, GraphData};

/// Where a release listed in a channel stands at a moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Before its `start`: not in the channel.
    Waiting,
    /// From `start` until its longest window ends: in the channel for the
    /// engines that phase, not in `release.channels`.
    Phasing(Box<ChannelRollout>),
    /// In the channel for every client.
    Member,
}

/// When a release's standing in a channel changes: it enters at
/// `rollout.start`, and is listed for every client at `settled`.
struct Phases {
    rollout: ChannelRollout,
    settled: Timestamp,
}

impl Channel {
    /// The rollout of the release of `entry` in this channel, when the entry
    /// has a `start`.
    pub fn rollout_of(&self, entry: &ChannelVersion) -> Option<ChannelRollout> {
        Some(ChannelRollout {
            start: entry.start?,
            durations: RolloutDurations::of(&self.phased_rollouts),
        })
    }

    /// Where the release of `entry` stands in this channel at `now`.
    pub fn standing(&self, entry: &ChannelVersion, now: Timestamp) -> Standing {
        match self.phases(entry) {
            None => Standing::Member,
            Some(phases) if now < phases.rollout.start => Standing::Waiting,
            Some(phases) if now < phases.settled => Standing::Phasing(Box::new(phases.rollout)),
            Some(_) => Standing::Member,
        }
    }

    /// The kinds of update into `to` from the releases listed in this
    /// channel before it (older ones): the windows a rollout into `to` has.
    /// `None` stands for an update of no kind (across majors), which gets
    /// the default duration.
    pub fn update_kinds_into(&self, to: &Version) -> BTreeSet<Option<UpdateKind>> {
        self.versions
            .iter()
            .map(|from| &from.name.release)
            .filter(|from| *from < to)
            .map(|from| UpdateKind::of(from, to))
            .collect()
    }

    fn phases(&self, entry: &ChannelVersion) -> Option<Phases> {
        let rollout = self.rollout_of(entry)?;
        let settled = self
            .update_kinds_into(&entry.name.release)
            .into_iter()
            .map(|kind| rollout.window_for_kind(kind).end)
            .max()
            .unwrap_or(rollout.start);
        Some(Phases { rollout, settled })
    }
}

impl GraphData {
    /// The first moment after `now` at which a release's standing in a
    /// channel changes (a `start`, or the end of a release's longest
    /// window): the full graph built at `now` is out of date from then on.
    /// `None` when no such moment is ahead. Strictly after `now`, so a
    /// caller that rebuilds at it and asks again moves on.
    pub fn next_phase_change(&self, now: Timestamp) -> Option<Timestamp> {
        self.channels()
            .iter()
            .flat_map(|channel| channel.versions.iter().filter_map(|entry| channel.phases(entry)))
            .flat_map(|phases| [phases.rollout.start, phases.settled])
            .filter(|moment| *moment > now)
            .min()
    }
}
