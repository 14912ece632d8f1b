//! End-to-end tests: the registry, the graph-builder and two chained
//! policy-engines as real processes (see the `e2e` crate and docs/e2e.md).
//! One test binary, so the suite links once.

mod build_info;
mod cluster_policy;
mod explorer;
mod fleet;
mod freshness;
mod front_door;
mod interop;
mod phased;
mod registry_faults;
mod rollout_control;
mod served_graph;
mod service_faults;
mod signatures;
