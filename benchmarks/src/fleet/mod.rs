//! The fleet benchmark (issue 29; `scripts/bench-fleet.sh`, figures in
//! `docs/benchmarks-fleet.md`): a synthetic fleet of clusters ([`model`])
//! loaded into the fleet store and asked the fleet questions ([`store`]),
//! and real policy-engines recording its update checks as the clusters
//! send them ([`cadence`], [`rate`], [`engines`]).

pub mod cadence;
pub mod engines;
pub mod model;
pub mod rate;
pub mod store;
