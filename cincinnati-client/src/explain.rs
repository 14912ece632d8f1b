//! Why an update is, or is not, offered to a cluster on a channel.

use cincinnati_core::release::with_arch;
use cincinnati_core::{Release, Risk, Version};
use openshift_graph_data::apply::InstructionKeys;
use openshift_graph_data::{Declaration, GraphData, GraphDataFiles};
use regex::Regex;

use crate::cvo::DropReason;
use crate::graph::{ReleaseRef, UpdateGraph};

/// What to explain: the update `from → to` on `channel`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainQuery {
    pub channel: String,
    pub from: Version,
    pub to: Version,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation<'g, 'd> {
    pub channel: String,
    pub arch: &'g str,
    pub from: ReleaseFacts<'g>,
    pub to: ReleaseFacts<'g>,
    pub verdict: Verdict<'g>,
    /// The graph-data files about this update, when graph-data was given:
    /// blocks remove it, risks make it conditional.
    pub declarations: Vec<DeclarationFacts<'d>>,
}

/// What the graph says about one end of the update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseFacts<'g> {
    pub version: Version,
    /// The release of this architecture, if there is one.
    pub release: Option<&'g Release>,
    /// Its channels, in reading order.
    pub channels: Vec<&'g str>,
    /// When it is not a release of this architecture: the architectures
    /// it was seen in (empty otherwise, which every source can tell).
    pub archs: &'g [String],
}

/// The answer, first reason first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<'g> {
    /// Offered as a recommended update.
    Recommended,
    /// Offered with these risks.
    Conditional { risks: &'g [Risk] },
    /// Listed as a conditional update, but the CVO drops it.
    Dropped(DropReason),
    /// No release is in the channel.
    UnknownChannel,
    /// The graph was built from other channels' answers.
    ChannelNotCovered,
    /// The version is no release of any architecture seen.
    UnknownRelease { version: Version },
    /// The version is a release of other architectures only.
    ArchitectureMismatch { version: Version },
    /// These ends of the update are not in the channel.
    NotInChannel { versions: Vec<Version> },
    /// The target is not newer: clusters do not downgrade.
    NotNewer,
    /// Both are in the channel, and there is no update between them;
    /// `removed_by` is the target's `previous.remove_regex` when it matches
    /// the source (graph-data's blocked edges, as the graph-builder wrote them).
    NoUpdate { removed_by: Option<String> },
}

/// A graph-data blocked-edges file about the update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclarationFacts<'d> {
    /// The file inside the graph-data (`blocked-edges/4.16.5.yaml`) and line.
    pub file: &'d str,
    pub line: u64,
    /// Its `from` regex.
    pub from: &'d str,
    pub kind: DeclarationKind<'d>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeclarationKind<'d> {
    /// Removes the update; the reason is the file's comments, the URL the
    /// first one in them.
    Block {
        reason: Option<String>,
        url: Option<String>,
    },
    /// Makes the update conditional with this risk.
    Risk(&'d Risk),
}

impl Verdict<'_> {
    /// Whether a cluster is offered the update.
    pub fn offered(&self) -> bool {
        matches!(self, Verdict::Recommended | Verdict::Conditional { .. })
    }
}

/// Graph-data as [`explain`] reads it: the validated rules, and the files
/// they were loaded from (a block's reason is in its file's comments).
pub struct ExplainGraphData {
    pub rules: GraphData,
    pub files: GraphDataFiles,
}

/// Explains the query on `graph`, with `graph_data` (the graph-data the
/// graph was built with) when there is one.
pub fn explain<'g, 'd>(
    graph: &'g UpdateGraph,
    query: &ExplainQuery,
    graph_data: Option<&'d ExplainGraphData>,
) -> Explanation<'g, 'd> {
    let from = graph.find(&query.from);
    let to = graph.find(&query.to);
    let facts = |version: &Version, release: Option<ReleaseRef>| ReleaseFacts {
        version: version.clone(),
        release: release.map(|release| graph.release(release)),
        channels: release.map_or_else(Vec::new, |release| graph.channels_of(release).collect()),
        archs: if release.is_some() {
            &[]
        } else {
            graph.archs_of(version)
        },
    };
    let declarations = graph_data.map_or_else(Vec::new, |data| declarations(data, graph.arch(), query));
    Explanation {
        channel: query.channel.clone(),
        arch: graph.arch(),
        from: facts(&query.from, from),
        to: facts(&query.to, to),
        verdict: verdict(graph, query, from, to),
        declarations,
    }
}

