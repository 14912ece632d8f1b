//! What a graph holds for the releases of a listing (those naming a value
//! in a metadata list, such as the releases of a channel): an index, so
//! that a channel's copy reads only the channel, and a digest, so that two
//! revisions of a graph tell which listings they hold alike.
//!
//! A stage that keeps only the releases of a listing (the channel filter)
//! says so ([`crate::stage::Stage::listing`]); a pipeline led by such a
//! stage copies nothing else ([`crate::stage::Pipeline::run_on_listed`]),
//! so its answer depends on the graph only through what [`Listed`]
//! digests: two graphs with equal digests for a listing give the same
//! answer, and an answer made from one serves for the other. What the
//! digest of a value covers is what [`Graph::subgraph`] could copy for it,
//! and more: every release naming the value (version, payload, metadata),
//! every edge from them (also to releases the copy leaves out), every
//! conditional-edge group with an edge from them (its risks and all its
//! edges), and the groups without edges (which every copy keeps). More is
//! safe: a change beyond the copy only makes an answer be made again.
//!
//! SHA-256 over `Hash` (a collision would serve a stale answer: the
//! digests of the answers' ETags are SHA-256 as well).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use semver::Version;
use sha2::{Digest as _, Sha256};

use crate::graph::{Graph, ReleaseId};
use crate::release::Release;

/// The releases whose metadata list `key` names one of `values`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing<'a> {
    pub key: &'a str,
    pub values: Vec<&'a str>,
}

/// A digest of what a graph holds for a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListedDigest([u8; 16]);

/// What one graph holds for each value of one metadata list.
#[derive(Debug)]
pub struct Listed {
    key: String,
    values: HashMap<String, Value>,
    /// The conditional-edge groups without edges, which every copy keeps.
    without_edges: Vec<usize>,
    /// What a value no release names digests to.
    unlisted: ListedDigest,
}

/// What a graph holds for one value.
#[derive(Debug)]
struct Value {
    /// The concrete releases naming it, in release order.
    releases: Vec<ReleaseId>,
    /// The groups with an edge from one of them, in order.
    groups: Vec<usize>,
    digest: ListedDigest,
}

/// A value's releases, the groups leaving them and their digests, as
/// [`Listed::of`] meets them.
#[derive(Default)]
struct Gathered {
    releases: Vec<ReleaseId>,
    groups: Vec<usize>,
    /// How many of `groups` were distinct when they were last made so.
    distinct_groups: usize,
    digests: Vec<[u8; 16]>,
}

impl Gathered {
    /// Adds the groups leaving one release. Most are met again from the
    /// value's other releases (a group's edges leave many of them): kept
    /// whole, they were 32 MB on a graph ten times today's, for 1 MB of
    /// distinct groups. So they are made distinct whenever they have grown
    /// to twice what they were.
    fn add_groups(&mut self, leaving: impl Iterator<Item = usize>) {
        self.groups.extend(leaving);
        if self.groups.len() > 2 * self.distinct_groups + 64 {
            self.make_groups_distinct();
        }
    }

    fn make_groups_distinct(&mut self) {
        self.groups.sort_unstable();
        self.groups.dedup();
        self.distinct_groups = self.groups.len();
    }

    /// What the graph holds for the value: no room beyond its entries, for
    /// this is kept for the revision's life.
    fn into_value(mut self, without_edges_digest: [u8; 16]) -> Value {
        self.make_groups_distinct();
        self.groups.shrink_to_fit();
        self.releases.shrink_to_fit();
        self.digests.sort_unstable();
        Value {
            releases: self.releases,
            groups: self.groups,
            digest: ListedDigest(digest_of((&self.digests, without_edges_digest))),
        }
    }
}

