//! `channels/*.yaml`: `name`, `versions`, and (not used here) `feeder` and
//! `tombstones`.

use std::collections::BTreeMap;
use std::collections::hash_map::Entry;

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
/// which one was meant cannot be known. A channel named otherwise than its
/// file, or listing a version twice, is reported.
pub(super) fn read(files: &GraphDataFiles, findings: &mut Findings) -> Vec<Channel> {
    let mut by_name: BTreeMap<String, Channel> = BTreeMap::new();
    for document in findings.parse_documents::<ChannelFile>(files, CHANNELS_DIR, KNOWN_KEYS) {
        let path = document.path;
        let Some(file) = findings.accept(path, document.parsed, KNOWN_KEYS) else {
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
        let file_name = path.rsplit('/').next().unwrap_or(path);
        let stem = file_name.rsplit_once('.').map_or(file_name, |(stem, _)| stem);
        if stem != file.name.value {
            findings.report_at(
                path,
                Some(origin.line),
                DiagnosticKind::ChannelNameMismatch,
                format!(
                    "channel {} is declared in a file named for {stem}: rename one or the other",
                    file.name.value
                ),
            );
        }
        let versions = read_versions(path, file.versions.unwrap_or_default(), findings);
        report_repeated_versions(path, &file.name.value, &versions, findings);
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

/// Reports each version listed again after its first line.
fn report_repeated_versions(path: &str, channel: &str, versions: &[ChannelVersion], findings: &mut Findings) {
    let mut first_lines = foldhash::HashMap::with_capacity_and_hasher(versions.len(), Default::default());
    for version in versions {
        match first_lines.entry(&version.name) {
            Entry::Vacant(first) => {
                first.insert(version.line);
            }
            Entry::Occupied(first) => findings.report_at(
                path,
                Some(version.line),
                DiagnosticKind::DuplicateChannelVersion,
                format!(
                    "{} is listed in channel {channel} already, at line {}",
                    version.name,
                    first.get()
                ),
            ),
        }
    }
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
