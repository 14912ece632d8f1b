//! The policy-engine: serves every cluster its view of the update graph.
//!
//! What goes in: the full graph from an upstream graph-builder, or a
//! filtered one from an upstream policy-engine, fetched in the background
//! and revalidated before an answer not computed yet.
//! What comes out: per (channel, arch), the filtered graph as prepared
//! bytes. Start reading at [`startup`], then [`engine`].
//!
//! - [`settings`], [`cli`]: configuration (upstream's names and layout).
//! - [`query`]: the client's parameters, validated.
//! - [`filters`]: `channel-filter` and `arch-filter` as stages.
//! - [`upstream`]: fetching, keeping the last good graph, answer caches.
//! - [`engine`]: what the handlers ask; [`routes`]: the HTTP API.
//! - [`metrics`]: upstream's metric names plus staleness and cache metrics.
//!
//! Deliberately not here: HTTP plumbing shared with the graph-builder
//! (`service-kit`), the graph and its JSON (`cincinnati-core`).

pub mod cli;
pub mod engine;
pub mod filters;
pub mod metrics;
pub mod query;
pub mod routes;
pub mod settings;
pub mod startup;
pub mod upstream;

pub use service_kit::shutdown::StopHandle;
pub use settings::Settings;
pub use startup::Application;
