//! Reliability scenarios: the services as real processes on `127.0.0.1`,
//! put under faults and load, with the figures each run produces. Each
//! binary is one scenario, run by a script in `scripts/reliability/` (see
//! `docs/reliability.md`); a scenario exits non-zero when a figure misses a
//! target it enforces, so CI runs short versions of them.
//!
//! - [`report`]: the figures of a run, their targets, and the verdict.
//! - [`load`]: constant load from `wrk`, with the smallest graph served.
//! - [`memory`]: a process's resident set size.
//! - [`minted`]: cluster ids as an outsider makes them, lowest places mined.
//! - [`metrics`]: reading one sample from a Prometheus page.
//! - [`demo`]: a graph-builder on the bundled demo data and engines behind it.
//! - [`faulty_upstream`]: an HTTP server that misbehaves on command.
//! - [`held_bodies`]: clients that announce a request body and hold it.
//! - [`operator_plane`]: an engine's rollouts, changes and fleet answers,
//!   with a bearer token, and its tasks' rounds.
//! - [`probes`]: `/livez` and `/readyz` asked throughout a run.
//! - [`proxies`]: HAProxy and nginx as reverse proxies in front of a service.
//! - [`raw_client`]: idle keep-alive clients and slowloris clients on raw TCP.
//! - [`seeded_fleet`]: a real fleet's past written to a fleet store.
//! - [`status`]: reading the services' `/status` documents.
//! - [`tls_upstream`]: an HTTPS upstream whose certificate can turn untrusted.
//! - [`tmpfs`]: a small filesystem to fill, under a fleet store.
//! - [`update_checks`]: update checks on a public port, and what answers offer.

pub mod demo;
pub mod faulty_upstream;
pub mod held_bodies;
pub mod load;
pub mod memory;
pub mod metrics;
pub mod minted;
pub mod operator_plane;
pub mod probes;
pub mod proxies;
pub mod raw_client;
pub mod report;
pub mod seeded_fleet;
pub mod status;
pub mod tls_upstream;
pub mod tmpfs;
pub mod update_checks;
