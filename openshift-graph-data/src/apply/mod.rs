//! Applying graph-data and the metadata instructions to the update graph,
//! with upstream's semantics and without its bugs.
//!
//! The graph-builder runs three steps, each a stage (see [`crate::stages`]):
//!
//! 1. [`apply_graph_data`] (`openshift-secondary-metadata-parse`): raw
//!    metadata, blocked edges written as `previous.remove_regex`
//!    instructions, channels.
//! 2. [`apply_edge_instructions`] (`edge-add-remove`): edges added by
//!    `previous.add`/`next.add`, then risks resolved into conditional edges
//!    against the parents present at that point, then edges removed, so
//!    removals win over additions and a conditional edge exists only where a
//!    real edge did.
//! 3. [`remove_flagged_releases`] (`node-remove`): releases marked
//!    `release.remove`.
//!
//! Instructions are metadata keys under a configurable prefix, so that
//! release images can carry them too; graph-data only writes them.
//!
//! [`unmatched`] checks graph-data against releases without applying it:
//! what it names that no release is.

mod channels;
mod conditional;
mod edges;
mod from_matches;
pub(crate) mod index;
mod node_remove;
mod remove_regex;
mod secondary_metadata;
mod unmatched;

pub use edges::{EdgeError, EdgeRules, apply_edge_instructions};
pub use node_remove::remove_flagged_releases;
pub use secondary_metadata::apply_graph_data;
pub use unmatched::unmatched;

/// Applies graph-data as a graph-builder configured with the two usual
/// stages does (`openshift-secondary-metadata-parse`, then
/// `edge-add-remove`, default keys and settings): what tools that preview a
/// graph-data change, and the demo, build. `now` decides which releases
/// have entered their channels (see [`apply_graph_data`]).
pub fn apply_with_defaults(
    graph: &mut cincinnati_core::Graph,
    data: &crate::GraphData,
    now: jiff::Timestamp,
) -> Result<Vec<crate::Diagnostic>, EdgeError> {
    let mut warnings = apply_graph_data(graph, data, &InstructionKeys::default(), now);
    warnings.extend(apply_edge_instructions(graph, Some(data), &EdgeRules::default())?);
    Ok(warnings)
}

/// [`apply_with_defaults`] for the releases for which `keep` holds (one
/// architecture's, say), the others left out first: what a preview of one
/// architecture's channels needs, at a fraction of the cost (a present-day
/// graph has five architectures). Graph-data applies to each release and to
/// the updates into and out of it, so the kept releases end exactly as
/// applying to the whole graph leaves them, and a channel version that
/// matches no release is reported against the whole graph, as the
/// graph-builder reports it. When the left-out releases could change the
/// outcome (an update joins a kept release to one left out, or a left-out
/// release carries an edge instruction, whose warnings or errors the
/// graph-builder would report), the whole graph is applied to and kept.
pub fn apply_with_defaults_to(
    graph: &mut cincinnati_core::Graph,
    data: &crate::GraphData,
    now: jiff::Timestamp,
    keep: impl Fn(&cincinnati_core::Release) -> bool,
) -> Result<Vec<crate::Diagnostic>, EdgeError> {
    if !left_out_alone(graph, data, &keep) {
        return apply_with_defaults(graph, data, now);
    }
    let mut warnings = channels::unmatched(graph, data);
    graph.retain_releases(&keep);
    // Its only warnings are unmatched channel versions, about the kept
    // releases alone: the whole graph's are above.
    apply_graph_data(graph, data, &InstructionKeys::default(), now);
    warnings.extend(apply_edge_instructions(graph, Some(data), &EdgeRules::default())?);
    Ok(warnings)
}

