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
//!
//! [`FileServer`] is the rest of what the services fetch over HTTP(S) in
//! tests: fixed bodies by path (signature stores, graph-data tarballs), plain
//! or with TLS, with its own request log.
//!
//! [`poll`] is how every test waits for a state: until a probe succeeds or a
//! generous deadline passes.

mod access_log;
mod config;
mod error;
mod file_server;
mod htpasswd;
mod options;
pub mod poll;
mod process;
mod registry;
mod setup;
mod tls;
mod token_server;

pub use access_log::{LoggedRequest, RequestKind};
pub use error::Error;
pub use file_server::{Body, FileServer, ServedRequest};
pub use options::{CertificateShape, Credentials, RegistryOptions};
pub use registry::LocalRegistry;
