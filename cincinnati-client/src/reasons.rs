//! Why an update is what it is, in the order that decides: the cluster's
//! per-cluster policy first (a policy-engine applies it last, to the graph
//! graph-data made, so when it withholds a release nothing else matters
//! for that cluster), then graph-data's declarations (a block removes the
//! update, a risk makes it conditional), then the release metadata the
//! graph-builder wrote from them (`previous.remove_regex`).
//!
//! [`PolicyFacts`](crate::policy_facts::PolicyFacts) is what the engine's
//! explanation of one cluster
//! ([`ClusterPolicy`](crate::cluster_policy::ClusterPolicy)) says about one
//! update; [`Explanation::reasons`] lists
//! every layer's reasons, each once, with its details and where it is
//! written.

use crate::explain::{DeclarationKind, Explanation, Verdict};
use crate::policy_facts::schedule;

/// What decides, first first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// The engine's per-cluster policy (with a cluster id).
    ClusterPolicy,
    /// Graph-data's blocked-edges files (with the graph-data read).
    GraphData,
    /// What the graph's releases say (`previous.remove_regex`).
    ReleaseMetadata,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::ClusterPolicy => "clusterPolicy",
            Layer::GraphData => "graphData",
            Layer::ReleaseMetadata => "releaseMetadata",
        }
    }
}

/// One reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub layer: Layer,
    /// What it is, for scripts: `rollout`, `deferral`, `maxVersion`,
    /// `blockedEdge`, `policyRule`, `policyRisk`, `insideRollout`,
    /// `phasedRollout`, `unchanged` (cluster policy); `block`, `risk`, `nothing`, `notRead`
    /// (graph-data); `removeRegex`, `nothing` (release metadata).
    pub kind: &'static str,
    /// Whether this reason makes the verdict what it is (the update
    /// missing, or conditional).
    pub decides: bool,
    /// The reason in one sentence.
    pub sentence: String,
    /// What backs it, a line each (a block's reasons, a risk's message and
    /// URL, a rollout's schedule).
    pub details: Vec<String>,
    /// Where it is written: a graph-data file, or none for the policy file
    /// (the engine names lines only).
    pub file: Option<String>,
    pub line: Option<u64>,
}

impl Explanation<'_, '_> {
    /// Every reason, in the order that decides: the cluster's policy, then
    /// graph-data, then release metadata; each once.
    pub fn reasons(&self) -> Vec<Reason> {
        let mut reasons = Vec::new();
        self.policy_reasons(&mut reasons);
        let decided = reasons.iter().any(|reason| reason.decides);
        self.graph_data_reasons(&mut reasons, decided);
        let decided = reasons.iter().any(|reason| reason.decides);
        self.metadata_reasons(&mut reasons, decided);
        // When the policy withholds an update the graph without it has,
        // graph-data and metadata did not remove it: saying they say
        // nothing would only be noise.
        let withheld_by_policy = self.policy.as_ref().is_some_and(|policy| {
            let phased_later = policy.phased.as_ref().is_some_and(|offer| !offer.offered);
            (policy.rule.is_some() && policy.in_graph_without_policy == Some(true))
                || (phased_later && self.is_missing())
        });
        if withheld_by_policy {
            reasons.retain(|reason| !matches!(reason.kind, "notRead" | "nothing"));
        }
        reasons
    }

    fn is_missing(&self) -> bool {
        matches!(self.verdict, Verdict::NoUpdate { .. })
    }

    fn conditional_on(&self, name: &str) -> bool {
        matches!(self.verdict, Verdict::Conditional { risks } if risks.iter().any(|risk| risk.name == name))
    }

