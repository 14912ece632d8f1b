//! The end-to-end harness: the whole system as real processes on
//! `127.0.0.1`, fed from a real registry, and the graphs a client should
//! see, worked out from what the test pushed.
//!
//! ```text
//! docker-registry ──► graph-builder ──► policy-engine A ──► policy-engine B ──► test (as a cluster)
//!  releases, graph-data     (full graph)      (central)           (in-cluster)
//! ```
//!
//! - [`scenario`]: what a test publishes — release images ([`releases`]) and
//!   graph-data ([`graph_data`]) — and the standard set most tests start from.
//! - [`expected`]: the graph one client (channel, arch) should get, computed
//!   from the published data by the rules of the compatibility contract.
//! - [`browser`]: a headless Chromium over WebDriver, for the explorer page.
//! - [`fleet`]: engines recording update checks in a fleet store, their
//!   fleet answers, and the test's own count of what the clusters said.
//! - [`client_graph`]: that graph's shape, also read from what a service
//!   answered, and a cluster's updates from it.
//! - [`stack`]: starts the registry and the three services, talks to them,
//!   and keeps the logs of a failed test.
//! - [`graph_builder`], [`policy_engine`], [`metadata_helper`]: each
//!   service's configuration file, written as an operator would, and its
//!   process.
//! - [`offline`]: the services without a registry, on a release file and a
//!   graph-data directory (the bundled demo's), for tests of their clients.
//! - [`process`]: one service binary as a child process (killed on drop).
//! - [`poll`]: waiting for a condition with a deadline, never a bare sleep.
//! - [`static_server`]: a loopback HTTP server answering one fixed body, to
//!   stand in for an upstream graph-builder.
//! - [`workdir`]: configurations and logs, kept when a test fails.

pub mod browser;
pub mod client_graph;
pub mod expected;
pub mod fleet;
pub mod graph_builder;
pub mod graph_data;
pub mod http;
pub mod metadata_helper;
pub mod offline;
pub mod policy_engine;
pub mod poll;
pub mod process;
pub mod releases;
pub mod scenario;
pub mod stack;
pub mod static_server;
pub mod workdir;

mod binaries;
