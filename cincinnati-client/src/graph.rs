//! One architecture's update graph as clusters see it: every release with
//! the channels it is in, and every update between releases, read by the
//! cluster-version operator's rules ([`crate::cvo`]) once for all channels.
//!
//! An update from A to B is offered on channel C when both A and B are in
//! C: that is how a policy-engine cuts a channel out of the full graph, so
//! one graph answers for every channel, and answers from several channels
//! of a server that only answers per channel merge into one graph.
//!
//! Built once from parsed documents; every query after that is a lookup or
//! a walk over integer indexes, without allocating per release.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use cincinnati_core::release::{arch_of, keys, without_build};
use cincinnati_core::{Release, Risk, Version};
use openshift_graph_data::phased::published::PhasedChannels;

use crate::channel::reading_order;
use crate::cvo::{self, DropReason, Resolved, RiskSet};

use crate::document::{Document, Shape};

/// A release of one [`UpdateGraph`]. Releases are numbered in version
/// order, so comparing handles compares versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReleaseRef(u32);

impl ReleaseRef {
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// A channel of one [`UpdateGraph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ChannelId(u32);

/// Which channels a graph knows completely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coverage {
    /// Built from a full graph: every channel.
    Everything,
    /// Built from answers for these channels only. Releases still name all
    /// their channels, but updates between releases that share none of
    /// these may be missing.
    Channels(BTreeSet<String>),
}

/// An update as the cluster-version operator offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Update<'g> {
    pub from: ReleaseRef,
    pub to: ReleaseRef,
    /// `None` for a recommended update; the risks of a conditional one.
    pub risks: Option<&'g [Risk]>,
}

/// See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct UpdateGraph {
    arch: String,
    coverage: Coverage,
    /// In version order, versions without build metadata.
    releases: Vec<Release>,
    by_version: HashMap<Version, ReleaseRef>,
    /// In reading order; a [`ChannelId`] is a position here.
    channel_names: Vec<String>,
    channel_ids: HashMap<String, ChannelId>,
    /// Per channel, its releases in version order.
    members: Vec<Vec<ReleaseRef>>,
    /// Per release, its channels, sorted.
    channels_of: Vec<Vec<ChannelId>>,
    /// Per release, its updates by target.
    updates: Vec<Vec<Resolved>>,
    /// Per release, the releases that update to it, in version order.
    incoming: Vec<Vec<ReleaseRef>>,
    risk_sets: Vec<RiskSet>,
    dropped: HashMap<(ReleaseRef, ReleaseRef), DropReason>,
    /// Every architecture each version (without build) was seen in.
    archs: HashMap<Version, Vec<String>>,
    /// The releases phasing into channels, in version order, with those
    /// channels' rollouts (see [`crate::phasing`]).
    phasing: Vec<(ReleaseRef, PhasedChannels)>,
}

impl UpdateGraph {
    /// The graph of `arch` in `documents`: full graphs, answers for
    /// channels of `arch`, and answers for other architectures (which only
    /// tell [`UpdateGraph::archs_of`] where else a version exists). A
    /// release or update in several documents is taken from the first.
    pub fn build(arch: &str, documents: &[Document]) -> Self {
        Builder::new(arch)
            .read_releases(documents)
            .read_updates(documents)
    }

    /// The same, with the updates of the first document only: a
    /// per-channel service's answer for a channel, merged with others to
    /// know every channel of its releases. Only the answer for a channel
    /// says which updates its clusters see there: the Graph API's updates
    /// are not per channel, and a phased rollout withholds in one channel
    /// an update another channel's answer offers.
    pub fn build_with_updates_of_first(arch: &str, documents: &[Document]) -> Self {
        Builder::new(arch)
            .read_releases(documents)
            .read_updates(&documents[..documents.len().min(1)])
    }

    pub fn arch(&self) -> &str {
        &self.arch
    }

    pub fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    /// Whether updates on `channel` are all known.
    pub fn covers(&self, channel: &str) -> bool {
        match &self.coverage {
            Coverage::Everything => true,
            Coverage::Channels(channels) => channels.contains(channel),
        }
    }

