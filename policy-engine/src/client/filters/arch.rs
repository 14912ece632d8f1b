//! `arch-filter`: the releases of one architecture, named without it.
//!
//! On a graph-builder's graph, exactly as upstream:
//! - a release is kept iff its `release.arch` list contains the arch; the
//!   key is removed from every kept release;
//! - build identifiers equal to the arch are stripped from versions
//!   (`4.16.3+amd64` → `4.16.3`);
//! - a conditional edge is kept iff both endpoints contain the arch as a
//!   substring (upstream's rule, quirks included), then stripped the same way.
//!
//! On another engine's graph the arch was filtered and stripped already: a
//! release without the key and without build metadata, and a conditional
//! endpoint without build metadata, count as matching. That keeps the filter
//! idempotent, so `client → engine → engine` answers what one engine does.

use cincinnati_core::release::{keys, without_arch};
use cincinnati_core::stage::{Stage, StageSettings};
use cincinnati_core::{ApiError, ErrorKind, Graph, Release, SharedVersions, Version};
use serde::Deserialize;

use crate::client::query::{Arch, DEFAULT_ARCH};
use crate::client::request::{PolicyRequest, UpstreamKind};

pub const NAME: &str = "arch-filter";

/// `[[policy]] name = "arch-filter"`: the arch list is read from
/// `{key_prefix}.{key_suffix}`; `default_arch` serves requests without
/// `arch`, for every filter and the explorer alike (see
/// [`default_arch`]).
#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ArchFilterSettings {
    key_prefix: String,
    key_suffix: String,
    default_arch: String,
}

impl Default for ArchFilterSettings {
    fn default() -> Self {
        Self {
            key_prefix: keys::PREFIX.to_owned(),
            key_suffix: "release.arch".to_owned(),
            default_arch: DEFAULT_ARCH.to_owned(),
        }
    }
}

impl StageSettings<PolicyRequest> for ArchFilterSettings {
    const NAME: &'static str = NAME;

    fn build(self) -> Result<Box<dyn Stage<PolicyRequest>>, String> {
        self.default_arch()?;
        Ok(Box::new(ArchFilter {
            key: format!("{}.{}", self.key_prefix, self.key_suffix),
        }))
    }
}

impl ArchFilterSettings {
    fn default_arch(&self) -> Result<Arch, String> {
        Arch::parse(&self.default_arch).map_err(|error| format!("default_arch: {}", error.value))
    }
}

/// The architecture of requests without `arch` under the filter tables
/// `tables`: the arch filter's `default_arch`, or [`DEFAULT_ARCH`].
pub fn default_arch(tables: &[toml::Table]) -> Result<Arch, String> {
    let Some(table) = tables
        .iter()
        .find(|table| table.get("name").and_then(toml::Value::as_str) == Some(NAME))
    else {
        return Arch::parse(DEFAULT_ARCH).map_err(|error| error.value);
    };
    let mut fields = table.clone();
    fields.remove("name");
    let settings: ArchFilterSettings = toml::Value::Table(fields)
        .try_into()
        .map_err(|error| format!("{NAME}: {error}"))?;
    settings.default_arch()
}

#[derive(Debug)]
struct ArchFilter {
    key: String,
}

