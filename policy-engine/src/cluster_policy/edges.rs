//! A class's own blocked edges, applied to its view as graph-data's are to
//! the whole graph: an update into `to` from a release whose name matches
//! `from` is removed, or, when the blocked edge carries a risk, made
//! conditional with it (added to the risks it already had).
//!
//! The view's versions no longer carry their architecture (the arch filter
//! removed it), while graph-data's `from` regexes are written against
//! `4.17.3+amd64`: releases are named with the request's architecture
//! added back, so the same YAML means the same here.

use std::collections::BTreeMap;

use cincinnati_client::cluster_policy::EdgeChange;
use cincinnati_core::release::named_with_arch;
use cincinnati_core::{ConditionalEdge, EdgeEndpoints, Graph, Risk, Version};

use super::policy::EdgeRule;

/// Applies `rules` to `graph`, a view of `arch`; returns what each did.
pub fn apply(graph: &mut Graph, rules: &[&EdgeRule], arch: &str) -> Vec<EdgeChange> {
    if rules.is_empty() {
        return Vec::new();
    }
    let mut changes = Vec::new();
    // Updates made conditional, with all their risks, in rule order.
    let mut risky: BTreeMap<EdgeEndpoints, Vec<Risk>> = BTreeMap::new();

    let updates: Vec<_> = graph
        .edges()
        .map(|(from, to)| {
            let version = |id| {
                graph
                    .release(id)
                    .expect("a release of this graph")
                    .version
                    .clone()
            };
            (from, to, version(from), version(to))
        })
        .collect();
    let mut removed = Vec::new();
    for (from_id, to_id, from, to) in updates {
        let matched = matching(rules, &from, &to, arch, &mut changes);
        if matched.is_empty() {
            continue;
        }
        removed.push((from_id, to_id));
        if let Some(risks) = matched.into_iter().collect::<Option<Vec<Risk>>>() {
            risky.insert(EdgeEndpoints::new(from, to), risks);
        }
    }
    graph.remove_edges(removed);

    // A group this empties goes; one that had no edges stays as it was.
    graph.conditional_edges_mut().retain_mut(|group| {
        if group.edges.is_empty() {
            return true;
        }
        let (group_risks, edges) = (&group.risks, &mut group.edges);
        edges.retain(|edge| {
            let matched = matching(rules, &edge.from, &edge.to, arch, &mut changes);
            if matched.is_empty() {
                return true;
            }
            if let Some(added) = matched.into_iter().collect::<Option<Vec<Risk>>>() {
                let mut risks = group_risks.clone();
                risks.extend(added.into_iter().filter(|risk| !group_risks.contains(risk)));
                risky.insert(edge.clone(), risks);
            }
            false
        });
        !edges.is_empty()
    });
    regroup(graph, risky);
    changes
}

/// The rules that match the update `from` → `to`, recorded in `changes`:
/// `None` for a rule that blocks it, `Some(risk)` for one that makes it
/// conditional. A block wins: the caller drops the update when any rule
/// blocks it (the collected list is then `None`).
fn matching(
    rules: &[&EdgeRule],
    from: &Version,
    to: &Version,
    arch: &str,
    changes: &mut Vec<EdgeChange>,
) -> Vec<Option<Risk>> {
    let (from_name, to_name) = (named_with_arch(from, arch), named_with_arch(to, arch));
    let from_text = from_name.to_string();
    rules
        .iter()
        .filter(|rule| rule.edge.to.matches(&to_name) && rule.edge.from.is_match(&from_text))
        .map(|rule| {
            let risk = rule.edge.risk.clone();
            changes.push(EdgeChange {
                from: from.to_string(),
                to: to.to_string(),
                line: rule.line,
                risk: risk.as_ref().map(|risk| risk.name.clone()),
            });
            risk
        })
        .collect()
}

/// Adds the updates made conditional, one group per distinct risk list:
/// clients drop an update listed in two groups.
fn regroup(graph: &mut Graph, risky: BTreeMap<EdgeEndpoints, Vec<Risk>>) {
    let mut by_risks: BTreeMap<Vec<Risk>, Vec<EdgeEndpoints>> = BTreeMap::new();
    for (edge, risks) in risky {
        by_risks.entry(risks).or_default().push(edge);
    }
    graph.conditional_edges_mut().extend(
        by_risks
            .into_iter()
            .map(|(risks, edges)| ConditionalEdge { edges, risks }),
    );
}

