//! What a [`PolicyClass`] does to a view: the releases it withholds taken
//! out of the graph, then its own blocked edges applied (see
//! [`super::edges`]). A withheld release stays a node (a cluster running it
//! still finds itself); the updates into it, recommended and conditional, go.
//! (A class's scoped channels shape the view earlier, in the channel
//! filter; the `cluster-policy` filter that applies a request's class is
//! `crate::client::filters::cluster_policy`.)

use std::collections::HashSet;

use cincinnati_core::release::{keys, same_release, without_build};
use cincinnati_core::{Graph, Release, Version};
use rollout_model::time::Timestamp;
use serde::Serialize;

use cincinnati_client::cluster_policy::EdgeChange;

use super::edges;
use super::policy::PolicyClass;

/// Why a release is not offered to a class.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "rule", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Withholding {
    /// Built less than `deferral_days` ago (as of the class's time bucket).
    Deferral { deferral_days: u32, created: String },
    /// Above the group's pin.
    MaxVersion { max_version: String },
    /// The target of a rollout the cluster is not inside yet.
    Rollout { rollout: usize },
}

/// A release withheld, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Withheld {
    pub release: String,
    #[serde(flatten)]
    pub why: Withholding,
}

/// What a class did to a view.
#[derive(Debug, Default)]
pub struct Applied {
    /// The releases withheld, with the first rule that withholds each.
    pub withheld: Vec<Withheld>,
    /// What the class's blocked edges did.
    pub edges: Vec<EdgeChange>,
}

impl PolicyClass {
    /// Applies the class to `graph`, a view of `arch`: the updates into
    /// every release it withholds removed, then its blocked edges applied.
    pub fn apply(&self, graph: &mut Graph, arch: &str) -> Applied {
        let withheld = self.withhold(graph);
        let edges = edges::apply(graph, &self.edge_rules(), arch);
        Applied { withheld, edges }
    }

    /// Removes the updates into every release this class withholds; returns
    /// those releases with the first rule that withholds each.
    fn withhold(&self, graph: &mut Graph) -> Vec<Withheld> {
        let mut withheld: Vec<_> = graph
            .releases()
            .filter_map(|(id, release)| Some((id, release.version.clone(), self.withholding(release)?)))
            .collect();
        withheld.sort_by(|a, b| a.1.cmp(&b.1));
        let into_withheld: HashSet<&Version> = withheld.iter().map(|(_, version, _)| version).collect();
        let withheld_ids: HashSet<_> = withheld.iter().map(|(id, _, _)| *id).collect();
        let edges: Vec<_> = graph
            .edges()
            .filter(|(_, to)| withheld_ids.contains(to))
            .collect();
        graph.remove_edges(edges);
        graph.retain_conditional_edges(|edge| !into_withheld.contains(&*edge.to));
        withheld
            .into_iter()
            .map(|(_, version, why)| Withheld {
                release: version.to_string(),
                why,
            })
            .collect()
    }