impl Listed {
    /// What `graph` holds for every value of `key`: one pass over its
    /// releases, edges and conditional edges.
    pub fn of(graph: &Graph, key: &str) -> Self {
        let groups = Groups::of(graph);
        let mut values: HashMap<&str, Gathered> = HashMap::new();
        let mut children: Vec<&Version> = Vec::new();
        for (id, release) in graph.releases() {
            let mut listed = release.metadata_list(key).peekable();
            if release.is_abstract() || listed.peek().is_none() {
                continue;
            }
            children.clear();
            children.extend(
                graph
                    .children(id)
                    .filter_map(|child| Some(&graph.release(child)?.version)),
            );
            children.sort_unstable();
            let leaving = groups.from(&release.version);
            let mut digests: Vec<[u8; 16]> = leaving.iter().map(|&(_, digest)| digest).collect();
            digests.sort_unstable();
            digests.dedup();
            let digest = digest_of((
                (&release.version, &release.payload, &release.metadata),
                &children,
                &digests,
            ));
            for value in listed {
                let gathered = values.entry(value).or_default();
                gathered.releases.push(id);
                gathered.add_groups(leaving.iter().map(|&(index, _)| index));
                gathered.digests.push(digest);
            }
        }
        let values = values
            .into_iter()
            .map(|(name, gathered)| (name.to_owned(), gathered.into_value(groups.without_edges_digest)))
            .collect();
        Self {
            key: key.to_owned(),
            values,
            unlisted: ListedDigest(digest_of((&[] as &[[u8; 16]], groups.without_edges_digest))),
            without_edges: groups.without_edges,
        }
    }

    /// The metadata list this is of.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The digest of the releases naming any of `values`, in that order;
    /// `None` for a listing of another key.
    pub fn digest(&self, listing: &Listing<'_>) -> Option<ListedDigest> {
        (listing.key == self.key).then(|| {
            let digests: Vec<ListedDigest> = listing
                .values
                .iter()
                .map(|value| {
                    self.values
                        .get(*value)
                        .map_or(self.unlisted, |value| value.digest)
                })
                .collect();
            ListedDigest(digest_of(&digests))
        })
    }

    /// [`Graph::subgraph`] of `graph` (the graph this is of) when `keep`
    /// holds only for releases of `listing`, reading only those and the
    /// groups leaving them; `None` for a listing of another key.
    pub fn copy(
        &self,
        graph: &Graph,
        listing: &Listing<'_>,
        keep: impl FnMut(&Release) -> bool,
    ) -> Option<Graph> {
        if listing.key != self.key {
            return None;
        }
        let found: Vec<&Value> = listing
            .values
            .iter()
            .filter_map(|value| self.values.get(*value))
            .collect();
        let mut releases: Vec<ReleaseId> = found
            .iter()
            .flat_map(|value| value.releases.iter().copied())
            .collect();
        let mut groups: Vec<usize> = found
            .iter()
            .flat_map(|value| value.groups.iter().copied())
            .chain(self.without_edges.iter().copied())
            .collect();
        if found.len() > 1 {
            releases.sort_unstable();
            releases.dedup();
        }
        groups.sort_unstable();
        groups.dedup();
        Some(graph.subgraph_among(releases, groups, keep))
    }
}

/// The conditional-edge groups of a graph, each digested once (its risks
/// and every edge: an edge added to a group changes the answers of every
/// listing it touches), found by the versions their edges leave.
struct Groups<'g> {
    /// Each group (its index and digest) with an edge from the version.
    by_from: HashMap<&'g Version, Vec<(usize, [u8; 16])>>,
    without_edges: Vec<usize>,
    without_edges_digest: [u8; 16],
}

impl<'g> Groups<'g> {
    fn of(graph: &'g Graph) -> Self {
        let mut by_from: HashMap<&Version, Vec<(usize, [u8; 16])>> = HashMap::new();
        let (mut without_edges, mut digests) = (Vec::new(), Vec::new());
        for (index, group) in graph.conditional_edges().iter().enumerate() {
            let mut edges: Vec<_> = group.edges.iter().collect();
            edges.sort_unstable();
            let digest = digest_of((&edges, &group.risks));
            if edges.is_empty() {
                without_edges.push(index);
                digests.push(digest);
            }
            for edge in edges {
                by_from.entry(&edge.from).or_default().push((index, digest));
            }
        }
        digests.sort_unstable();
        Self {
            by_from,
            without_edges,
            without_edges_digest: digest_of(&digests),
        }
    }

