//! The policy-engine: serves every cluster its view of the update graph.
//!
//! What goes in: the full graph from an upstream graph-builder, or a
//! filtered one from an upstream policy-engine, fetched in the background
//! and revalidated before an answer not computed yet.
//! What comes out: per (channel, arch), the filtered graph as prepared
//! bytes. Start reading at [`service`] (what the engine declares to the
//! service skeleton and how the planes are wired).
//!
//! Three planes, each a module whose parts are private behind the façade
//! its `mod.rs` re-exports (another plane cannot reach past it):
//!
//! - `client`: the public port. Parameters validated at the door, the
//!   upstream's feeds, the filter pipeline ([`filters`]), answers prepared
//!   once per revision; it hands each answered update check to a
//!   `CheckSink` and knows nothing of the operator plane.
//! - `operator`: the status port's operator answers behind tokens: the
//!   fleet recorded from the checks, rollouts under run-time control, the
//!   per-cluster explanation. It reads the client plane (graphs, the
//!   engine's explanation), never the other way round.
//! - `explorer`: the update graph explorer page and the answers it reads.
//!
//! Beside them: `cluster_policy` (per-cluster policy, rollouts read
//! through `rollout_model`, behind one façade), [`settings`] (upstream's
//! names and layout; flags derived by the skeleton), [`status`] (the
//! `/status` document), [`service`] (what the engine declares to the
//! skeleton, and the wiring of the planes), `metrics`, `openapi` and
//! [`allocator`].
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

pub use client::Revision;
pub use client::filters;
pub use client::query;
pub use client::request::UpstreamKind;
pub use cluster_policy::LookupStatus;
pub use service::PolicyEngine;
pub use service_kit::shutdown::StopHandle;
pub use settings::Settings;

/// A bound, not yet running policy-engine.
pub type Application = service_kit::Application<PolicyEngine>;
