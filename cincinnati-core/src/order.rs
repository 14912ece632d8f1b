//! A topological order of the graph kept up to date as edges are added
//! (Pearce and Kelly, "A Dynamic Topological Sort Algorithm for Directed
//! Acyclic Graphs", 2006), so refusing an edge that would close a cycle costs
//! O(1) for an edge that already agrees with the order — nearly every update
//! edge, since releases are added oldest first — and otherwise only visits
//! the releases ranked between the edge's ends.
//!
//! Plain data (no interior mutability), so a graph can be shared across
//! threads.

use std::collections::HashSet;

use petgraph::Direction;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};

/// A rank per node: every edge goes from a lower to a higher rank.
#[derive(Debug, Clone, Default)]
pub(crate) struct TopologicalOrder {
    rank: Vec<u64>,
    next_rank: u64,
}

impl TopologicalOrder {
    /// The order of an existing graph; `Err` names a node on a cycle.
    pub(crate) fn of<N>(graph: &StableDiGraph<N, ()>) -> Result<Self, NodeIndex> {
        let sorted = petgraph::algo::toposort(graph, None).map_err(|cycle| cycle.node_id())?;
        let mut order = Self::default();
        for node in sorted {
            order.place_last(node);
        }
        Ok(order)
    }

    /// Ranks a new node after every other.
    pub(crate) fn place_last(&mut self, node: NodeIndex) {
        if self.rank.len() <= node.index() {
            self.rank.resize(node.index() + 1, 0);
        }
        self.rank[node.index()] = self.next_rank;
        self.next_rank += 1;
    }

    /// Makes room for the edge `from → to` (not yet in `graph`), re-ranking
    /// the nodes between them if needed. `Err` if `to` reaches `from`: the
    /// edge would close a cycle, and the order is left unchanged.
    pub(crate) fn admit_edge<N>(
        &mut self,
        graph: &StableDiGraph<N, ()>,
        from: NodeIndex,
        to: NodeIndex,
    ) -> Result<(), ()> {
        let (lower, upper) = (self.rank[to.index()], self.rank[from.index()]);
        if lower > upper {
            return Ok(());
        }
        if from == to {
            return Err(());
        }
        // Nodes reachable from `to` ranked up to `from`'s rank: if `from` is
        // among them, the edge closes a cycle.
        let forward = self.cone(graph, to, Direction::Outgoing, |rank| rank <= upper);
        if forward.contains(&from) {
            return Err(());
        }
        // Nodes reaching `from` ranked from `to`'s rank up.
        let backward = self.cone(graph, from, Direction::Incoming, |rank| rank >= lower);
        let by_rank = |nodes: HashSet<NodeIndex>| {
            let mut nodes: Vec<NodeIndex> = nodes.into_iter().collect();
            nodes.sort_unstable_by_key(|node| self.rank[node.index()]);
            nodes
        };
        let (backward, forward) = (by_rank(backward), by_rank(forward));
        let mut ranks: Vec<u64> = backward
            .iter()
            .chain(&forward)
            .map(|node| self.rank[node.index()])
            .collect();
        ranks.sort_unstable();
        // Same ranks, reassigned: everything reaching `from` now comes before
        // everything `to` reaches, each group keeping its inner order.
        for (node, rank) in backward.iter().chain(&forward).zip(ranks) {
            self.rank[node.index()] = rank;
        }
        Ok(())
    }

    /// Nodes reachable from `start` along `direction` whose rank satisfies
    /// `within`, `start` included.
    fn cone<N>(
        &self,
        graph: &StableDiGraph<N, ()>,
        start: NodeIndex,
        direction: Direction,
        within: impl Fn(u64) -> bool,
    ) -> HashSet<NodeIndex> {
        let mut seen = HashSet::from([start]);
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            for next in graph.neighbors_directed(node, direction) {
                if within(self.rank[next.index()]) && seen.insert(next) {
                    stack.push(next);
                }
            }
        }
        seen
    }
}
