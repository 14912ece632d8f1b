//! The `openshift-secondary-metadata-parse` step: graph-data written onto
//! the releases as metadata.

use cincinnati_core::Graph;
use jiff::Timestamp;

use super::index::ReleaseIndex;
use super::{InstructionKeys, append_value, channels, remove_regex};
use crate::diagnostic::Diagnostic;
use crate::model::GraphData;

/// Applies graph-data to the releases of `graph`, in upstream's order:
///
/// 1. `raw/metadata.json`: each value set, or appended with `,`.
/// 2. Blocked edges and risks: `previous.remove_regex` on each target, so
///    the edge step removes the matching updates (a risk turns them into
///    conditional updates there).
/// 3. Channels: `release.channels`, sorted, on the releases each channel
///    lists at `now` (a release whose `start` is later is not in it yet).
///
/// Only concrete releases are touched: abstract ones have no metadata.
/// Returns warnings (channel versions matching no release); every problem
/// that could refuse the graph-data was found when it was loaded.
pub fn apply_graph_data(
    graph: &mut Graph,
    data: &GraphData,
    keys: &InstructionKeys,
    now: Timestamp,
) -> Vec<Diagnostic> {
    let index = ReleaseIndex::of_concrete(graph);
    apply_raw_metadata(graph, &index, data);
    apply_removals(graph, data, keys);
    channels::apply(graph, &index, data, keys, now)
}

fn apply_raw_metadata(graph: &mut Graph, index: &ReleaseIndex, data: &GraphData) {
    for raw in data.raw_metadata() {
        let ids: Vec<_> = index.find(graph, &raw.release).collect();
        for id in ids {
            let metadata = graph.metadata_mut(id).expect("indexed releases are in the graph");
            for (key, value) in &raw.entries {
                append_value(metadata, key, value);
            }
        }
    }
}

fn apply_removals(graph: &mut Graph, data: &GraphData, keys: &InstructionKeys) {
    let patterns: Vec<_> = graph
        .releases()
        .filter(|(_, release)| !release.is_abstract())
        .filter_map(|(id, release)| {
            let froms: Vec<&str> = data
                .declarations_into(&release.version)
                .map(|rule| rule.from().text.as_str())
                .collect();
            (!froms.is_empty()).then_some((id, froms))
        })
        .collect();
    for (id, froms) in patterns {
        let metadata = graph.metadata_mut(id).expect("the release was just found");
        let existing = metadata.get(&keys.previous_remove_regex);
        let combined = remove_regex::combine(existing.into_iter().chain(froms));
        metadata.insert(&keys.previous_remove_regex, combined);
    }
}
