//! The `version` file: the graph-data schema version.
//!
//! A consumer that understands `x.y` may read `x.z` for any `z`; features of
//! a newer minor are ignored, which is only worth a warning. Graph-data 1.1.0
//! once broke production consumers that refused any minor they did not know.
//! Majors 1 and 2 are read: 2.0.0 adds phased rollouts to channel files and
//! keeps 1.x-shaped ones valid. Another major is refused, so the last good
//! graph-data stays in use rather than one read wrongly.

use semver::Version;

use super::Findings;
use crate::diagnostic::{DiagnosticKind, Location};
use crate::files::{GraphDataFiles, VERSION_FILE};

/// The newest schema this version reads in full.
pub const SUPPORTED_SCHEMA: Version = Version::new(2, 0, 0);

/// The newest minor of each major this version reads.
const READ_SCHEMAS: [Version; 2] = [Version::new(1, 2, 0), SUPPORTED_SCHEMA];

/// Whether graph-data of `schema` may declare phased rollouts (`phasedRollouts`,
/// version entries with `start`).
pub(super) fn declares_phasing(schema: &Version) -> bool {
    schema.major >= 2
}

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
    let Some(newest_read) = READ_SCHEMAS.into_iter().find(|read| read.major == version.major) else {
        let majors: Vec<String> = READ_SCHEMAS
            .iter()
            .map(|read| format!("{}.x", read.major))
            .collect();
        findings.report_at(
            VERSION_FILE,
            Some(1),
            DiagnosticKind::UnsupportedSchema,
            format!(
                "schema {version} is not supported: only {} can be read",
                majors.join(" and ")
            ),
        );
        return None;
    };
    if version.minor > newest_read.minor {
        findings.report_at(
            VERSION_FILE,
            Some(1),
            DiagnosticKind::NewerSchema,
            format!("schema {version} is newer than {newest_read}: features added since are ignored"),
        );
    }
    Some(version)
}
