//! Graph API documents as a client receives them: a graph-builder's full
//! graph, or a policy-engine's answer for one channel and architecture.

use cincinnati_core::release::{arch_of, keys};
use cincinnati_core::{Graph, Release};

/// A parsed Graph API document and what it holds.
#[derive(Debug)]
pub struct Document {
    pub graph: Graph,
    pub shape: Shape,
}

/// What a document holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A graph-builder's graph: every release of every architecture, each
    /// version with its architecture as build metadata (`4.16.3+amd64`).
    Full,
    /// A policy-engine's answer: the releases of one architecture in one
    /// channel, versions without `+arch`. The channel is known when the
    /// document was asked for one.
    View { arch: String, channel: Option<String> },
}

impl Document {
    /// Classifies a graph received in answer to a request for `arch` (and
    /// `channel`): it is a full graph when its releases name their
    /// architecture (as `+arch` or in `release.arch` metadata), which a
    /// policy-engine strips; else it is the view that was asked for.
    pub fn classify(graph: Graph, arch: &str, channel: Option<&str>) -> Self {
        let names_arch = graph.releases().any(|(_, release)| names_its_arch(release));
        let shape = if names_arch {
            Shape::Full
        } else {
            Shape::View {
                arch: arch.to_owned(),
                channel: channel.map(str::to_owned),
            }
        };
        Self { graph, shape }
    }

    pub fn is_full(&self) -> bool {
        self.shape == Shape::Full
    }
}

/// The architectures the releases of a full graph are built for, sorted.
pub fn architectures(graph: &Graph) -> std::collections::BTreeSet<&str> {
    graph
        .releases()
        .filter_map(|(_, release)| arch_of(release))
        .collect()
}

fn names_its_arch(release: &Release) -> bool {
    !release.version.build.is_empty() || release.metadata.contains_key(keys::ARCH)
}

#[cfg(test)]
mod tests {
    use cincinnati_core::wire;

    use super::*;

    fn classify(json: &str) -> Shape {
        Document::classify(wire::parse(json.as_bytes()).unwrap().graph, "amd64", Some("c")).shape
    }

    #[test]
    fn a_graph_with_arch_suffixes_is_full() {
        let json = r#"{"nodes":[{"version":"4.1.0+amd64","payload":"p","metadata":{}}],"edges":[]}"#;
        assert_eq!(classify(json), Shape::Full);
    }

    #[test]
    fn a_graph_without_them_is_the_view_asked_for() {
        let json = r#"{"version":1,"nodes":[{"version":"4.1.0","payload":"p","metadata":{}}],"edges":[],"conditionalEdges":[]}"#;
        assert_eq!(
            classify(json),
            Shape::View {
                arch: "amd64".into(),
                channel: Some("c".into())
            }
        );
    }
}