fn verdict<'g>(
    graph: &'g UpdateGraph,
    query: &ExplainQuery,
    from: Option<ReleaseRef>,
    to: Option<ReleaseRef>,
) -> Verdict<'g> {
    let Some(channel) = graph.channel(&query.channel) else {
        return Verdict::UnknownChannel;
    };
    if !graph.covers(&query.channel) {
        return Verdict::ChannelNotCovered;
    }
    let (from, to) = match (from, to) {
        (Some(from), Some(to)) => (from, to),
        (from, _) => {
            let version = if from.is_none() { &query.from } else { &query.to };
            return if graph.archs_of(version).is_empty() {
                Verdict::UnknownRelease {
                    version: version.clone(),
                }
            } else {
                Verdict::ArchitectureMismatch {
                    version: version.clone(),
                }
            };
        }
    };
    let outside: Vec<Version> = [from, to]
        .into_iter()
        .filter(|&release| !channel.contains(release))
        .map(|release| graph.version(release).clone())
        .collect();
    if !outside.is_empty() {
        return Verdict::NotInChannel { versions: outside };
    }
    if to <= from {
        return Verdict::NotNewer;
    }
    if let Some(update) = graph.update(from, to) {
        return match update.risks {
            None => Verdict::Recommended,
            Some(risks) => Verdict::Conditional { risks },
        };
    }
    if let Some(reason) = graph.dropped(from, to) {
        return Verdict::Dropped(reason.clone());
    }
    Verdict::NoUpdate {
        removed_by: removal_instruction(graph.release(to), graph.version(from), graph.arch()),
    }
}

/// The target's `previous.remove_regex`, if it matches the source as the
/// graph-builder matches it (`<version>+<arch>`).
fn removal_instruction(to: &Release, from: &Version, arch: &str) -> Option<String> {
    let pattern = to
        .metadata
        .get(&InstructionKeys::default().previous_remove_regex)?;
    let from = with_arch(from, arch).ok()?.to_string();
    Regex::new(pattern)
        .ok()
        .filter(|regex| regex.is_match(&from))
        .map(|_| pattern.clone())
}

fn declarations<'d>(
    data: &'d ExplainGraphData,
    arch: &str,
    query: &ExplainQuery,
) -> Vec<DeclarationFacts<'d>> {
    let (Ok(from), Ok(to)) = (with_arch(&query.from, arch), with_arch(&query.to, arch)) else {
        return Vec::new();
    };
    data.rules
        .declarations_for(&from, &to)
        .map(|declaration| {
            let origin = declaration.origin();
            let kind = match declaration {
                Declaration::Block(_) => {
                    let comments = data
                        .files
                        .get(&origin.path)
                        .and_then(|text| comments(&String::from_utf8_lossy(text)));
                    let url = comments.as_deref().and_then(first_url);
                    DeclarationKind::Block {
                        reason: comments,
                        url,
                    }
                }
                Declaration::Risk(risk) => DeclarationKind::Risk(&risk.risk),
            };
            DeclarationFacts {
                file: &origin.path,
                line: origin.line,
                from: &declaration.from().text,
                kind,
            }
        })
        .collect()
}

/// A YAML file's comment lines, joined; `None` when it has none. Graph-data
/// gives the reason for an unconditional block in a comment.
fn comments(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix('#'))
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    (!lines.is_empty()).then(|| lines.join(" "))
}

