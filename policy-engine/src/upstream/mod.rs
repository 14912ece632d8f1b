//! The upstream: a graph-builder or another policy-engine, fetched in the
//! background and kept as parsed revisions.
//!
//! - [`client`]: one conditional, bounded HTTP fetch.
//! - [`feed`]: the last good graph of one upstream query, with its errors.
//! - [`revision`]: a parsed graph and the answers computed from it.

pub mod client;
pub mod feed;
pub mod revision;

use serde::{Deserialize, Serialize};

/// The query string an engine upstream gets, as sorted name-value pairs
/// (empty for a graph-builder).
pub type UpstreamParameters = Vec<(String, String)>;

/// What serves the graph this engine filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpstreamKind {
    /// Serves the full graph to a request without parameters; versions carry
    /// `+arch` and nodes the arch key. One fetch serves every client.
    GraphBuilder,
    /// Serves one channel and arch per request, already filtered. Fetched
    /// once per forwarded parameter set.
    PolicyEngine,
}

/// How the engine learns the upstream's kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KindSetting {
    /// From what the upstream serves to a request without parameters: a
    /// graph without a top-level `version` is a graph-builder's; a graph with
    /// one, or a `missing_params`/`invalid_params` error, is an engine's.
    #[default]
    Auto,
    GraphBuilder,
    PolicyEngine,
}

impl KindSetting {
    pub fn fixed(self) -> Option<UpstreamKind> {
        match self {
            KindSetting::Auto => None,
            KindSetting::GraphBuilder => Some(UpstreamKind::GraphBuilder),
            KindSetting::PolicyEngine => Some(UpstreamKind::PolicyEngine),
        }
    }
}
