//! Why an update is, or is not, offered to a cluster on a channel: the
//! verdict from the graph, graph-data's declarations about the update (with
//! `--graph-data`) and, asked as one cluster, what the engine's per-cluster
//! policy did ([`Explanation::with_cluster_policy`]). The reasons, in the
//! order that decides, are [`crate::reasons`].

use cincinnati_core::release::with_arch;
use cincinnati_core::{MatchingRule, Release, Risk, Version};
use openshift_graph_data::apply::InstructionKeys;
use openshift_graph_data::{Declaration, GraphData, GraphDataFiles};
use regex::Regex;

use crate::cluster_policy::ClusterPolicy;
use crate::cvo::DropReason;
use crate::graph::{ReleaseRef, UpdateGraph};
use crate::policy_facts::PolicyFacts;

/// What to explain: the update `from → to` on `channel`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainQuery {
    pub channel: String,
    pub from: Version,
    pub to: Version,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Explanation<'g, 'd> {
    pub channel: String,
    pub arch: &'g str,
    pub from: ReleaseFacts<'g>,
    pub to: ReleaseFacts<'g>,
    pub verdict: Verdict<'g>,
    /// The graph-data files about this update, when graph-data was given:
    /// blocks remove it, risks make it conditional.
    pub declarations: Vec<DeclarationFacts<'d>>,
    /// Whether graph-data was read (an empty `declarations` then means it
    /// says nothing about the update).
    pub graph_data_read: bool,
    /// What the cluster's per-cluster policy does to the update, when the
    /// engine was asked ([`Explanation::with_cluster_policy`]); `None`: asked
    /// without a cluster id, so a policy may change the answer.
    pub policy: Option<PolicyFacts>,
    /// Whether the graph came from a service that may answer a cluster by
    /// its id (a policy-engine's view); not when it is a full graph (a
    /// graph-builder's) or a file ([`Explanation::from_a_full_graph`]).
    pub policy_possible: bool,
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
    /// A block's reasons: its comments, one per paragraph (comment lines
    /// separated by an empty comment or by YAML), in file order.
    pub reasons: Vec<String>,
    /// The file's `fixedIn`: the release that fixes what it is about.
    pub fixed_in: Option<String>,
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
        graph_data_read: graph_data.is_some(),
        policy: None,
        policy_possible: true,
    }
}

impl Explanation<'_, '_> {
    /// The same, with the engine's explanation of the cluster the graph
    /// was asked as (its explain endpoint, asked about `from`).
    pub fn with_cluster_policy(self, policy: &ClusterPolicy) -> Self {
        let policy = PolicyFacts::of(policy, &self.from.version, &self.to.version);
        Self {
            policy: Some(policy),
            ..self
        }
    }

    /// The same, for a graph no per-cluster policy applies to (a full
    /// graph, or a file): no hedge about one.
    pub fn from_a_full_graph(self) -> Self {
        Self {
            policy_possible: false,
            ..self
        }
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
        .map(|_| pattern.to_owned())
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
            let text = data
                .files
                .get(&origin.path)
                .map(|text| String::from_utf8_lossy(text));
            let text = text.as_deref().unwrap_or_default();
            let (kind, reasons) = match declaration {
                Declaration::Block(_) => {
                    let reasons = paragraphs(text);
                    let joined = (!reasons.is_empty()).then(|| reasons.join(" "));
                    let url = joined.as_deref().and_then(first_url);
                    (DeclarationKind::Block { reason: joined, url }, reasons)
                }
                Declaration::Risk(risk) => (DeclarationKind::Risk(&risk.risk), Vec::new()),
            };
            DeclarationFacts {
                file: &origin.path,
                line: origin.line,
                from: &declaration.from().text,
                kind,
                reasons,
                fixed_in: fixed_in(text),
            }
        })
        .collect()
}

/// A YAML file's comments, one string per paragraph: consecutive comment
/// lines joined, a paragraph ending at an empty comment line or at a line
/// of YAML. Graph-data gives the reasons for an unconditional block in
/// comments, a paragraph each.
fn paragraphs(text: &str) -> Vec<String> {
    let mut paragraphs = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines() {
        match line.trim_start().strip_prefix('#').map(str::trim) {
            Some(words) if !words.is_empty() => current.push(words),
            _ if !current.is_empty() => paragraphs.push(std::mem::take(&mut current).join(" ")),
            _ => {}
        }
    }
    if !current.is_empty() {
        paragraphs.push(current.join(" "));
    }
    paragraphs
}

/// The file's top-level `fixedIn` (which loading does not keep: it only
/// says where the declaration stops mattering).
fn fixed_in(text: &str) -> Option<String> {
    text.lines()
        .find_map(|line| line.strip_prefix("fixedIn:"))
        .map(|value| {
            let value = value.split(" #").next().unwrap_or_default().trim();
            value.trim_matches(['"', '\'']).to_owned()
        })
        .filter(|value| !value.is_empty())
}

fn first_url(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|word| word.starts_with("https://") || word.starts_with("http://"))
        .map(|url| url.trim_end_matches([')', ',', '.', ';']).to_owned())
}