    pub fn release_count(&self) -> usize {
        self.releases.len()
    }

    /// Every release, in version order.
    pub fn releases(
        &self,
    ) -> impl ExactSizeIterator<Item = (ReleaseRef, &Release)> + DoubleEndedIterator + '_ {
        self.releases
            .iter()
            .enumerate()
            .map(|(index, release)| (ReleaseRef(index as u32), release))
    }

    pub fn release(&self, release: ReleaseRef) -> &Release {
        &self.releases[release.index()]
    }

    pub fn version(&self, release: ReleaseRef) -> &Version {
        &self.release(release).version
    }

    /// The release with this version; build metadata (`+amd64`) is ignored.
    pub fn find(&self, version: &Version) -> Option<ReleaseRef> {
        if version.build.is_empty() {
            self.by_version.get(version).copied()
        } else {
            self.by_version.get(&without_build(version)).copied()
        }
    }

    /// Every channel, in reading order.
    pub(crate) fn all_channel_ids(&self) -> impl Iterator<Item = ChannelId> + use<> {
        (0..self.channel_names.len() as u32).map(ChannelId)
    }

    /// The channels `release` is in, in reading order.
    pub fn channels_of(&self, release: ReleaseRef) -> impl Iterator<Item = &str> + '_ {
        self.channels_of[release.index()]
            .iter()
            .map(|&id| self.channel_name(id))
    }

    /// Every update from `release`, on any channel, by target version.
    pub fn updates_from(&self, release: ReleaseRef) -> impl DoubleEndedIterator<Item = Update<'_>> + '_ {
        self.updates[release.index()]
            .iter()
            .map(move |resolved| self.update_of(release, resolved))
    }

    /// The update from `from` to `to`, if the CVO would offer it on a
    /// channel holding both.
    pub fn update(&self, from: ReleaseRef, to: ReleaseRef) -> Option<Update<'_>> {
        let updates = &self.updates[from.index()];
        let position = updates
            .binary_search_by_key(&to.0, |resolved| resolved.target)
            .ok()?;
        Some(self.update_of(from, &updates[position]))
    }

    /// The releases that update to `release`, on any channel, in version order.
    pub fn updaters_of(&self, release: ReleaseRef) -> &[ReleaseRef] {
        &self.incoming[release.index()]
    }

    /// Why the CVO drops the conditional update `from → to` it was sent.
    pub fn dropped(&self, from: ReleaseRef, to: ReleaseRef) -> Option<&DropReason> {
        self.dropped.get(&(from, to))
    }

    /// The architectures `version` was seen in (build metadata ignored),
    /// sorted; empty when it was seen nowhere.
    pub fn archs_of(&self, version: &Version) -> &[String] {
        self.archs
            .get(&without_build(version))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    pub(crate) fn channel_name(&self, id: ChannelId) -> &str {
        &self.channel_names[id.0 as usize]
    }

    pub(crate) fn channel_id(&self, name: &str) -> Option<ChannelId> {
        self.channel_ids.get(name).copied()
    }

    pub(crate) fn members(&self, id: ChannelId) -> &[ReleaseRef] {
        &self.members[id.0 as usize]
    }

    /// The releases phasing into channels, in version order.
    pub(crate) fn phasing(&self) -> &[(ReleaseRef, PhasedChannels)] {
        &self.phasing
    }

    pub(crate) fn is_in(&self, release: ReleaseRef, id: ChannelId) -> bool {
        self.channels_of[release.index()].binary_search(&id).is_ok()
    }

    fn update_of(&self, from: ReleaseRef, resolved: &Resolved) -> Update<'_> {
        Update {
            from,
            to: ReleaseRef(resolved.target),
            risks: resolved
                .risk_set
                .map(|set| self.risk_sets[set as usize].risks.as_slice()),
        }
    }
}

/// Reads documents into an [`UpdateGraph`]: releases first (so they can
/// be numbered in version order), then the updates between them.
struct Builder {
    graph: UpdateGraph,
}

