//! Reliability scenarios: the services as real processes on `127.0.0.1`,
//! put under faults and load, with the figures each run produces. Each
//! binary is one scenario, run by a script in `scripts/reliability/` (see
//! `docs/reliability.md`); a scenario exits non-zero when a figure misses a
//! target it enforces, so CI runs short versions of them.
//!
//! - [`report`]: the figures of a run, their targets, and the verdict.
//! - [`load`]: constant load from `wrk`, with the smallest graph served.
//! - [`memory`]: a process's resident set size.
//! - [`metrics`]: reading one sample from a Prometheus page.
//! - [`demo`]: a graph-builder on the bundled demo data and engines behind it.
//! - [`faulty_upstream`]: an HTTP server that misbehaves on command.
//! - [`held_bodies`]: clients that announce a request body and hold it.
//! - [`proxies`]: HAProxy and nginx as reverse proxies in front of a service.
//! - [`raw_client`]: idle keep-alive clients and slowloris clients on raw TCP.
//! - [`status`]: reading the services' `/status` documents.
//! - [`tls_upstream`]: an HTTPS upstream whose certificate can turn untrusted.

pub mod demo;
pub mod faulty_upstream;
pub mod held_bodies;
pub mod load;
pub mod memory;
pub mod metrics;
pub mod proxies;
pub mod raw_client;
pub mod report;
pub mod status;
pub mod tls_upstream;
