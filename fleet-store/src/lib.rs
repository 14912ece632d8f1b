//! The fleet store: what the update checks say about the fleet.
//!
//! Every cluster asks its update service every few minutes with its id,
//! channel, architecture and version. An engine with a fleet store records
//! each check ([`Check`]): one row per cluster (what it said last, when it
//! was first and last seen, since when it is on its version) and one row per
//! change of its version (from, to, when): the sign that it took an update.
//!
//! One schema and one set of queries serve both stores, through sqlx's Any
//! driver: an embedded SQLite file (one engine; WAL, so questions are
//! answered while checks are written) and PostgreSQL (several engines
//! sharing one fleet: a cluster is one row and a change one row whichever
//! engine saw it). Migrations are embedded and applied when the store is
//! opened; the schema's version is the newest applied migration. The same
//! store keeps the run-time state of the policy file's rollouts.
//!
//! - [`store`]: opening a store, recording checks, pruning.
//! - [`questions`]: what the fleet answers are made of.
//! - [`control`]: rollouts under run-time control (schema version 7): each
//!   one's control and gates as the rollout model defines them, the one
//!   path every change takes (the row locked, the model deciding on what
//!   is stored, the audit written with it).
//! - [`changes`]: what a change writes, and its audit entry.
//! - [`gates`]: gated rollouts' canaries and admissions, and what a gate
//!   round asks of the fleet.
//!
//! What a rollout's state means is the `rollout-model` crate's; this crate
//! only keeps it.

pub mod changes;
pub mod control;
pub mod gates;
pub mod questions;
pub mod store;

pub use store::{Check, FleetStore, Pruned, Recorded, StoreError, StoreKind};