    fn policy_reasons(&self, reasons: &mut Vec<Reason>) {
        let Some(policy) = &self.policy else {
            return;
        };
        let (from, to) = (&self.from.version, &self.to.version);
        let reason = |kind, decides, sentence, details, line: Option<u64>| Reason {
            layer: Layer::ClusterPolicy,
            kind,
            decides,
            sentence,
            details,
            file: line.and(policy.file.clone()),
            line,
        };
        if let Some(rule) = &policy.rule {
            reasons.push(reason(
                rule.kind(),
                self.is_missing(),
                format!(
                    "{to} is withheld from this cluster: {}",
                    rule.sentence(policy, to)
                ),
                rule.details(policy),
                rule.line(policy),
            ));
        }
        for change in &policy.risks {
            let name = change.risk.as_deref().unwrap_or_default();
            reasons.push(reason(
                "policyRisk",
                self.conditional_on(name),
                format!("risk {name} on {from} → {to} is this cluster's groups' own (a blocked edge of the policy file)"),
                Vec::new(),
                Some(change.line),
            ));
        }
        if policy.rule.is_none()
            && let Some(rollout) = policy.rollout.as_ref().filter(|rollout| rollout.offered)
        {
            reasons.push(reason(
                "insideRollout",
                false,
                format!(
                    "this cluster is inside the phased rollout of {to}: {}; the rollout is {}",
                    policy.place(),
                    rollout.rollout.said
                ),
                schedule(rollout),
                rollout.rollout.line,
            ));
        }
        if let Some(offer) = &policy.phased {
            // graph-data's rollout, which the engine phases per cluster: it
            // decides when nothing in the policy file withholds the target.
            reasons.push(reason(
                "phasedRollout",
                self.is_missing() && !offer.offered && policy.rule.is_none(),
                format!("{from} → {to} is {}", offer.said()),
                vec![format!(
                    "the window of the rollout: from {} to {}, a cluster offered it at its place of the way through ({})",
                    offer.start,
                    offer.end,
                    policy.place()
                )],
                None,
            ));
        }
        if policy.rule.is_none()
            && policy.risks.is_empty()
            && policy.rollout.is_none()
            && policy.phased.is_none()
        {
            let sentence = match policy.in_graph_without_policy {
                Some(false) => format!(
                    "this cluster's policy does not decide: the graph without it has no update {from} → {to} either"
                ),
                _ => format!("this cluster's policy neither withholds {to} nor changes {from} → {to}"),
            };
            reasons.push(reason("unchanged", false, sentence, Vec::new(), None));
        }
    }

    fn graph_data_reasons(&self, reasons: &mut Vec<Reason>, decided: bool) {
        let (from, to) = (&self.from.version, &self.to.version);
        let reason = |kind, decides, sentence, details| Reason {
            layer: Layer::GraphData,
            kind,
            decides,
            sentence,
            details,
            file: None,
            line: None,
        };
        if !self.graph_data_read {
            if self.is_missing() || matches!(self.verdict, Verdict::Conditional { .. }) {
                reasons.push(reason(
                    "notRead",
                    false,
                    "not read: the graph-data the graph was built with names the file of a block or a risk"
                        .to_owned(),
                    Vec::new(),
                ));
            }
            return;
        }
        for declaration in &self.declarations {
            let fixed = declaration
                .fixed_in
                .as_ref()
                .map(|release| format!("fixed in {release} (fixedIn)"));
            let (kind, decides, sentence, mut details) = match declaration.kind {
                DeclarationKind::Block { .. } => (
                    "block",
                    self.is_missing() && !decided,
                    format!(
                        "blocks updates to {to} from releases matching `{}`",
                        declaration.from
                    ),
                    declaration.reasons.clone(),
                ),
                // A risk of the verdict is shown with it: not twice.
                DeclarationKind::Risk(risk) => (
                    "risk",
                    self.conditional_on(&risk.name),
                    format!(
                        "risk {} on updates to {to} from releases matching `{}`",
                        risk.name, declaration.from
                    ),
                    if self.conditional_on(&risk.name) {
                        Vec::new()
                    } else {
                        vec![risk.message.clone(), risk.url.clone()]
                    },
                ),
            };
            details.extend(fixed);
            reasons.push(Reason {
                file: Some(declaration.file.to_owned()),
                line: Some(declaration.line),
                ..reason(kind, decides, sentence, details)
            });
        }
        if self.declarations.is_empty() {
            reasons.push(reason(
                "nothing",
                false,
                format!("no blocked edge or risk names {from} → {to}"),
                Vec::new(),
            ));
        }
    }

