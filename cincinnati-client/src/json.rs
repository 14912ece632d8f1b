//! The JSON documents answers are published as: by the `cincinnati`
//! command (`-o json`, `-o yaml`) and by services that answer the same
//! questions. Stable: fields are added, never renamed or removed, while
//! `schemaVersion` stays 1 (see docs/cli.md for every field).
//!
//! Kept apart from the answers themselves, which are not `Serialize`.

use cincinnati_core::release::keys;
use cincinnati_core::wire::RiskView;
use cincinnati_core::{Release, Risk};
use jiff::Timestamp;
use openshift_graph_data::RolloutDuration;
use serde::Serialize;

use crate::cluster_policy::ClusterPolicy;
use crate::cvo::DropReason;
use crate::diff::{ChannelDiff, GraphDiff, UpdateChange};
use crate::explain::{DeclarationKind, Explanation, ReleaseFacts, Verdict};
use crate::graph::ReleaseRef;
use crate::phasing::{ChannelAt, PhasedUpdate};
use crate::plan::{Break, Hop, PathAnswer, PathQuery, Plan, TierPlan};
use crate::reasons::Reason;
use crate::runbook::{Runbook, Step, Workers, runbook};
use crate::signatures::{Outcome, ReleaseSignatures};
use crate::view::{ChannelView, ConditionalUpdate, Updates};

pub use crate::header::SCHEMA_VERSION;

/// A release as the documents show it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseJson<'a> {
    pub version: String,
    pub payload: Option<&'a str>,
    /// Its errata (`url` metadata).
    pub url: Option<&'a str>,
    pub channels: Vec<&'a str>,
}

impl<'a> From<&'a Release> for ReleaseJson<'a> {
    fn from(release: &'a Release) -> Self {
        Self {
            version: release.version.to_string(),
            payload: release.payload.as_deref(),
            url: release.metadata.get("url"),
            channels: release.metadata_list(keys::CHANNELS).collect(),
        }
    }
}

fn risks(risks: &[Risk]) -> Vec<RiskView<'_>> {
    risks.iter().map(RiskView).collect()
}

/// `cincinnati updates`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdatesJson<'a> {
    kind: &'static str,
    schema_version: u32,
    pub channel: &'a str,
    pub arch: &'a str,
    pub current: ReleaseJson<'a>,
    /// Newest first.
    pub recommended: Vec<ReleaseJson<'a>>,
    /// Newest first; empty unless asked for.
    pub conditional: Vec<ConditionalJson<'a>>,
    /// How many conditional updates there are, shown or not.
    pub conditional_count: usize,
}

#[derive(Serialize)]
pub struct ConditionalJson<'a> {
    pub release: ReleaseJson<'a>,
    pub risks: Vec<RiskView<'a>>,
}

impl<'a> UpdatesJson<'a> {
    pub fn new(channel: &'a str, arch: &'a str, updates: &'a Updates, include_conditional: bool) -> Self {
        let conditional = updates
            .conditional
            .iter()
            .filter(|_| include_conditional)
            .map(|ConditionalUpdate { release, risks: list }| ConditionalJson {
                release: release.into(),
                risks: risks(list),
            })
            .collect();
        Self {
            kind: "Updates",
            schema_version: SCHEMA_VERSION,
            channel,
            arch,
            current: (&updates.current).into(),
            recommended: updates.recommended.iter().map(ReleaseJson::from).collect(),
            conditional,
            conditional_count: updates.conditional.len(),
        }
    }
}

/// `cincinnati path`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PathJson<'a> {
    kind: &'static str,
    schema_version: u32,
    pub arch: &'a str,
    pub from: String,
    pub to: String,
    pub tier: &'static str,
    pub accepted_risks: Vec<&'a str>,
    pub found: bool,
    /// The best plan; `null` when there is none.
    pub plan: Option<PlanJson<'a>>,
    /// Other plans of the same length, best first.
    pub alternatives: Vec<PlanJson<'a>>,
    /// Where planning broke; `null` when a plan was found.
    #[serde(rename = "break")]
    pub break_: Option<BreakJson<'a>>,
    /// The best plan taking risks that were not accepted, and those risks.
    pub plan_with_risks: Option<RiskyPlanJson<'a>>,
    /// For an EUS-to-EUS plan: the steps of Red Hat's Control Plane Only
    /// update.
    pub runbook: Option<RunbookJson<'a>>,
    /// Without a plan: the other tiers that have one (with the risks it
    /// takes that were not accepted).
    pub other_tiers: Vec<TierPlanJson<'a>>,
}

