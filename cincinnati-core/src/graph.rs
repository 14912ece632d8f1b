//! The update graph: releases joined by update edges, always acyclic.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;

use petgraph::Direction;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::visit::{EdgeRef, IntoEdgeReferences, NodeIndexable};
use semver::Version;

use crate::conditional::{ConditionalEdge, EdgeEndpoints};
use crate::metadata::Metadata;
use crate::order::TopologicalOrder;
use crate::release::Release;

/// A handle to a release in one [`Graph`]. Handles stay valid while other
/// releases are added or removed; they are meaningless in another graph.
pub type ReleaseId = NodeIndex;

/// Why a change to the graph was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    #[error("release {0} is already in the graph")]
    DuplicateVersion(Version),
    #[error("no release {0} in the graph")]
    UnknownVersion(Version),
    #[error("release handle {0:?} is not in the graph")]
    UnknownRelease(ReleaseId),
    #[error("an update from {0} to itself is not allowed")]
    SelfLoop(Version),
    #[error(transparent)]
    Cycle(#[from] CycleError),
}

/// An edge was refused because it would close a cycle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct CycleError {
    /// The releases on the cycle, in edge order, the first repeated at the end.
    pub cycle: Vec<Version>,
}

impl fmt::Display for CycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("update edges would form a cycle: ")?;
        for (position, version) in self.cycle.iter().enumerate() {
            if position > 0 {
                f.write_str(" -> ")?;
            }
            write!(f, "{version}")?;
        }
        Ok(())
    }
}

/// The update graph.
///
/// Invariants: versions are unique (a release is found by version in O(1));
/// the edges form a DAG (an edge that would close a cycle is refused); there
/// is at most one edge between two releases. Conditional edges name releases
/// by version and are kept as given; stages keep them consistent.
#[derive(Clone, Default)]
pub struct Graph {
    dag: StableDiGraph<Release, ()>,
    order: TopologicalOrder,
    /// foldhash (seeded per process, as SipHash is): a channel's copy looks
    /// up both ends of every conditional edge it reads, and SipHash was a
    /// third of an answer's CPU on a graph ten times today's.
    by_version: foldhash::HashMap<Version, ReleaseId>,
    conditional_edges: Vec<ConditionalEdge>,
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("releases", &self.release_count())
            .field("edges", &self.edge_count())
            .field("conditional_edges", &self.conditional_edges.len())
            .finish()
    }
}

/// Two graphs are equal when they have the same releases (version, payload,
/// metadata), the same edges between the same versions, and the same
/// conditional-edge groups, whatever order any of them were added in.
impl PartialEq for Graph {
    fn eq(&self, other: &Self) -> bool {
        let same_releases = self.release_count() == other.release_count()
            && self.releases().all(|(_, release)| {
                other.find(&release.version).and_then(|id| other.release(id)) == Some(release)
            });
        let same_edges = self.edge_count() == other.edge_count()
            && self.edges().all(|(from, to)| {
                let found = |id: ReleaseId| other.find(&self.dag[id].version);
                matches!((found(from), found(to)), (Some(a), Some(b)) if other.has_edge(a, b))
            });
        same_releases && same_edges && self.sorted_conditional_edges() == other.sorted_conditional_edges()
    }
}

impl Eq for Graph {}

