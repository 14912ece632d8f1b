//! The policy-engine: serves every cluster its view of the update graph.
//!
//! What goes in: the full graph from an upstream graph-builder, or a
//! filtered one from an upstream policy-engine, fetched in the background
//! and revalidated before an answer not computed yet.
//! What comes out: per (channel, arch), the filtered graph as prepared
//! bytes. Start reading at [`service`] (what the engine declares to the
//! service skeleton), then [`engine`].
//!
//! From the bottom up (each module uses only those above it in this list):
//!
//! - [`query`]: the client's parameters, validated; [`metrics`].
//! - [`cluster_policy`]: per-cluster policy (groups, deferral, pins,
//!   rollouts, scoped channels), behind one façade.
//! - [`request`]: the request a filter sees.
//! - [`filters`]: the `[[policy]]` stages (channel, arch, cluster-policy,
//!   version-prune).
//! - [`answers`]: the answers computed from a revision, and their cache.
//! - [`upstream`]: fetching, the feeds, keeping the last good graph.
//! - [`fleet`]: the fleet view, recorded from the update checks (with
//!   `fleet.store`), behind one façade.
//! - [`control`]: rollouts under run-time control (pause, resume, hold),
//!   audited and shared through the fleet store.
//! - [`engine`]: what the handlers ask, composed of the above; [`status`]:
//!   its `/status` document.
//! - [`routes`]: the HTTP API; [`explorer`]; [`settings`]: configuration
//!   (upstream's names and layout; the flags are derived from it by the
//!   skeleton); [`service`]: what the engine declares to the skeleton.
//! - [`explorer`]: the update graph explorer page and the answers it reads.
//! - [`metrics`]: upstream's metric names plus staleness and cache metrics.
//! - [`allocator`]: the allocator settings the binary applies to itself.
//!
//! Deliberately not here: HTTP plumbing shared with the graph-builder
//! (`service-kit`), the graph and its JSON (`cincinnati-core`).

pub mod allocator;
mod client;
mod cluster_policy;
mod explorer;
mod metrics;
mod openapi;
mod operator;
pub mod service;
pub mod settings;
pub mod status;
#[cfg(test)]
mod test_graphs;

pub use client::filters;
pub use client::query;
pub use client::request::UpstreamKind;
pub use client::upstream::revision::Revision;
pub use cluster_policy::lookup::LookupStatus;
pub use service::PolicyEngine;
pub use service_kit::shutdown::StopHandle;
pub use settings::Settings;

/// A bound, not yet running policy-engine.
pub type Application = service_kit::Application<PolicyEngine>;
