//! HTTP plumbing the graph-builder and the policy-engine share.
//!
//! - [`prefix`]: the `--service.path_prefix` normalisation.
//! - [`accept`]: `Accept` and `Accept-Encoding` negotiation.
//! - [`prepared`]: bodies computed once, served with ETag, 304, gzip and
//!   `Cache-Control`.
//! - [`identity_cache`]: identity bytes of compressed-only bodies, for the
//!   answers most recently asked for without gzip.
//! - [`connections`]: open connections counted and bounded.
//! - [`errors`]: `ApiError` as a JSON answer, JSON 404 and 405, error counting.
//! - [`routes`]: GET-and-HEAD resources.
//! - [`status`]: the status server (probes, `/metrics`, `/status`).
//! - [`metrics`]: a prefixed Prometheus registry and `build_info`.
//! - [`build_info`]: the commit a binary was built from.
//! - [`config`]: layered configuration (defaults, TOML, environment, CLI).
//! - [`logging`]: the `tracing` subscriber.
//! - [`telemetry`]: span export (OTLP) and W3C trace context in and out.
//! - [`shutdown`]: the termination signal.
//! - [`supervisor`]: long-running tasks restarted when they die, and
//!   liveness from their heartbeats.
//!
//! This crate knows HTTP and nothing of graphs: it never parses or filters one.

pub mod accept;
pub mod build_info;
pub mod config;
pub mod connections;
pub mod errors;
pub mod identity_cache;
pub mod logging;
pub mod metrics;
pub mod prefix;
pub mod prepared;
pub mod routes;
pub mod shutdown;
pub mod status;
pub mod supervisor;
pub mod telemetry;

pub use accept::MediaTypes;
pub use errors::HttpError;
pub use identity_cache::IdentityCache;
pub use prefix::PathPrefix;
pub use prepared::{CachePolicy, PreparedBody};
pub use status::{BoundServer, StatusServer};

#[doc(hidden)]
pub use git_version as __git_version;