#[derive(Serialize)]
pub struct PlanJson<'a> {
    pub hops: Vec<HopJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HopJson<'a> {
    pub from: String,
    pub to: String,
    /// The channel to be on to be offered the update.
    pub channel: &'a str,
    pub recommended: bool,
    pub risks: Vec<RiskView<'a>>,
    /// The errata of the release updated to.
    pub url: Option<&'a str>,
    /// The release image updated to (its pull spec, by digest).
    pub image: Option<&'a str>,
    /// With a runbook: what the worker pools do (`update`, `skip`: paused
    /// through this hop, `catchUp`: unpaused after it); else null.
    pub workers: Option<&'static str>,
    /// With `--all`: releases that may be taken instead of `to`, newest
    /// first, each offered from `from` and with an update to the next hop's
    /// `to`.
    pub alternatives: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunbookJson<'a> {
    /// `controlPlaneOnly`.
    pub procedure: &'static str,
    /// The releases the workers never run.
    pub workers_skip: Vec<String>,
    pub steps: Vec<StepJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepJson<'a> {
    /// `prepare`, `checkPools`, `switchChannel`, `pausePools`, `update`,
    /// `unpausePools`.
    pub action: &'static str,
    pub text: String,
    pub commands: Vec<String>,
    /// For `update`: the hop's index in `plan.hops`.
    pub hop_index: Option<usize>,
    /// For `switchChannel`: the channel.
    pub channel: Option<&'a str>,
}

#[derive(Serialize)]
pub struct TierPlanJson<'a> {
    pub tier: &'static str,
    /// Risks the plan takes that were not accepted.
    pub risks: Vec<&'a str>,
    pub hops: Vec<HopJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakJson<'a> {
    /// `unknownRelease`, `notNewer`, `noChannel`, `notCovered`,
    /// `targetNotInChannel` or `stuck`.
    pub kind: &'static str,
    /// The same in one sentence.
    pub reason: String,
    /// For `stuck`: the newest release reached, the channel that offers it
    /// nothing leading on, the nearest release that has something, and the
    /// oldest release from which the target can be reached.
    pub at: Option<String>,
    /// For `stuck` and the channel kinds: the channel.
    pub channel: Option<&'a str>,
    pub nearest: Option<String>,
    pub oldest_leading_to: Option<String>,
    /// For `stuck`: the way from the start to `at`, and the way on to the
    /// target from `nearest` (else `oldestLeadingTo`; null when there is
    /// none).
    pub reached: Option<PlanJson<'a>>,
    pub onward: Option<PlanJson<'a>>,
}

#[derive(Serialize)]
pub struct RiskyPlanJson<'a> {
    pub risks: Vec<&'a str>,
    pub hops: Vec<HopJson<'a>>,
}

impl<'a> From<&Hop<'a>> for HopJson<'a> {
    fn from(hop: &Hop<'a>) -> Self {
        Self {
            from: hop.from.version.to_string(),
            to: hop.to.version.to_string(),
            channel: hop.channel,
            recommended: hop.risks.is_none(),
            risks: risks(hop.risks.unwrap_or_default()),
            url: hop.to.metadata.get("url"),
            image: hop.to.payload.as_deref(),
            workers: None,
            alternatives: Vec::new(),
        }
    }
}

impl<'a> From<&Plan<'a>> for PlanJson<'a> {
    fn from(plan: &Plan<'a>) -> Self {
        let instead = |index: usize| {
            plan.instead.get(index).map_or_else(Vec::new, |releases| {
                releases
                    .iter()
                    .map(|release| release.version.to_string())
                    .collect()
            })
        };
        Self {
            hops: plan
                .hops
                .iter()
                .enumerate()
                .map(|(index, hop)| HopJson {
                    alternatives: instead(index),
                    ..HopJson::from(hop)
                })
                .collect(),
        }
    }
}

