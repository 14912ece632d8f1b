//! What changed between two graphs of one architecture, per channel: what
//! clusters on each channel see differently (a graph-data change, a new
//! release, an update blocked or made conditional).

use std::collections::BTreeSet;

use cincinnati_core::{Risk, Version};

use crate::graph::{Coverage, ReleaseRef, UpdateGraph};

/// The channels that changed, in reading order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GraphDiff {
    pub channels: Vec<ChannelDiff>,
}

/// What changed on one channel.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChannelDiff {
    pub channel: String,
    pub releases_added: Vec<Version>,
    pub releases_removed: Vec<Version>,
    /// Updates offered now and not before (recommended: no risks).
    pub updates_added: Vec<UpdateChange>,
    pub updates_removed: Vec<UpdateChange>,
    /// Updates offered before and now that gained risks (a recommended
    /// update becoming conditional gains all its risks).
    pub risks_added: Vec<UpdateChange>,
    pub risks_removed: Vec<UpdateChange>,
}

/// An update and risk names: its risks, or the risks that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateChange {
    pub from: Version,
    pub to: Version,
    pub risks: Vec<String>,
}

impl ChannelDiff {
    pub fn is_empty(&self) -> bool {
        self.releases_added.is_empty()
            && self.releases_removed.is_empty()
            && self.updates_added.is_empty()
            && self.updates_removed.is_empty()
            && self.risks_added.is_empty()
            && self.risks_removed.is_empty()
    }
}

impl GraphDiff {
    pub fn is_empty(&self) -> bool {
        self.channels.is_empty()
    }
}

/// How `new` differs from `old` on every channel both know whole.
pub fn diff(old: &UpdateGraph, new: &UpdateGraph) -> GraphDiff {
    let channels = compared_channels(old, new);
    let sides = [Side::new(0, old, &channels), Side::new(1, new, &channels)];
    let mut changes: Vec<ChannelDiff> = channels
        .iter()
        .map(|channel| ChannelDiff {
            channel: channel.clone(),
            ..ChannelDiff::default()
        })
        .collect();
    let releases = sides
        .each_ref()
        .map(|side| side.graph.releases().collect::<Vec<_>>());
    for (before, after) in merge_join(&releases[0], &releases[1], |(_, release)| &release.version) {
        let version = before
            .or(after)
            .map(|(_, release)| &release.version)
            .expect("one side at least");
        let pair = [
            before.map(|&(release, _)| release),
            after.map(|&(release, _)| release),
        ];
        let [channels_before, channels_after] =
            [0, 1].map(|side| pair[side].map(|release| sides[side].channels_of(release)));
        for channel in difference(channels_after, channels_before) {
            changes[channel].releases_added.push(version.clone());
        }
        for channel in difference(channels_before, channels_after) {
            changes[channel].releases_removed.push(version.clone());
        }
        diff_updates(&sides, version, pair, &mut changes);
    }
    changes.retain(|change| !change.is_empty());
    GraphDiff { channels: changes }
}

/// The channels both graphs hold whole, in reading order.
fn compared_channels(old: &UpdateGraph, new: &UpdateGraph) -> Vec<String> {
    let names = |graph: &UpdateGraph| -> BTreeSet<String> {
        graph.channels().map(|view| view.name().to_owned()).collect()
    };
    let whole = |graph: &UpdateGraph, names: BTreeSet<String>| match graph.coverage() {
        Coverage::Everything => names,
        Coverage::Channels(covered) => names.intersection(covered).cloned().collect(),
    };
    let all: BTreeSet<String> = names(old).union(&names(new)).cloned().collect();
    let both = whole(old, whole(new, all));
    let mut channels: Vec<String> = both.into_iter().collect();
    channels.sort_by(|a, b| crate::channel::reading_order(a, b));
    channels
}

/// One graph, its channels numbered as the diff numbers them.
struct Side<'g> {
    /// 0 for the old graph, 1 for the new.
    index: usize,
    graph: &'g UpdateGraph,
    /// Per release, its compared channels as positions in the diff's list.
    channels: Vec<Vec<usize>>,
}

impl<'g> Side<'g> {
    fn new(index: usize, graph: &'g UpdateGraph, compared: &[String]) -> Self {
        let channels = graph
            .releases()
            .map(|(release, _)| {
                let mut positions: Vec<usize> = graph
                    .channels_of(release)
                    .filter_map(|name| compared.iter().position(|channel| channel == name))
                    .collect();
                positions.sort_unstable();
                positions
            })
            .collect();
        Self {
            index,
            graph,
            channels,
        }
    }

