//! Channel membership: `release.channels` on every release a channel lists
//! (from its `start` on, when it has one), and the rollouts of the releases
//! still phasing into a channel in `release.phased_rollouts` instead (see
//! [`crate::phased::Standing`]).

use std::collections::BTreeMap;

use cincinnati_core::{Graph, ReleaseId};
use jiff::Timestamp;

use super::InstructionKeys;
use super::index::ReleaseIndex;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Location};
use crate::model::{Channel, ChannelVersion, GraphData};
use crate::phased::Standing;
use crate::phased::published::PhasedChannels;

/// Adds every channel to the releases that are its members at `now`, and
/// puts each release's channel list in the order clients have always seen;
/// writes the rollouts of the releases phasing into a channel at `now`.
/// Returns a warning for each listed version that matches no release,
/// started or not.
pub(super) fn apply(
    graph: &mut Graph,
    index: &ReleaseIndex,
    data: &GraphData,
    keys: &InstructionKeys,
    now: Timestamp,
) -> Vec<Diagnostic> {
    let mut added: Vec<Vec<&str>> = vec![Vec::new(); graph.release_bound()];
    let mut phasing: BTreeMap<ReleaseId, PhasedChannels> = BTreeMap::new();
    let warnings = for_each_listed(graph, index, data, |id, channel, listed| {
        match channel.standing(listed, now) {
            Standing::Waiting => {}
            Standing::Phasing(rollout) => {
                let channels = &mut phasing.entry(id).or_default().0;
                channels.insert(channel.name.clone(), *rollout);
            }
            Standing::Member => added[id.index()].push(&channel.name),
        }
    });
    let listed: Vec<_> = graph
        .releases()
        .map(|(id, _)| id)
        .filter(|id| !added[id.index()].is_empty())
        .collect();
    for id in listed {
        let channels = std::mem::take(&mut added[id.index()]);
        let metadata = graph.metadata_mut(id).expect("listed from this graph");
        let existing = metadata.get(&keys.channels).unwrap_or_default();
        let mut all: Vec<&str> = existing
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .collect();
        all.extend(channels);
        let value = in_client_order(all).join(",");
        metadata.insert(&keys.channels, value);
    }
    write_phasing(graph, keys, phasing);
    warnings
}

/// Writes each phasing release's rollouts, and takes the key off every
/// other release: graph-data alone declares rollouts, and a value from a
/// release image would put a release in a channel for the engines that
/// phase.
fn write_phasing(
    graph: &mut Graph,
    keys: &InstructionKeys,
    mut phasing: BTreeMap<ReleaseId, PhasedChannels>,
) {
    let concrete: Vec<_> = graph
        .releases()
        .filter(|(_, release)| !release.is_abstract())
        .map(|(id, _)| id)
        .collect();
    for id in concrete {
        let metadata = graph.metadata_mut(id).expect("listed from this graph");
        match phasing.remove(&id) {
            Some(channels) => metadata.insert(&keys.phased_rollouts, channels.to_value()),
            None => metadata.remove(&keys.phased_rollouts),
        };
    }
}

/// A warning for each version a channel lists that matches no release of
/// `graph`.
pub(super) fn unmatched(graph: &Graph, data: &GraphData) -> Vec<Diagnostic> {
    for_each_listed(graph, &ReleaseIndex::of_concrete(graph), data, |_, _, _| {})
}

/// Calls `listed` with every release a channel lists, the channel and its
/// entry; returns a warning for each listed version that matches no release.
fn for_each_listed<'d>(
    graph: &Graph,
    index: &ReleaseIndex,
    data: &'d GraphData,
    mut on_listed: impl FnMut(ReleaseId, &'d Channel, &'d ChannelVersion),
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    for channel in data.channels() {
        for listed in &channel.versions {
            let mut found = false;
            for id in index.find(graph, &listed.name) {
                on_listed(id, channel, listed);
                found = true;
            }
            if !found {
                warnings.push(Diagnostic::warning(
                    Location::file(&channel.origin.path, Some(listed.line)),
                    DiagnosticKind::UnmatchedChannelVersion,
                    format!(
                        "{} is in channel {} but matches no release",
                        listed.name, channel.name
                    ),
                ));
            }
        }
    }
    warnings
}

/// Channels sorted the way upstream (and graph-data's own tooling) always
/// has: by name, then stably by the version after the first `-`, giving
/// `candidate-4.6,eus-4.6,fast-4.6,stable-4.6,candidate-4.7,...`. A name
/// without `-` (upstream crashed on one) sorts as having an empty version,
/// so before all versioned channels. Duplicates are dropped.
pub(crate) fn in_client_order(mut channels: Vec<&str>) -> Vec<&str> {
    channels.sort_unstable();
    channels.dedup();
    channels.sort_by_key(|name| {
        name.split_once('-')
            .map(|(_, version)| version)
            .unwrap_or_default()
    });
    channels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_group_by_version_then_name() {
        let sorted = in_client_order(vec![
            "stable-4.7",
            "fast-4.6",
            "candidate-4.7",
            "eus-4.6",
            "candidate-4.6",
        ]);
        assert_eq!(
            sorted,
            [
                "candidate-4.6",
                "eus-4.6",
                "fast-4.6",
                "candidate-4.7",
                "stable-4.7"
            ]
        );
    }

    #[test]
    fn a_name_without_dash_is_fine() {
        let sorted = in_client_order(vec!["fast-4.6", "stable", "beta", "stable"]);
        assert_eq!(sorted, ["beta", "stable", "fast-4.6"]);
    }
}
