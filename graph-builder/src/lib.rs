//! The graph-builder: discovers releases (a registry scrape, or offline
//! files), applies OpenShift graph-data, and serves the update graph.
//!
//! Start reading at [`service`]: what the graph-builder declares to the
//! service skeleton. It turns [`settings`] into a [`plan::Plan`] (sources,
//! stages from the [`plugins`] catalogue, a [`schedule`]), starts the
//! [`refresh`] tasks, and serves the [`server`] routes.
//!
//! The modules are public for the integration tests, `e2e` and
//! `benchmarks`, which drive single parts against real servers; the ones
//! nothing outside uses are private.

pub mod assemble;
pub mod found;
pub mod metrics;
mod packed;
pub mod pipeline;
pub mod plan;
pub mod plugins;
pub mod refresh;
pub mod schedule;
pub mod scrape;
mod server;
pub mod service;
pub mod settings;
pub mod sources;
pub mod state;

pub use service::GraphBuilder;
pub use service_kit::shutdown::StopHandle;

/// A bound, not yet running graph-builder.
pub type Application = service_kit::Application<GraphBuilder>;

/// What the graph-builder's requests say they are (registries log it).
pub const USER_AGENT: &str = concat!("cincinnati-rs-graph-builder/", env!("CARGO_PKG_VERSION"));
