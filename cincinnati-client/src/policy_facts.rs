//! What a cluster's per-cluster policy does to one update, read from a
//! policy-engine's explanation of that cluster ([`ClusterPolicy`]): the
//! rule that withholds the target (rollout, deferral, pin, blocked edge),
//! its rollout, its risks, each said in a sentence with its details and
//! line. The first layer of [`crate::reasons`].

use cincinnati_core::Version;
use serde_json::Value;

use crate::cluster_policy::{ClusterPolicy, EdgeChange, PhasedOffer, RolloutPlace};

/// What a cluster's policy does to one update `from → to`, from the
/// engine's explanation of that cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyFacts {
    /// The policy file, as the engine names it (engines before it did not).
    pub file: Option<String>,
    /// The cluster id as the engine read it (`None`: not a UUID, the
    /// default policy, last in every rollout).
    pub id: Option<String>,
    pub place_percent: Option<f64>,
    /// The cluster's groups (none: the default rules).
    pub groups: Vec<String>,
    /// The rule that withholds `to` from the cluster, if one does.
    pub rule: Option<PolicyRule>,
    /// The rollout of `to`, if one is scheduled.
    pub rollout: Option<RolloutPlace>,
    /// Risks the cluster's groups put on the update, with their lines.
    pub risks: Vec<EdgeChange>,
    /// Whether the graph without the policy has the update (`None`: the
    /// engine did not find `from` in the channel).
    pub in_graph_without_policy: Option<bool>,
    /// The update's phased rollout declared in graph-data, if one phases it
    /// for this cluster.
    pub phased: Option<PhasedOffer>,
}

/// The rule of the cluster's policy that withholds the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyRule {
    /// A phased rollout of the target the cluster is not inside yet
    /// ([`PolicyFacts::rollout`]).
    Rollout,
    /// A deferral (ring): the target's image is younger than that many days.
    Deferral {
        deferral_days: Option<u64>,
        created: Option<String>,
    },
    /// A pin: the target is above it.
    MaxVersion { max_version: String },
    /// A blocked edge of the cluster's groups, on this line of the policy
    /// file.
    BlockedEdge { line: Option<u64> },
    /// A rule this client does not know, with its details as the engine
    /// wrote them.
    Other { rule: String, details: String },
}

impl PolicyFacts {
    /// What `policy` (the engine's explanation, asked about `from`) says
    /// about `from → to`.
    pub fn of(policy: &ClusterPolicy, from: &Version, to: &Version) -> Self {
        let (from, to) = (from.to_string(), to.to_string());
        let removal = policy.removal_of(&to);
        let rule = removal.map(|removal| {
            let number = |key: &str| removal.details.get(key).and_then(Value::as_u64);
            let text = |key: &str| {
                removal
                    .details
                    .get(key)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            match removal.rule.as_str() {
                "rollout" => PolicyRule::Rollout,
                "deferral" => PolicyRule::Deferral {
                    deferral_days: number("deferralDays"),
                    created: text("created"),
                },
                "maxVersion" => PolicyRule::MaxVersion {
                    max_version: text("maxVersion").unwrap_or_default(),
                },
                "blockedEdge" => PolicyRule::BlockedEdge { line: number("line") },
                other => PolicyRule::Other {
                    rule: other.to_owned(),
                    details: removal.details_text(),
                },
            }
        });
        // The rollout a removal names, else the one of the target.
        let rollout = removal
            .and_then(|removal| removal.details.get("rollout").and_then(Value::as_u64))
            .and_then(|index| policy.rollouts.get(usize::try_from(index).ok()?))
            .or_else(|| policy.rollout_of(&to))
            .cloned();
        Self {
            file: policy.policy_file.clone(),
            id: policy.id.clone(),
            place_percent: policy.place_percent,
            groups: policy.groups.clone(),
            rule,
            rollout,
            risks: policy
                .edges_on(&from, &to)
                .filter(|change| change.risk.is_some())
                .cloned()
                .collect(),
            in_graph_without_policy: policy.has_update_to(&to),
            phased: policy.phased_to(&to).filter(|offer| offer.from == from).cloned(),
        }
    }

    /// `its place is 71.30%`, or how a request without an id is placed.
    pub(crate) fn place(&self) -> String {
        match (self.id.as_ref(), self.place_percent) {
            (Some(_), Some(place)) => format!("its place is {place:.2}%"),
            _ => "without a cluster id it is last in every rollout".to_owned(),
        }
    }
}

impl PolicyRule {
    /// Why `to` is withheld, in one sentence (where the rule is written
    /// is [`PolicyRule::line`]).
    pub fn sentence(&self, policy: &PolicyFacts, to: &Version) -> String {
        match self {
            PolicyRule::Rollout => match &policy.rollout {
                Some(place) => {
                    let inside = place
                        .inside_from
                        .as_ref()
                        .map(|at| format!("; at its schedule it is inside from {at}"))
                        .unwrap_or_default();
                    format!(
                        "the phased rollout of {to} does not offer it to this cluster yet ({}{inside}): {}",
                        policy.place(),
                        place.rollout.said
                    )
                }
                None => format!("the phased rollout of {to} has not reached it"),
            },
            PolicyRule::Deferral { deferral_days, .. } => match deferral_days {
                Some(days) => format!("its groups defer new releases by {days} days, and {to} is younger"),
                None => format!("its groups defer new releases, and {to} is too young"),
            },
            PolicyRule::MaxVersion { max_version } => {
                format!("its groups are pinned at {max_version} (max_version), and {to} is above")
            }
            PolicyRule::BlockedEdge { .. } => "a blocked edge of its groups removes it".to_owned(),
            PolicyRule::Other { rule, details } => format!("the policy's rule {rule} removes it ({details})"),
        }
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            PolicyRule::Rollout => "rollout",
            PolicyRule::Deferral { .. } => "deferral",
            PolicyRule::MaxVersion { .. } => "maxVersion",
            PolicyRule::BlockedEdge { .. } => "blockedEdge",
            PolicyRule::Other { .. } => "policyRule",
        }
    }

