//! A rollout as a policy-engine knows it: [`RolloutView`], the one wire view
//! every document embeds (the engine's `{prefix}/v1/rollouts`, the fleet's
//! rollouts, a cluster's explanation), written by the engine from its
//! rollout model and read by `cincinnati rollout`, `cincinnati fleet` and
//! `cincinnati explain`. Also the documents of rollout control: the
//! rollouts with the audit ([`Rollouts`]) and what Alertmanager's alerts did
//! ([`AlertsTaken`]).
//!
//! Times are RFC 3339 in UTC, to the second; progress in percent.

use serde::{Deserialize, Serialize};

use crate::header::Header;

/// One rollout, as the engine knows it now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutView {
    pub target: String,
    /// Where the policy file declares it; none for a rollout declared by
    /// graph-data's phased rollouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The channels it phases into, for a rollout declared by graph-data
    /// (its schedule the span of its windows there).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phased_in: Vec<String>,
    /// Its schedule as declared: from `startingPercentage` at `start` to
    /// every cluster at `complete`.
    pub start: String,
    pub complete: String,
    pub starting_percentage: f64,
    /// When it newly offers its target (`mon-fri 09:00-17:00
    /// Europe/Berlin`), if only within office hours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub office_hours: Option<String>,
    /// What mainly holds it where it is, or that it runs: `unknown`,
    /// `not-judged`, `held`, `paused`, `awaiting-canaries`, `not-started`,
    /// `outside-office-hours`, `rated`, `on-schedule`, `complete`.
    pub state: String,
    /// Where it is, in one sentence ("awaiting 3 canaries (1 arrived, due
    /// by ...)", "outside office hours at 12.0%, opens Mon 09:00
    /// Europe/Berlin").
    pub said: String,
    /// Clusters placed below this are offered its target (100: everyone).
    pub progress: f64,
    /// What its schedule and run-time control give, before its gates.
    pub scheduled_progress: f64,
    /// What the policy file's schedule alone gives now.
    pub declared_progress: f64,
    /// Its canaries, if it declares them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canaries: Option<CanariesView>,
    /// Its rate, if it declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateView>,
    /// What run-time control did to it; absent: nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlView>,
    /// Where its run-time state and the policy file disagree (an edit a
    /// pause or hold hides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<String>,
}

impl RolloutView {
    /// Where it is declared, for people: `line 12`, or `graph-data
    /// (stable-4.18)`.
    pub fn declared_in(&self) -> String {
        match self.line {
            Some(line) => format!("line {line}"),
            None => format!("graph-data ({})", self.phased_in.join(", ")),
        }
    }
}

/// A rollout's canaries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanariesView {
    /// How many it asks for.
    pub wanted: u32,
    /// The policy file's group they are chosen in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// When they were chosen (and offered the target); absent: not yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_at: Option<String>,
    /// The clusters chosen (ids, or their keyed hashes).
    pub clusters: Vec<CanaryView>,
    /// When the last arrived: its schedule starts then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrived_at: Option<String>,
    /// When one that has not arrived halts the rollout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryView {
    pub cluster: String,
    pub place: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrived_at: Option<String>,
}

/// A rollout's rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RateView {
    /// At most this many clusters newly offered a period of `periodHours`.
    pub clusters: u64,
    pub period_hours: f64,
    /// When the current period ends; absent: not counted yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_ends: Option<String>,
    /// Clusters newly offered in the current period.
    pub in_period: u64,
    /// Clusters offered in all (those offered before the rate included).
    pub admitted: u64,
    /// Clusters the last gate check left waiting.
    pub waiting: u64,
}

/// What run-time control did to a rollout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlView {
    /// Its pause in force: since when, the progress it keeps, by whom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<PauseView>,
    /// A progress held whatever the schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_progress: Option<f64>,
    /// Seconds its clock stood still in earlier pauses: its schedule runs
    /// that much later.
    pub stood_still_secs: f64,
    /// Alertmanager's alerts firing on it (their names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alerts: Vec<String>,
    /// The last change (the audit has every one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<AuditEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PauseView {
    pub since: String,
    pub progress: f64,
    pub by: String,
}

/// `GET {prefix}/v1/rollouts`: the policy file's rollouts as run-time
/// control leaves them, and the last changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollouts {
    #[serde(flatten)]
    pub header: Header,
    /// Whether the engine has read the run-time state (if not, it offers
    /// no rollout's target to anyone), and when it last did.
    pub state: KnowledgeView,
    pub rollouts: Vec<RolloutView>,
    /// The last changes, oldest first.
    pub history: Vec<AuditEntry>,
}

/// What an engine knows of the rollouts' run-time state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KnowledgeView {
    /// `read` (as of `asOf`), `unknown` (never read: no rollout's target
    /// is offered) or `declared` (no run-time control).
    pub known: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// Pauses in force here that the store has not taken yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
    /// Why the store cannot be read, while it cannot (the history is then
    /// empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One change, as audited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub target: String,
    /// `pause`, `resume`, `hold`, `release`, or a gate's `canaries`,
    /// `canaries-arrived`, `admitted`.
    pub action: String,
    /// The token's name, the alert's, a halt's criterion, or `gate`.
    pub by: String,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_progress: Option<f64>,
    pub at: String,
}

/// `POST {prefix}/v1/alerts/alertmanager`: what each alert of an
/// Alertmanager notification did, in the notification's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlertsTaken {
    #[serde(flatten)]
    pub header: Header,
    pub alerts: Vec<AlertTaken>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlertTaken {
    /// `labels.alertname`.
    pub alertname: String,
    /// `firing` or `resolved`.
    pub status: String,
    /// The rollout its labels name (`rollout_target`, else `to_version`);
    /// `null`: none.
    pub target: Option<String>,
    /// `paused`, `already-paused`, `resumed`, `left-paused` (resolved, but
    /// the pause is not only its to end), `not-paused`, `overridden` (an
    /// operator resumed the rollout while it fires), `no-rollout-label`,
    /// `unknown-rollout`, `pending` (the store could not take it: in force
    /// here, written when it can), `failed` (the store could not take a
    /// resume: the notification is answered 503, so Alertmanager retries
    /// it).
    pub outcome: String,
}