impl Builder {
    fn new(arch: &str) -> Self {
        Self {
            graph: UpdateGraph {
                arch: arch.to_owned(),
                coverage: Coverage::Channels(BTreeSet::new()),
                releases: Vec::new(),
                by_version: HashMap::new(),
                channel_names: Vec::new(),
                channel_ids: HashMap::new(),
                members: Vec::new(),
                channels_of: Vec::new(),
                updates: Vec::new(),
                incoming: Vec::new(),
                risk_sets: Vec::new(),
                dropped: HashMap::new(),
                archs: HashMap::new(),
                phasing: Vec::new(),
            },
        }
    }

    /// The releases of this architecture, their channels, and where every
    /// version was seen.
    fn read_releases(mut self, documents: &[Document]) -> Self {
        let arch = self.graph.arch.clone();
        let mut releases: BTreeMap<Version, Release> = BTreeMap::new();
        let mut archs: HashMap<Version, BTreeSet<&str>> = HashMap::new();
        for document in documents {
            for (_, release) in document.graph.releases() {
                let Some(release_arch) = release_arch(document, release) else {
                    continue;
                };
                let version = without_build(&release.version);
                archs.entry(version.clone()).or_default().insert(release_arch);
                if release_arch == arch {
                    releases
                        .entry(version.clone())
                        .or_insert_with(|| as_served(release, version));
                }
            }
            self.cover(document);
        }
        let graph = &mut self.graph;
        graph.archs = archs
            .into_iter()
            .map(|(version, archs)| (version, archs.into_iter().map(str::to_owned).collect()))
            .collect();
        graph.releases = releases.into_values().collect();
        graph.by_version = graph
            .releases()
            .map(|(reference, release)| (release.version.clone(), reference))
            .collect();
        graph.phasing = graph
            .releases()
            .filter_map(|(reference, release)| Some((reference, phasing_published(release)?)))
            .collect();
        self.read_channels();
        self
    }

    fn cover(&mut self, document: &Document) {
        let channel = match &document.shape {
            Shape::Full => {
                self.graph.coverage = Coverage::Everything;
                return;
            }
            Shape::View { arch, channel } if *arch == self.graph.arch => channel,
            Shape::View { .. } => return,
        };
        if let (Coverage::Channels(covered), Some(channel)) = (&mut self.graph.coverage, channel) {
            covered.insert(channel.clone());
        }
    }

    fn read_channels(&mut self) {
        let graph = &mut self.graph;
        let mut names: Vec<&str> = graph
            .releases
            .iter()
            .flat_map(|release| release.metadata_list(keys::CHANNELS))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        names.sort_by(|a, b| reading_order(a, b));
        let ids: HashMap<&str, ChannelId> = names
            .iter()
            .enumerate()
            .map(|(position, &name)| (name, ChannelId(position as u32)))
            .collect();
        let mut members = vec![Vec::new(); names.len()];
        let channels_of: Vec<Vec<ChannelId>> = graph
            .releases()
            .map(|(reference, release)| {
                let mut channels: Vec<ChannelId> = release
                    .metadata_list(keys::CHANNELS)
                    .map(|name| ids[name])
                    .collect();
                channels.sort_unstable();
                channels.dedup();
                for channel in &channels {
                    members[channel.0 as usize].push(reference);
                }
                channels
            })
            .collect();
        graph.channel_ids = ids.iter().map(|(&name, &id)| (name.to_owned(), id)).collect();
        graph.channel_names = names.into_iter().map(str::to_owned).collect();
        graph.members = members;
        graph.channels_of = channels_of;
    }

