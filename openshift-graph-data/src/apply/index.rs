//! Finding releases by the names graph-data uses, in O(1) instead of
//! upstream's scan of every release per entry.

use cincinnati_core::release::without_build;
use cincinnati_core::{Graph, ReleaseId, Version};

use crate::model::ReleaseName;

/// Concrete releases (abstract ones carry no metadata) by version without
/// build metadata.
pub(crate) struct ReleaseIndex {
    by_release: foldhash::HashMap<Version, Vec<ReleaseId>>,
}

impl ReleaseIndex {
    pub fn of_concrete(graph: &Graph) -> Self {
        let mut by_release = foldhash::HashMap::<Version, Vec<ReleaseId>>::default();
        for (id, release) in graph.releases() {
            if !release.is_abstract() {
                by_release
                    .entry(without_build(&release.version))
                    .or_default()
                    .push(id);
            }
        }
        for ids in by_release.values_mut() {
            ids.sort_unstable();
        }
        Self { by_release }
    }

    /// The releases `name` designates: every arch, or the one it names.
    pub fn find<'a>(
        &'a self,
        graph: &'a Graph,
        name: &'a ReleaseName,
    ) -> impl Iterator<Item = ReleaseId> + 'a {
        self.by_release
            .get(&name.release)
            .into_iter()
            .flatten()
            .copied()
            .filter(move |&id| {
                graph
                    .release(id)
                    .is_some_and(|release| name.matches(&release.version))
            })
    }
}

/// Releases in version order, so that applying instructions is deterministic.
pub(crate) fn in_version_order(graph: &Graph) -> Vec<ReleaseId> {
    let mut releases: Vec<_> = graph
        .releases()
        .map(|(id, release)| (&release.version, id))
        .collect();
    releases.sort_unstable();
    releases.into_iter().map(|(_, id)| id).collect()
}
