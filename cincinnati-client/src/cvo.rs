//! How the OpenShift cluster-version operator (CVO) reads a release's
//! updates out of a Graph API document (`pkg/cincinnati` of
//! openshift/cluster-version-operator), in its order:
//!
//! 1. the targets of the release's edges are recommended updates;
//! 2. `conditionalEdges` entries from the release are conditional updates;
//! 3. a target that is both is conditional only;
//! 4. each risk keeps only the matching rules the CVO can evaluate
//!    (`Always`, and `PromQL` with a query); a conditional update with a
//!    risk left without rules is dropped;
//! 5. a target still listed in more than one entry is dropped altogether.
//!
//! The CVO compares targets by payload; releases are compared here, which
//! is the same in a graph where each release has its own payload.

use cincinnati_core::{MatchingRule, Risk};

/// Why the CVO drops a conditional update it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DropReason {
    /// The risk has no matching rule the CVO can evaluate: none, or only
    /// rules of unknown types or `PromQL` without a query.
    UnevaluableRisk { risk: String },
    /// The update is listed in `entries` conditional-edge entries.
    ListedTwice { entries: usize },
}

/// Whether the CVO can evaluate a matching rule.
pub fn is_evaluable(rule: &MatchingRule) -> bool {
    match rule {
        MatchingRule::Always => true,
        MatchingRule::PromQl { promql } => !promql.is_empty(),
        MatchingRule::Other { .. } => false,
    }
}

/// A conditional-edge entry's risks as the CVO keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RiskSet {
    /// Each risk with its evaluable rules only.
    pub risks: Vec<Risk>,
    /// The first risk left without rules: updates with this set are dropped.
    pub unevaluable: Option<String>,
}

impl RiskSet {
    pub fn prune(risks: &[Risk]) -> Self {
        let risks: Vec<Risk> = risks
            .iter()
            .map(|risk| Risk {
                matching_rules: risk
                    .matching_rules
                    .iter()
                    .filter(|rule| is_evaluable(rule))
                    .cloned()
                    .collect(),
                ..risk.clone()
            })
            .collect();
        let unevaluable = risks
            .iter()
            .find(|risk| risk.matching_rules.is_empty())
            .map(|risk| risk.name.clone());
        Self { risks, unevaluable }
    }
}

/// One update of a release as the CVO offers it: to `target`, recommended
/// (`risk_set` `None`) or with the risks of `risk_set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Resolved {
    pub target: u32,
    pub risk_set: Option<u32>,
}

/// Applies the rules to one release's edges (`recommended` targets) and
/// conditional entries (`(target, risk set)`, one per entry listing it).
/// Returns its updates sorted by target, and what was dropped.
pub(crate) fn resolve(
    mut recommended: Vec<u32>,
    mut conditional: Vec<(u32, u32)>,
    risk_sets: &[RiskSet],
) -> (Vec<Resolved>, Vec<(u32, DropReason)>) {
    recommended.sort_unstable();
    recommended.dedup();
    conditional.sort_unstable();
    recommended.retain(|target| conditional.binary_search_by_key(target, |&(to, _)| to).is_err());

    let mut dropped = Vec::new();
    conditional.retain(|&(target, set)| match &risk_sets[set as usize].unevaluable {
        Some(risk) => {
            dropped.push((target, DropReason::UnevaluableRisk { risk: risk.clone() }));
            false
        }
        None => true,
    });
    let mut updates: Vec<Resolved> = recommended
        .into_iter()
        .map(|target| Resolved {
            target,
            risk_set: None,
        })
        .collect();
    for entries in conditional.chunk_by(|a, b| a.0 == b.0) {
        let (target, set) = entries[0];
        if entries.len() == 1 {
            updates.push(Resolved {
                target,
                risk_set: Some(set),
            });
        } else {
            let entries = entries.len();
            dropped.push((target, DropReason::ListedTwice { entries }));
        }
    }
    updates.sort_unstable();
    (updates, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risk(name: &str, rules: Vec<MatchingRule>) -> Risk {
        Risk {
            url: "u".into(),
            name: name.into(),
            message: "m".into(),
            matching_rules: rules,
        }
    }

    fn promql(query: &str) -> MatchingRule {
        MatchingRule::PromQl { promql: query.into() }
    }

    #[test]
    fn rules_the_cvo_cannot_evaluate_are_pruned() {
        let unknown = MatchingRule::Other {
            rule_type: "Future".into(),
            raw_json: r#"{"type":"Future"}"#.into(),
        };
        let set = RiskSet::prune(&[risk("A", vec![unknown.clone(), promql("up")])]);
        assert_eq!(set.risks[0].matching_rules, [promql("up")]);
        assert_eq!(set.unevaluable, None);

        let set = RiskSet::prune(&[
            risk("A", vec![MatchingRule::Always]),
            risk("B", vec![unknown, promql("")]),
        ]);
        assert_eq!(set.unevaluable.as_deref(), Some("B"));
        assert_eq!(
            RiskSet::prune(&[risk("C", vec![])]).unevaluable.as_deref(),
            Some("C")
        );
    }

    #[test]
    fn conditional_wins_and_a_target_listed_twice_is_dropped() {
        let usable = RiskSet::prune(&[risk("A", vec![MatchingRule::Always])]);
        let sets = [usable.clone(), usable];
        let (updates, dropped) = resolve(vec![3, 1, 2, 1], vec![(2, 0), (3, 0), (3, 1)], &sets);
        assert_eq!(
            updates,
            [
                Resolved {
                    target: 1,
                    risk_set: None
                },
                Resolved {
                    target: 2,
                    risk_set: Some(0)
                }
            ]
        );
        assert_eq!(dropped, [(3, DropReason::ListedTwice { entries: 2 })]);
    }

    #[test]
    fn a_dropped_conditional_update_takes_its_recommended_twin_along() {
        // The CVO removes the recommended edge before it prunes rules.
        let sets = [RiskSet::prune(&[risk("A", vec![])])];
        let (updates, dropped) = resolve(vec![5], vec![(5, 0)], &sets);
        assert!(updates.is_empty());
        assert_eq!(dropped, [(5, DropReason::UnevaluableRisk { risk: "A".into() })]);
    }

    #[test]
    fn an_entry_dropped_for_its_rules_does_not_count_as_a_listing() {
        let sets = [
            RiskSet::prune(&[risk("A", vec![])]),
            RiskSet::prune(&[risk("B", vec![MatchingRule::Always])]),
        ];
        let (updates, _) = resolve(vec![], vec![(7, 0), (7, 1)], &sets);
        assert_eq!(
            updates,
            [Resolved {
                target: 7,
                risk_set: Some(1)
            }]
        );
    }
}
