//! A Cincinnati client: what an update service offers clusters, worked out
//! the way the OpenShift cluster-version operator (CVO) works it out, and
//! the questions administrators ask of it.
//!
//! - [`fetch`]: Graph API documents from a service (asked as a cluster
//!   asks) or a file, and graph-data; the only module doing I/O.
//! - [`document`]: a full graph or one channel's answer.
//! - [`graph`]: [`UpdateGraph`], one architecture's releases, channels and
//!   updates as clusters see them ([`cvo`]: the CVO's rules).
//! - [`view`]: [`ChannelView`], one channel; [`Updates`], what a cluster on
//!   it is offered; [`phasing`]: [`ChannelAt`], one channel at a moment,
//!   with the releases phasing into it (graph-data's phased rollouts).
//! - [`plan`]: update paths across minors, with the channel of each update;
//!   [`runbook`]: an EUS-to-EUS plan as the steps an administrator takes.
//! - [`explain`]: why an update is offered or not; [`reasons`]: its reasons
//!   in the order that decides ([`policy_facts`]: what per-cluster policy
//!   does to an update); [`cluster_policy`]: a policy-engine's explanation
//!   of what one cluster sees.
//! - [`diff`]: what changed between two graphs, per channel.
//! - [`channel`]: channel names and tiers.
//! - [`json`]: the stable JSON documents of the answers; [`fleet`]: those a
//!   policy-engine with a fleet store answers; [`rollout_control`]: those of
//!   its rollouts' run-time control.
//!
//! Everything but [`fetch`] is pure and works on a built [`UpdateGraph`],
//! so a service can answer the same questions from the graph it holds.

pub mod channel;
pub mod cluster_policy;
pub mod cvo;
pub mod diff;
pub mod document;
pub mod explain;
pub mod fetch;
pub mod fleet;
pub mod graph;
pub mod header;
pub mod json;
pub mod phasing;
pub mod plan;
pub mod policy_facts;
pub mod reasons;
pub mod rollout;
pub mod runbook;
pub mod signatures;
pub mod tokens;
pub mod view;

pub use channel::Tier;
pub use document::{Document, Shape};
pub use fetch::{ClientError, FetchError, Fetcher, Query, Source, fetch_updates};
pub use graph::{Coverage, ReleaseRef, Update, UpdateGraph};
pub use phasing::ChannelAt;
pub use view::{ChannelView, Cluster, ConditionalUpdate, Updates, VersionNotFound};