impl<'a> PlanJson<'a> {
    /// The plan, with what the workers do at each hop.
    fn with_runbook(mut self, runbook: &Runbook<'_>) -> Self {
        for (hop, workers) in self.hops.iter_mut().zip(&runbook.workers) {
            hop.workers = Some(match workers {
                Workers::Update => "update",
                Workers::Skip => "skip",
                Workers::CatchUp { .. } => "catchUp",
            });
        }
        self
    }
}

impl<'a> RunbookJson<'a> {
    pub fn new(runbook: Runbook<'a>, plan: &Plan<'a>) -> Self {
        Self {
            procedure: "controlPlaneOnly",
            workers_skip: runbook
                .skipped(plan)
                .iter()
                .map(|release| release.version.to_string())
                .collect(),
            steps: runbook.steps.into_iter().map(StepJson::from).collect(),
        }
    }
}

impl<'a> From<Step<'a>> for StepJson<'a> {
    fn from(step: Step<'a>) -> Self {
        Self {
            action: step.action.as_str(),
            text: step.sentence,
            commands: step.commands,
            hop_index: step.hop,
            channel: step.channel,
        }
    }
}

impl<'a> From<&TierPlan<'a>> for TierPlanJson<'a> {
    fn from(other: &TierPlan<'a>) -> Self {
        Self {
            tier: other.tier.as_str(),
            risks: other.risks.clone(),
            hops: other.plan.hops.iter().map(HopJson::from).collect(),
        }
    }
}

impl<'a> PathJson<'a> {
    /// The same, with what the other tiers offer.
    pub fn with_other_tiers(self, others: &'a [TierPlan<'a>]) -> Self {
        Self {
            other_tiers: others.iter().map(TierPlanJson::from).collect(),
            ..self
        }
    }

    /// The answer; an EUS-to-EUS plan with its runbook
    /// ([`crate::runbook`]).
    pub fn new(arch: &'a str, query: &'a PathQuery, answer: &'a PathAnswer<'a>) -> Self {
        let mut document = Self {
            kind: "Path",
            schema_version: SCHEMA_VERSION,
            arch,
            from: query.from.to_string(),
            to: query.to.to_string(),
            tier: query.tier.as_str(),
            accepted_risks: query.accepted_risks.iter().map(String::as_str).collect(),
            found: false,
            plan: None,
            alternatives: Vec::new(),
            break_: None,
            plan_with_risks: None,
            runbook: None,
            other_tiers: Vec::new(),
        };
        match answer {
            PathAnswer::Found { plan, alternatives } => {
                document.found = true;
                document.plan = Some(plan.into());
                document.alternatives = alternatives.iter().map(PlanJson::from).collect();
                if let Some(made) = runbook(query, plan) {
                    document.plan = Some(PlanJson::from(plan).with_runbook(&made));
                    document.runbook = Some(RunbookJson::new(made, plan));
                }
            }
            PathAnswer::NoPath { reason, with_risks } => {
                document.break_ = Some(BreakJson::new(reason, query));
                document.plan_with_risks = with_risks.as_ref().map(|risky| RiskyPlanJson {
                    risks: risky.risks.clone(),
                    hops: risky.plan.hops.iter().map(HopJson::from).collect(),
                });
            }
        }
        document
    }
}

impl<'a> BreakJson<'a> {
    fn new(reason: &'a Break<'a>, query: &PathQuery) -> Self {
        let mut document = Self {
            kind: "stuck",
            reason: reason.summary(query),
            at: None,
            channel: None,
            nearest: None,
            oldest_leading_to: None,
            reached: None,
            onward: None,
        };
        let version = |release: &Release| Some(release.version.to_string());
        match reason {
            Break::UnknownRelease { .. } => document.kind = "unknownRelease",
            Break::NotNewer => document.kind = "notNewer",
            Break::NoChannel { channel } => {
                (document.kind, document.channel) = ("noChannel", Some(channel.as_str()))
            }
            Break::NotCovered { channel } => {
                (document.kind, document.channel) = ("notCovered", Some(channel.as_str()))
            }
            Break::TargetNotInChannel { channel, .. } => {
                (document.kind, document.channel) = ("targetNotInChannel", Some(channel.as_str()));
            }
            Break::Stuck {
                at,
                channel,
                nearest,
                oldest_leading_to,
                reached,
                onward,
                ..
            } => {
                document.at = version(at);
                document.channel = Some(channel);
                document.nearest = nearest.and_then(version);
                document.oldest_leading_to = version(oldest_leading_to);
                document.reached = Some(PlanJson::from(&**reached));
                document.onward = onward.as_deref().map(PlanJson::from);
            }
        }
        document
    }
}

