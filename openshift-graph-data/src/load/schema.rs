//! The `version` file: the graph-data schema version.
//!
//! A consumer that understands `x.y` may read `x.z` for any `z`; features of
//! a newer minor are ignored, which is only worth a warning. Graph-data 1.1.0
//! once broke production consumers that refused any minor they did not know.

use semver::Version;

use super::Findings;
use crate::diagnostic::{DiagnosticKind, Location};
use crate::files::{GraphDataFiles, VERSION_FILE};

/// The newest schema this version reads in full.
pub const SUPPORTED_SCHEMA: Version = Version::new(1, 2, 0);

pub(super) fn read(files: &GraphDataFiles, findings: &mut Findings) -> Option<Version> {
    let Some(content) = files.get(VERSION_FILE) else {
        findings.report(
            Location::GraphData,
            DiagnosticKind::MissingFile,
            "no `version` file: this is not graph-data",
        );
        return None;
    };
    let text = String::from_utf8_lossy(content);
    let version = match Version::parse(text.trim()) {
        Ok(version) => version,
        Err(error) => {
            findings.report_at(
                VERSION_FILE,
                Some(1),
                DiagnosticKind::UnsupportedSchema,
                format!("{:?} is not a SemVer schema version: {error}", text.trim()),
            );
            return None;
        }
    };
    if version.major != SUPPORTED_SCHEMA.major {
        findings.report_at(
            VERSION_FILE,
            Some(1),
            DiagnosticKind::UnsupportedSchema,
            format!(
                "schema {version} is not supported: only {}.x can be read",
                SUPPORTED_SCHEMA.major
            ),
        );
        return None;
    }
    if version.minor > SUPPORTED_SCHEMA.minor {
        findings.report_at(
            VERSION_FILE,
            Some(1),
            DiagnosticKind::NewerSchema,
            format!("schema {version} is newer than {SUPPORTED_SCHEMA}: features added since are ignored"),
        );
    }
    Some(version)
}
