//! What every plan, break, runbook and explanation must be, checked on
//! many questions drawn from the demo graph (5,743 releases): a plan is a
//! chain of real updates on the channels it names; each release offered
//! instead of a hop's target keeps the plan a chain; a runbook updates each
//! hop once, in order, the workers paused exactly through the hops they
//! skip; a break names only releases its answer shows; reasons come in the
//! order that decides, regexes as written.

use std::collections::BTreeSet;

use cincinnati_client::explain::{ExplainQuery, Verdict, explain};
use cincinnati_client::plan::{Break, PathAnswer, PathQuery, Plan, plan};
use cincinnati_client::runbook::{Action, Workers, runbook};
use cincinnati_client::{Document, Tier, UpdateGraph};
use cincinnati_core::Version;

use crate::support::demo_graph_file;

fn demo() -> UpdateGraph {
    let bytes = std::fs::read(demo_graph_file()).unwrap();
    let graph = cincinnati_core::wire::parse(&bytes).unwrap().graph;
    UpdateGraph::build("amd64", &[Document::classify(graph, "amd64", None)])
}

/// A small deterministic generator: the same questions on every run.
struct Draw(u64);

impl Draw {
    fn below(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % bound
    }
}

/// Versions of releases without pre-release: what clusters run.
fn versions(graph: &UpdateGraph) -> Vec<Version> {
    graph
        .releases()
        .map(|(_, release)| release.version.clone())
        .filter(|version| version.pre.is_empty() && version.major == 4 && version.minor >= 10)
        .collect()
}

/// Pairs from one release to one up to three minors later.
fn questions(graph: &UpdateGraph, count: usize) -> Vec<(Version, Version)> {
    let versions = versions(graph);
    let mut draw = Draw(28);
    let mut pairs = Vec::new();
    while pairs.len() < count {
        let from = &versions[draw.below(versions.len())];
        let later: Vec<&Version> = versions
            .iter()
            .filter(|to| *to > from && to.minor <= from.minor + 3)
            .collect();
        if !later.is_empty() {
            pairs.push((from.clone(), later[draw.below(later.len())].clone()));
        }
    }
    pairs
}

/// Each question on every tier, no risk accepted, and how to name it.
fn path_queries(graph: &UpdateGraph, count: usize, alternatives: usize) -> Vec<(PathQuery, String)> {
    questions(graph, count)
        .into_iter()
        .flat_map(|(from, to)| {
            Tier::ALL.map(|tier| {
                let what = format!("{from} → {to} on {tier}");
                let query = PathQuery {
                    from: from.clone(),
                    to: to.clone(),
                    tier,
                    accepted_risks: BTreeSet::new(),
                    alternatives,
                };
                (query, what)
            })
        })
        .collect()
}

fn assert_chain(graph: &UpdateGraph, plan: &Plan, from: &Version, to: &Version, what: &str) {
    let Some(first) = plan.hops.first() else {
        assert_eq!(from, to, "{what}: no hops");
        return;
    };
    assert_eq!(&first.from.version, from, "{what}: starts");
    assert_eq!(&plan.hops.last().unwrap().to.version, to, "{what}: ends");
    for pair in plan.hops.windows(2) {
        assert_eq!(pair[0].to.version, pair[1].from.version, "{what}: a chain");
    }
    for hop in &plan.hops {
        let (a, b) = (
            graph.find(&hop.from.version).unwrap(),
            graph.find(&hop.to.version).unwrap(),
        );
        assert!(
            graph.update(a, b).is_some(),
            "{what}: {} → {} is an update",
            hop.from.version,
            hop.to.version
        );
        for end in [a, b] {
            assert!(
                graph.channels_of(end).any(|channel| channel == hop.channel),
                "{what}: {} is in {}",
                graph.version(end),
                hop.channel
            );
        }
    }
}

#[test]
fn every_plan_is_a_chain_of_updates_and_its_alternatives_keep_it_one() {
    let graph = demo();
    let mut found = 0;
    for (query, what) in path_queries(&graph, 300, 5) {
        let (from, to) = (&query.from, &query.to);
        let PathAnswer::Found { plan, .. } = plan(&graph, &query) else {
            continue;
        };
        found += 1;
        assert_chain(&graph, &plan, from, to, &what);
        assert!(
            plan.hops.iter().all(|hop| hop.risks.is_none()),
            "{what}: no risk accepted"
        );
        assert_eq!(plan.instead.len(), plan.hops.len(), "{what}");
        for (index, instead) in plan.instead.iter().enumerate() {
            let hop = &plan.hops[index];
            for release in instead {
                let start = graph.find(&hop.from.version).unwrap();
                let taken = graph.find(&release.version).unwrap();
                assert_ne!(release.version, hop.to.version, "{what}");
                assert!(
                    graph.update(start, taken).is_some(),
                    "{what}: offered from the hop's start"
                );
                let next = graph.find(&plan.hops[index + 1].to.version).unwrap();
                assert!(
                    graph.update(taken, next).is_some(),
                    "{what}: leads to the next hop's target"
                );
            }
        }
        if let Some(runbook) = runbook(&query, &plan) {
            check_runbook(&plan, &runbook, &what);
        }
    }
    assert!(found > 300, "the questions find plans: {found}");
}