/// `cincinnati explain`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplanationJson<'a> {
    kind: &'static str,
    schema_version: u32,
    pub channel: &'a str,
    pub arch: &'a str,
    pub from: FactsJson<'a>,
    pub to: FactsJson<'a>,
    pub offered: bool,
    /// `recommended`, `conditional`, `dropped`, `unknownChannel`,
    /// `channelNotCovered`, `unknownRelease`, `architectureMismatch`,
    /// `notInChannel`, `notNewer` or `noUpdate`.
    pub verdict: &'static str,
    /// The answer in one sentence.
    pub summary: String,
    /// For `conditional`: the risks.
    pub risks: Vec<RiskView<'a>>,
    /// For `dropped`: why clusters drop the update.
    pub dropped_because: Option<String>,
    /// For `noUpdate`: the target's `previous.remove_regex` matching the source.
    pub removed_by: Option<&'a str>,
    /// Graph-data's blocked-edges files about the update.
    pub declarations: Vec<DeclarationJson<'a>>,
    /// Every reason, in the order that decides: the cluster's policy,
    /// graph-data, release metadata.
    pub reasons: Vec<ReasonJson>,
    /// With `--id`: the policy-engine's explanation of what the cluster
    /// sees (null without).
    pub cluster_policy: Option<&'a ClusterPolicy>,
}

#[derive(Serialize)]
pub struct ReasonJson {
    /// `clusterPolicy`, `graphData` or `releaseMetadata`.
    pub layer: &'static str,
    pub kind: &'static str,
    /// Whether it makes the verdict what it is.
    pub decides: bool,
    pub text: String,
    pub details: Vec<String>,
    /// Where it is written: a graph-data file (null for the policy file,
    /// which the engine names by line only) and line.
    pub file: Option<String>,
    pub line: Option<u64>,
}

impl From<Reason> for ReasonJson {
    fn from(reason: Reason) -> Self {
        Self {
            layer: reason.layer.as_str(),
            kind: reason.kind,
            decides: reason.decides,
            text: reason.sentence,
            details: reason.details,
            file: reason.file,
            line: reason.line,
        }
    }
}

#[derive(Serialize)]
pub struct FactsJson<'a> {
    pub version: String,
    /// Whether it is a release of this architecture.
    pub found: bool,
    pub channels: &'a [&'a str],
    /// When not found: the architectures it is released for.
    pub archs: &'a [String],
    pub url: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeclarationJson<'a> {
    pub file: &'a str,
    pub line: u64,
    pub from: &'a str,
    /// `block` or `risk`.
    pub kind: &'static str,
    /// For a block: its comments and the first URL in them.
    pub reason: Option<&'a str>,
    pub url: Option<&'a str>,
    /// For a risk: the risk.
    pub risk: Option<RiskView<'a>>,
    /// For a block: its comments, a paragraph each.
    pub reasons: &'a [String],
    /// The file's `fixedIn`.
    pub fixed_in: Option<&'a str>,
}

impl<'a> From<&'a ReleaseFacts<'a>> for FactsJson<'a> {
    fn from(facts: &'a ReleaseFacts<'a>) -> Self {
        Self {
            version: facts.version.to_string(),
            found: facts.release.is_some(),
            channels: &facts.channels,
            archs: facts.archs,
            url: facts.release.and_then(|release| release.metadata.get("url")),
        }
    }
}