    fn from(&self, version: &Version) -> &[(usize, [u8; 16])] {
        self.by_from.get(version).map_or(&[], Vec::as_slice)
    }
}

fn digest_of(value: impl Hash) -> [u8; 16] {
    let mut hasher = Sha256Hasher(Sha256::new());
    value.hash(&mut hasher);
    let digest = hasher.0.finalize();
    let mut truncated = [0; 16];
    truncated.copy_from_slice(&digest[..16]);
    truncated
}

/// `Hash` fed to SHA-256 (`Hash` writes lengths and terminators, so the
/// bytes are unambiguous).
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        unreachable!("read with finalize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire;

    const CHANNELS: &str = "io.openshift.upgrades.graph.release.channels";

    fn graph(json: &str) -> Graph {
        wire::parse(json.as_bytes()).unwrap().graph
    }

    /// a (4.1.0) and b (4.2.0) in channel a, c (4.3.0) in channel b;
    /// `extra` is spliced into the document's top level.
    fn document(metadata_of_c: &str, extra: &str) -> Graph {
        graph(&format!(
            r#"{{"nodes": [
              {{"version": "4.1.0", "payload": "a", "metadata": {{"{CHANNELS}": "a"}}}},
              {{"version": "4.2.0", "payload": "b", "metadata": {{"{CHANNELS}": "a"}}}},
              {{"version": "4.3.0", "payload": "c", "metadata": {{"{CHANNELS}": "b"{metadata_of_c}}}}}
            ], {extra}}}"#
        ))
    }

    fn digest(graph: &Graph, values: &[&str]) -> ListedDigest {
        Listed::of(graph, CHANNELS)
            .digest(&Listing {
                key: CHANNELS,
                values: values.to_vec(),
            })
            .unwrap()
    }

    const EDGES: &str = r#""edges": [[0, 1], [1, 2]]"#;
    const RISK: &str =
        r#""risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "Always"}]}]"#;

    #[test]
    fn a_change_to_another_listings_releases_leaves_a_listing_alike() {
        let before = document("", EDGES);
        let after = document(r#", "k": "v""#, EDGES);
        assert_eq!(digest(&before, &["a"]), digest(&after, &["a"]));
        assert_ne!(digest(&before, &["b"]), digest(&after, &["b"]));
        assert_ne!(digest(&before, &["a", "b"]), digest(&after, &["a", "b"]));
    }

    #[test]
    fn an_edge_from_a_listing_changes_it_even_to_a_release_left_out() {
        let before = document("", EDGES);
        let after = document("", r#""edges": [[0, 1]]"#);
        assert_ne!(digest(&before, &["a"]), digest(&after, &["a"]), "b's edge to c");
        assert_eq!(
            digest(&before, &["b"]),
            digest(&after, &["b"]),
            "edges into b are b's parents'"
        );
    }

    #[test]
    fn a_conditional_edge_changes_the_listing_it_leaves_and_its_group_all_of_them() {
        let before = document("", EDGES);
        let group = |edges: &str| format!(r#"{EDGES}, "conditionalEdges": [{{"edges": [{edges}], {RISK}}}]"#);
        let from_a = document("", &group(r#"{"from": "4.1.0", "to": "4.3.0"}"#));
        assert_ne!(digest(&before, &["a"]), digest(&from_a, &["a"]));
        assert_eq!(digest(&before, &["b"]), digest(&from_a, &["b"]));
        let also_from_b = document(
            "",
            &group(r#"{"from": "4.1.0", "to": "4.3.0"}, {"from": "4.3.0", "to": "4.2.0"}"#),
        );
        assert_ne!(digest(&from_a, &["a"]), digest(&also_from_b, &["a"]));
    }

    #[test]
    fn groups_without_edges_change_every_listing() {
        let before = document("", EDGES);
        let after = document(
            "",
            &format!(r#"{EDGES}, "conditionalEdges": [{{"edges": [], {RISK}}}]"#),
        );
        for values in [&["a"][..], &["b"], &["made-up"]] {
            assert_ne!(digest(&before, values), digest(&after, values), "{values:?}");
        }
    }

    #[test]
    fn node_order_does_not_matter_and_an_unlisted_value_is_digested_alike() {
        let reordered = graph(&format!(
            r#"{{"nodes": [
              {{"version": "4.3.0", "payload": "c", "metadata": {{"{CHANNELS}": "b"}}}},
              {{"version": "4.2.0", "payload": "b", "metadata": {{"{CHANNELS}": "a"}}}},
              {{"version": "4.1.0", "payload": "a", "metadata": {{"{CHANNELS}": "a"}}}}
            ], "edges": [[2, 1], [1, 0]]}}"#
        ));
        let before = document("", EDGES);
        assert_eq!(digest(&before, &["a"]), digest(&reordered, &["a"]));
        assert_eq!(digest(&before, &["made-up"]), digest(&reordered, &["made-up"]));
        assert_ne!(digest(&before, &["a"]), digest(&before, &["made-up"]));
    }

    mod oracle {
        use proptest::prelude::*;
        use serde_json::{Value, json};

        use super::*;

        const SIZE: usize = 6;
        const VALUES: [&str; 3] = ["a", "b", "c"];

        /// A graph of [`SIZE`] releases (4.0.i), as the fields the
        /// mutations change.
        #[derive(Debug, Clone)]
        struct Shape {
            concrete: [bool; SIZE],
            /// Bit `v`: lists `VALUES[v]`.
            listed: [u8; SIZE],
            extra: [u8; SIZE],
            /// Bit `i * SIZE + j`: an edge from `i` to `j > i`.
            edges: u64,
            /// Per group: its risk's name and its edges, as `edges`.
            groups: Vec<(u8, u64)>,
        }

        fn pairs() -> impl Iterator<Item = (usize, usize)> {
            (0..SIZE).flat_map(|i| (i + 1..SIZE).map(move |j| (i, j)))
        }

        fn version(i: usize) -> String {
            format!("4.0.{i}")
        }

        impl Shape {
            fn graph(&self) -> Graph {
                let nodes: Vec<Value> = (0..SIZE)
                    .map(|i| {
                        let channels: Vec<&str> = (0..VALUES.len())
                            .filter(|v| self.listed[i] & (1 << v) != 0)
                            .map(|v| VALUES[v])
                            .collect();
                        if self.concrete[i] {
                            json!({"version": version(i), "payload": format!("p{i}"), "metadata": {
                                CHANNELS: channels.join(","), "extra": self.extra[i].to_string()}})
                        } else {
                            json!({"version": version(i)})
                        }
                    })
                    .collect();
                let has = |bits: u64, (i, j): (usize, usize)| bits & (1 << (i * SIZE + j)) != 0;
                let edges: Vec<[usize; 2]> = pairs()
                    .filter(|&pair| has(self.edges, pair))
                    .map(|(i, j)| [i, j])
                    .collect();
                let groups: Vec<Value> = self
                    .groups
                    .iter()
                    .map(|&(risk, bits)| {
                        let edges: Vec<Value> = pairs()
                            .filter(|&pair| has(bits, pair))
                            .map(|(i, j)| json!({"from": version(i), "to": version(j)}))
                            .collect();
                        json!({"edges": edges, "risks": [{"url": "u", "name": format!("R{risk}"), "message": "m",
                               "matchingRules": [{"type": "Always"}]}]})
                    })
                    .collect();
                let document = json!({"nodes": nodes, "edges": edges, "conditionalEdges": groups});
                wire::parse(document.to_string().as_bytes()).unwrap().graph
            }
        }

        fn shape() -> impl Strategy<Value = Shape> {
            let edge_bits = any::<u64>().prop_map(|bits| bits & ((1 << (SIZE * SIZE)) - 1));
            // Groups of a few edges, or none (a group every copy keeps).
            let group_edges = prop_oneof![
                1 => Just(0_u64),
                3 => (edge_bits.clone(), any::<u64>()).prop_map(|(bits, mask)| bits & mask & (mask >> 7)),
            ];
            (
                prop::array::uniform6(prop::bool::weighted(0.9)),
                prop::array::uniform6(0..8_u8),
                prop::array::uniform6(0..2_u8),
                edge_bits.clone(),
                prop::collection::vec((0..2_u8, group_edges), 0..3),
            )
                .prop_map(|(concrete, listed, extra, edges, groups)| Shape {
                    concrete,
                    listed,
                    extra,
                    edges,
                    groups,
                })
        }

        /// One small change to a shape.
        #[derive(Debug, Clone)]
        enum Change {
            Concrete(usize),
            Listed(usize, u8),
            Extra(usize),
            Edge(u32),
            GroupRisk(usize),
            GroupEdge(usize, u32),
        }

        fn change() -> impl Strategy<Value = Change> {
            prop_oneof![
                (0..SIZE).prop_map(Change::Concrete),
                (0..SIZE, 0..3_u8).prop_map(|(i, v)| Change::Listed(i, v)),
                (0..SIZE).prop_map(Change::Extra),
                (0..36_u32).prop_map(Change::Edge),
                (0..3_usize).prop_map(Change::GroupRisk),
                (0..3_usize, 0..36_u32).prop_map(|(g, bit)| Change::GroupEdge(g, bit)),
            ]
        }

        impl Change {
            fn apply(&self, shape: &mut Shape) {
                let upward = |bit: u32| (bit as usize / SIZE) < (bit as usize % SIZE);
                match *self {
                    Change::Concrete(i) => shape.concrete[i] = !shape.concrete[i],
                    Change::Listed(i, v) => shape.listed[i] ^= 1 << v,
                    Change::Extra(i) => shape.extra[i] ^= 1,
                    Change::Edge(bit) if upward(bit) => shape.edges ^= 1 << bit,
                    Change::GroupRisk(g) if g < shape.groups.len() => shape.groups[g].0 ^= 1,
                    Change::GroupEdge(g, bit) if g < shape.groups.len() && upward(bit) => {
                        shape.groups[g].1 ^= 1 << bit
                    }
                    _ => {}
                }
            }
        }

        /// Whether a filter of `values` keeps `release` (of odd patches
        /// only, if `odd`: a test that keeps fewer than the listing).
        fn kept(release: &Release, values: &[&str], odd: bool) -> bool {
            !release.is_abstract()
                && release
                    .metadata_list(CHANNELS)
                    .any(|listed| values.contains(&listed))
                && (!odd || release.version.patch % 2 == 1)
        }

        /// What a pipeline led by a filter of `values` copies, as bytes.
        fn copied(graph: &Graph, values: &[&str]) -> Vec<u8> {
            wire::serialize(&graph.subgraph(|release| kept(release, values, false)), None)
        }

        const LISTINGS: [&[&str]; 5] = [&["a"], &["b"], &["c"], &["a", "b"], &["made-up"]];

        proptest! {
            /// The rule the module documents: equal digests, equal copies.
            #[test]
            fn equal_digests_mean_equal_copies(before in shape(), changes in prop::collection::vec(change(), 1..4)) {
                let mut after = before.clone();
                for change in &changes {
                    change.apply(&mut after);
                }
                let (before, after) = (before.graph(), after.graph());
                for values in LISTINGS {
                    if digest(&before, values) == digest(&after, values) {
                        prop_assert_eq!(copied(&before, values), copied(&after, values), "{:?}", values);
                    }
                }
            }

            /// A copy through the index is the copy of the whole graph.
            #[test]
            fn copies_through_the_index_are_whole_copies(shape in shape(), odd in any::<bool>()) {
                let graph = shape.graph();
                let listed = Listed::of(&graph, CHANNELS);
                for values in LISTINGS {
                    let listing = Listing { key: CHANNELS, values: values.to_vec() };
                    let keep = |release: &Release| kept(release, values, odd);
                    let indexed = listed.copy(&graph, &listing, keep).expect("a listing of the key");
                    prop_assert_eq!(
                        wire::serialize(&indexed, None),
                        wire::serialize(&graph.subgraph(keep), None),
                        "{:?}", values
                    );
                }
            }
        }
    }

    #[test]
    fn a_listing_of_another_key_has_no_digest() {
        let digests = Listed::of(&document("", EDGES), CHANNELS);
        assert_eq!(
            digests.digest(&Listing {
                key: "other",
                values: vec!["a"]
            }),
            None
        );
    }
}
