//! The client plane: what clusters and their tools ask on the public port.
//! A request's parameters are validated at the door ([`query`]), its view
//! made by the filter pipeline ([`request`], [`filters`]) from the
//! upstream's graph ([`upstream`]), phased per cluster where graph-data
//! phases a release ([`phased`]), and answered from bytes prepared once
//! per revision ([`answers`]); [`engine`] composes them, [`routes`] serves
//! them. It knows the per-cluster policy (`crate::cluster_policy`) and
//! hands each answered update check to whoever records them
//! ([`engine::CheckSink`]), never the operator plane itself.

mod answers;
mod engine;
pub mod filters;
pub mod phased;
pub mod query;
pub mod request;
mod routes;
mod upstream;

pub(crate) use engine::{CheckSink, Engine, Limits, Parts};
pub use engine::{ClientStatus, UpstreamStatus};
pub(crate) use routes::{at_hand as graph_answers_at_hand, configure as configure_routes};
pub(crate) use upstream::client::{InvalidUpstream, UpstreamClient};
pub(crate) use upstream::feeds::{FeedLimits, Feeds};
pub use upstream::revision::Revision;
pub(crate) use upstream::revision::Served;
pub(crate) use upstream::{KindSetting, UpstreamParameters};
