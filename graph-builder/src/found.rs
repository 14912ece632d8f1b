//! What a release source reports, whether it scraped a registry or read
//! files: the releases it found, and what it had to leave out, with the
//! reason.

use std::fmt;

use cincinnati_core::metadata_document::ReleaseMetadataDocument;

/// A release image that was read successfully.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundRelease {
    /// The `cincinnati-metadata-v0` document found in the image.
    pub document: ReleaseMetadataDocument,
    /// The architecture the registry says the image is for.
    pub arch: Arch,
    /// Where clients pull the release from.
    pub payload: Payload,
}

/// An architecture as the registry (or a release file) names it: `amd64`,
/// `arm64`, ... or `multi` for a manifest list.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch(String);

impl Arch {
    pub fn new(name: impl Into<String>) -> Self {
        Self(name.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A multi-arch release (a manifest list).
    pub fn is_multi(&self) -> bool {
        self.0 == "multi"
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A release's pull spec by digest, `<registry>/<repository>@<digest>`: the
/// digest is the image's manifest digest (`sha256:...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    pull_spec: String,
    /// Where the digest starts, after the `@`.
    digest_at: usize,
}

impl Payload {
    /// A pull spec as given (in a release file); one without `@digest` is
    /// refused.
    pub fn parse(pull_spec: String) -> Result<Self, DropReason> {
        match pull_spec.rfind('@') {
            Some(at) if at + 1 < pull_spec.len() => Ok(Self {
                digest_at: at + 1,
                pull_spec,
            }),
            _ => Err(DropReason::InvalidReleaseMetadata(format!(
                "payload {pull_spec:?} has no @digest"
            ))),
        }
    }

    /// The pull spec of `digest` in `image` (`<registry>/<repository>`).
    pub fn of(image: &str, digest: &str) -> Self {
        Self {
            pull_spec: format!("{image}@{digest}"),
            digest_at: image.len() + 1,
        }
    }

    pub fn digest(&self) -> &str {
        &self.pull_spec[self.digest_at..]
    }

    pub fn as_str(&self) -> &str {
        &self.pull_spec
    }

    pub fn into_string(self) -> String {
        self.pull_spec
    }
}

impl fmt::Display for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pull_spec)
    }
}

/// Why an image or an edge was left out of the graph.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DropReason {
    /// The image has no `release-manifests/release-metadata`.
    NoReleaseMetadata,
    /// The release metadata was found but is not a valid document.
    InvalidReleaseMetadata(String),
    /// The image says it is part of a multi-arch release, but the registry
    /// lists it as a single-arch image: a shard of a multi release.
    MultiArchShard,
    /// Two images claim the same version and architecture.
    DuplicateVersion { other_digest: String },
    /// An edge from `previous`/`next` would close a cycle.
    Cycle(String),
    /// The registry could not deliver the image (after retries).
    Unavailable(String),
    /// The image's architecture could not be determined.
    UnknownArchitecture(String),
    /// A component image (labelled by OpenShift's builds, not as a
    /// release) in the releases' repository: expected, not a problem; its layers are
    /// never read.
    ComponentImage,
}

impl DropReason {
    /// A short stable label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            DropReason::NoReleaseMetadata => "no_release_metadata",
            DropReason::InvalidReleaseMetadata(_) => "invalid_release_metadata",
            DropReason::MultiArchShard => "multi_arch_shard",
            DropReason::DuplicateVersion { .. } => "duplicate_version",
            DropReason::Cycle(_) => "cycle",
            DropReason::Unavailable(_) => "unavailable",
            DropReason::UnknownArchitecture(_) => "unknown_architecture",
            DropReason::ComponentImage => "component_image",
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DropReason::NoReleaseMetadata => {
                f.write_str("no release-manifests/release-metadata in any layer")
            }
            DropReason::InvalidReleaseMetadata(why) => write!(f, "invalid release metadata: {why}"),
            DropReason::MultiArchShard => {
                f.write_str("single-arch shard of a multi-arch release (metadata says multi)")
            }
            DropReason::DuplicateVersion { other_digest } => {
                write!(f, "the same version is also claimed by {other_digest}")
            }
            DropReason::Cycle(cycle) => write!(f, "{cycle}"),
            DropReason::Unavailable(why) => write!(f, "could not be fetched: {why}"),
            DropReason::UnknownArchitecture(why) => write!(f, "unknown architecture: {why}"),
            DropReason::ComponentImage => {
                f.write_str("a component image: labelled by OpenShift's builds, not io.openshift.release")
            }
        }
    }
}

/// One thing left out of the graph: an image (by tag or digest) or an edge.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dropped {
    /// What was left out: `repository:tag`, a digest, or `from -> to`.
    pub subject: String,
    pub reason: DropReason,
}
