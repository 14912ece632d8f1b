//! Releases phasing into a channel (graph-data schema 2.0.0), as a
//! graph-builder's full graph publishes them: while a release B phases into
//! a channel C, the graph does not list C in B's `release.channels` and
//! carries C's rollout in B's `release.phased_rollouts`, read here with
//! [`openshift_graph_data::phased::published`] (a value that does not read
//! is no rollout). An engine that phases serves B in C from its `start`,
//! and offers each cluster the update A → B (A a release of C) at its own
//! moment of the update's window (docs/policy-engine.md, "Phased rollouts
//! from graph-data").
//!
//! [`ChannelAt`] is a channel as its clusters see it at a moment, the whole
//! fleet at once: the releases the graph lists in it and those phasing into
//! it whose `start` has come. Each update into one of the latter is
//! phased: the share of the fleet its window has reached is offered it.
//! Before its `start` a release is not in the channel; once its longest
//! window has ended the graph lists it, and it is a release like the others.

use jiff::Timestamp;
use openshift_graph_data::{ChannelRollout, PhasedWindow, RolloutDuration, UpdateKind};

use crate::graph::{ReleaseRef, Update, UpdateGraph};
use crate::view::ChannelView;

/// See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct ChannelAt<'g> {
    graph: &'g UpdateGraph,
    name: &'g str,
    listed: Option<ChannelView<'g>>,
    /// `None`: the channel as the graph lists it.
    phasing: Option<Phasing<'g>>,
}

/// The releases phasing into a channel, at a moment.
#[derive(Debug, Clone)]
struct Phasing<'g> {
    now: Timestamp,
    /// Those whose `start` has come and that the channel does not list, in
    /// version order.
    entered: Vec<(ReleaseRef, &'g ChannelRollout)>,
    /// The earliest `start` still to come.
    next_start: Option<Timestamp>,
}

/// A release phasing into a channel: in it from `start`, listed in it from
/// `end`, the end of the longest window of the updates into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhasingRelease {
    pub start: Timestamp,
    pub end: Timestamp,
}

/// An update into a release phasing into the channel: offered to each
/// cluster at its own moment of `window`, to every cluster from its end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhasedUpdate<'g> {
    pub window: PhasedWindow,
    /// Declared for the update's kind; `None`: zero, everyone at `start`.
    pub duration: Option<&'g RolloutDuration>,
    /// The share of clusters offered it at the moment asked, in [0, 1]:
    /// how much of its window has gone by.
    pub share: f64,
}

impl UpdateGraph {
    /// Channel `name` at `now`, with the releases phasing into it whose
    /// `start` has come (the [module documentation](self)).
    pub fn channel_at<'g>(&'g self, name: &'g str, now: Timestamp) -> ChannelAt<'g> {
        let listed = self.channel(name);
        let (entered, ahead): (Vec<_>, Vec<_>) = self
            .phasing()
            .iter()
            .filter_map(|(release, channels)| Some((*release, channels.get(name)?)))
            // One the channel lists is a release of it like the others.
            .filter(|(release, _)| !listed.is_some_and(|view| view.contains(*release)))
            .partition(|(_, rollout)| rollout.start <= now);
        let phasing = Phasing {
            now,
            entered,
            next_start: ahead.iter().map(|(_, rollout)| rollout.start).min(),
        };
        ChannelAt {
            graph: self,
            name,
            listed,
            phasing: Some(phasing),
        }
    }

    /// Channel `name` as the graph lists it: what a service that does not
    /// phase serves.
    pub fn channel_as_listed<'g>(&'g self, name: &'g str) -> ChannelAt<'g> {
        ChannelAt {
            graph: self,
            name,
            listed: self.channel(name),
            phasing: None,
        }
    }
}

impl<'g> ChannelAt<'g> {
    pub fn name(&self) -> &'g str {
        self.name
    }

    pub fn graph(&self) -> &'g UpdateGraph {
        self.graph
    }

    /// Its releases, in version order.
    pub fn releases(&self) -> Vec<ReleaseRef> {
        let listed = self.listed.map_or(&[][..], |view| view.releases());
        let mut releases: Vec<ReleaseRef> = listed
            .iter()
            .copied()
            .chain(self.entered().iter().map(|(release, _)| *release))
            .collect();
        releases.sort_unstable();
        releases
    }

    pub fn contains(&self, release: ReleaseRef) -> bool {
        self.listed.is_some_and(|view| view.contains(release)) || self.rollout_into(release).is_some()
    }

    /// The updates a cluster at `release` sees on the channel, by target
    /// version; none when the release is not in it.
    pub fn updates_from(&self, release: ReleaseRef) -> impl DoubleEndedIterator<Item = Update<'g>> + '_ {
        let updates = self.contains(release).then(|| self.graph.updates_from(release));
        updates
            .into_iter()
            .flatten()
            .filter(move |update| self.contains(update.to))
    }

    /// When `release` entered the channel and is listed in it, if it is
    /// phasing into it.
    pub fn phasing(&self, release: ReleaseRef) -> Option<PhasingRelease> {
        let rollout = self.rollout_into(release)?;
        let end = self
            .windows_into(release, rollout)
            .map(|window| window.end)
            .fold(rollout.start, Timestamp::max);
        Some(PhasingRelease {
            start: rollout.start,
            end,
        })
    }

    /// How `update` (one of the channel's) is phased, if its target is
    /// phasing into the channel.
    pub fn phased(&self, update: &Update<'g>) -> Option<PhasedUpdate<'g>> {
        let rollout = self.rollout_into(update.to)?;
        let now = self.phasing.as_ref()?.now;
        let kind = UpdateKind::of(self.graph.version(update.from), self.graph.version(update.to));
        let window = rollout.window_for_kind(kind);
        Some(PhasedUpdate {
            window,
            duration: rollout.durations.declared_for_kind(kind),
            share: window.share_passed(now),
        })
    }

    /// The first moment after the one asked at which the channel's
    /// releases or its phased updates change (a release's `start`, or the
    /// end of a window; in between only the shares grow); `None` when
    /// nothing is to change before the graph does.
    pub fn next_change(&self) -> Option<Timestamp> {
        let phasing = self.phasing.as_ref()?;
        phasing
            .entered
            .iter()
            .flat_map(|&(release, rollout)| self.windows_into(release, rollout))
            .map(|window| window.end)
            .filter(|end| *end > phasing.now)
            .chain(phasing.next_start)
            .min()
    }

    fn entered(&self) -> &[(ReleaseRef, &'g ChannelRollout)] {
        self.phasing
            .as_ref()
            .map_or(&[][..], |phasing| phasing.entered.as_slice())
    }

    fn rollout_into(&self, release: ReleaseRef) -> Option<&'g ChannelRollout> {
        let entered = self.entered();
        let position = entered
            .binary_search_by_key(&release, |(entered, _)| *entered)
            .ok()?;
        Some(entered[position].1)
    }

    /// The windows of the updates into `release` from the channel's
    /// releases, `rollout` its rollout.
    fn windows_into<'a>(
        &'a self,
        release: ReleaseRef,
        rollout: &'a ChannelRollout,
    ) -> impl Iterator<Item = PhasedWindow> + 'a {
        let to = self.graph.version(release);
        self.graph
            .updaters_of(release)
            .iter()
            .filter(|from| self.contains(**from))
            .map(move |&from| rollout.window(self.graph.version(from), to))
    }
}
