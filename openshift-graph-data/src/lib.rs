//! OpenShift graph-data: the channels, blocked edges and conditional update
//! risks an update service applies to the releases it found.
//!
//! What goes in: graph-data files, from a directory or a gzip tarball
//! ([`GraphDataFiles`]). What comes out: a validated [`GraphData`] with a
//! content [`Revision`], or the reasons it was [`Refused`], each naming a
//! file and line ([`Diagnostic`]); then, applied to an update graph by the
//! [`stages`], releases with channels and with the updates graph-data
//! blocks removed or made conditional.
//!
//! Start reading at [`GraphData::load`], then [`apply`].
//!
//! Invariants:
//! - Loading reports every problem and never panics; applying never fails
//!   because of graph-data (that was decided when it was loaded), only
//!   because of a removal instruction in release metadata it cannot carry out.
//! - Output is deterministic: the same graph-data and releases give the same
//!   graph, whatever order files were read in.
//! - Each update appears in at most one conditional-edge group, with its
//!   complete risk list.
//!
//! Deliberately not here: registries and image layers, scheduling refreshes,
//! serving HTTP. [`signature`] verifies a graph-data image digest for the
//! graph-builder, which fetches the image; the signature format, keys and
//! store client are the `image-signature` crate's.

pub mod apply;
pub mod diagnostic;
pub mod files;
mod load;
mod model;
pub mod phased;
pub mod signature;
pub mod stages;
pub mod tarball;

/// YAML read as graph-data is, with the line of an error or a value: for
/// other YAML files of the project, so their errors read alike.
pub mod yaml {
    pub use crate::load::yaml::{Spanned, YamlError, line_of, parse};
}

pub use diagnostic::{Diagnostic, DiagnosticKind, Location, Severity, Strictness, UpstreamErrorClass};
pub use files::{FilesError, GraphDataFiles, Revision};
pub use load::{BlockedEdge, BlockedEdgeSpec, Loaded, Refused, SUPPORTED_SCHEMA, SpecProblem};
pub use model::{
    Block, Channel, ChannelVersion, Declaration, FromPattern, GraphData, Origin, RawMetadata, ReleaseName,
    RiskDeclaration,
};
pub use phased::{
    ChannelRollout, PhasedRollout, PhasedWindow, RolloutCriterion, RolloutDuration, RolloutDurations,
    Standing, UpdateKind,
};
pub use stages::{EdgeAddRemoveSettings, GraphDataInput, NodeRemoveSettings, SecondaryMetadataParseSettings};
pub use tarball::{MAX_TARBALL_BYTES, Tarball, write_tar_gz};
