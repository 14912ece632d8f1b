//! One channel of an [`UpdateGraph`]: what a policy-engine serves a
//! cluster on that channel, and what the cluster makes of it.

use cincinnati_core::{Release, Risk, Version};

use crate::graph::{ChannelId, ReleaseRef, Update, UpdateGraph};

/// The releases of one channel and the updates between them.
#[derive(Debug, Clone, Copy)]
pub struct ChannelView<'g> {
    graph: &'g UpdateGraph,
    id: ChannelId,
}

/// A cluster asking for updates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    pub version: Version,
    /// The architecture of the release it runs: `multi` for a multi-arch
    /// cluster. A single-arch cluster asking a `multi` graph is migrating
    /// to multi-arch.
    pub arch: String,
}

/// What a cluster may update to, as the CVO derives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Updates {
    /// The cluster's own release as the service knows it.
    pub current: Release,
    /// Recommended updates, newest first.
    pub recommended: Vec<Release>,
    /// Updates with known risks, newest first.
    pub conditional: Vec<ConditionalUpdate>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionalUpdate {
    pub release: Release,
    pub risks: Vec<Risk>,
}

/// The CVO's `VersionNotFound`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("version {version} is not in channel {channel}")]
pub struct VersionNotFound {
    pub version: Version,
    pub channel: String,
}

/// A graph's channels, as views: the graph itself knows a channel only by
/// its number.
impl UpdateGraph {
    /// Every channel a release is in, in reading order.
    pub fn channels(&self) -> impl Iterator<Item = ChannelView<'_>> + '_ {
        self.all_channel_ids().map(|id| ChannelView { graph: self, id })
    }

    pub fn channel(&self, name: &str) -> Option<ChannelView<'_>> {
        let id = self.channel_id(name)?;
        Some(ChannelView { graph: self, id })
    }
}

impl<'g> ChannelView<'g> {
    pub fn name(&self) -> &'g str {
        self.graph.channel_name(self.id)
    }

    pub fn graph(&self) -> &'g UpdateGraph {
        self.graph
    }

    /// Its releases, in version order.
    pub fn releases(&self) -> &'g [ReleaseRef] {
        self.graph.members(self.id)
    }

    pub fn contains(&self, release: ReleaseRef) -> bool {
        self.graph.is_in(release, self.id)
    }

    /// The updates a cluster at `release` sees on this channel, by target
    /// version; none when the release is not in it.
    pub fn updates_from(&self, release: ReleaseRef) -> impl DoubleEndedIterator<Item = Update<'g>> + use<'g> {
        let view = *self;
        let updates = view.contains(release).then(|| view.graph.updates_from(release));
        updates
            .into_iter()
            .flatten()
            .filter(move |update| view.contains(update.to))
    }

    /// Every update on this channel.
    pub fn updates(&self) -> impl Iterator<Item = Update<'g>> + use<'g> {
        let view = *self;
        self.releases()
            .iter()
            .flat_map(move |&release| view.updates_from(release))
    }

    /// The releases a cluster at `start` can reach on this channel, `start`
    /// included, in version order.
    pub fn reachable_from(&self, start: ReleaseRef) -> Vec<ReleaseRef> {
        if !self.contains(start) {
            return Vec::new();
        }
        let mut reached = vec![false; self.graph.release_count()];
        reached[start.index()] = true;
        let mut queue = vec![start];
        while let Some(release) = queue.pop() {
            for update in self.updates_from(release) {
                if !std::mem::replace(&mut reached[update.to.index()], true) {
                    queue.push(update.to);
                }
            }
        }
        self.releases()
            .iter()
            .copied()
            .filter(|release| reached[release.index()])
            .collect()
    }

    /// What `cluster` is offered on this channel, exactly as the CVO
    /// derives it (see [`crate::cvo`]); a single-arch cluster asking the
    /// `multi` graph is offered its own version's multi-arch release only.
    pub fn updates_for(&self, cluster: &Cluster) -> Result<Updates, VersionNotFound> {
        let current = self
            .graph
            .find(&cluster.version)
            .filter(|&release| self.contains(release))
            .ok_or_else(|| VersionNotFound {
                version: cluster.version.clone(),
                channel: self.name().to_owned(),
            })?;
        let release = |reference| self.graph.release(reference).clone();
        if self.graph.arch() == MULTI && cluster.arch != MULTI {
            return Ok(Updates {
                current: release(current),
                recommended: vec![release(current)],
                conditional: Vec::new(),
            });
        }
        let (mut recommended, mut conditional) = (Vec::new(), Vec::new());
        for update in self.updates_from(current).rev() {
            match update.risks {
                None => recommended.push(release(update.to)),
                Some(risks) => conditional.push(ConditionalUpdate {
                    release: release(update.to),
                    risks: risks.to_vec(),
                }),
            }
        }
        Ok(Updates {
            current: release(current),
            recommended,
            conditional,
        })
    }
}

/// The architecture of multi-arch releases.
pub const MULTI: &str = "multi";