#[cfg(test)]
mod tests {
    use cincinnati_core::MatchingRule;
    use openshift_graph_data::{BlockedEdge, FromPattern, ReleaseName};

    use super::*;
    use crate::test_graphs::{graph, serialized};

    const GRAPH: &str = r#"{
      "nodes": [
        {"version": "4.17.9", "payload": "p0", "metadata": {}},
        {"version": "4.18.1", "payload": "p1", "metadata": {}},
        {"version": "4.18.2", "payload": "p2", "metadata": {}},
        {"version": "4.18.3", "payload": "p3", "metadata": {}}
      ],
      "edges": [[0, 1], [0, 2], [1, 2]],
      "conditionalEdges": [
        {"edges": [{"from": "4.18.1", "to": "4.18.3"}, {"from": "4.18.2", "to": "4.18.3"}],
         "risks": [{"url": "u", "name": "Upstream", "message": "m", "matchingRules": [{"type": "Always"}]}]}
      ]
    }"#;

    fn rule(to: &str, from: &str, risk: Option<&str>, line: u64) -> EdgeRule {
        EdgeRule {
            edge: BlockedEdge {
                to: ReleaseName::parse_target(to).unwrap(),
                from: FromPattern::compile(from).unwrap(),
                risk: risk.map(|name| Risk {
                    url: "https://example.com".to_owned(),
                    name: name.to_owned(),
                    message: "ours".to_owned(),
                    matching_rules: vec![MatchingRule::Always],
                }),
            },
            line,
        }
    }

    #[test]
    fn a_block_removes_updates_and_a_risk_makes_them_conditional() {
        let mut graph = graph(GRAPH);
        // `from` written as graph-data writes it, with the architecture.
        let block = rule("4.18.2", r"^4[.]17[.].*[+]amd64$", None, 3);
        let risk = rule("4.18.2", r"^4[.]18[.]1[+]", Some("Ours"), 7);
        let changes = apply(&mut graph, &[&block, &risk], "amd64");
        assert_eq!(
            changes,
            [
                EdgeChange {
                    from: "4.17.9".to_owned(),
                    to: "4.18.2".to_owned(),
                    line: 3,
                    risk: None
                },
                EdgeChange {
                    from: "4.18.1".to_owned(),
                    to: "4.18.2".to_owned(),
                    line: 7,
                    risk: Some("Ours".to_owned())
                },
            ]
        );
        let json = serialized(&graph);
        assert_eq!(json["edges"], serde_json::json!([[0, 1]]));
        let groups = json["conditionalEdges"].as_array().unwrap();
        assert_eq!(groups.len(), 2, "{groups:?}");
        let ours = groups
            .iter()
            .find(|group| group["risks"][0]["name"] == "Ours")
            .unwrap();
        assert_eq!(
            ours["edges"],
            serde_json::json!([{"from": "4.18.1", "to": "4.18.2"}])
        );
    }

    #[test]
    fn a_risk_on_a_conditional_update_joins_its_risks_in_one_group() {
        let mut graph = graph(GRAPH);
        let risk = rule("4.18.3", r"^4[.]18[.]2[+]", Some("Ours"), 1);
        apply(&mut graph, &[&risk], "amd64");
        let json = serialized(&graph);
        let groups = json["conditionalEdges"].as_array().unwrap();
        assert_eq!(groups.len(), 2, "{groups:?}");
        let (moved, stayed) = match groups[0]["risks"].as_array().unwrap().len() {
            2 => (&groups[0], &groups[1]),
            _ => (&groups[1], &groups[0]),
        };
        assert_eq!(
            stayed["edges"],
            serde_json::json!([{"from": "4.18.1", "to": "4.18.3"}])
        );
        assert_eq!(
            moved["edges"],
            serde_json::json!([{"from": "4.18.2", "to": "4.18.3"}])
        );
        let names: Vec<&str> = moved["risks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|risk| risk["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Upstream", "Ours"], "listed once, in one group");
    }

    #[test]
    fn a_rule_for_another_architecture_matches_nothing() {
        let mut graph = graph(GRAPH);
        let before = serialized(&graph);
        let other_arch = rule("4.18.2+arm64", ".*", None, 1);
        assert!(apply(&mut graph, &[&other_arch], "amd64").is_empty());
        assert_eq!(serialized(&graph), before);
    }
}