impl<'a> ExplanationJson<'a> {
    pub fn new(explanation: &'a Explanation<'a, 'a>) -> Self {
        let verdict = match &explanation.verdict {
            Verdict::Recommended => "recommended",
            Verdict::Conditional { .. } => "conditional",
            Verdict::Dropped(_) => "dropped",
            Verdict::UnknownChannel => "unknownChannel",
            Verdict::ChannelNotCovered => "channelNotCovered",
            Verdict::UnknownRelease { .. } => "unknownRelease",
            Verdict::ArchitectureMismatch { .. } => "architectureMismatch",
            Verdict::NotInChannel { .. } => "notInChannel",
            Verdict::NotNewer => "notNewer",
            Verdict::NoUpdate { .. } => "noUpdate",
        };
        let conditional_risks = match &explanation.verdict {
            Verdict::Conditional { risks: list } => risks(list),
            _ => Vec::new(),
        };
        let dropped_because = match &explanation.verdict {
            Verdict::Dropped(DropReason::UnevaluableRisk { risk }) => {
                Some(format!("risk {risk} has no matching rule clusters can evaluate"))
            }
            Verdict::Dropped(DropReason::ListedTwice { entries }) => {
                Some(format!("listed in {entries} conditional-edge entries"))
            }
            _ => None,
        };
        let removed_by = match &explanation.verdict {
            Verdict::NoUpdate { removed_by } => removed_by.as_deref(),
            _ => None,
        };
        let declarations = explanation
            .declarations
            .iter()
            .map(|declaration| {
                let (kind, reason, url, risk) = match &declaration.kind {
                    DeclarationKind::Block { reason, url } => {
                        ("block", reason.as_deref(), url.as_deref(), None)
                    }
                    DeclarationKind::Risk(risk) => ("risk", None, None, Some(RiskView(risk))),
                };
                DeclarationJson {
                    file: declaration.file,
                    line: declaration.line,
                    from: declaration.from,
                    kind,
                    reason,
                    url,
                    risk,
                    reasons: &declaration.reasons,
                    fixed_in: declaration.fixed_in.as_deref(),
                }
            })
            .collect();
        Self {
            kind: "Explanation",
            schema_version: SCHEMA_VERSION,
            channel: &explanation.channel,
            arch: explanation.arch,
            from: (&explanation.from).into(),
            to: (&explanation.to).into(),
            offered: explanation.verdict.offered(),
            verdict,
            summary: explanation.summary(),
            risks: conditional_risks,
            dropped_because,
            removed_by,
            declarations,
            reasons: explanation.reasons().into_iter().map(ReasonJson::from).collect(),
            cluster_policy: None,
        }
    }

    /// The same, with the policy-engine's explanation of the cluster asked as.
    pub fn with_cluster_policy(self, cluster_policy: Option<&'a ClusterPolicy>) -> Self {
        Self {
            cluster_policy,
            ..self
        }
    }
}

/// `cincinnati channels`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelsJson<'a> {
    kind: &'static str,
    schema_version: u32,
    pub arch: &'a str,
    /// The version asked about: only the channels holding it are listed.
    pub version: Option<String>,
    pub channels: Vec<ChannelJson<'a>>,
}

/// `releases`, `oldest` and `newest` are `null` for a channel known only
/// from the channels releases name (the graph was built from other
/// channels' answers).
#[derive(Serialize)]
pub struct ChannelJson<'a> {
    pub name: &'a str,
    pub releases: Option<usize>,
    pub oldest: Option<String>,
    pub newest: Option<String>,
}

impl<'a> ChannelsJson<'a> {
    pub fn new(arch: &'a str, version: Option<String>, channels: &[ChannelView<'a>]) -> Self {
        let channels = channels
            .iter()
            .map(|view| {
                let graph = view.graph();
                let releases = Some(view.releases()).filter(|_| graph.covers(view.name()));
                let version =
                    |release: Option<&ReleaseRef>| release.map(|&release| graph.version(release).to_string());
                ChannelJson {
                    name: view.name(),
                    releases: releases.map(<[ReleaseRef]>::len),
                    oldest: version(releases.and_then(<[ReleaseRef]>::first)),
                    newest: version(releases.and_then(<[ReleaseRef]>::last)),
                }
            })
            .collect();
        Self {
            kind: "Channels",
            schema_version: SCHEMA_VERSION,
            arch,
            version,
            channels,
        }
    }
}

/// One channel as clusters on it see it (a policy-engine's `/v1/channel`,
/// which the explorer page draws): its releases in version order, each
/// with the updates a cluster at it is offered there, by the CVO's rules
/// ([`crate::cvo`]), as [`ChannelView::updates_for`] offers them to a
/// cluster of the graph's architecture. A channel no release is in has
/// no releases, as the Graph API answers it. At a moment
/// ([`crate::UpdateGraph::channel_at`]), the releases phasing into the channel
/// whose `start` has come are in it, and the updates into them are phased
/// ([`crate::phasing`]).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelGraphJson<'a> {
    kind: &'static str,
    schema_version: u32,
    pub channel: &'a str,
    pub arch: &'a str,
    /// Oldest first.
    pub releases: Vec<ChannelReleaseJson<'a>>,
    /// How many updates of each kind the channel offers, over all releases.
    pub recommended_count: usize,
    pub conditional_count: usize,
    /// Of those, how many are phased.
    pub phased_count: usize,
}