impl Stage<PolicyRequest> for ArchFilter {
    fn name(&self) -> &'static str {
        NAME
    }

    fn apply(&self, graph: &mut Graph, request: &PolicyRequest) -> Result<(), ApiError> {
        let arch = request.arch().as_str();
        let already_filtered = request.source == UpstreamKind::PolicyEngine;

        graph.retain_releases(|release| match release.metadata.get(&self.key) {
            Some(list) => list.split(',').any(|listed| listed.trim() == arch),
            None => already_filtered && !release.is_abstract() && release.version.build.is_empty(),
        });
        let ids: Vec<_> = graph.releases().map(|(id, _)| id).collect();
        for id in ids {
            if let Some(metadata) = graph.metadata_mut(id) {
                metadata.remove(&self.key);
            }
            let version = graph.release(id).map(|release: &Release| release.version.clone());
            if let Some(stripped) = version.as_ref().and_then(|version| without_arch(version, arch)) {
                graph
                    .set_version(id, stripped)
                    .map_err(|error| ApiError::new(ErrorKind::ArchVersionError, error))?;
            }
        }

        let matches = |version: &Version| {
            version.to_string().contains(arch) || (already_filtered && version.build.is_empty())
        };
        graph.retain_conditional_edges(|edge| matches(&edge.from) && matches(&edge.to));
        let mut stripped_versions = SharedVersions::default();
        for group in graph.conditional_edges_mut() {
            for edge in &mut group.edges {
                for version in [&mut edge.from, &mut edge.to] {
                    if let Some(stripped) = without_arch(version, arch) {
                        *version = stripped_versions.share(stripped);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::test_graphs::{graph, serialized};

    const GRAPH: &str = r#"{
      "nodes": [
        {"version": "4.2.0+amd64", "payload": "a0", "metadata": {"io.openshift.upgrades.graph.release.arch": "amd64", "k": "v"}},
        {"version": "4.2.1+amd64", "payload": "a1", "metadata": {"io.openshift.upgrades.graph.release.arch": "amd64"}},
        {"version": "4.2.0-s390x+s390x", "payload": "s0", "metadata": {"io.openshift.upgrades.graph.release.arch": "s390x"}},
        {"version": "4.2.1-s390x+s390x", "payload": "s1", "metadata": {"io.openshift.upgrades.graph.release.arch": "s390x"}},
        {"version": "4.2.1+multi", "payload": "m1", "metadata": {"io.openshift.upgrades.graph.release.arch": "multi"}},
        {"version": "4.2.2+amd64", "payload": "x", "metadata": {"io.openshift.upgrades.graph.release.arch": "arm64,amd64"}},
        {"version": "4.2.3", "payload": "n", "metadata": {}},
        {"version": "4.2.4+amd64"}
      ],
      "edges": [[0, 1], [2, 3], [1, 5], [0, 6], [5, 7]],
      "conditionalEdges": [
        {"edges": [{"from": "4.2.0+amd64", "to": "4.2.1+amd64"}, {"from": "4.2.0-s390x+s390x", "to": "4.2.1-s390x+s390x"}],
         "risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "PromQL", "promql": {"promql": "up"}}]}]},
        {"edges": [{"from": "4.2.0-s390x+s390x", "to": "4.2.1-s390x+s390x"}],
         "risks": [{"url": "u", "name": "S", "message": "m", "matchingRules": [{"type": "Always"}]}]}
      ]
    }"#;

    fn filter(query: &str, source: UpstreamKind, json: &str) -> Result<Graph, ApiError> {
        let mut graph = graph(json);
        ArchFilterSettings::default()
            .build()
            .unwrap()
            .apply(&mut graph, &PolicyRequest::for_test(query, source))?;
        Ok(graph)
    }

    #[test]
    fn keeps_the_arch_strips_it_and_removes_the_key() {
        let filtered = serialized(&filter("", UpstreamKind::GraphBuilder, GRAPH).unwrap());
        assert_eq!(
            filtered,
            json!({
              "nodes": [
                {"version": "4.2.0", "payload": "a0", "metadata": {"k": "v"}},
                {"version": "4.2.1", "payload": "a1", "metadata": {}},
                {"version": "4.2.2", "payload": "x", "metadata": {}}
              ],
              "edges": [[0, 1], [1, 2]],
              "conditionalEdges": [
                {"edges": [{"from": "4.2.0", "to": "4.2.1"}],
                 "risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "PromQL", "promql": {"promql": "up"}}]}]}
              ]
            })
        );
    }

    #[test]
    fn strips_only_the_build_identifier_equal_to_the_arch() {
        let filtered = serialized(&filter("arch=s390x", UpstreamKind::GraphBuilder, GRAPH).unwrap());
        let versions: Vec<_> = filtered["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["version"].clone())
            .collect();
        assert_eq!(versions, [json!("4.2.0-s390x"), json!("4.2.1-s390x")]);
        assert_eq!(filtered["conditionalEdges"].as_array().unwrap().len(), 2);
        assert_eq!(
            filtered["conditionalEdges"][0]["edges"],
            json!([{"from": "4.2.0-s390x", "to": "4.2.1-s390x"}])
        );
    }

    #[test]
    fn multi_is_an_arch_like_any_other() {
        let filtered = filter("arch=multi", UpstreamKind::GraphBuilder, GRAPH).unwrap();
        let versions: Vec<_> = filtered.releases().map(|(_, r)| r.version.to_string()).collect();
        assert_eq!(versions, ["4.2.1"]);
        assert!(filtered.conditional_edges().is_empty());
    }

    #[test]
    fn conditional_edges_match_by_substring_as_upstream() {
        // `arch=s390` keeps no release but keeps the s390x conditional edges
        // untouched, as upstream's substring test does.
        let filtered = filter("arch=s390", UpstreamKind::GraphBuilder, GRAPH).unwrap();
        assert_eq!(filtered.release_count(), 0);
        let endpoints: Vec<_> = filtered
            .conditional_edges()
            .iter()
            .flat_map(|g| &g.edges)
            .collect();
        assert_eq!(endpoints.len(), 2);
        assert!(
            endpoints
                .iter()
                .all(|e| e.from.to_string() == "4.2.0-s390x+s390x")
        );
    }

    #[test]
    fn a_graph_builders_releases_without_the_key_are_dropped() {
        let filtered = filter("arch=amd64", UpstreamKind::GraphBuilder, GRAPH).unwrap();
        assert!(filtered.find(&Version::parse("4.2.3").unwrap()).is_none());
    }

    #[test]
    fn an_engines_output_passes_unchanged() {
        let once = filter("arch=amd64", UpstreamKind::GraphBuilder, GRAPH).unwrap();
        let json = String::from_utf8(cincinnati_core::wire::serialize(&once, Some(1))).unwrap();
        let twice = filter("arch=amd64", UpstreamKind::PolicyEngine, &json).unwrap();
        assert_eq!(serialized(&twice), serialized(&once));
    }
}
