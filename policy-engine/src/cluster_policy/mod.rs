//! Per-cluster policy: what a cluster is offered depends on who it is.
//!
//! A request's `id` (the cluster's UUID, which the CVO sends) selects its
//! groups in the policy file and/or from a lookup service; the groups' rules
//! (deferral, pins) and the rollouts in flight decide which releases are
//! withheld from it, the groups' blocked edges which updates are removed or
//! made conditional, and the policy's scoped channels which channels its
//! view is made of. All of that is a [`PolicyClass`], computed per request from the id and the time
//! without touching the graph; answers are computed once per (channel,
//! arch, class) and cached like every answer. A request without an id, or
//! with one that is not a UUID, gets the default rules and is last in every
//! rollout: never an error.
//!
//! - [`id`]: cluster ids and the rollout place (a documented hash).
//! - [`file`]: the policy file, validated with file:line errors.
//! - [`policy`]: the validated policy and the classes of requests.
//! - [`apply`]: the `cluster-policy` filter, which applies a class.
//! - [`edges`]: a class's own blocked edges and risks, applied to its view.
//! - [`source`]: the file as served, reloaded when it changes.
//! - [`lookup`]: the lookup service that adds groups to the file's.
//! - [`explain`]: why a cluster sees what it sees (the status port's
//!   `{prefix}/v1/explain`).

pub mod apply;
pub mod edges;
pub mod explain;
pub mod file;
pub mod id;
pub mod lookup;
pub mod policy;
pub mod source;

pub use policy::{Policy, PolicyClass};
pub use source::PolicySource;