/// A release (its [`ReleaseJson`] fields) and its updates on the channel.
#[derive(Serialize)]
pub struct ChannelReleaseJson<'a> {
    #[serde(flatten)]
    pub release: ReleaseJson<'a>,
    /// Only for a release phasing into the channel (which its `channels`
    /// then list, as an engine that phases serves it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phasing: Option<PhasingJson>,
    /// Newest first.
    pub updates: Vec<ChannelUpdateJson<'a>>,
}

/// When a release phasing into the channel entered it (`start`) and when
/// every cluster is offered every update into it (`end`: the graph lists
/// it then), RFC 3339.
#[derive(Serialize)]
pub struct PhasingJson {
    pub start: String,
    pub end: String,
}

/// An update offered: recommended, or conditional with its risks (each
/// with the matching rules clusters evaluate). An update the graph lists
/// as both is conditional; one clusters drop is not listed.
#[derive(Serialize)]
pub struct ChannelUpdateJson<'a> {
    pub to: String,
    pub recommended: bool,
    /// Empty for a recommended update.
    pub risks: Vec<RiskView<'a>>,
    /// Only for an update into a release phasing into the channel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phased: Option<PhasedJson<'a>>,
}

/// A phased update's window (RFC 3339): each cluster is offered it at its
/// own moment from `start` to `end`; `duration` as the channel declares it
/// for the update's kind (ISO 8601; `null`: zero); `share`, the fraction
/// of clusters offered it at the moment answered, in [0, 1].
#[derive(Serialize)]
pub struct PhasedJson<'a> {
    pub start: String,
    pub end: String,
    pub duration: Option<&'a str>,
    pub share: f64,
}

impl<'a> ChannelGraphJson<'a> {
    pub fn new(channel: &ChannelAt<'a>) -> Self {
        let releases: Vec<ChannelReleaseJson<'a>> = channel
            .releases()
            .into_iter()
            .map(|release| ChannelReleaseJson::new(channel, release))
            .collect();
        let count = |counted: fn(&ChannelUpdateJson) -> bool| {
            releases
                .iter()
                .flat_map(|release| &release.updates)
                .filter(|update| counted(update))
                .count()
        };
        Self {
            kind: "ChannelGraph",
            schema_version: SCHEMA_VERSION,
            channel: channel.name(),
            arch: channel.graph().arch(),
            recommended_count: count(|update| update.recommended),
            conditional_count: count(|update| !update.recommended),
            phased_count: count(|update| update.phased.is_some()),
            releases,
        }
    }
}

impl<'a> ChannelReleaseJson<'a> {
    fn new(channel: &ChannelAt<'a>, release: ReleaseRef) -> Self {
        let graph = channel.graph();
        let phasing = channel.phasing(release);
        let mut fields = ReleaseJson::from(graph.release(release));
        if phasing.is_some() {
            fields.channels.push(channel.name());
        }
        Self {
            release: fields,
            phasing: phasing.map(|phasing| PhasingJson {
                start: rfc3339(phasing.start),
                end: rfc3339(phasing.end),
            }),
            updates: channel
                .updates_from(release)
                .rev()
                .map(|update| ChannelUpdateJson {
                    to: graph.version(update.to).to_string(),
                    recommended: update.risks.is_none(),
                    risks: risks(update.risks.unwrap_or_default()),
                    phased: channel.phased(&update).map(PhasedJson::from),
                })
                .collect(),
        }
    }
}

impl<'a> From<PhasedUpdate<'a>> for PhasedJson<'a> {
    fn from(phased: PhasedUpdate<'a>) -> Self {
        Self {
            start: rfc3339(phased.window.start),
            end: rfc3339(phased.window.end),
            duration: phased.duration.map(RolloutDuration::as_str),
            share: phased.share,
        }
    }
}

