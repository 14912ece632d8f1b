//! Risks resolved into conditional edges.
//!
//! A risk applies to every update into its target whose source matches its
//! `from` regex, among the updates that exist when it is resolved (after
//! additions, before removals). Clients drop an update listed in two groups,
//! so updates are grouped by their complete risk list: each update appears
//! in exactly one group, carrying every risk that applies to it, in file order.

use std::collections::{BTreeMap, HashMap};

use cincinnati_core::{ConditionalEdge, EdgeEndpoints, Graph, ReleaseId, Risk};

use super::index::{ReleaseIndex, VersionNames};
use crate::model::GraphData;

pub(super) fn resolve(graph: &Graph, data: &GraphData, names: &VersionNames) -> Vec<ConditionalEdge> {
    let index = ReleaseIndex::of_concrete(graph);
    // Update → positions of its risks, in file order.
    let mut risks_of: BTreeMap<(ReleaseId, ReleaseId), Vec<usize>> = BTreeMap::new();
    for (position, declaration) in data.risks().iter().enumerate() {
        for target in index.find(graph, &declaration.to) {
            for parent in graph.parents(target) {
                if declaration.from.regex.is_match(names.get(parent)) {
                    risks_of.entry((parent, target)).or_default().push(position);
                }
            }
        }
    }
    // One risk is declared once per target release; updates into different
    // targets with equal risks belong in one group. Risks are compared once,
    // each named by the first declaration of an equal one, and groups keyed
    // by those names: comparing whole risks (their messages) for every
    // update was most of this step.
    let declared: Vec<&Risk> = data.risks().iter().map(|declaration| &declaration.risk).collect();
    let mut first_equal: HashMap<&Risk, usize> = HashMap::with_capacity(declared.len());
    let risk_names: Vec<usize> = declared
        .iter()
        .enumerate()
        .map(|(position, risk)| *first_equal.entry(risk).or_insert(position))
        .collect();
    let mut updates_of: HashMap<Vec<usize>, Vec<EdgeEndpoints>> = HashMap::new();
    for ((from, to), positions) in risks_of {
        let version = |id| {
            graph
                .release(id)
                .expect("a release of this graph")
                .version
                .clone()
        };
        let key = positions
            .into_iter()
            .map(|position| risk_names[position])
            .collect();
        updates_of.entry(key).or_default().push(EdgeEndpoints {
            from: version(from),
            to: version(to),
        });
    }
    let mut groups: Vec<(Vec<&Risk>, Vec<EdgeEndpoints>)> = updates_of
        .into_iter()
        .map(|(key, edges)| {
            (
                key.into_iter().map(|position| declared[position]).collect(),
                edges,
            )
        })
        .collect();
    // In the order of their risks, as before the risks were named.
    groups.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    groups
        .into_iter()
        .map(|(risks, mut edges)| {
            edges.sort_unstable();
            // Grown by pushes; tens of thousands of edges are kept per graph.
            edges.shrink_to_fit();
            ConditionalEdge {
                edges,
                risks: risks.into_iter().cloned().collect(),
            }
        })
        .collect()
}
