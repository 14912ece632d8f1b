//! `channels/*.yaml`: `name`, `versions`, (schema 2.0.0) `phasedRollouts`,
//! and (not used here) `feeder` and `tombstones`.
//!
//! A version entry is a release name, or (schema 2.0.0) an object
//! `{name, start, locked}`. Version objects and rules refuse keys they do not
//! know: a misspelt `start` would put a release in its channel at once.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use jiff::Timestamp;
use semver::Version;
use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, Visitor, value::MapAccessDeserializer};
use serde::{Deserialize, Deserializer};

use super::Findings;
use super::schema::declares_phasing;
use super::yaml::{Spanned, line_of};
use crate::diagnostic::{DiagnosticKind, Location};
use crate::files::{CHANNELS_DIR, GraphDataFiles};
use crate::model::{Channel, ChannelVersion, Origin, ReleaseName};
use crate::phased::{PhasedRollout, RolloutCriterion};

const KNOWN_KEYS: &[&str] = &["name", "versions", "feeder", "tombstones"];
const KNOWN_KEYS_PHASED: &[&str] = &["name", "versions", "feeder", "tombstones", "phasedRollouts"];

/// A channel file whose `phasedRollouts` are read as `Rules`: rules from
/// schema 2.0.0 on, ignored before (an unknown key, as it always was).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChannelFile<Rules> {
    name: Spanned<String>,
    #[serde(default)]
    versions: Option<Vec<Spanned<VersionEntry>>>,
    #[serde(default = "Option::default")]
    phased_rollouts: Option<Rules>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RuleEntry {
    duration: Spanned<String>,
    #[serde(default)]
    from_version: Option<Spanned<String>>,
}

/// A `versions` entry as written.
enum VersionEntry {
    Name(String),
    Object(VersionObject),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VersionObject {
    name: String,
    #[serde(default)]
    start: Option<Spanned<String>>,
    #[serde(default)]
    locked: bool,
}

impl<'de> Deserialize<'de> for VersionEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntryVisitor;

        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = VersionEntry;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a release name or an object {name, start, locked}")
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<VersionEntry, E> {
                Ok(VersionEntry::Name(name.to_owned()))
            }

            // A plain scalar that reads as a number (`4.10`) is a name that
            // is not SemVer: reported as such, as when it was read as text.
            fn visit_u64<E: serde::de::Error>(self, number: u64) -> Result<VersionEntry, E> {
                Ok(VersionEntry::Name(number.to_string()))
            }

            fn visit_i64<E: serde::de::Error>(self, number: i64) -> Result<VersionEntry, E> {
                Ok(VersionEntry::Name(number.to_string()))
            }

            fn visit_f64<E: serde::de::Error>(self, number: f64) -> Result<VersionEntry, E> {
                Ok(VersionEntry::Name(number.to_string()))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<VersionEntry, A::Error> {
                VersionObject::deserialize(MapAccessDeserializer::new(map)).map(VersionEntry::Object)
            }
        }

        deserializer.deserialize_any(EntryVisitor)
    }
}

/// The channels, in name order. Two files declaring one name are refused:
/// which one was meant cannot be known. A channel named otherwise than its
/// file, or listing a version twice, is reported. `schema` (when it could be
/// read) decides whether phased rollouts may be declared; without it, they
/// are read, for their problems to be reported.
pub(super) fn read(
    files: &GraphDataFiles,
    schema: Option<&Version>,
    findings: &mut Findings,
) -> Vec<Channel> {
    if schema.is_none_or(declares_phasing) {
        read_files::<Vec<Spanned<RuleEntry>>>(files, true, findings, read_rules)
    } else {
        read_files::<IgnoredAny>(files, false, findings, |_, _, _| Vec::new())
    }
}

