//! The `node-remove` step: releases marked `release.remove: "true"` leave
//! the graph with their edges and, unlike upstream, with the conditional
//! edges that touch them, so no update points at a release that is gone.

use std::collections::HashSet;

use cincinnati_core::{Graph, Version};

use super::InstructionKeys;

/// Removes the marked releases; returns how many.
pub fn remove_flagged_releases(graph: &mut Graph, keys: &InstructionKeys) -> usize {
    let marked = |release: &cincinnati_core::Release| {
        release
            .metadata
            .get(&keys.release_remove)
            .is_some_and(|value| value == "true")
    };
    let removed: HashSet<Version> = graph
        .releases()
        .filter(|(_, release)| marked(release))
        .map(|(_, release)| release.version.clone())
        .collect();
    if removed.is_empty() {
        return 0;
    }
    graph.retain_releases(|release| !marked(release));
    graph.retain_conditional_edges(|edge| !removed.contains(&edge.from) && !removed.contains(&edge.to));
    removed.len()
}