    fn metadata_reasons(&self, reasons: &mut Vec<Reason>, decided: bool) {
        let Verdict::NoUpdate { removed_by } = &self.verdict else {
            return;
        };
        let (from, to) = (&self.from.version, &self.to.version);
        let (kind, decides, sentence) = match removed_by {
            Some(pattern) => (
                "removeRegex",
                !decided,
                format!(
                    "{to} removes updates from releases matching `{pattern}` \
                     (previous.remove_regex, which the graph-builder writes from graph-data's blocked edges)"
                ),
            ),
            None => (
                "nothing",
                false,
                format!("{to} names no removal of updates from {from}"),
            ),
        };
        reasons.push(Reason {
            layer: Layer::ReleaseMetadata,
            kind,
            decides,
            sentence,
            details: Vec::new(),
            file: None,
            line: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use cincinnati_core::Version;
    use serde_json::Value;

    use crate::cluster_policy::ClusterPolicy;
    use crate::policy_facts::{PolicyFacts, PolicyRule};

    fn policy(json: Value) -> ClusterPolicy {
        serde_json::from_value(json).unwrap()
    }

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    fn outside_the_rollout() -> ClusterPolicy {
        policy(serde_json::json!({
            "id": "c0ffee00-0001-4a11-8b22-0123456789ab", "placePercent": 71.3, "groups": [],
            "rules": {"deferral_days": 0, "max_version": null},
            "rollouts": [{"target": "4.18.52", "line": 27, "start": "2026-01-01T00:00:00Z",
                          "complete": "2035-12-30T00:00:00Z", "startingPercentage": 50.0,
                          "state": "on-schedule", "said": "on schedule at 54.5%, complete at 2035-12-30T00:00:00Z",
                          "progress": 54.49, "scheduledProgress": 54.49, "declaredProgress": 54.49,
                          "officeHours": "mon-fri 09:00-17:00 Europe/Berlin",
                          "offered": false, "insideFrom": "2030-04-05T06:07:08Z"}],
            "withheld": [{"release": "4.18.52", "rule": "rollout", "rollout": 0}],
            "updates": {"from": "4.18.51", "offered": ["4.18.50"],
                        "removed": [{"release": "4.18.52", "rule": "rollout", "rollout": 0},
                                    {"release": "4.18.53", "rule": "futureRule", "why": "later"}]}
        }))
    }

    #[test]
    fn a_rollout_says_where_it_is_and_when_the_cluster_is_inside() {
        let facts = PolicyFacts::of(&outside_the_rollout(), &v("4.18.51"), &v("4.18.52"));
        assert_eq!(facts.rule, Some(PolicyRule::Rollout));
        assert_eq!(facts.in_graph_without_policy, Some(true));
        assert_eq!(
            facts.rule.as_ref().unwrap().sentence(&facts, &v("4.18.52")),
            "the phased rollout of 4.18.52 does not offer it to this cluster yet (its place is 71.30%; \
             at its schedule it is inside from 2030-04-05T06:07:08Z): on schedule at 54.5%, complete at \
             2035-12-30T00:00:00Z"
        );
        assert_eq!(
            PolicyRule::Rollout.details(&facts),
            [
                "the rollout of 4.18.52: 50% of clusters from 2026-01-01T00:00:00Z, rising evenly to all of them on 2035-12-30T00:00:00Z",
                "it newly offers only within office hours, mon-fri 09:00-17:00 Europe/Berlin",
            ]
        );
        assert_eq!(PolicyRule::Rollout.line(&facts), Some(27));
    }

    #[test]
    fn a_rule_this_client_does_not_know_is_named_with_its_details() {
        let explained = outside_the_rollout();
        let unknown = PolicyFacts::of(&explained, &v("4.18.51"), &v("4.18.53"));
        assert_eq!(
            unknown.rule,
            Some(PolicyRule::Other {
                rule: "futureRule".into(),
                details: "why later".into()
            })
        );
        let offered = PolicyFacts::of(&explained, &v("4.18.51"), &v("4.18.50"));
        assert_eq!(
            (offered.rule, offered.in_graph_without_policy),
            (None, Some(true))
        );
    }

    #[test]
    fn a_deferral_says_when_the_release_is_offered() {
        let rule = PolicyRule::Deferral {
            deferral_days: Some(14),
            created: Some("2026-11-20T00:00:00Z".into()),
        };
        let facts = PolicyFacts::of(&outside_the_rollout(), &v("4.18.51"), &v("4.18.50"));
        assert_eq!(
            rule.details(&facts),
            [
                "its image was built 2026-11-20T00:00:00Z",
                "offered once 14 days old: from 2026-12-04T00:00:00Z (at most a deferral bucket later)"
            ]
        );
    }
}
