//! The request a filter sees: the client's query, where the graph came
//! from, and the request's policy class. It depends on nothing above it
//! (the query and the classes of the per-cluster policy), so filters,
//! answer caches and the engine all build on it.

use serde::{Deserialize, Serialize};

use crate::client::phased::Phase;
use crate::client::query::{Arch, ClientQuery, QueryRules};
use crate::cluster_policy::PolicyClass;

/// What serves the graph this engine filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpstreamKind {
    /// Serves the full graph to a request without parameters; versions carry
    /// `+arch` and nodes the arch key. One fetch serves every client.
    GraphBuilder,
    /// Serves one channel and arch per request, already filtered. Fetched
    /// once per forwarded parameter set.
    PolicyEngine,
}

/// What every filter sees: the client's query, where the graph came from,
/// the request's policy class (none without a cluster policy) and where it
/// stands in its channel's phased rollouts (none when nothing phases in it
/// here).
#[derive(Debug, Clone)]
pub struct PolicyRequest {
    pub query: ClientQuery,
    pub source: UpstreamKind,
    pub class: Option<PolicyClass>,
    /// Set once the revision answering the request is known: the phase
    /// depends on its graph.
    pub phase: Option<Phase>,
    /// The release (a version without build metadata) `version-prune`
    /// prunes the answer to and the answer cache is keyed by: set once the
    /// revision answering the request is known, only for a release its
    /// graph has.
    pub version_key: Option<String>,
    /// The architecture of a request without `arch`.
    default_arch: Arch,
    /// Whether the class's rules (withholding, blocked edges) apply: not
    /// when explaining what they do (its scoped channels shape the view
    /// either way).
    apply_rules: bool,
}

impl PolicyRequest {
    pub fn new(
        query: ClientQuery,
        source: UpstreamKind,
        class: Option<PolicyClass>,
        rules: &QueryRules,
    ) -> Self {
        Self {
            query,
            source,
            class,
            phase: None,
            version_key: None,
            default_arch: rules.default_arch.clone(),
            apply_rules: true,
        }
    }

    /// A request for `query` (a query string) with the default rules, for
    /// unit tests.
    #[cfg(test)]
    pub(crate) fn for_test(query: &str, source: UpstreamKind) -> Self {
        let rules = QueryRules::default();
        Self::new(ClientQuery::parse(query, &rules).unwrap(), source, None, &rules)
    }

    /// This request with its class's rules left out: the view its class
    /// sees before they apply.
    pub fn without_rules(mut self) -> Self {
        self.apply_rules = false;
        self
    }

    /// The class whose rules apply to this request, if any.
    pub fn rules(&self) -> Option<&PolicyClass> {
        self.class.as_ref().filter(|_| self.apply_rules)
    }

    /// The architecture of the view: the one asked for, or the configured
    /// default (the arch filter's `default_arch`), for every filter alike.
    pub fn arch(&self) -> &Arch {
        self.query.arch.as_ref().unwrap_or(&self.default_arch)
    }

    /// The channels whose releases make this request's view: the channel
    /// asked for as the request's policy class sees it (see
    /// [`PolicyClass::view_channels`]: none, for a scoped channel the class
    /// may not see; more, for the scoped channels it joins); `None` when no
    /// channel is asked for.
    pub fn view_channels(&self) -> Option<Vec<&str>> {
        let requested = self.query.channel.as_ref()?.as_str();
        Some(match &self.class {
            Some(class) => class.view_channels(requested),
            None => vec![requested],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(query: &str, default_arch: &str) -> PolicyRequest {
        let rules = QueryRules {
            default_arch: Arch::parse(default_arch).unwrap(),
            ..QueryRules::default()
        };
        let query = ClientQuery::parse(query, &rules).unwrap();
        PolicyRequest::new(query, UpstreamKind::GraphBuilder, None, &rules)
    }

    #[test]
    fn the_arch_is_the_one_asked_for_or_the_configured_default() {
        assert_eq!(request("channel=a&arch=arm64", "s390x").arch().as_str(), "arm64");
        assert_eq!(request("channel=a", "s390x").arch().as_str(), "s390x");
        assert_eq!(
            request("channel=a", crate::client::query::DEFAULT_ARCH)
                .arch()
                .as_str(),
            "amd64"
        );
    }

    #[test]
    fn without_a_class_the_view_is_the_channel_asked_for() {
        assert_eq!(
            request("channel=fast-4.1", "amd64").view_channels(),
            Some(vec!["fast-4.1"])
        );
        assert_eq!(request("arch=amd64", "amd64").view_channels(), None);
        let request = request("channel=fast-4.1", "amd64").without_rules();
        assert!(request.rules().is_none());
    }
}