impl Graph {
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a graph in one pass: `edges` index into `releases`.
    ///
    /// Faster than adding edges one by one (one topological sort for the whole
    /// graph), for callers that already hold a complete graph such as a parsed
    /// Graph API document. Duplicate edges are an error here: use
    /// [`Graph::add_edge`] to merge.
    pub fn from_parts(
        releases: Vec<Release>,
        edges: impl IntoIterator<Item = (usize, usize)>,
        conditional_edges: Vec<ConditionalEdge>,
    ) -> Result<Self, FromPartsError> {
        let edges = edges.into_iter();
        // Room for every edge up front: grown by doubling, a large graph's
        // edges held up to twice their room for the graph's life.
        let mut inner = StableDiGraph::with_capacity(releases.len(), edges.size_hint().0);
        let mut by_version = foldhash::HashMap::with_capacity_and_hasher(releases.len(), Default::default());
        for (position, release) in releases.into_iter().enumerate() {
            let version = release.version.clone();
            let id = inner.add_node(release);
            if let Some(first) = by_version.insert(version.clone(), id) {
                return Err(FromPartsError::DuplicateVersion {
                    version,
                    first: first.index(),
                    second: position,
                });
            }
        }
        let node_count = inner.node_count();
        for (position, (from, to)) in edges.enumerate() {
            if from >= node_count || to >= node_count {
                return Err(FromPartsError::EdgeOutOfRange {
                    position,
                    from,
                    to,
                    node_count,
                });
            }
            let (from_id, to_id) = (NodeIndex::new(from), NodeIndex::new(to));
            if inner.contains_edge(from_id, to_id) {
                return Err(FromPartsError::DuplicateEdge { position, from, to });
            }
            inner.add_edge(from_id, to_id, ());
        }
        let order = TopologicalOrder::of(&inner)
            .map_err(|on_cycle| FromPartsError::Cycle(cycle_through(&inner, on_cycle)))?;
        Ok(Self {
            dag: inner,
            order,
            by_version,
            conditional_edges,
        })
    }

    /// One past the highest index of a release in the graph: tables indexed
    /// by [`ReleaseId::index`] have this many rows.
    pub fn release_bound(&self) -> usize {
        self.dag.node_bound()
    }

    pub fn release_count(&self) -> usize {
        self.dag.node_count()
    }

    pub fn edge_count(&self) -> usize {
        self.dag.edge_count()
    }

    /// Adds a release; its version must not be in the graph yet.
    pub fn add_release(&mut self, release: Release) -> Result<ReleaseId, GraphError> {
        if self.by_version.contains_key(&release.version) {
            return Err(GraphError::DuplicateVersion(release.version));
        }
        let version = release.version.clone();
        let id = self.dag.add_node(release);
        self.order.place_last(id);
        self.by_version.insert(version, id);
        Ok(id)
    }

    /// The release with exactly this version (build metadata included).
    pub fn find(&self, version: &Version) -> Option<ReleaseId> {
        self.by_version.get(version).copied()
    }

    pub fn release(&self, id: ReleaseId) -> Option<&Release> {
        self.dag.node_weight(id)
    }

    /// Mutable metadata of a release. The version is changed with
    /// [`Graph::set_version`] only, which keeps the index right.
    pub fn metadata_mut(&mut self, id: ReleaseId) -> Option<&mut Metadata> {
        self.dag.node_weight_mut(id).map(|release| &mut release.metadata)
    }

    /// Renames a release, e.g. to strip its `+arch` build metadata.
    pub fn set_version(&mut self, id: ReleaseId, version: Version) -> Result<(), GraphError> {
        if self.by_version.get(&version).is_some_and(|&other| other != id) {
            return Err(GraphError::DuplicateVersion(version));
        }
        let release = self
            .dag
            .node_weight_mut(id)
            .ok_or(GraphError::UnknownRelease(id))?;
        let old = std::mem::replace(&mut release.version, version.clone());
        self.by_version.remove(&old);
        self.by_version.insert(version, id);
        Ok(())
    }

    /// Removes a release with its edges. Conditional edges are left alone:
    /// see [`Graph::retain_conditional_edges`].
    pub fn remove_release(&mut self, id: ReleaseId) -> Option<Release> {
        let release = self.dag.remove_node(id)?;
        self.by_version.remove(&release.version);
        Some(release)
    }

