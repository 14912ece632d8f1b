//! The documents of a policy-engine's rollout control (its status port's
//! `{prefix}/v1/rollouts`), written by the engine and read by `cincinnati
//! rollout`: each rollout of the policy file as run-time control leaves it,
//! and the audit of every change.

use serde::{Deserialize, Serialize};

use crate::cluster_policy::RolloutControlFacts;
use crate::fleet::Header;

/// `GET {prefix}/v1/rollouts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollouts {
    #[serde(flatten)]
    pub header: Header,
    pub rollouts: Vec<ControlledRollout>,
    /// The last changes, oldest first.
    pub history: Vec<AuditEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlledRollout {
    pub target: String,
    /// Where the policy file declares it.
    pub line: u64,
    /// The share of clusters offered the target now, in percent.
    pub progress: f64,
    /// What the file's schedule alone would give now.
    pub scheduled_progress: f64,
    /// Whether more clusters come inside by themselves (not paused, not
    /// held).
    pub on_schedule: bool,
    /// What run-time control did to it; `null`: the file's schedule alone.
    pub control: Option<RolloutControlFacts>,
    /// What its gates (`canary`, `max_offered_per_period`) say now; absent
    /// without gates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gates: Option<String>,
}

/// One change, as audited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub target: String,
    /// `pause`, `resume`, `hold` or `release`.
    pub action: String,
    /// The token's name, or the alert's.
    pub by: String,
    pub reason: String,
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
    /// the rollout does not say `auto_resume`, or another actor paused it
    /// last), `not-paused` (resolved, and nothing to resume),
    /// `no-rollout-label`, `unknown-rollout` (the policy file declares no
    /// rollout of the target), `failed` (the store could not take the change:
    /// the notification is answered 503, so Alertmanager retries it).
    pub outcome: String,
}
