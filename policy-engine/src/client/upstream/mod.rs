//! The upstream: a graph-builder or another policy-engine, fetched in the
//! background and kept as parsed revisions.
//!
//! - [`client`]: one conditional, bounded HTTP fetch.
//! - [`feed`]: the last good graph of one upstream query, with its errors.
//! - [`feeds`]: every feed of the engine: the upstream's kind, the feed of
//!   each forwarded parameter set (created on demand, evicted when idle or
//!   beyond the bound), revalidation for a request, the background rounds,
//!   and the readiness of an engine upstream.
//! - [`revision`]: a parsed graph, with the cache of answers computed from it.

pub mod client;
pub mod feed;
pub mod feeds;
pub mod revision;

use serde::{Deserialize, Serialize};

use crate::client::query::ClientQuery;
use crate::client::request::UpstreamKind;

/// The query string an engine upstream gets: name-value pairs sorted by
/// name, each name once, so equal queries are equal keys of one cached
/// upstream answer (empty for a graph-builder).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UpstreamParameters(Vec<(String, String)>);

impl UpstreamParameters {
    /// The query an engine upstream gets for `query`: `channel`, `arch` as
    /// given and the configured extra parameters, in a stable order so
    /// equal queries share one cached upstream answer.
    pub fn forwarded(query: &ClientQuery) -> Self {
        Self::new(
            query
                .channel
                .iter()
                .map(|channel| ("channel".to_owned(), channel.to_string()))
                .chain(
                    query
                        .arch
                        .iter()
                        .map(|arch| ("arch".to_owned(), arch.to_string())),
                )
                .chain(query.forwarded.clone()),
        )
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::query::QueryRules;

    #[test]
    fn forwarded_parameters_are_stable_and_limited_to_forwarded_ones() {
        let rules = QueryRules {
            forwarded: ["version".to_owned()].into(),
            ..QueryRules::default()
        };
        let query = ClientQuery::parse("version=4.1.0&arch=arm64&channel=fast-4.1&id=x", &rules).unwrap();
        assert_eq!(
            UpstreamParameters::forwarded(&query).pairs(),
            [
                ("arch".to_owned(), "arm64".to_owned()),
                ("channel".to_owned(), "fast-4.1".to_owned()),
                ("version".to_owned(), "4.1.0".to_owned()),
            ]
        );
    }

    #[test]
    fn one_value_per_name_and_with_replaces_it() {
        let parameters = UpstreamParameters::new([
            ("channel".to_owned(), "b".to_owned()),
            ("channel".to_owned(), "a".to_owned()),
        ]);
        assert_eq!(parameters.get("channel"), Some("a"));
        assert_eq!(parameters.with("channel", "c").get("channel"), Some("c"));
    }
}
