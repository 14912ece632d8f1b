//! The per-client filters, as stages configured by `[[policy]]` tables
//! (`cluster-policy` lives in [`crate::cluster_policy`]).
//!
//! They follow upstream's `channel-filter` and `arch-filter` exactly on a
//! graph-builder's graph, and are idempotent on a graph another engine has
//! already filtered (see [`arch`]), so engines chain.

pub mod arch;
pub mod channel;
pub mod version_prune;

use cincinnati_core::stage::Catalog;

use crate::cluster_policy::PolicyClass;
use crate::cluster_policy::apply::ClusterPolicyFilterSettings;
use crate::query::{Arch, ClientQuery};
use crate::upstream::UpstreamKind;

/// What every filter sees: the client's query, where the graph came from,
/// and the request's policy class (none without a cluster policy).
#[derive(Debug, Clone)]
pub struct PolicyRequest {
    pub query: ClientQuery,
    pub source: UpstreamKind,
    pub class: Option<PolicyClass>,
    /// Whether answers differ per `version` (`version-prune` runs), so
    /// that the answer cache is keyed by it.
    pub keyed_by_version: bool,
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
        keyed_by_version: bool,
    ) -> Self {
        Self {
            query,
            source,
            class,
            keyed_by_version,
            apply_rules: true,
        }
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

    /// The architecture of the view: the one asked for, amd64 by default
    /// (the arch filter's default).
    pub fn arch(&self) -> &str {
        self.query.arch.as_ref().map_or(arch::DEFAULT_ARCH, Arch::as_str)
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

/// The filters a `[[policy]]` table can name.
pub fn catalog() -> Catalog<PolicyRequest> {
    Catalog::new()
        .register::<channel::ChannelFilterSettings>()
        .register::<arch::ArchFilterSettings>()
        .register::<ClusterPolicyFilterSettings>()
        .register::<version_prune::VersionPruneSettings>()
}

/// The pipeline when no `[[policy]]` filter is configured, as upstream:
/// channel, then arch; then the cluster policy when one is configured.
pub fn default_tables(cluster_policy: bool) -> Vec<toml::Table> {
    let policy = cluster_policy.then_some(crate::cluster_policy::apply::NAME);
    [channel::NAME, arch::NAME]
        .into_iter()
        .chain(policy)
        .map(|name| toml::Table::from_iter([("name".to_owned(), toml::Value::from(name))]))
        .collect()
}

#[cfg(test)]
pub(crate) mod test_graphs {
    use cincinnati_core::{Graph, wire};

    use super::PolicyRequest;
    use crate::query::{ClientQuery, QueryRules};
    use crate::upstream::UpstreamKind;

    pub fn graph(json: &str) -> Graph {
        wire::parse(json.as_bytes()).unwrap().graph
    }

    pub fn serialized(graph: &Graph) -> serde_json::Value {
        serde_json::from_slice(&wire::serialize(graph, None)).unwrap()
    }

    pub fn request(query: &str, source: UpstreamKind) -> PolicyRequest {
        let query = ClientQuery::parse(query, &QueryRules::default()).unwrap();
        PolicyRequest::new(query, source, None, false)
    }
}
