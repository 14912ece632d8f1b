//! What a rollout of an update is, as pure functions of stored facts.
//!
//! A rollout offers one target release to a growing share of clusters.
//! Four things decide who is offered it, each a type of its own:
//!
//! - its [`Declaration`] (the policy file's `rollouts`, or graph-data's
//!   phased rollouts): target, schedule, office hours, gates, halts;
//! - its run-time [`Control`] (operators, Alertmanager, halts): pauses,
//!   holds, the alerts firing on it, changed only by [`change::decide`];
//! - its [`GateState`] (the fleet, through [`rounds`]): canaries and the
//!   clusters a rate admitted;
//! - the clock ([`time`]).
//!
//! [`Rollout::position`] answers "where is this rollout now",
//! [`Position::offers`] "is this cluster inside"; nothing else computes
//! progress, paused time or periods. [`evidence`] says what a cluster's
//! record must show before it steers a rollout, [`halts`] when the fleet's
//! figures halt one, [`describe`] what a position says to people.
//!
//! No I/O, no async, no clock of its own: every function is given `now`.
//! The policy-engine and the fleet store use it; the command-line client
//! prints what the engine's model said (`cincinnati_client::rollout`).

pub mod change;
pub mod control;
pub mod declaration;
pub mod describe;
pub mod evidence;
pub mod gates;
pub mod halts;
pub mod office_hours;
pub mod place;
pub mod position;
pub mod rounds;
pub mod text;
pub mod time;

pub use control::Control;
pub use declaration::Declaration;
pub use gates::GateState;
pub use place::{ClusterId, Lot, Place, Placed};
pub use position::{Knowledge, Known, Position, Reading, Rollout, RunState, Stage, Who};
