//! `channel-filter`: the releases of one channel.
//!
//! Keeps concrete releases whose channel list (comma-separated, trimmed)
//! contains the requested channel (or, under a cluster policy with scoped
//! channels, one of the channels of the request's view); drops every other release with its edges
//! and the conditional edges touching it. No edge is invented across a
//! dropped release: a path through it vanishes.
//!
//! A release phasing into the requested channel (graph-data's phased
//! rollouts, see [`crate::client::phased`]) is kept from its `start` and
//! listed in the channel, and the updates into it the request has not
//! reached yet are dropped.

use std::collections::HashSet;

use cincinnati_core::listed::Listing;
use cincinnati_core::release::keys;
use cincinnati_core::stage::{ReleaseTest, Stage, StageSettings};
use cincinnati_core::{ApiError, Graph, Release};
use serde::Deserialize;

use super::PolicyRequest;

pub const NAME: &str = "channel-filter";

/// `[[policy]] name = "channel-filter"`: the channel list is read from
/// `{key_prefix}.{key_suffix}`.
#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChannelFilterSettings {
    key_prefix: String,
    key_suffix: String,
}

impl Default for ChannelFilterSettings {
    fn default() -> Self {
        Self {
            key_prefix: keys::PREFIX.to_owned(),
            key_suffix: "release.channels".to_owned(),
        }
    }
}

impl StageSettings<PolicyRequest> for ChannelFilterSettings {
    const NAME: &'static str = NAME;

    fn build(self) -> Result<Box<dyn Stage<PolicyRequest>>, String> {
        Ok(Box::new(ChannelFilter {
            key: format!("{}.{}", self.key_prefix, self.key_suffix),
        }))
    }
}

#[derive(Debug)]
struct ChannelFilter {
    key: String,
}

impl Stage<PolicyRequest> for ChannelFilter {
    fn name(&self) -> &'static str {
        NAME
    }

    fn apply(&self, graph: &mut Graph, request: &PolicyRequest) -> Result<(), ApiError> {
        let channels = request
            .view_channels()
            .ok_or_else(|| ApiError::missing_params(&["channel"]))?;
        graph.retain_releases(|release| self.keeps(release, &channels, request));
        let kept: HashSet<_> = graph
            .releases()
            .map(|(_, release)| release.version.clone())
            .collect();
        graph.retain_conditional_edges(|edge| kept.contains(&edge.from) && kept.contains(&edge.to));
        self.finish_kept(graph, request)
    }

    fn release_test<'a>(&'a self, request: &'a PolicyRequest) -> Option<ReleaseTest<'a>> {
        let channels = request.view_channels()?;
        Some(Box::new(move |release| self.keeps(release, &channels, request)))
    }

    /// The releases listing the view's channels; none for a request with a
    /// phase, which also keeps releases phasing into its channel.
    fn listing<'a>(&'a self, request: &'a PolicyRequest) -> Option<Listing<'a>> {
        request.phase.is_none().then_some(())?;
        Some(Listing {
            key: &self.key,
            values: request.view_channels()?,
        })
    }

    /// The request's phase, on the releases phasing into its channel.
    fn finish_kept(&self, graph: &mut Graph, request: &PolicyRequest) -> Result<(), ApiError> {
        if let (Some(phase), Some(channel)) = (&request.phase, &request.query.channel) {
            phase.apply(graph, channel.as_str(), &self.key);
        }
        Ok(())
    }
}

impl ChannelFilter {
    /// Whether `release` is a concrete release of one of `channels`, or one
    /// that entered the requested channel for `request`'s phase.
    fn keeps(&self, release: &Release, channels: &[&str], request: &PolicyRequest) -> bool {
        !release.is_abstract()
            && (release
                .metadata_list(&self.key)
                .any(|listed| channels.contains(&listed))
                || request.phase.as_ref().is_some_and(|phase| phase.admits(release)))
    }
}

#[cfg(test)]
mod tests {
    use cincinnati_core::ErrorKind;
    use serde_json::json;

    use super::*;
    use crate::client::request::UpstreamKind;
    use crate::test_graphs::{graph, serialized};

    const GRAPH: &str = r#"{
      "nodes": [
        {"version": "4.1.0+amd64", "payload": "p0", "metadata": {"io.openshift.upgrades.graph.release.channels": "fast-4.1,stable-4.1"}},
        {"version": "4.1.1+amd64", "payload": "p1", "metadata": {"io.openshift.upgrades.graph.release.channels": "fast-4.1"}},
        {"version": "4.1.2+amd64", "payload": "p2", "metadata": {"io.openshift.upgrades.graph.release.channels": " stable-4.1 ,fast-4.1"}},
        {"version": "4.1.3+amd64"}
      ],
      "edges": [[0, 1], [1, 2], [0, 2], [2, 3]],
      "conditionalEdges": [
        {"edges": [{"from": "4.1.0+amd64", "to": "4.1.1+amd64"}, {"from": "4.1.0+amd64", "to": "4.1.2+amd64"}],
         "risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "Always"}]}]},
        {"edges": [{"from": "4.1.1+amd64", "to": "4.1.2+amd64"}],
         "risks": [{"url": "u", "name": "S", "message": "m", "matchingRules": [{"type": "Always"}]}]}
      ]
    }"#;

    fn filter(query: &str) -> Result<Graph, ApiError> {
        let mut graph = graph(GRAPH);
        ChannelFilterSettings::default().build().unwrap().apply(
            &mut graph,
            &PolicyRequest::for_test(query, UpstreamKind::GraphBuilder),
        )?;
        Ok(graph)
    }

    #[test]
    fn keeps_the_channels_releases_without_inventing_edges() {
        let filtered = serialized(&filter("channel=stable-4.1").unwrap());
        let versions: Vec<_> = filtered["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["version"].clone())
            .collect();
        assert_eq!(versions, [json!("4.1.0+amd64"), json!("4.1.2+amd64")]);
        // 0→2 existed; 0→1→2 does not become anything new.
        assert_eq!(filtered["edges"], json!([[0, 1]]));
        assert_eq!(
            filtered["conditionalEdges"],
            json!([{"edges": [{"from": "4.1.0+amd64", "to": "4.1.2+amd64"}],
                    "risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "Always"}]}]}])
        );
    }

    #[test]
    fn drops_abstract_releases_even_when_connected() {
        let filtered = filter("channel=fast-4.1").unwrap();
        assert_eq!(filtered.release_count(), 3);
        assert_eq!(filtered.edge_count(), 3);
        assert_eq!(filtered.conditional_edges().len(), 2);
    }

    #[test]
    fn an_unknown_channel_gives_an_empty_graph() {
        let filtered = serialized(&filter("channel=a").unwrap());
        assert_eq!(
            filtered,
            json!({"nodes": [], "edges": [], "conditionalEdges": []})
        );
    }

    #[test]
    fn a_missing_channel_is_missing_params() {
        let error = filter("arch=amd64").unwrap_err();
        assert_eq!(error.kind, ErrorKind::MissingParams);
        assert_eq!(error.value, "mandatory client parameters missing: channel");
    }

    #[test]
    fn filtering_twice_changes_nothing() {
        let mut once = filter("channel=fast-4.1").unwrap();
        let before = serialized(&once);
        ChannelFilterSettings::default()
            .build()
            .unwrap()
            .apply(
                &mut once,
                &PolicyRequest::for_test("channel=fast-4.1", UpstreamKind::PolicyEngine),
            )
            .unwrap();
        assert_eq!(serialized(&once), before);
    }
}
