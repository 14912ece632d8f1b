//! The graph-builder: discovers releases (a registry scrape, or offline
//! files), applies OpenShift graph-data, and serves the update graph.
//!
//! Start reading at [`app::Application::build`]: it turns settings into a
//! [`plan::Plan`] (sources and stages), starts the [`refresh`] tasks, and
//! binds the [`server`]s.

pub mod app;
pub mod assemble;
pub mod build;
pub mod cli;
pub mod metrics;
pub mod packed;
pub mod plan;
pub mod refresh;
pub mod scrape;
pub mod scraped;
pub mod secret;
pub mod server;
pub mod settings;
pub mod sources;
pub mod state;

pub use app::Application;

/// What the graph-builder's requests say they are (registries log it).
pub const USER_AGENT: &str = concat!("cincinnati-rs-graph-builder/", env!("CARGO_PKG_VERSION"));
