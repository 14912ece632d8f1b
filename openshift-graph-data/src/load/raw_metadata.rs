//! `raw/metadata.json`: release name → metadata to set on that release.

use std::collections::BTreeMap;

use super::Findings;
use crate::diagnostic::{DiagnosticKind, Location};
use crate::files::{GraphDataFiles, RAW_METADATA_FILE};
use crate::model::{RawMetadata, ReleaseName};

pub(super) fn read(files: &GraphDataFiles, findings: &mut Findings) -> Vec<RawMetadata> {
    let Some(content) = files.get(RAW_METADATA_FILE) else {
        findings.report(
            Location::GraphData,
            DiagnosticKind::MissingFile,
            format!("no `{RAW_METADATA_FILE}` (an empty object `{{}}` is fine)"),
        );
        return Vec::new();
    };
    let document: BTreeMap<String, BTreeMap<String, String>> = match serde_json::from_slice(content) {
        Ok(document) => document,
        Err(error) => {
            let line = (error.line() > 0).then_some(error.line() as u64);
            findings.report_at(
                RAW_METADATA_FILE,
                line,
                DiagnosticKind::Syntax,
                format!("expected an object of release → {{key: string}}: {error}"),
            );
            return Vec::new();
        }
    };
    document
        .into_iter()
        .filter_map(|(name, entries)| match ReleaseName::parse(&name) {
            Ok(release) => Some(RawMetadata { release, entries }),
            Err(error) => {
                findings.report_at(
                    RAW_METADATA_FILE,
                    line_of_key(content, &name),
                    DiagnosticKind::InvalidVersion,
                    format!("release {name:?} is not SemVer: {error}"),
                );
                None
            }
        })
        .collect()
}

/// The line on which `key` is written as an object key (serde_json keeps no
/// positions for values that parsed fine).
fn line_of_key(content: &[u8], key: &str) -> Option<u64> {
    let quoted = serde_json::to_string(key).ok()?;
    let text = String::from_utf8_lossy(content);
    let index = text.lines().position(|line| {
        line.trim_start()
            .strip_prefix(quoted.as_str())
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    })?;
    Some(index as u64 + 1)
}