impl Explanation<'_, '_> {
    /// The answer in one sentence: the verdict, and for an update that is
    /// not there or is conditional, what decides it ([`Explanation::reasons`]
    /// gives them all, in that order, with their details).
    pub fn summary(&self) -> String {
        let (from, to, channel) = (&self.from.version, &self.to.version, &self.channel);
        match &self.verdict {
            Verdict::Recommended => format!("{from} → {to} is a recommended update on {channel}"),
            Verdict::Conditional { risks } => {
                format!(
                    "{from} → {to} is a conditional update on {channel}: {}",
                    not_recommended(risks)
                )
            }
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
            Verdict::NoUpdate { removed_by } => self.no_update(removed_by.as_deref()),
        }
    }

    /// Why there is no update, first what decides: the cluster's policy,
    /// then graph-data, then release metadata.
    fn no_update(&self, removed_by: Option<&str>) -> String {
        let (from, to) = (&self.from.version, &self.to.version);
        if let Some(policy) = &self.policy
            && let Some(rule) = &policy.rule
        {
            let line = rule
                .line(policy)
                .map(|line| match &policy.file {
                    Some(file) => format!(" ({file}:{line})"),
                    None => format!(" (policy file line {line})"),
                })
                .unwrap_or_default();
            return format!(
                "{from} → {to} is withheld from this cluster{line}: {}",
                rule.sentence(policy, to)
            );
        }
        if let Some(offer) = self
            .policy
            .as_ref()
            .and_then(|policy| policy.phased.as_ref())
            .filter(|offer| !offer.offered)
        {
            return format!("{from} → {to} is {}", offer.said());
        }
        let block = self
            .declarations
            .iter()
            .find(|declaration| declaration.is_block());
        if let Some(block) = block {
            return format!(
                "there is no update from {from} to {to}: graph-data blocks it ({}:{})",
                block.file, block.line
            );
        }
        if let Some(pattern) = removed_by {
            return format!(
                "there is no update from {from} to {to}: {to} removes updates from releases matching \
                 `{pattern}` (graph-data's blocked edges)"
            );
        }
        match &self.policy {
            Some(policy) if policy.in_graph_without_policy == Some(false) => format!(
                "there is no update from {from} to {to}, with or without this cluster's policy, \
                 and no release metadata removes one"
            ),
            Some(_) => format!(
                "there is no update from {from} to {to}; this cluster's policy does not remove one, \
                 and no release metadata does"
            ),
            None if self.policy_possible => format!(
                "there is no update from {from} to {to} in this answer, and no release metadata removes one: \
                 asked without a cluster id, a per-cluster policy (a phased rollout, a deferral, a pin) may withhold it"
            ),
            None => format!("there is no update from {from} to {to}, and no release metadata removes one"),
        }
    }
}

impl DeclarationFacts<'_> {
    pub fn is_block(&self) -> bool {
        matches!(self.kind, DeclarationKind::Block { .. })
    }
}

/// How the cluster-version operator shows a conditional update: each risk
/// that applies to the cluster (its first rule the CVO can evaluate
/// matches) makes it `Recommended=False` with the risk's name as the
/// reason (`MultipleReasons` for several); a cluster no risk applies to
/// sees it `Recommended=True` (`NotExposedToRisks`).
fn not_recommended(risks: &[Risk]) -> String {
    let always = |risk: &Risk| matches!(risk.matching_rules.first(), Some(MatchingRule::Always));
    let names = risk_list(risks);
    match risks {
        [risk] if always(risk) => format!(
            "not recommended, its {names} applies to every cluster (Recommended=False, reason {})",
            risk.name
        ),
        [risk] => format!(
            "not recommended where its {names} applies, by its PromQL query \
             (Recommended=False, reason {}), recommended elsewhere",
            risk.name
        ),
        _ if risks.iter().any(always) => format!(
            "not recommended, its {names} apply and one applies to every cluster \
             (Recommended=False, reason MultipleReasons when several apply)"
        ),
        _ => format!(
            "not recommended where its {names} apply, by their PromQL queries \
             (Recommended=False, reason MultipleReasons when several apply), recommended elsewhere"
        ),
    }
}

pub(crate) fn risk_list(risks: &[Risk]) -> String {
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
    fn each_paragraph_of_comments_is_a_reason_and_the_first_url_is_kept() {
        let text = "# Upgrading breaks service ca\n# rotation.\n#\n# Reference: https://bugzilla.redhat.com/1\n\
                    to: 4.3.5\nfrom: .*\n# 4.2 -> 4.3 hits PodIPs, https://bugzilla.redhat.com/2.\n";
        let reasons = paragraphs(text);
        assert_eq!(
            reasons,
            [
                "Upgrading breaks service ca rotation.",
                "Reference: https://bugzilla.redhat.com/1",
                "4.2 -> 4.3 hits PodIPs, https://bugzilla.redhat.com/2.",
            ]
        );
        assert_eq!(
            first_url(&reasons.join(" ")).as_deref(),
            Some("https://bugzilla.redhat.com/1")
        );
        assert!(paragraphs("to: 4.1.1\nfrom: .*\n").is_empty());
    }

    #[test]
    fn fixed_in_is_read_as_written_and_only_at_the_top_level() {
        assert_eq!(
            fixed_in("to: 4.18.2\nfrom: .*\nfixedIn: 4.18.3\n").as_deref(),
            Some("4.18.3")
        );
        assert_eq!(
            fixed_in("fixedIn: \"4.18.3\" # the fix\n").as_deref(),
            Some("4.18.3")
        );
        assert_eq!(fixed_in("to: 4.18.2\n  fixedIn: 4.18.3\n"), None);
        assert_eq!(fixed_in("to: 4.18.2\nfixedIn:\n"), None);
    }
}
