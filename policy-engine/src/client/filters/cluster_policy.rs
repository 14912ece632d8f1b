//! `cluster-policy`: applies the request's [`PolicyClass`](crate::cluster_policy::PolicyClass)
//! (see [`crate::cluster_policy::apply`]): the releases it withholds and
//! its own blocked edges.

use cincinnati_core::stage::{Stage, StageSettings};
use cincinnati_core::{ApiError, Graph};
use serde::Deserialize;

use crate::client::request::PolicyRequest;

pub const NAME: &str = "cluster-policy";

/// `[[policy]] name = "cluster-policy"`: no keys; the policy is the
/// `[cluster_policy]` settings'.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterPolicyFilterSettings {}

impl StageSettings<PolicyRequest> for ClusterPolicyFilterSettings {
    const NAME: &'static str = NAME;

    fn build(self) -> Result<Box<dyn Stage<PolicyRequest>>, String> {
        Ok(Box::new(ClusterPolicyFilter))
    }
}

#[derive(Debug)]
struct ClusterPolicyFilter;

impl Stage<PolicyRequest> for ClusterPolicyFilter {
    fn name(&self) -> &'static str {
        NAME
    }

    fn apply(&self, graph: &mut Graph, request: &PolicyRequest) -> Result<(), ApiError> {
        if let Some(class) = request.rules() {
            class.apply(graph, request.arch().as_str());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::client::filters::{arch, catalog};
    use crate::client::query::{ClientQuery, QueryRules};
    use crate::client::request::UpstreamKind;
    use crate::cluster_policy::parse_policy_file;
    use crate::test_graphs::graph;

    const ARM64: &str = r#"{"nodes": [
        {"version": "4.18.1+arm64", "payload": "a", "metadata": {"io.openshift.upgrades.graph.release.arch": "arm64"}},
        {"version": "4.18.2+arm64", "payload": "b", "metadata": {"io.openshift.upgrades.graph.release.arch": "arm64"}}],
      "edges": [[0, 1]]}"#;

    /// A configured `default_arch` reaches every filter: the arch filter
    /// keeps that architecture's releases, and a class's blocked edges
    /// (whose `from` names releases with their architecture, as graph-data
    /// does) are matched with the same one.
    #[test]
    fn blocked_edges_match_the_configured_default_arch() {
        let tables: Vec<toml::Table> = vec![
            toml::from_str("name = \"arch-filter\"\ndefault_arch = \"arm64\"").unwrap(),
            toml::from_str("name = \"cluster-policy\"").unwrap(),
        ];
        let pipeline = catalog().pipeline(&tables).unwrap();
        let rules = QueryRules {
            default_arch: arch::default_arch(&tables).unwrap(),
            ..QueryRules::default()
        };
        let policy = parse_policy_file(
            "policy.yaml",
            "default:\n  blocked_edges:\n    - {to: 4.18.2, from: '^4[.]18[.]1[+]arm64$'}\n",
        )
        .unwrap();
        let policy = Arc::new(policy);
        let rollouts = Arc::new(Vec::new());
        let class = policy.classify(
            (None, rollout_model::Who::default()),
            None,
            &rollouts,
            (
                rollout_model::time::Timestamp::now(),
                rollout_model::time::SignedDuration::from_hours(1),
            ),
        );
        let request = |class| {
            let query = ClientQuery::parse("", &rules).unwrap();
            PolicyRequest::new(query, UpstreamKind::GraphBuilder, class, &rules)
        };

        let unblocked = pipeline.run_on(&graph(ARM64), &request(None)).unwrap();
        assert_eq!(unblocked.release_count(), 2, "arm64's releases kept");
        assert_eq!(unblocked.edges().count(), 1);
        let blocked = pipeline.run_on(&graph(ARM64), &request(Some(class))).unwrap();
        assert_eq!(blocked.edges().count(), 0, "the blocked edge matched with arm64");
    }
}
