use std::collections::BTreeMap;

use serde::Serialize;

/// The metadata key that marks the per-architecture images of a multi release.
pub const ARCHITECTURE_KEY: &str = "release.openshift.io/architecture";

/// A `release-manifests/release-metadata` document (`cincinnati-metadata-v0`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReleaseMetadata {
    kind: &'static str,
    version: String,
    previous: Vec<String>,
    next: Vec<String>,
    metadata: BTreeMap<String, String>,
}

impl ReleaseMetadata {
    pub fn new(version: impl Into<String>) -> Self {
        Self {
            kind: "cincinnati-metadata-v0",
            version: version.into(),
            previous: Vec::new(),
            next: Vec::new(),
            metadata: BTreeMap::new(),
        }
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    pub fn previous<V: Into<String>>(mut self, versions: impl IntoIterator<Item = V>) -> Self {
        self.previous = versions.into_iter().map(Into::into).collect();
        self
    }

    pub fn next<V: Into<String>>(mut self, versions: impl IntoIterator<Item = V>) -> Self {
        self.next = versions.into_iter().map(Into::into).collect();
        self
    }

    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Marks the document as belonging to one architecture image of a multi release.
    pub fn multi_arch(self) -> Self {
        self.metadata(ARCHITECTURE_KEY, "multi")
    }

    /// The file's bytes, as pretty JSON like real release images carry.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).expect("string fields and maps always serialise")
    }
}
