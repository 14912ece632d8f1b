//! The per-client filters, as stages configured by `[[policy]]` tables.
//!
//! They follow upstream's `channel-filter` and `arch-filter` exactly on a
//! graph-builder's graph, and are idempotent on a graph another engine has
//! already filtered (see [`arch`]), so engines chain. `cluster-policy`
//! applies a request's class of the per-cluster policy.

pub mod arch;
pub mod channel;
pub mod cluster_policy;
pub mod version_prune;

use cincinnati_core::stage::Catalog;

use crate::client::request::PolicyRequest;

/// The filters a `[[policy]]` table can name.
pub fn catalog() -> Catalog<PolicyRequest> {
    Catalog::new()
        .register::<channel::ChannelFilterSettings>()
        .register::<arch::ArchFilterSettings>()
        .register::<cluster_policy::ClusterPolicyFilterSettings>()
        .register::<version_prune::VersionPruneSettings>()
}

/// The pipeline when no `[[policy]]` filter is configured, as upstream:
/// channel, then arch; then the cluster policy when one is configured.
pub fn default_tables(cluster_policy: bool) -> Vec<toml::Table> {
    let policy = cluster_policy.then_some(cluster_policy::NAME);
    [channel::NAME, arch::NAME]
        .into_iter()
        .chain(policy)
        .map(|name| toml::Table::from_iter([("name".to_owned(), toml::Value::from(name))]))
        .collect()
}
