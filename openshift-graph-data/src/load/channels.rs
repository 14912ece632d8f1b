//! `channels/*.yaml`: `name`, `versions`, and (not used here) `feeder` and
//! `tombstones`.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::Findings;
use super::yaml::{Spanned, line_of};
use crate::diagnostic::{DiagnosticKind, Location};
use crate::files::{CHANNELS_DIR, GraphDataFiles};
use crate::model::{Channel, ChannelVersion, Origin, ReleaseName};

const KNOWN_KEYS: &[&str] = &["name", "versions", "feeder", "tombstones"];

#[derive(Deserialize)]
struct ChannelFile {
    name: Spanned<String>,
    #[serde(default)]
    versions: Option<Vec<Spanned<String>>>,
}

/// The channels, in name order. Two files declaring one name are refused:
/// which one was meant cannot be known.
pub(super) fn read(files: &GraphDataFiles, findings: &mut Findings) -> Vec<Channel> {
    let mut by_name: BTreeMap<String, Channel> = BTreeMap::new();
    for (path, parsed) in findings.parse_documents::<ChannelFile>(files, CHANNELS_DIR, KNOWN_KEYS) {
        let Some(file) = findings.accept(path, parsed, KNOWN_KEYS) else {
            continue;
        };
        let origin = Origin {
            path: path.to_owned(),
            line: line_of(&file.name),
        };
        if file.name.value.trim().is_empty() {
            findings.report_at(path, Some(origin.line), DiagnosticKind::Syntax, "`name` is empty");
            continue;
        }
        let versions = read_versions(path, file.versions.unwrap_or_default(), findings);
        let channel = Channel {
            name: file.name.value,
            versions,
            origin,
        };
        if let Some(first) = by_name.get(&channel.name) {
            findings.report_at(
                path,
                Some(channel.origin.line),
                DiagnosticKind::DuplicateChannel,
                format!(
                    "channel {} is also declared in {}:{}",
                    channel.name, first.origin.path, first.origin.line
                ),
            );
            continue;
        }
        by_name.insert(channel.name.clone(), channel);
    }
    if by_name.is_empty() {
        findings.report(
            Location::GraphData,
            DiagnosticKind::MissingFile,
            format!("no channel in `{CHANNELS_DIR}/`: every release would lose its channels"),
        );
    }
    by_name.into_values().collect()
}

fn read_versions(path: &str, versions: Vec<Spanned<String>>, findings: &mut Findings) -> Vec<ChannelVersion> {
    versions
        .into_iter()
        .filter_map(|version| {
            let line = line_of(&version);
            match ReleaseName::parse(&version.value) {
                Ok(name) => Some(ChannelVersion { name, line }),
                Err(error) => {
                    findings.report_at(
                        path,
                        Some(line),
                        DiagnosticKind::InvalidVersion,
                        format!("version {:?} is not SemVer: {error}", version.value),
                    );
                    None
                }
            }
        })
        .collect()
}
