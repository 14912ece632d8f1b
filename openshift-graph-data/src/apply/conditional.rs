//! Risks resolved into conditional edges.
//!
//! A risk applies to every update into its target whose source matches its
//! `from` regex, among the updates that exist when it is resolved (after
//! additions, before removals). Clients drop an update listed in two groups,
//! so updates are grouped by their complete risk list: each update appears
//! in exactly one group, carrying every risk that applies to it, in file order.

use cincinnati_core::{ConditionalEdge, EdgeEndpoints, Graph, ReleaseId, Risk, SharedVersions};

use super::from_matches::FromMatches;
use super::index::ReleaseIndex;
use crate::model::GraphData;

/// The conditional edges of `graph`'s updates that `data`'s risks apply to.
/// `in_version_order` lists every release of `graph` by version.
pub(super) fn resolve<'d>(
    graph: &Graph,
    data: &'d GraphData,
    in_version_order: &[ReleaseId],
    matches: &mut FromMatches<'d>,
) -> Vec<ConditionalEdge> {
    let index = ReleaseIndex::of_concrete(graph);
    let mut rank = vec![0; graph.release_bound()];
    for (position, id) in in_version_order.iter().enumerate() {
        rank[id.index()] = position;
    }
    // (update as the ranks of its ends, position of a risk that applies to
    // it); sorted, each update's risks are together and in file order, and
    // updates in the order their groups list them.
    let mut applying: Vec<((usize, usize), usize)> = Vec::new();
    for (position, declaration) in data.risks().iter().enumerate() {
        for target in index.find(graph, &declaration.to) {
            let sources = graph
                .parents(target)
                .filter(|&parent| matches.is_match(&declaration.from, parent));
            applying.extend(sources.map(|parent| ((rank[parent.index()], rank[target.index()]), position)));
        }
    }
    applying.sort_unstable();
    // One risk is declared once per target release; updates into different
    // targets with equal risks belong in one group. Risks are compared once,
    // each named by the first declaration of an equal one, and groups keyed
    // by those names: comparing whole risks (their messages) for every
    // update was most of this step.
    let declared: Vec<&Risk> = data.risks().iter().map(|declaration| &declaration.risk).collect();
    let mut first_equal = foldhash::HashMap::<&Risk, usize>::default();
    let risk_names: Vec<usize> = declared
        .iter()
        .enumerate()
        .map(|(position, risk)| *first_equal.entry(risk).or_insert(position))
        .collect();
    let version = |rank: usize| {
        graph
            .release(in_version_order[rank])
            .expect("a release of this graph")
            .version
            .clone()
    };
    let mut versions = SharedVersions::default();
    let mut group_of = foldhash::HashMap::<Vec<usize>, usize>::default();
    let mut groups: Vec<(Vec<&Risk>, Vec<EdgeEndpoints>)> = Vec::new();
    let mut key = Vec::new();
    for risks_of_one in applying.chunk_by(|a, b| a.0 == b.0) {
        key.clear();
        key.extend(risks_of_one.iter().map(|&(_, position)| risk_names[position]));
        let group = match group_of.get(&key) {
            Some(&group) => group,
            None => {
                let risks = key.iter().map(|&name| declared[name]).collect();
                groups.push((risks, Vec::new()));
                group_of.insert(key.clone(), groups.len() - 1);
                groups.len() - 1
            }
        };
        let (from, to) = risks_of_one[0].0;
        groups[group].1.push(versions.edge(version(from), version(to)));
    }
    // In the order of their risks, as before the risks were named.
    groups.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    groups
        .into_iter()
        .map(|(risks, mut edges)| {
            // Grown by pushes (in order); tens of thousands are kept per graph.
            edges.shrink_to_fit();
            ConditionalEdge {
                edges,
                risks: risks.into_iter().cloned().collect(),
            }
        })
        .collect()
}
