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

/// The query string an engine upstream gets: name-value pairs sorted by
/// name, each name once, so equal queries are equal keys of one cached
/// upstream answer (empty for a graph-builder).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UpstreamParameters(Vec<(String, String)>);

impl UpstreamParameters {
    /// Sorted, and of pairs with one name, the one sorting first.
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut pairs: Vec<(String, String)> = pairs.into_iter().collect();
        pairs.sort();
        pairs.dedup_by(|later, earlier| later.0 == earlier.0);
        Self(pairs)
    }

    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    /// These parameters with `name` set to `value`.
    pub fn with(&self, name: &str, value: &str) -> Self {
        Self::new(
            self.0
                .iter()
                .filter(|(key, _)| key != name)
                .cloned()
                .chain([(name.to_owned(), value.to_owned())]),
        )
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
