//! The engine's `/status` document, typed so that tests and tools read it
//! as the engine writes it.

use serde::{Deserialize, Serialize};
use service_kit::supervisor::TaskStatus;

pub use crate::client::{ClientStatus, UpstreamStatus};
use crate::operator::ControlStatus;
use crate::operator::FleetStatus;

/// The `/status` document: the client plane's part, and the operator
/// plane's.
#[derive(Debug, Serialize, Deserialize)]
pub struct EngineStatus {
    #[serde(flatten)]
    pub client: ClientStatus,
    /// The fleet store and its recorder, if one is configured.
    #[serde(default)]
    pub fleet: Option<FleetStatus>,
    /// The rollouts' run-time control, if configured.
    #[serde(default)]
    pub rollout_control: Option<ControlStatus>,
    pub tasks: Vec<TaskStatus>,
}