    /// Every release, in no particular order.
    pub fn releases(&self) -> impl Iterator<Item = (ReleaseId, &Release)> + '_ {
        self.dag.node_indices().map(|id| (id, &self.dag[id]))
    }

    /// Every edge as (from, to), in no particular order.
    pub fn edges(&self) -> impl Iterator<Item = (ReleaseId, ReleaseId)> + '_ {
        self.dag
            .edge_references()
            .map(|edge| (edge.source(), edge.target()))
    }

    /// Releases this one can update to.
    pub fn children(&self, id: ReleaseId) -> impl Iterator<Item = ReleaseId> + '_ {
        self.dag.neighbors_directed(id, Direction::Outgoing)
    }

    /// Releases that can update to this one.
    pub fn parents(&self, id: ReleaseId) -> impl Iterator<Item = ReleaseId> + '_ {
        self.dag.neighbors_directed(id, Direction::Incoming)
    }

    pub fn has_edge(&self, from: ReleaseId, to: ReleaseId) -> bool {
        self.dag.contains_edge(from, to)
    }

    /// Adds the update edge `from → to`. Returns `false` when it was already
    /// there; refuses an edge that would close a cycle, naming the cycle.
    pub fn add_edge(&mut self, from: ReleaseId, to: ReleaseId) -> Result<bool, GraphError> {
        for id in [from, to] {
            if !self.dag.contains_node(id) {
                return Err(GraphError::UnknownRelease(id));
            }
        }
        if self.has_edge(from, to) {
            return Ok(false);
        }
        if from == to {
            return Err(GraphError::SelfLoop(self.dag[from].version.clone()));
        }
        if self.order.admit_edge(&self.dag, from, to).is_err() {
            let mut cycle = self.path_versions(to, from);
            cycle.push(self.dag[to].version.clone());
            return Err(CycleError { cycle }.into());
        }
        self.dag.add_edge(from, to, ());
        Ok(true)
    }

    /// [`Graph::add_edge`] by version.
    pub fn add_edge_by_version(&mut self, from: &Version, to: &Version) -> Result<bool, GraphError> {
        let from = self
            .find(from)
            .ok_or_else(|| GraphError::UnknownVersion(from.clone()))?;
        let to = self
            .find(to)
            .ok_or_else(|| GraphError::UnknownVersion(to.clone()))?;
        self.add_edge(from, to)
    }

    /// Removes the edge `from → to`; returns whether it existed.
    pub fn remove_edge(&mut self, from: ReleaseId, to: ReleaseId) -> bool {
        match self.dag.find_edge(from, to) {
            Some(edge) => self.dag.remove_edge(edge).is_some(),
            None => false,
        }
    }

    /// Removes the edges `edges` names (those of them that exist), in one
    /// pass over the graph's edges rather than a search for each: graph-data
    /// removes tens of thousands of updates at once.
    pub fn remove_edges(&mut self, edges: impl IntoIterator<Item = (ReleaseId, ReleaseId)>) {
        let removed: foldhash::HashSet<(ReleaseId, ReleaseId)> = edges.into_iter().collect();
        if removed.is_empty() {
            return;
        }
        self.dag.retain_edges(|dag, edge| {
            dag.edge_endpoints(edge)
                .is_some_and(|endpoints| !removed.contains(&endpoints))
        });
    }

    pub fn conditional_edges(&self) -> &[ConditionalEdge] {
        &self.conditional_edges
    }

    pub fn conditional_edges_mut(&mut self) -> &mut Vec<ConditionalEdge> {
        &mut self.conditional_edges
    }

    /// Keeps the conditional edges for which `keep` holds. A group that loses
    /// all its edges this way is dropped; a group that had none is kept.
    pub fn retain_conditional_edges(&mut self, mut keep: impl FnMut(&EdgeEndpoints) -> bool) {
        self.conditional_edges.retain_mut(|group| {
            let before = group.edges.len();
            group.edges.retain(&mut keep);
            before == 0 || !group.edges.is_empty()
        });
    }

    /// Keeps only the releases for which `keep` holds, with the edges between
    /// them; no edge is invented across a removed release. Conditional edges
    /// are left alone. Rebuilds the graph once around the kept releases
    /// (moved, not copied) instead of removing releases one by one, so
    /// filtering most of a large graph away stays linear.
    pub fn retain_releases(&mut self, mut keep: impl FnMut(&Release) -> bool) {
        let kept: Vec<ReleaseId> = self
            .dag
            .node_indices()
            .filter(|&id| keep(&self.dag[id]))
            .collect();
        let releases = kept
            .into_iter()
            .map(|id| {
                // An empty release, allocating nothing, takes its place
                // until the old graph goes.
                let empty = Release::abstract_release(Version::new(0, 0, 0));
                (id, std::mem::replace(&mut self.dag[id], empty))
            })
            .collect();
        let conditional_edges = std::mem::take(&mut self.conditional_edges);
        *self = Self {
            conditional_edges,
            ..self.around(releases)
        };
    }

    /// A copy of the releases for which `keep` holds, the edges between them
    /// and the conditional edges whose ends are both among them (a group
    /// left without edges is dropped). Copies only what is kept: filtering a
    /// few hundred releases out of thousands does not copy the thousands.
    pub fn subgraph(&self, keep: impl FnMut(&Release) -> bool) -> Self {
        self.subgraph_among(self.dag.node_indices(), 0..self.conditional_edges.len(), keep)
    }

    /// [`Graph::subgraph`] when `keep` can hold only for `releases` and
    /// only groups among `groups` (indices into
    /// [`Graph::conditional_edges`], in order) can have an edge between two
    /// of them or none at all: what an index of the graph found, so that the
    /// copy reads only that (see [`crate::listed`]).
    pub fn subgraph_among(
        &self,
        releases: impl IntoIterator<Item = ReleaseId>,
        groups: impl IntoIterator<Item = usize>,
        mut keep: impl FnMut(&Release) -> bool,
    ) -> Self {
        let releases = releases
            .into_iter()
            .filter(|&id| keep(&self.dag[id]))
            .map(|id| (id, self.dag[id].clone()))
            .collect();
        let mut kept = self.around(releases);
        let is_kept = |version: &Version| kept.by_version.contains_key(version);
        let groups = groups
            .into_iter()
            .map(|index| &self.conditional_edges[index])
            .filter_map(|group| {
                let edges: Vec<EdgeEndpoints> = group
                    .edges
                    .iter()
                    .filter(|edge| is_kept(&edge.from) && is_kept(&edge.to))
                    .cloned()
                    .collect();
                (group.edges.is_empty() || !edges.is_empty()).then(|| ConditionalEdge {
                    edges,
                    risks: group.risks.clone(),
                })
            })
            .collect();
        kept.conditional_edges = groups;
        kept
    }

    /// A graph of `releases` (each with its handle in this graph) and this
    /// graph's edges between them, without conditional edges.
    /// Reads only the edges of `releases`: a channel's copy of a graph ten
    /// times today's costs what it costs today.
    fn around(&self, releases: Vec<(ReleaseId, Release)>) -> Self {
        let inner = &self.dag;
        let mut new_ids = vec![None; inner.node_bound()];
        for (new, (id, _)) in releases.iter().enumerate() {
            new_ids[id.index()] = Some(NodeIndex::new(new));
        }
        // Counted first: a whole graph's edges, grown by doubling, would
        // hold up to twice their room.
        let edges: Vec<(NodeIndex, NodeIndex)> = releases
            .iter()
            .flat_map(|&(id, _)| {
                let new_ids = &new_ids;
                inner
                    .neighbors_directed(id, Direction::Outgoing)
                    .filter_map(move |child| Some((new_ids[id.index()]?, new_ids[child.index()]?)))
            })
            .collect();
        let mut kept = StableDiGraph::with_capacity(releases.len(), edges.len());
        for (index, (_, release)) in releases.into_iter().enumerate() {
            let added = kept.add_node(release);
            debug_assert_eq!(added.index(), index, "a new graph numbers releases in order");
        }
        for (from, to) in edges {
            kept.add_edge(from, to, ());
        }
        Self {
            by_version: kept
                .node_indices()
                .map(|id| (kept[id].version.clone(), id))
                .collect(),
            order: TopologicalOrder::of(&kept).expect("a subgraph of a DAG is acyclic"),
            dag: kept,
            conditional_edges: Vec::new(),
        }
    }

    /// Adds what `other` has and this graph lacks: its releases (by
    /// version), its edges between them, and its conditional edges not
    /// listed already (an update listed twice would be dropped by clients).
    /// Views of one graph (channels served by one engine) merge into the
    /// view of their union; an edge that would close a cycle is refused
    /// with the graph as far as it got.
    pub fn merge(&mut self, other: &Graph) -> Result<(), GraphError> {
        for (_, release) in other.releases() {
            if self.find(&release.version).is_none() {
                self.add_release(release.clone())?;
            }
        }
        for (from, to) in other.edges() {
            let version = |id: ReleaseId| &other.dag[id].version;
            self.add_edge_by_version(version(from), version(to))?;
        }
        // The first entry listing an update keeps it, even when `other`
        // itself lists it twice.
        let mut listed: HashSet<EdgeEndpoints> = self
            .conditional_edges
            .iter()
            .flat_map(|group| group.edges.iter().cloned())
            .collect();
        for group in other.conditional_edges() {
            let edges: Vec<EdgeEndpoints> = group
                .edges
                .iter()
                .filter(|edge| listed.insert((*edge).clone()))
                .cloned()
                .collect();
            if !edges.is_empty() {
                self.conditional_edges.push(ConditionalEdge {
                    edges,
                    risks: group.risks.clone(),
                });
            }
        }
        Ok(())
    }

    /// The conditional-edge groups in a canonical order.
    pub fn sorted_conditional_edges(&self) -> Vec<ConditionalEdge> {
        let mut groups: Vec<_> = self
            .conditional_edges
            .iter()
            .map(ConditionalEdge::sorted)
            .collect();
        groups.sort_unstable();
        groups
    }

    /// Versions on a shortest path from `start` to `goal`, both included.
    fn path_versions(&self, start: ReleaseId, goal: ReleaseId) -> Vec<Version> {
        shortest_path(&self.dag, start, goal)
            .into_iter()
            .map(|id| self.dag[id].version.clone())
            .collect()
    }
}

