//! The engine's `/status` document, typed so that tests and tools read it
//! as the engine writes it.

use serde::{Deserialize, Serialize};
use service_kit::supervisor::TaskStatus;

use crate::cluster_policy::source::PolicyStatus;
use crate::control::ControlStatus;
use crate::fleet::FleetStatus;
use crate::request::UpstreamKind;
use crate::upstream::feed::FeedStatus;

/// The `/status` document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineStatus {
    pub ready: bool,
    pub upstream: UpstreamStatus,
    /// The filters, in order.
    pub pipeline: Vec<String>,
    /// The root feed (a graph-builder upstream), or one per forwarded
    /// parameter set (an engine upstream).
    pub feeds: Vec<FeedStatus>,
    /// The per-cluster policy served, if one is configured.
    #[serde(default)]
    pub cluster_policy: Option<PolicyStatus>,
    /// The fleet store and its recorder, if one is configured.
    #[serde(default)]
    pub fleet: Option<FleetStatus>,
    /// The rollouts' run-time control, if configured.
    #[serde(default)]
    pub rollout_control: Option<ControlStatus>,
    pub tasks: Vec<TaskStatus>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamStatus {
    /// Its password redacted.
    pub url: String,
    /// Until detected: none.
    pub kind: Option<UpstreamKind>,
}