fn check_runbook(plan: &Plan, runbook: &cincinnati_client::runbook::Runbook, what: &str) {
    let updates: Vec<usize> = runbook.steps.iter().filter_map(|step| step.hop).collect();
    assert_eq!(
        updates,
        (0..plan.hops.len()).collect::<Vec<_>>(),
        "{what}: each hop once, in order"
    );
    let mut paused = false;
    for step in &runbook.steps {
        match step.action {
            Action::PausePools => {
                assert!(!paused, "{what}: paused twice");
                paused = true;
            }
            Action::UnpausePools => {
                assert!(paused, "{what}: unpaused unpaused pools");
                paused = false;
            }
            Action::Update => {
                let hop = step.hop.unwrap();
                assert_eq!(
                    runbook.workers[hop] != Workers::Update,
                    paused,
                    "{what}: hop {hop}"
                );
                let image = plan.hops[hop].to.payload.as_deref().unwrap();
                assert!(step.commands[0].contains(image), "{what}: {:?}", step.commands);
            }
            _ => {}
        }
    }
    assert!(!paused, "{what}: left paused");
    // The workers catch up where a window ends, to its last target.
    for (index, workers) in runbook.workers.iter().enumerate() {
        if let Workers::CatchUp { to, .. } = workers {
            assert_eq!(to.version, plan.hops[index].to.version, "{what}");
        }
    }
}

#[test]
fn every_break_names_only_releases_its_answer_shows() {
    let graph = demo();
    let mut stuck = 0;
    for (query, what) in path_queries(&graph, 300, 0) {
        let (from, to) = (&query.from, &query.to);
        let PathAnswer::NoPath { reason, .. } = plan(&graph, &query) else {
            continue;
        };
        let Break::Stuck {
            at, reached, onward, ..
        } = &reason
        else {
            continue;
        };
        stuck += 1;
        assert_chain(&graph, reached, from, &at.version, &what);
        let mut shown: BTreeSet<String> = [from.to_string(), to.to_string()].into();
        let versions_of = |plan: &Plan| -> Vec<String> {
            plan.hops
                .iter()
                .flat_map(|hop| [hop.from.version.to_string(), hop.to.version.to_string()])
                .collect()
        };
        shown.extend(versions_of(reached));
        if let Some(onward) = onward {
            let start = onward.hops[0].from.version.clone();
            assert_chain(&graph, onward, &start, to, &what);
            shown.extend(versions_of(onward));
        }
        let sentence = reason.summary(&query);
        for word in sentence.split(|c: char| c.is_whitespace() || matches!(c, ';' | ',' | ':' | '(' | ')')) {
            let word = word.trim_end_matches("'s");
            if Version::parse(word).is_ok() {
                assert!(
                    shown.contains(word),
                    "{what}: {word} named, not shown: {sentence}"
                );
            }
        }
    }
    assert!(stuck > 10, "the questions find breaks: {stuck}");
}

#[test]
fn reasons_come_in_the_order_that_decides_and_regexes_as_written() {
    let graph = demo();
    let mut no_update = 0;
    for (from, to) in questions(&graph, 400) {
        let query = ExplainQuery {
            channel: Tier::Candidate.channel_into(to.major, to.minor),
            from: from.clone(),
            to: to.clone(),
        };
        let explanation = explain(&graph, &query, None);
        let reasons = explanation.reasons();
        let layers: Vec<_> = reasons.iter().map(|reason| reason.layer).collect();
        let mut sorted = layers.clone();
        sorted.sort();
        assert_eq!(layers, sorted, "{from} → {to}");
        assert!(
            reasons.iter().filter(|reason| reason.decides).count() <= 1,
            "{from} → {to}: one decides"
        );
        let summary = explanation.summary();
        if let Verdict::NoUpdate { removed_by } = &explanation.verdict {
            no_update += 1;
            if let Some(pattern) = removed_by {
                assert!(summary.contains(&format!("`{pattern}`")), "as written: {summary}");
            }
        }
        assert!(!summary.contains(r"\\"), "{summary}");
    }
    assert!(no_update > 10, "the questions find missing updates: {no_update}");
}
