//! The core of cincinnati-rs: what the graph-builder and the policy-engine
//! share.
//!
//! - [`graph`]: the update graph, a DAG of [`release::Release`]s found by version.
//! - [`conditional`]: updates that carry risks.
//! - [`wire`]: the Graph API JSON document, parsed and serialised.
//! - [`metadata`]: the free-form metadata of a release, its keys shared.
//! - [`metadata_document`]: the `cincinnati-metadata-v0` document in release images.
//! - [`error`]: the `{"kind", "value"}` errors both services answer with.
//! - [`stage`]: graph transformations chained from configuration.
//! - [`listed`]: digests of what a graph holds for each channel (or other
//!   metadata list), to tell which answers a new revision leaves alike.
//!
//! This crate does no I/O: no HTTP, no registry, no files.

pub mod conditional;
pub mod error;
pub mod graph;
pub mod listed;
pub mod metadata;
pub mod metadata_document;
mod order;
pub mod release;
pub mod stage;
pub mod wire;

pub use conditional::{ConditionalEdge, EdgeEndpoints, MatchingRule, Risk, SharedVersions};
pub use error::{ApiError, ErrorKind, UnknownErrorKind};
pub use graph::{CycleError, Graph, GraphError, ReleaseId};
pub use metadata::Metadata;
pub use release::Release;
pub use semver::Version;