/// Nodes on a shortest path from `start` to `goal` (breadth-first), both
/// included; empty when there is none.
fn shortest_path(graph: &StableDiGraph<Release, ()>, start: NodeIndex, goal: NodeIndex) -> Vec<NodeIndex> {
    let mut came_from: HashMap<NodeIndex, NodeIndex> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        if node == goal {
            let mut path = vec![goal];
            let mut current = goal;
            while current != start {
                current = came_from[&current];
                path.push(current);
            }
            path.reverse();
            return path;
        }
        for next in graph.neighbors_directed(node, Direction::Outgoing) {
            if next != start && !came_from.contains_key(&next) {
                came_from.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    Vec::new()
}

/// The shortest cycle through `node`, named by version.
fn cycle_through(graph: &StableDiGraph<Release, ()>, node: NodeIndex) -> CycleError {
    let shortest = graph
        .neighbors_directed(node, Direction::Outgoing)
        .map(|child| shortest_path(graph, child, node))
        .filter(|path| !path.is_empty())
        .min_by_key(Vec::len)
        .unwrap_or_default();
    let cycle = std::iter::once(node)
        .chain(shortest)
        .map(|id| graph[id].version.clone())
        .collect();
    CycleError { cycle }
}

/// Why [`Graph::from_parts`] refused its input. Positions are indexes into
/// the input, so a caller can name the offending item.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FromPartsError {
    #[error("release {version} appears twice (at {first} and {second})")]
    DuplicateVersion {
        version: Version,
        first: usize,
        second: usize,
    },
    #[error("edge {position} [{from}, {to}] points outside the {node_count} releases")]
    EdgeOutOfRange {
        position: usize,
        from: usize,
        to: usize,
        node_count: usize,
    },
    #[error("edge {position} [{from}, {to}] appears twice")]
    DuplicateEdge { position: usize, from: usize, to: usize },
    #[error(transparent)]
    Cycle(CycleError),
}
