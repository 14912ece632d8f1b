//! The updates a channel phases, in a graph graph-data was applied to:
//! each update into a release the channel lists with a `start`, from a
//! release the channel lists, recommended or conditional. These are the
//! updates an engine offers each cluster at its moment of their window
//! (the sources it finds in the full graph are the channel's releases, over
//! the same two kinds of edge), and whose rollouts the graph-builder waits
//! for before it lists the release in `release.channels`.

use std::collections::BTreeSet;

use cincinnati_core::{Graph, ReleaseId, Version};

use super::{PhasedWindow, RolloutDuration, UpdateKind};
use crate::apply::index::ReleaseIndex;
use crate::model::{Channel, GraphData};

/// An update phased in a channel, and its rollout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhasedUpdate<'d> {
    pub channel: &'d Channel,
    pub from: ReleaseId,
    pub to: ReleaseId,
    /// `None`: an update of no kind (across majors), which gets the default.
    pub kind: Option<UpdateKind>,
    /// The duration declared for its kind; `None`: zero.
    pub duration: Option<RolloutDuration>,
    pub window: PhasedWindow,
}

impl GraphData {
    /// The updates of `graph` (graph-data applied to it) that its channels
    /// phase: by channel as loaded, by target as listed, sources in version
    /// order. A release listed in a channel counts as its release whatever
    /// its `start`: windows are shown whole, not only from where they stand
    /// now.
    pub fn phased_updates<'d>(&'d self, graph: &Graph) -> Vec<PhasedUpdate<'d>> {
        let index = ReleaseIndex::of_concrete(graph);
        let mut updates = Vec::new();
        for channel in self.channels() {
            let members: BTreeSet<ReleaseId> = channel
                .versions
                .iter()
                .flat_map(|entry| index.find(graph, &entry.name))
                .collect();
            for entry in &channel.versions {
                let Some(rollout) = channel.rollout_of(entry) else {
                    continue;
                };
                for to in index.find(graph, &entry.name) {
                    let to_version = &graph.release(to).expect("found in this graph").version;
                    for (from_version, from) in sources_into(graph, to, to_version, &members) {
                        let kind = UpdateKind::of(from_version, to_version);
                        updates.push(PhasedUpdate {
                            channel,
                            from,
                            to,
                            kind,
                            duration: rollout.durations.declared_for_kind(kind).cloned(),
                            window: rollout.window_for_kind(kind),
                        });
                    }
                }
            }
        }
        updates
    }
}

/// The releases among `members` with an update into `to` (at `to_version`),
/// recommended or conditional, with their versions, in version order.
fn sources_into<'g>(
    graph: &'g Graph,
    to: ReleaseId,
    to_version: &Version,
    members: &BTreeSet<ReleaseId>,
) -> BTreeSet<(&'g Version, ReleaseId)> {
    let conditional = graph
        .conditional_edges()
        .iter()
        .flat_map(|group| &group.edges)
        .filter(|edge| *edge.to == *to_version)
        .filter_map(|edge| graph.find(&edge.from));
    graph
        .parents(to)
        .chain(conditional)
        .filter(|from| members.contains(from))
        .filter_map(|from| Some((&graph.release(from)?.version, from)))
        .collect()
}