    fn withholding(&self, release: &Release) -> Option<Withholding> {
        let rules = &self.groups.rules;
        if let Some(max_version) = &rules.max_version
            && without_build(&release.version) > *max_version
        {
            return Some(Withholding::MaxVersion {
                max_version: max_version.to_string(),
            });
        }
        if let Some((rollout, _)) = self
            .withheld_rollouts()
            .find(|(_, rollout)| same_release(&rollout.declaration().target, &release.version))
        {
            return Some(Withholding::Rollout { rollout });
        }
        let cutoff = self.deferral_cutoff?;
        let created = release.metadata.get(keys::CREATED)?;
        // A creation time that does not parse says nothing: not deferred.
        let built: Timestamp = created.parse().ok()?;
        (built > cutoff).then(|| Withholding::Deferral {
            deferral_days: rules.deferral_days,
            created: created.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};
    use std::sync::Arc;

    use rollout_model::declaration::{Origin, Schedule};
    use rollout_model::time::SignedDuration;
    use rollout_model::{ClusterId, Declaration, Knowledge, Who};

    use super::*;
    use crate::cluster_policy::policy::{Policy, Rules};
    use crate::test_graphs::{graph, serialized};

    const GRAPH: &str = r#"{
      "nodes": [
        {"version": "4.18.1", "payload": "p1", "metadata": {"io.openshift.upgrades.graph.release.created": "2026-01-01T00:00:00Z"}},
        {"version": "4.18.2", "payload": "p2", "metadata": {"io.openshift.upgrades.graph.release.created": "2026-01-10T00:00:00Z"}},
        {"version": "4.18.3", "payload": "p3", "metadata": {"io.openshift.upgrades.graph.release.created": "2026-01-20T00:00:00Z"}},
        {"version": "4.18.4", "payload": "p4", "metadata": {}}
      ],
      "edges": [[0, 1], [0, 2], [1, 2]],
      "conditionalEdges": [
        {"edges": [{"from": "4.18.1", "to": "4.18.4"}, {"from": "4.18.2", "to": "4.18.3"}],
         "risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "Always"}]}]}
      ]
    }"#;

    fn class(rules: Rules, rollouts: Vec<Declaration>, now: &str) -> PolicyClass {
        let id = ClusterId::parse("00000000-0000-0000-0000-000000000000").unwrap();
        let policy = Arc::new(Policy::new(
            Rules::default(),
            BTreeMap::from([("g".to_owned(), rules)]),
            HashMap::from([(id, vec!["g".to_owned()])]),
            rollouts,
        ));
        let rollouts = Arc::new(Knowledge::Declared.rollouts(policy.declarations()));
        let who = Who {
            place: Some(id.place()),
            lot: None,
        };
        policy.classify(
            (Some(&id), who),
            None,
            &rollouts,
            (now.parse().unwrap(), SignedDuration::from_hours(1)),
        )
    }

    fn updates(graph: &Graph) -> serde_json::Value {
        let json = serialized(graph);
        serde_json::json!({"edges": json["edges"], "conditionalEdges": json["conditionalEdges"]})
    }

    #[test]
    fn deferral_withholds_releases_built_too_recently() {
        let class = class(
            Rules {
                deferral_days: 14,
                max_version: None,
            },
            Vec::new(),
            "2026-01-25T12:30:00Z",
        );
        let mut graph = graph(GRAPH);
        let withheld = class.apply(&mut graph, "amd64").withheld;
        // 4.18.3 is 5 days old; 4.18.4 has no creation time and is not deferred.
        assert_eq!(
            withheld,
            [Withheld {
                release: "4.18.3".to_owned(),
                why: Withholding::Deferral {
                    deferral_days: 14,
                    created: "2026-01-20T00:00:00Z".to_owned()
                }
            }]
        );
        assert_eq!(
            updates(&graph),
            serde_json::json!({"edges": [[0, 1]], "conditionalEdges": [
                {"edges": [{"from": "4.18.1", "to": "4.18.4"}],
                 "risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "Always"}]}]}]})
        );
        assert_eq!(graph.release_count(), 4, "withheld releases stay nodes");
    }

    #[test]
    fn a_pin_and_a_rollout_withhold_their_releases() {
        let rollout = Declaration::new(
            Version::new(4, 18, 2),
            Origin::PolicyFile { line: 1 },
            Schedule {
                start: "2096-10-02T07:06:40Z".parse().unwrap(),
                duration: SignedDuration::from_hours(1),
                starting_percentage: 0.0,
            },
        );
        let class = class(
            Rules {
                deferral_days: 0,
                max_version: Some(Version::new(4, 18, 3)),
            },
            vec![rollout],
            "2026-01-25T00:00:00Z",
        );
        let mut graph = graph(GRAPH);
        let withheld = class.apply(&mut graph, "amd64").withheld;
        let reasons: Vec<_> = withheld.iter().map(|w| (w.release.as_str(), &w.why)).collect();
        assert_eq!(
            reasons,
            [
                ("4.18.2", &Withholding::Rollout { rollout: 0 }),
                (
                    "4.18.4",
                    &Withholding::MaxVersion {
                        max_version: "4.18.3".to_owned()
                    }
                ),
            ]
        );
        assert_eq!(
            updates(&graph),
            serde_json::json!({"edges": [[0, 2], [1, 2]], "conditionalEdges": [
                {"edges": [{"from": "4.18.2", "to": "4.18.3"}],
                 "risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "Always"}]}]}]})
        );
    }
}