    /// Edges and conditional entries of every document, read by the CVO's
    /// rules per release.
    fn read_updates(mut self, documents: &[Document]) -> UpdateGraph {
        let count = self.graph.releases.len();
        let mut recommended: Vec<Vec<u32>> = vec![Vec::new(); count];
        let mut conditional: Vec<Vec<(u32, u32)>> = vec![Vec::new(); count];
        let mut risk_set_ids: HashMap<&[Risk], u32> = HashMap::new();
        // Updates listed by an earlier document: a later one repeating them
        // (another channel's answer) does not list them twice.
        let mut listed_earlier: HashSet<(u32, u32)> = HashSet::new();
        for document in documents {
            let local = self.local_references(document);
            for (from, to) in document.graph.edges() {
                if let (Some(from), Some(to)) = (local[from.index()], local[to.index()]) {
                    recommended[from.index()].push(to.0);
                }
            }
            let mut listed_here = Vec::new();
            for group in document.graph.conditional_edges() {
                let set = *risk_set_ids.entry(&group.risks).or_insert_with(|| {
                    self.graph.risk_sets.push(RiskSet::prune(&group.risks));
                    (self.graph.risk_sets.len() - 1) as u32
                });
                for edge in &group.edges {
                    let (Some(from), Some(to)) = (
                        self.endpoint(document, &edge.from),
                        self.endpoint(document, &edge.to),
                    ) else {
                        continue;
                    };
                    if !listed_earlier.contains(&(from.0, to.0)) {
                        conditional[from.index()].push((to.0, set));
                        listed_here.push((from.0, to.0));
                    }
                }
            }
            listed_earlier.extend(listed_here);
        }

        let graph = &mut self.graph;
        graph.incoming = vec![Vec::new(); count];
        graph.updates = recommended
            .into_iter()
            .zip(conditional)
            .enumerate()
            .map(|(from, (recommended, conditional))| {
                let from = ReleaseRef(from as u32);
                let (updates, dropped) = cvo::resolve(recommended, conditional, &graph.risk_sets);
                for update in &updates {
                    graph.incoming[update.target as usize].push(from);
                }
                for (to, reason) in dropped {
                    graph.dropped.insert((from, ReleaseRef(to)), reason);
                }
                updates
            })
            .collect();
        self.graph
    }

    /// Each release of `document` (by its index there) as a release of
    /// this graph, when it is one.
    fn local_references(&self, document: &Document) -> Vec<Option<ReleaseRef>> {
        let bound = document
            .graph
            .releases()
            .map(|(id, _)| id.index() + 1)
            .max()
            .unwrap_or(0);
        let mut local = vec![None; bound];
        for (id, release) in document.graph.releases() {
            if release_arch(document, release) == Some(self.graph.arch.as_str()) {
                local[id.index()] = self.graph.find(&release.version);
            }
        }
        local
    }

    /// A conditional edge's end, named by version in `document`.
    fn endpoint(&self, document: &Document, version: &Version) -> Option<ReleaseRef> {
        let arch = self.graph.arch.as_str();
        let of_this_arch = match &document.shape {
            Shape::Full => version.build.as_str() == arch,
            Shape::View { arch: viewed, .. } => viewed == arch,
        };
        of_this_arch.then(|| self.graph.find(version)).flatten()
    }
}

/// A release of a full graph as a policy-engine serves it: without build
/// metadata and without the `release.arch` key.
fn as_served(release: &Release, version: Version) -> Release {
    let mut metadata = release.metadata.clone();
    metadata.remove(keys::ARCH);
    Release {
        version,
        payload: release.payload.clone(),
        metadata,
    }
}

/// The architecture of a release as `document` presents it; `None` for an
/// abstract release (named in an edge list, never seen), which no channel
/// holds.
fn release_arch<'d>(document: &'d Document, release: &'d Release) -> Option<&'d str> {
    if release.is_abstract() {
        return None;
    }
    match &document.shape {
        Shape::Full => arch_of(release),
        Shape::View { arch, .. } => Some(arch),
    }
}

/// The channels `release` is phasing into, as its metadata publishes them
/// (see [`crate::phasing`]); a value that does not read is none.
fn phasing_published(release: &Release) -> Option<PhasedChannels> {
    PhasedChannels::parse(release.metadata.get(keys::PHASED_ROLLOUTS)?).ok()
}
