//! The client plane: what clusters and their tools ask on the public port.
//! A request's parameters are validated at the door ([`query`]), its view
//! made by the filter pipeline ([`request`], [`filters`]) from the
//! upstream's graph ([`upstream`]) and answered from bytes prepared once
//! per revision ([`answers`]); [`engine`] composes them, [`routes`] serves
//! them. It knows the per-cluster policy (`crate::cluster_policy`) and
//! hands each answered update check to whoever records them
//! ([`engine::CheckSink`]), never the operator plane itself.

pub mod answers;
pub mod engine;
pub mod filters;
pub mod query;
pub mod request;
pub mod routes;
pub mod upstream;