/// The channels, their `phasedRollouts` read by `read_rules`; `phasing`:
/// whether the schema declares phased rollouts.
fn read_files<Rules: DeserializeOwned + Send>(
    files: &GraphDataFiles,
    phasing: bool,
    findings: &mut Findings,
    mut read_rules: impl FnMut(&str, Option<Rules>, &mut Findings) -> Vec<PhasedRollout>,
) -> Vec<Channel> {
    let known = if phasing { KNOWN_KEYS_PHASED } else { KNOWN_KEYS };
    let mut by_name: BTreeMap<String, Channel> = BTreeMap::new();
    for document in findings.parse_documents::<ChannelFile<Rules>>(files, CHANNELS_DIR, known) {
        let path = document.path;
        let Some(file) = findings.accept(path, document.parsed, known) else {
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
        let versions = read_versions(path, file.versions.unwrap_or_default(), phasing, findings);
        report_repeated_versions(path, &file.name.value, &versions, findings);
        let channel = Channel {
            name: file.name.value,
            versions,
            origin,
            phased_rollouts: read_rules(path, file.phased_rollouts, findings),
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

/// The rules of a channel's `phasedRollouts`, each criterion once: a rule
/// repeating one is reported and left out (the graph-data is refused).
fn read_rules(
    path: &str,
    rules: Option<Vec<Spanned<RuleEntry>>>,
    findings: &mut Findings,
) -> Vec<PhasedRollout> {
    let mut first_lines: HashMap<RolloutCriterion, u64> = HashMap::new();
    let mut read = Vec::new();
    for rule in rules.unwrap_or_default() {
        let line = line_of(&rule);
        let RuleEntry {
            duration,
            from_version,
        } = rule.value;
        let criterion =
            RolloutCriterion::from_version(from_version.as_ref().map(|value| value.value.as_str()));
        if let (RolloutCriterion::Unrecognised(value), Some(written)) = (&criterion, &from_version) {
            findings.report_at(
                path,
                Some(line_of(written)),
                DiagnosticKind::UnknownRolloutCriterion,
                format!("`fromVersion: {value}` matches no update (known: patch, minor)"),
            );
        }
        let duration = match duration.value.parse() {
            Ok(parsed) => parsed,
            Err(error) => {
                findings.report_at(
                    path,
                    Some(line_of(&duration)),
                    DiagnosticKind::InvalidRolloutDuration,
                    error,
                );
                continue;
            }
        };
        match first_lines.entry(criterion.clone()) {
            Entry::Occupied(first) => findings.report_at(
                path,
                Some(line),
                DiagnosticKind::DuplicateRolloutCriterion,
                format!(
                    "a rule for {criterion} is declared already, at line {}",
                    first.get()
                ),
            ),
            Entry::Vacant(first) => {
                first.insert(line);
                read.push(PhasedRollout {
                    criterion,
                    duration,
                    line,
                });
            }
        }
    }
    read
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

/// The entries that read; `phasing`: whether version objects are allowed.
fn read_versions(
    path: &str,
    versions: Vec<Spanned<VersionEntry>>,
    phasing: bool,
    findings: &mut Findings,
) -> Vec<ChannelVersion> {
    versions
        .into_iter()
        .filter_map(|entry| {
            let line = line_of(&entry);
            let (name, start, locked) = match entry.value {
                VersionEntry::Name(name) => (name, None, false),
                VersionEntry::Object(_) if !phasing => {
                    findings.report_at(
                        path,
                        Some(line),
                        DiagnosticKind::Syntax,
                        "a version object ({name, start, locked}) needs graph-data schema 2.0.0: \
                         write the release name alone, or raise the `version` file",
                    );
                    return None;
                }
                VersionEntry::Object(object) => (object.name, object.start, object.locked),
            };
            let name = match ReleaseName::parse(&name) {
                Ok(name) => name,
                Err(error) => {
                    findings.report_at(
                        path,
                        Some(line),
                        DiagnosticKind::InvalidVersion,
                        format!("version {name:?} is not SemVer: {error}"),
                    );
                    return None;
                }
            };
            let start = match start {
                Some(start) => Some(read_start(path, &start, findings)?),
                None => None,
            };
            Some(ChannelVersion {
                name,
                line,
                start,
                locked,
            })
        })
        .collect()
}

/// `start`, or `None` once reported.
fn read_start(path: &str, start: &Spanned<String>, findings: &mut Findings) -> Option<Timestamp> {
    match start.value.parse::<Timestamp>() {
        Ok(start) => Some(start),
        Err(error) => {
            findings.report_at(
                path,
                Some(line_of(start)),
                DiagnosticKind::InvalidRolloutStart,
                format!(
                    "start {:?} is not an RFC 3339 time (such as 2025-06-02T09:00:00Z): {error}",
                    start.value
                ),
            );
            None
        }
    }
}
