//! The service skeleton: what every service is declared on and run by.
//!
//! Start reading at [`service`]: a service declares its settings, metrics,
//! routes and tasks; the skeleton runs it. How answers are made is
//! `http-answers`'; the connections they go out on, `http1-server`'s.
//!
//! - [`service`]: the skeleton (command line, settings, logging, metrics,
//!   servers, status, supervised tasks, shutdown, `--check-config`).
//! - [`settings`]: the settings sections every service shares.
//! - [`schema`]: the keys of a settings type, from its serialised defaults.
//! - [`declaration`]: what a service says about itself.
//! - [`cli`]: flags derived from the settings.
//! - [`secret`]: secrets in settings, never printed.
//! - [`server`]: API servers with one middleware stack.
//! - `cors`: cross-origin answers, actix-cors's with `Vary` made ahead.
//! - [`status`]: the status server (probes, `/metrics`, `/status`, a
//!   service's operator routes), with its bound, its host check and the
//!   service's say over which bodies it reads.
//! - [`hosts`]: the hosts a status server answers for.
//! - [`metrics`]: a prefixed Prometheus registry that records what it holds.
//! - [`build_info`]: the commit a binary was built from.
//! - [`config`]: layered configuration (defaults, TOML, environment, CLI).
//! - [`logging`]: the `tracing` subscriber.
//! - [`telemetry`]: span export (OTLP) and W3C trace context in and out.
//! - [`shutdown`]: the termination signal.
//! - [`supervisor`]: long-running tasks restarted when they die, and
//!   liveness from the periodic ones' rounds.
//! - [`periodic`]: tasks run on a schedule, and the one liveness rule.
//! - [`priority`]: background threads below the ones that answer.
//! - [`freshness`]: when a source last worked and the failure since, and
//!   its `/status` form.
//! - [`timestamp`]: times as the services write them (RFC 3339).
//!
//! This crate never parses or filters a graph.

pub mod build_info;
pub mod cli;
pub mod config;
mod cors;
pub mod declaration;
pub mod freshness;
pub mod hosts;
pub mod logging;
pub mod metrics;
pub mod periodic;
pub mod priority;
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

pub use declaration::{Declaration, Flags, Ignored};
pub use service::{Application, Kit, Service};
pub use status::{BoundServer, StatusServer};

#[doc(hidden)]
pub use git_version as __git_version;
