//! The signatures service, upstream's `metadata-helper`: it serves release
//! signatures as `{prefix}/signatures/<algo>=<digest>/signature-<N>`, so a
//! disconnected cluster's CVO verifies updates from the update service
//! alone. The binary is [`MetadataHelper`] run by service-kit's skeleton.
//!
//! ```text
//! registry ─► graph-builder ─► {prefix}/graph-data tarball ─► TarballSource ─┐
//!                     (signatures/ of the graph-data)                         ├─► Signatures ─► lookups
//! a directory (upstream's `[signatures] dir`) ────────► DirectorySource ─────┘
//! ```
//!
//! - [`serve`]: the route: bytes, strong ETag, 304, immutable caching,
//!   errors as JSON; [`metrics`]: what it counts and what status shows.
//! - [`request`]: a request's path checked before any file is touched
//!   (`invalid_params` or `does_not_exist`, as upstream answers).
//! - [`SignatureSet`]: one revision of the signature tree on disk, looked
//!   up by [`SignatureName`](image_signature::layout::SignatureName): the
//!   file's bytes and a strong ETag; nothing leaves the tree. The most
//!   recently asked are kept in memory ([`cache`]).
//! - [`Signatures`]: the set in service, swapped whole, and the status of
//!   its source ([`SourceStatus`]: revision, counts, age, last error).
//! - [`directory`]: a directory read on demand, scanned for status only.
//! - [`tarball`]: the graph-builder's tarball followed with conditional GETs,
//!   each new revision unpacked (signatures only) and swapped in; the last
//!   good set stays when a fetch or a tarball fails.
//!
//! - [`MetadataHelper`]: the service on the skeleton ([`settings`]: upstream's
//!   `mh.toml`, plus the tarball source).
//!
//! Start reading at [`tarball::TarballSource::refresh`].

mod cache;
pub mod directory;
pub mod metrics;
pub mod request;
pub mod serve;
pub mod service;
mod set;
pub mod settings;
mod signature;
mod status;
pub mod tarball;
mod unpack;

pub use service::{HelperMetrics, MetadataHelper};
pub use service_kit::shutdown::StopHandle;
pub use settings::{MetadataHelperDefaults, Settings};

/// A bound, not yet running metadata-helper.
pub type Application = service_kit::Application<MetadataHelper>;

pub use set::{LookupError, SignatureSet};
pub use signature::Signature;
pub use status::{Signatures, SourceStatus, Status};