fn first_url(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|word| word.starts_with("https://") || word.starts_with("http://"))
        .map(|url| url.trim_end_matches([')', ',', '.', ';']).to_owned())
}

impl Explanation<'_, '_> {
    /// The answer in one sentence.
    pub fn summary(&self) -> String {
        let (from, to, channel) = (&self.from.version, &self.to.version, &self.channel);
        match &self.verdict {
            Verdict::Recommended => format!("{from} → {to} is a recommended update on {channel}"),
            Verdict::Conditional { risks } => format!(
                "{from} → {to} is offered on {channel} as a conditional update with {}",
                risk_list(risks)
            ),
            Verdict::Dropped(DropReason::UnevaluableRisk { risk }) => format!(
                "{from} → {to} is listed as a conditional update on {channel}, but clusters drop it: \
                 its risk {risk} has no matching rule they can evaluate"
            ),
            Verdict::Dropped(DropReason::ListedTwice { entries }) => format!(
                "{from} → {to} is listed in {entries} conditional-edge entries on {channel}, so clusters drop it"
            ),
            Verdict::UnknownChannel => format!("no release is in channel {channel}"),
            Verdict::ChannelNotCovered => format!("the graph read does not hold channel {channel}"),
            Verdict::UnknownRelease { version } => {
                format!("{version} is not a release (of any architecture seen)")
            }
            Verdict::ArchitectureMismatch { version } => {
                let archs = if version == from {
                    self.from.archs
                } else {
                    self.to.archs
                };
                format!(
                    "{version} is not released for {} (only for {})",
                    self.arch,
                    archs.join(", ")
                )
            }
            Verdict::NotInChannel { versions } => {
                let missing: Vec<String> = versions
                    .iter()
                    .map(|version| {
                        let facts = if version == from { &self.from } else { &self.to };
                        match facts.channels.as_slice() {
                            [] => format!("{version} is in no channel"),
                            channels => format!("{version} is in {}", channels.join(", ")),
                        }
                    })
                    .collect();
                format!("not in {channel}: {}", missing.join("; "))
            }
            Verdict::NotNewer => format!("{to} is not newer than {from}: clusters do not downgrade"),
            Verdict::NoUpdate { removed_by } => {
                let mut sentence = format!("there is no update from {from} to {to}");
                let blocks: Vec<&DeclarationFacts> = self
                    .declarations
                    .iter()
                    .filter(|declaration| matches!(declaration.kind, DeclarationKind::Block { .. }))
                    .collect();
                if let Some(block) = blocks.first() {
                    sentence.push_str(&format!(": graph-data blocks it ({}", block.file));
                    if let DeclarationKind::Block {
                        reason: Some(reason), ..
                    } = &block.kind
                    {
                        sentence.push_str(&format!(": {reason}"));
                    }
                    sentence.push(')');
                } else if let Some(pattern) = removed_by {
                    sentence.push_str(&format!(
                        ": {to} removes updates from releases matching {pattern:?} (graph-data's blocked edges)"
                    ));
                } else {
                    sentence.push_str(": no release metadata names one");
                }
                sentence
            }
        }
    }
}

fn risk_list(risks: &[Risk]) -> String {
    let names: Vec<&str> = risks.iter().map(|risk| risk.name.as_str()).collect();
    match names.as_slice() {
        [one] => format!("risk {one}"),
        many => format!("risks {}", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_give_the_reason_and_its_url() {
        let text = "to: 4.10.0-fc.0\nfrom: 4\\.9\\..*\n# Lacks pre-requisites, see\n# https://bugzilla.redhat.com/show_bug.cgi?id=2037665.\n";
        let reason = comments(text).unwrap();
        assert_eq!(
            reason,
            "Lacks pre-requisites, see https://bugzilla.redhat.com/show_bug.cgi?id=2037665."
        );
        assert_eq!(
            first_url(&reason).as_deref(),
            Some("https://bugzilla.redhat.com/show_bug.cgi?id=2037665")
        );
        assert_eq!(comments("to: 4.1.1\nfrom: .*\n"), None);
    }
}