/// A time as every document writes it: RFC 3339 in UTC, to the second.
fn rfc3339(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `cincinnati diff`; the changes of `cincinnati graph-data preview`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffJson<'a> {
    kind: &'static str,
    schema_version: u32,
    pub arch: &'a str,
    pub old: String,
    pub new: String,
    /// The channels that changed, in reading order.
    pub channels: Vec<ChannelDiffJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelDiffJson<'a> {
    pub channel: &'a str,
    pub releases_added: Vec<String>,
    pub releases_removed: Vec<String>,
    pub updates_added: Vec<ChangeJson<'a>>,
    pub updates_removed: Vec<ChangeJson<'a>>,
    pub risks_added: Vec<ChangeJson<'a>>,
    pub risks_removed: Vec<ChangeJson<'a>>,
}

/// An update and risk names (its risks, or those added or removed).
#[derive(Serialize)]
pub struct ChangeJson<'a> {
    pub from: String,
    pub to: String,
    pub risks: &'a [String],
}

impl<'a> DiffJson<'a> {
    pub fn new(kind: &'static str, arch: &'a str, old: String, new: String, diff: &'a GraphDiff) -> Self {
        let changes = |list: &'a [UpdateChange]| -> Vec<ChangeJson<'a>> {
            list.iter()
                .map(|change| ChangeJson {
                    from: change.from.to_string(),
                    to: change.to.to_string(),
                    risks: &change.risks,
                })
                .collect()
        };
        let versions = |list: &[cincinnati_core::Version]| list.iter().map(ToString::to_string).collect();
        let channels = diff
            .channels
            .iter()
            .map(|channel: &'a ChannelDiff| ChannelDiffJson {
                channel: &channel.channel,
                releases_added: versions(&channel.releases_added),
                releases_removed: versions(&channel.releases_removed),
                updates_added: changes(&channel.updates_added),
                updates_removed: changes(&channel.updates_removed),
                risks_added: changes(&channel.risks_added),
                risks_removed: changes(&channel.risks_removed),
            })
            .collect();
        Self {
            kind,
            schema_version: SCHEMA_VERSION,
            arch,
            old,
            new,
            channels,
        }
    }
}

/// `cincinnati signatures verify`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignaturesJson<'a> {
    kind: &'static str,
    schema_version: u32,
    /// As given: a pull spec or a digest.
    pub release: &'a str,
    pub digest: &'a str,
    pub store: &'a str,
    /// Whether the CVO would accept the release: one signature checks out.
    pub verified: bool,
    /// In store order, up to the first one missing.
    pub signatures: Vec<SignatureJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureJson<'a> {
    pub index: u32,
    pub url: &'a str,
    /// `verified`, `rejected` (found, does not count) or `unavailable` (the
    /// store failed to answer).
    pub status: &'static str,
    /// When verified: the signing key's fingerprint, the identity signed
    /// and when (RFC 3339, when the signature says).
    pub signer: Option<&'a str>,
    pub identity: Option<&'a str>,
    pub signed_at: Option<String>,
    /// When not verified: why.
    pub reason: Option<String>,
}

impl<'a> SignaturesJson<'a> {
    pub fn new(release: &'a str, store: &'a str, checked: &'a ReleaseSignatures) -> Self {
        let signatures = checked
            .signatures
            .iter()
            .map(|signature| {
                let (status, verified, reason) = match &signature.outcome {
                    Outcome::Verified(verified) => ("verified", Some(verified), None),
                    Outcome::Rejected(rejection) => ("rejected", None, Some(rejection.to_string())),
                    Outcome::Unavailable(error) => ("unavailable", None, Some(error.to_string())),
                };
                SignatureJson {
                    index: signature.index,
                    url: signature.url.as_str(),
                    status,
                    signer: verified.map(|verified| verified.signer.as_str()),
                    identity: verified.map(|verified| verified.document.docker_reference()),
                    signed_at: verified
                        .and_then(|verified| verified.signed_at)
                        .and_then(|at| Timestamp::try_from(at).ok())
                        .map(rfc3339),
                    reason,
                }
            })
            .collect();
        Self {
            kind: "Signatures",
            schema_version: SCHEMA_VERSION,
            release,
            digest: checked.digest.as_str(),
            store,
            verified: checked.is_verified(),
            signatures,
        }
    }
}
