//! What every document a service writes for the command starts with: its
//! `kind`, the `schemaVersion` of its fields and, for a service's answers,
//! when it was made. Its own module so that every document module can take
//! it without taking another document's.

use serde::{Deserialize, Serialize};

/// The schema version every document carries: within it, fields are only
/// added, never renamed or removed.
pub const SCHEMA_VERSION: u32 = 1;

/// What every answer of a policy-engine's status port starts with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    pub kind: String,
    pub schema_version: u32,
    /// When the answer was made.
    pub generated_at: String,
}

impl Header {
    pub fn new(kind: &str, generated_at: String) -> Self {
        Self {
            kind: kind.to_owned(),
            schema_version: SCHEMA_VERSION,
            generated_at,
        }
    }
}
