//! The service skeleton and the HTTP plumbing every service shares.
//!
//! Start reading at [`service`]: a service declares its settings, metrics,
//! routes and tasks; the skeleton runs it.
//!
//! - [`service`]: the skeleton (command line, settings, logging, metrics,
//!   servers, status, supervised tasks, shutdown, `--check-config`).
//! - [`settings`]: the settings sections every service shares.
//! - [`schema`]: the keys of a settings type, from its serialised defaults.
//! - [`cli`]: flags derived from the settings.
//! - [`secret`]: secrets in settings, never printed.
//! - [`server`]: API servers with one middleware stack.
//! - [`query`]: query strings and mandatory parameters.
//! - [`prefix`]: the `--service.path_prefix` normalisation.
//! - [`accept`]: `Accept` and `Accept-Encoding` negotiation.
//! - [`prepared`]: bodies computed once, served with ETag, 304, gzip and
//!   `Cache-Control`.
//! - [`identity_cache`]: identity bytes of compressed-only bodies, for the
//!   answers most recently asked for without gzip.
//! - [`errors`]: `ApiError` as a JSON answer, JSON 404 and 405, error counting.
//! - [`routes`]: GET-and-HEAD resources.
//! - [`status`]: the status server (probes, `/metrics`, `/status`).
//! - [`metrics`]: a prefixed Prometheus registry that records what it holds.
//! - [`build_info`]: the commit a binary was built from.
//! - [`config`]: layered configuration (defaults, TOML, environment, CLI).
//! - [`logging`]: the `tracing` subscriber.
//! - [`telemetry`]: span export (OTLP) and W3C trace context in and out.
//! - [`shutdown`]: the termination signal.
//! - [`supervisor`]: long-running tasks restarted when they die, and
//!   liveness from their heartbeats.
//! - [`timestamp`]: times as the services write them (RFC 3339).
//!
//! This crate knows HTTP and nothing of graphs: it never parses or filters one.

pub mod accept;
pub mod build_info;
pub mod cli;
pub mod config;
pub mod errors;
pub mod identity_cache;
pub mod logging;
pub mod metrics;
pub mod prefix;
pub mod prepared;
pub mod query;
pub mod routes;
pub mod schema;
pub mod secret;
pub mod server;
pub mod service;
pub mod settings;
pub mod shutdown;
pub mod status;
pub mod supervisor;
pub mod telemetry;
pub mod timestamp;

pub use accept::MediaTypes;
pub use errors::HttpError;
pub use identity_cache::IdentityCache;
pub use prefix::PathPrefix;
pub use prepared::{CachePolicy, PreparedBody};
pub use service::{Application, Declaration, Ignored, Kit, Service};
pub use status::{BoundServer, StatusServer};

#[doc(hidden)]
pub use git_version as __git_version;