/// Whether the releases `keep` leaves out cannot change the outcome: no
/// update joins them to a kept release, and none carries an edge
/// instruction (in its metadata, or from graph-data's raw metadata).
fn left_out_alone(
    graph: &cincinnati_core::Graph,
    data: &crate::GraphData,
    keep: &impl Fn(&cincinnati_core::Release) -> bool,
) -> bool {
    let keys = InstructionKeys::default();
    let instructions = keys.edge_instructions();
    let named_by_graph_data: Vec<&crate::ReleaseName> = data
        .raw_metadata()
        .iter()
        .filter(|raw| raw.entries.keys().any(|key| instructions.contains(&key.as_str())))
        .map(|raw| &raw.release)
        .collect();
    let instructed = |release: &cincinnati_core::Release| {
        instructions.iter().any(|key| release.metadata.contains_key(key))
            || named_by_graph_data
                .iter()
                .any(|name| name.matches(&release.version))
    };
    let kept = |id| graph.release(id).is_some_and(keep);
    !graph.edges().any(|(from, to)| kept(from) != kept(to))
        && !graph
            .releases()
            .any(|(_, release)| !keep(release) && instructed(release))
}

/// The metadata keys of every instruction, under one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionKeys {
    /// `release.channels`: comma-separated channels.
    pub channels: String,
    /// `release.arch`: the architecture, used to name releases in edge lists.
    pub arch: String,
    /// `release.phased_rollouts`: the rollouts of the channels a release is
    /// phasing into (see [`crate::phased::published`]).
    pub phased_rollouts: String,
    /// `previous.add` (on the target): releases to add an update from.
    pub previous_add: String,
    /// `next.add` (on the source): releases to add an update to.
    pub next_add: String,
    /// `previous.remove` (on the target): releases to remove the update from, or "all".
    pub previous_remove: String,
    /// `previous.remove_regex` (on the target): a regex of releases to remove the update from.
    pub previous_remove_regex: String,
    /// `next.remove` (on the source): releases to remove the update to.
    pub next_remove: String,
    /// `release.remove`: `"true"` removes the release.
    pub release_remove: String,
}

impl InstructionKeys {
    pub fn with_prefix(prefix: &str) -> Self {
        let key = |suffix: &str| format!("{prefix}.{suffix}");
        Self {
            channels: key("release.channels"),
            arch: key("release.arch"),
            phased_rollouts: key("release.phased_rollouts"),
            previous_add: key("previous.add"),
            next_add: key("next.add"),
            previous_remove: key("previous.remove"),
            previous_remove_regex: key("previous.remove_regex"),
            next_remove: key("next.remove"),
            release_remove: key("release.remove"),
        }
    }

    /// The edge instructions that `remove_consumed_metadata` strips once applied.
    pub(crate) fn edge_instructions(&self) -> [&str; 5] {
        [
            &self.previous_add,
            &self.next_add,
            &self.previous_remove,
            &self.previous_remove_regex,
            &self.next_remove,
        ]
    }
}

impl Default for InstructionKeys {
    fn default() -> Self {
        Self::with_prefix(cincinnati_core::release::keys::PREFIX)
    }
}

/// Appends `value` to a comma-separated metadata value, or sets it.
pub(crate) fn append_value(metadata: &mut cincinnati_core::Metadata, key: &str, value: &str) {
    let appended = match metadata.get(key) {
        Some(existing) => format!("{existing},{value}"),
        None => value.to_owned(),
    };
    metadata.insert(key, appended);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_prefix() {
        let keys = InstructionKeys::default();
        assert_eq!(keys.channels, cincinnati_core::release::keys::CHANNELS);
        assert_eq!(keys.arch, cincinnati_core::release::keys::ARCH);
        assert_eq!(
            keys.phased_rollouts,
            cincinnati_core::release::keys::PHASED_ROLLOUTS
        );
        assert_eq!(
            InstructionKeys::with_prefix("x").previous_remove_regex,
            "x.previous.remove_regex"
        );
    }

    #[test]
    fn values_are_appended_with_commas() {
        let mut metadata = cincinnati_core::Metadata::new();
        append_value(&mut metadata, "k", "a");
        append_value(&mut metadata, "k", "b");
        assert_eq!(&metadata["k"], "a,b");
    }
}