    /// The rule's details: a rollout's schedule and when the cluster is
    /// inside, when a deferred release is offered.
    pub(crate) fn details(&self, policy: &PolicyFacts) -> Vec<String> {
        match self {
            PolicyRule::Rollout => policy.rollout.as_ref().map(schedule).unwrap_or_default(),
            PolicyRule::Deferral {
                deferral_days: Some(days),
                created: Some(created),
            } => {
                let mut details = vec![format!("its image was built {created}")];
                if let Some(offered) = days_after(created, *days) {
                    details.push(format!(
                        "offered once {days} days old: from {offered} (at most a deferral bucket later)"
                    ));
                }
                details
            }
            _ => Vec::new(),
        }
    }

    /// Where the rule is written in the policy file.
    pub fn line(&self, policy: &PolicyFacts) -> Option<u64> {
        match self {
            PolicyRule::Rollout => policy.rollout.as_ref().and_then(|place| place.rollout.line),
            PolicyRule::BlockedEdge { line } => *line,
            _ => None,
        }
    }
}

/// A rollout's schedule, and when the cluster is inside at it.
pub(crate) fn schedule(place: &RolloutPlace) -> Vec<String> {
    let rollout = &place.rollout;
    let mut details = vec![format!(
        "the rollout of {}: {}% of clusters from {}, rising evenly to all of them on {}",
        rollout.target, rollout.starting_percentage, rollout.start, rollout.complete
    )];
    if let Some(hours) = &rollout.office_hours {
        details.push(format!("it newly offers only within office hours, {hours}"));
    }
    // (When the cluster is outside, the sentence says when it is inside.)
    if let Some(inside_from) = place.inside_from.as_ref().filter(|_| place.offered) {
        details.push(format!("this cluster is inside since {inside_from}"));
    }
    details
}

/// RFC 3339 `created` (a time without an offset read in UTC) plus `days`,
/// to the second.
fn days_after(created: &str, days: u64) -> Option<String> {
    let created = created.parse::<jiff::Timestamp>().ok().or_else(|| {
        let civil: jiff::civil::DateTime = created.parse().ok()?;
        civil
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|zoned| zoned.timestamp())
    })?;
    let offered = created
        .checked_add(jiff::SignedDuration::from_hours(
            i64::try_from(days).ok()?.checked_mul(24)?,
        ))
        .ok()?;
    Some(offered.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
}
