//! Runs a real, throw-away PostgreSQL server for tests: Debian's
//! `postgresql` (install it with `scripts/install-test-deps.sh`; the newest
//! version under `/usr/lib/postgresql`, else `pg_config --bindir`).
//!
//! Tests here use real parts, not mocks: code that stores in PostgreSQL is
//! tested against the server it will meet in production, with its SQL
//! dialect, its types, its transactions and locks, its errors, and its
//! crashes — none of which an imitation would reproduce faithfully.
//!
//! [`PostgresServer::start`] makes a data directory in a temporary directory
//! (`initdb`: trust authentication, superuser `postgres`, UTF-8, C locale),
//! starts `postgres` on a free port on `127.0.0.1` only (its Unix socket in
//! the same temporary directory), waits until it accepts connections and
//! creates a database for [`PostgresServer::url`];
//! [`PostgresServer::create_database`] makes more, for tests sharing one
//! server. Durability settings are traded for speed as far as a test cannot
//! tell: committed data survives the server's death, not the machine's.
//! [`PostgresServer::stop`], [`PostgresServer::kill`] (a crash) and
//! [`PostgresServer::restart`] (same port, same data) are for fault tests.
//!
//! No server outlives its test. Dropping a [`PostgresServer`] stops the
//! server and removes its directory, also when a test panics; if the test
//! process dies instead, even by `SIGKILL`, the kernel stops the server
//! (a parent-death signal; see `process.rs`), and the next server started
//! beside it removes its directory (see `workdir.rs`).
//!
//! Run as root (as CI does), the server runs as the `postgres` system user,
//! since `initdb` and `postgres` refuse root. Linux only: `setpriv` (from
//! util-linux) sets the user and the parent-death signal.

mod binaries;
mod error;
mod process;
mod server;
mod workdir;

pub use error::Error;
pub use server::PostgresServer;
