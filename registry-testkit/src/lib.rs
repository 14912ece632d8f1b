//! Runs a real container registry — distribution's `docker-registry` (install
//! it with `scripts/install-test-deps.sh`) — for tests, benchmarks and
//! end-to-end runs.
//!
//! [`LocalRegistry`] binds `127.0.0.1` only, on a free port, stores into a
//! temporary directory, and stops when dropped. Options: plain HTTP (default),
//! HTTP basic auth, token auth (with a token server of its own), TLS with a
//! generated certificate; `stop`/`restart` on the
//! same port and storage for fault tests; and a request log parsed from the
//! registry's access log, to count manifest and blob requests.

mod access_log;
mod config;
mod error;
mod htpasswd;
mod options;
mod process;
mod registry;
mod setup;
mod tls;
mod token_server;

pub use access_log::{LoggedRequest, RequestKind};
pub use error::Error;
pub use options::{CertificateShape, Credentials, RegistryOptions};
pub use registry::LocalRegistry;