    fn offers(&self, from: Option<ReleaseRef>) -> Vec<Offer<'g>> {
        let graph = self.graph;
        from.into_iter()
            .flat_map(|from| graph.updates_from(from))
            .map(|update| Offer {
                to: graph.version(update.to),
                target: update.to,
                risks: update.risks.map(names).unwrap_or_default(),
            })
            .collect()
    }

    fn channels_of(&self, release: ReleaseRef) -> &[usize] {
        &self.channels[release.index()]
    }

    /// The channels offering the update `from → to`: those holding both.
    fn offering(&self, from: ReleaseRef, to: ReleaseRef) -> Vec<usize> {
        let to = self.channels_of(to);
        self.channels_of(from)
            .iter()
            .copied()
            .filter(|channel| to.binary_search(channel).is_ok())
            .collect()
    }
}

/// An update from one release, on one side.
struct Offer<'g> {
    to: &'g Version,
    target: ReleaseRef,
    /// Sorted risk names; empty when recommended.
    risks: Vec<&'g str>,
}

/// The updates from one release (`from`, as it is on each side) that
/// changed, recorded on every channel where they did.
fn diff_updates(
    sides: &[Side<'_>; 2],
    from: &Version,
    pair: [Option<ReleaseRef>; 2],
    changes: &mut [ChannelDiff],
) {
    let offers = sides.each_ref().map(|side| side.offers(pair[side.index]));
    for (before, after) in merge_join(&offers[0], &offers[1], |offer| offer.to) {
        let offered = [before, after];
        let channels = [0, 1].map(|side| match (offered[side], pair[side]) {
            (Some(offer), Some(source)) => sides[side].offering(source, offer.target),
            _ => Vec::new(),
        });
        let risks = offered.map(|offer| offer.map_or(&[][..], |offer| offer.risks.as_slice()));
        if before.is_some() == after.is_some() && risks[0] == risks[1] && channels[0] == channels[1] {
            continue;
        }
        let to = before.or(after).map(|offer| offer.to).expect("one side at least");
        let change = |risks: Vec<&str>| UpdateChange {
            from: from.clone(),
            to: to.clone(),
            risks: risks.into_iter().map(str::to_owned).collect(),
        };
        for channel in union(&channels[0], &channels[1]) {
            let on_channel = &mut changes[channel];
            match (channels[0].contains(&channel), channels[1].contains(&channel)) {
                (false, true) => on_channel.updates_added.push(change(risks[1].to_vec())),
                (true, false) => on_channel.updates_removed.push(change(risks[0].to_vec())),
                _ => {
                    let gained = without(risks[1], risks[0]);
                    let lost = without(risks[0], risks[1]);
                    if !gained.is_empty() {
                        on_channel.risks_added.push(change(gained));
                    }
                    if !lost.is_empty() {
                        on_channel.risks_removed.push(change(lost));
                    }
                }
            }
        }
    }
}

/// Pairs the items of two lists sorted by `key`: equal keys side by side,
/// the others alone, in key order.
fn merge_join<'a, T, K: Ord>(
    a: &'a [T],
    b: &'a [T],
    key: impl Fn(&T) -> K,
) -> Vec<(Option<&'a T>, Option<&'a T>)> {
    let mut pairs = Vec::with_capacity(a.len().max(b.len()));
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    loop {
        let pair = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(_), None) => (a.next(), None),
            (None, Some(_)) => (None, b.next()),
            (Some(x), Some(y)) => match key(x).cmp(&key(y)) {
                std::cmp::Ordering::Less => (a.next(), None),
                std::cmp::Ordering::Greater => (None, b.next()),
                std::cmp::Ordering::Equal => (a.next(), b.next()),
            },
        };
        pairs.push(pair);
    }
    pairs
}

fn names(risks: &[Risk]) -> Vec<&str> {
    let mut names: Vec<&str> = risks.iter().map(|risk| risk.name.as_str()).collect();
    names.sort_unstable();
    names
}

/// Sorted positions in `a` and not in `b` (a missing list is empty).
fn difference(a: Option<&[usize]>, b: Option<&[usize]>) -> Vec<usize> {
    let b = b.unwrap_or_default();
    a.unwrap_or_default()
        .iter()
        .copied()
        .filter(|position| b.binary_search(position).is_err())
        .collect()
}

fn union(a: &[usize], b: &[usize]) -> BTreeSet<usize> {
    a.iter().chain(b).copied().collect()
}

fn without<'a>(a: &[&'a str], b: &[&str]) -> Vec<&'a str> {
    a.iter().copied().filter(|name| !b.contains(name)).collect()
}
