//! The Graph API JSON document, kept apart from the graph type.
//!
//! ```json
//! {"version": 1,
//!  "nodes": [{"version": "4.16.3", "payload": "...", "metadata": {"k": "v"}}],
//!  "edges": [[0, 1]],
//!  "conditionalEdges": [{"edges": [{"from": "4.16.2", "to": "4.16.3"}],
//!                        "risks": [{"url": "...", "name": "...", "message": "...",
//!                                   "matchingRules": [{"type": "Always"}]}]}]}
//! ```
//!
//! Parsing accepts what upstream graph-builders emit (no `version` key,
//! nodes with only a `version`, any order) and validates everything it reads,
//! naming the offending item. Serialising is deterministic: nodes sorted by
//! version, edges and conditional edges sorted, metadata keys sorted, so the
//! same graph always gives the same bytes.

use std::io::Read as _;

use semver::Version;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::conditional::{ConditionalEdge, EdgeEndpoints, MatchingRule, Risk, SharedVersions};
use crate::graph::{FromPartsError, Graph, ReleaseId};
use crate::metadata::Metadata;
use crate::release::Release;

/// A parsed Graph API document.
#[derive(Debug)]
pub struct GraphDocument {
    /// The top-level `version`: present in policy-engine answers, absent in
    /// graph-builder answers.
    pub api_version: Option<u64>,
    pub graph: Graph,
}

/// Why a Graph API document was refused.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("malformed Graph API JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("node {index}: empty version")]
    EmptyVersion { index: usize },
    #[error("node {index}: version {version:?} is not SemVer: {source}")]
    InvalidVersion {
        index: usize,
        version: String,
        source: semver::Error,
    },
    #[error("conditionalEdges[{group}].edges[{edge}].{field}: {version:?} is not SemVer: {source}")]
    InvalidConditionalVersion {
        group: usize,
        edge: usize,
        field: &'static str,
        version: String,
        source: semver::Error,
    },
    #[error("conditionalEdges[{group}].risks[{risk}].matchingRules[{rule}]: {reason}")]
    InvalidMatchingRule {
        group: usize,
        risk: usize,
        rule: usize,
        reason: String,
    },
    #[error("{0}")]
    Graph(#[from] FromPartsError),
}

/// Parses and validates a Graph API document.
pub fn parse(json: &[u8]) -> Result<GraphDocument, WireError> {
    validate(serde_json::from_slice(json)?)
}

/// [`parse`] from a reader, for documents too large to hold as text beside
/// the graph they become. Slower than [`parse`]: buffer `json` if it is not.
pub fn parse_reader(json: impl std::io::Read) -> Result<GraphDocument, WireError> {
    validate(serde_json::from_reader(json)?)
}

/// A saved document's bytes as JSON: inflated when they are gzip (a
/// served body kept as it came, `graph.json.gz`), else as they are. Only
/// decoding, so it belongs here: reading the file is the caller's. The error
/// is flate2's, for a gzip stream that is cut short or corrupt.
pub fn inflate_if_gzip(bytes: Vec<u8>) -> std::io::Result<Vec<u8>> {
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(bytes);
    }
    // JSON compresses about tenfold.
    let mut inflated = Vec::with_capacity(bytes.len() * 8);
    flate2::read::MultiGzDecoder::new(bytes.as_slice()).read_to_end(&mut inflated)?;
    Ok(inflated)
}

/// The first two bytes of every gzip member (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

fn validate(document: WireGraph) -> Result<GraphDocument, WireError> {
    let releases = document
        .nodes
        .into_iter()
        .enumerate()
        .map(|(index, node)| node.into_release(index))
        .collect::<Result<Vec<_>, _>>()?;
    let mut versions = SharedVersions::default();
    let conditional_edges = document
        .conditional_edges
        .into_iter()
        .enumerate()
        .map(|(group, entry)| entry.into_conditional_edge(group, &mut versions))
        .collect::<Result<Vec<_>, _>>()?;
    let graph = Graph::from_parts(releases, document.edges, conditional_edges)?;
    Ok(GraphDocument {
        api_version: document.version,
        graph,
    })
}

/// Serialises a graph as a Graph API document; `api_version` is the
/// top-level `version` a policy-engine adds (`None` for graph-builder output).
pub fn serialize(graph: &Graph, api_version: Option<u64>) -> Vec<u8> {
    let mut out = Vec::with_capacity(graph.release_count() * 320 + graph.edge_count() * 12 + 64);
    serialize_into(graph, api_version, &mut out).expect("serialising to memory cannot fail");
    out
}

/// [`serialize`] into a writer, for documents too large to hold twice.
pub fn serialize_into(
    graph: &Graph,
    api_version: Option<u64>,
    out: impl std::io::Write,
) -> std::io::Result<()> {
    serde_json::to_writer(out, &DocumentView::new(graph, api_version)).map_err(std::io::Error::from)
}

#[derive(Deserialize)]
struct WireGraph {
    #[serde(default)]
    version: Option<u64>,
    nodes: Vec<WireNode>,
    edges: Vec<(usize, usize)>,
    #[serde(default, rename = "conditionalEdges")]
    conditional_edges: Vec<WireConditionalEdge>,
}

#[derive(Deserialize)]
struct WireNode {
    version: WireVersion,
    #[serde(default)]
    payload: Option<String>,
    #[serde(default)]
    metadata: Option<Metadata>,
}

impl WireNode {
    fn into_release(self, index: usize) -> Result<Release, WireError> {
        let version = match self.version {
            WireVersion::Parsed(version) => version,
            WireVersion::Invalid { text, .. } if text.is_empty() => {
                return Err(WireError::EmptyVersion { index });
            }
            WireVersion::Invalid { text, why } => {
                return Err(WireError::InvalidVersion {
                    index,
                    version: text,
                    source: why,
                });
            }
        };
        Ok(Release {
            version,
            payload: self.payload,
            metadata: self.metadata.unwrap_or_default(),
        })
    }
}

#[derive(Deserialize)]
struct WireConditionalEdge {
    edges: Vec<WireEdge>,
    risks: Vec<WireRisk>,
}

#[derive(Deserialize)]
struct WireEdge {
    from: WireVersion,
    to: WireVersion,
}

/// A version as a document writes it, parsed as it is read: a graph names
/// tens of thousands of versions, and keeping each one's text until it is
/// parsed was a third of reading a graph's conditional edges. The text is
/// kept only when it is not a version, for the error.
enum WireVersion {
    Parsed(Version),
    Invalid { text: String, why: semver::Error },
}

impl<'de> Deserialize<'de> for WireVersion {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VersionVisitor;

        impl serde::de::Visitor<'_> for VersionVisitor {
            type Value = WireVersion;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a version string")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<WireVersion, E> {
                Ok(match Version::parse(text) {
                    Ok(version) => WireVersion::Parsed(version),
                    Err(why) => WireVersion::Invalid {
                        text: text.to_owned(),
                        why,
                    },
                })
            }
        }

        deserializer.deserialize_str(VersionVisitor)
    }
}

#[derive(Deserialize)]
struct WireRisk {
    url: String,
    name: String,
    message: String,
    #[serde(rename = "matchingRules")]
    matching_rules: Vec<Box<RawValue>>,
}

#[derive(Deserialize)]
struct WireRuleHead {
    #[serde(rename = "type")]
    rule_type: String,
    #[serde(default)]
    promql: Option<WirePromQl>,
}

#[derive(Deserialize)]
struct WirePromQl {
    promql: String,
}

#[derive(Serialize)]
struct PromQlView<'a> {
    promql: &'a str,
}

impl WireConditionalEdge {
    fn into_conditional_edge(
        self,
        group: usize,
        versions: &mut SharedVersions,
    ) -> Result<ConditionalEdge, WireError> {
        // Pushed into room of their number: collected, they would stay in
        // the room the wire form's edges grew to (116 bytes an edge at 10x).
        let mut edges = Vec::with_capacity(self.edges.len());
        for (edge, WireEdge { from, to }) in self.edges.into_iter().enumerate() {
            let parsed = |field, version| match version {
                WireVersion::Parsed(version) => Ok(version),
                WireVersion::Invalid { text, why } => Err(WireError::InvalidConditionalVersion {
                    group,
                    edge,
                    field,
                    version: text,
                    source: why,
                }),
            };
            edges.push(versions.edge(parsed("from", from)?, parsed("to", to)?));
        }
        let risks = self
            .risks
            .into_iter()
            .enumerate()
            .map(|(risk, wire)| {
                let matching_rules = wire
                    .matching_rules
                    .iter()
                    .enumerate()
                    .map(|(rule, raw)| {
                        parse_matching_rule(raw).map_err(|reason| WireError::InvalidMatchingRule {
                            group,
                            risk,
                            rule,
                            reason,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Risk {
                    url: wire.url,
                    name: wire.name,
                    message: wire.message,
                    matching_rules,
                })
            })
            .collect::<Result<Vec<_>, WireError>>()?;
        Ok(ConditionalEdge { edges, risks })
    }
}

fn parse_matching_rule(raw: &RawValue) -> Result<MatchingRule, String> {
    let head: WireRuleHead = serde_json::from_str(raw.get()).map_err(|error| error.to_string())?;
    Ok(match head.rule_type.as_str() {
        "Always" => MatchingRule::Always,
        "PromQL" => MatchingRule::PromQl {
            promql: head.promql.map(|query| query.promql).unwrap_or_default(),
        },
        "" => return Err("empty rule type".into()),
        _ => MatchingRule::Other {
            rule_type: head.rule_type,
            raw_json: raw.get().to_owned(),
        },
    })
}

/// A borrowed, sorted view of a graph in wire order.
struct DocumentView<'a> {
    api_version: Option<u64>,
    nodes: Vec<&'a Release>,
    edges: Vec<(u32, u32)>,
    conditional_edges: Vec<(Vec<&'a EdgeEndpoints>, &'a [Risk])>,
}

impl<'a> DocumentView<'a> {
    fn new(graph: &'a Graph, api_version: Option<u64>) -> Self {
        let mut ids: Vec<(ReleaseId, &Release)> = graph.releases().collect();
        ids.sort_unstable_by(|(_, a), (_, b)| {
            a.version.cmp(&b.version).then_with(|| a.payload.cmp(&b.payload))
        });
        let bound = ids.iter().map(|(id, _)| id.index() + 1).max().unwrap_or(0);
        let mut position = vec![u32::MAX; bound];
        for (wire_index, (id, _)) in ids.iter().enumerate() {
            position[id.index()] = wire_index as u32;
        }
        let mut edges: Vec<(u32, u32)> = graph
            .edges()
            .map(|(from, to)| (position[from.index()], position[to.index()]))
            .collect();
        edges.sort_unstable();
        let mut conditional_edges: Vec<_> = graph
            .conditional_edges()
            .iter()
            .map(|group| {
                let mut endpoints: Vec<&EdgeEndpoints> = group.edges.iter().collect();
                endpoints.sort_unstable();
                (endpoints, group.risks.as_slice())
            })
            .collect();
        conditional_edges.sort_unstable();
        Self {
            api_version,
            nodes: ids.into_iter().map(|(_, release)| release).collect(),
            edges,
            conditional_edges,
        }
    }
}

impl Serialize for DocumentView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(version) = self.api_version {
            map.serialize_entry("version", &version)?;
        }
        map.serialize_entry(
            "nodes",
            &SeqOf(|| self.nodes.iter().map(|release| NodeView(release))),
        )?;
        map.serialize_entry("edges", &self.edges)?;
        map.serialize_entry(
            "conditionalEdges",
            &SeqOf(|| {
                self.conditional_edges
                    .iter()
                    .map(|(edges, risks)| ConditionalView { edges, risks })
            }),
        )?;
        map.end()
    }
}

/// Serialises the items of an iterator as a JSON array, without collecting
/// them first.
struct SeqOf<F>(F);

impl<F, I> Serialize for SeqOf<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

/// Writes a value through its `Display` form without an intermediate String.
struct Shown<'a, T>(&'a T);

impl<T: std::fmt::Display> Serialize for Shown<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self.0)
    }
}

struct NodeView<'a>(&'a Release);

impl Serialize for NodeView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let release = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("version", &Shown(&release.version))?;
        if let Some(payload) = &release.payload {
            map.serialize_entry("payload", payload)?;
        }
        // Abstract nodes stay `{"version": ...}`, as upstream emits them.
        if release.payload.is_some() || !release.metadata.is_empty() {
            map.serialize_entry("metadata", &release.metadata)?;
        }
        map.end()
    }
}

struct ConditionalView<'v, 'a> {
    edges: &'v [&'a EdgeEndpoints],
    risks: &'a [Risk],
}

impl Serialize for ConditionalView<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("edges", &SeqOf(|| self.edges.iter().map(|edge| EdgeView(edge))))?;
        map.serialize_entry("risks", &SeqOf(|| self.risks.iter().map(RiskView)))?;
        map.end()
    }
}

struct EdgeView<'a>(&'a EdgeEndpoints);

impl Serialize for EdgeView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("from", &Shown(&self.0.from))?;
        map.serialize_entry("to", &Shown(&self.0.to))?;
        map.end()
    }
}

/// A risk in the Graph API's JSON shape (`url`, `name`, `message`,
/// `matchingRules`), for documents that show risks as clusters receive them.
pub struct RiskView<'a>(pub &'a Risk);

impl Serialize for RiskView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let risk = self.0;
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("url", &risk.url)?;
        map.serialize_entry("name", &risk.name)?;
        map.serialize_entry("message", &risk.message)?;
        map.serialize_entry(
            "matchingRules",
            &SeqOf(|| risk.matching_rules.iter().map(RuleView)),
        )?;
        map.end()
    }
}

struct RuleView<'a>(&'a MatchingRule);

impl Serialize for RuleView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            MatchingRule::Always => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("type", "Always")?;
                map.end()
            }
            MatchingRule::PromQl { promql } => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", "PromQL")?;
                // Upstream omits an empty query; so do we, to match byte for byte.
                if !promql.is_empty() {
                    map.serialize_entry("promql", &PromQlView { promql })?;
                }
                map.end()
            }
            MatchingRule::Other { raw_json, .. } => {
                let raw: &RawValue = serde_json::from_str(raw_json).map_err(serde::ser::Error::custom)?;
                raw.serialize(serializer)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn plain_bytes_pass_unchanged_and_gzip_is_inflated_every_member() {
        let json = br#"{"nodes":[],"edges":[]}"#;
        assert_eq!(inflate_if_gzip(json.to_vec()).unwrap(), json);
        assert_eq!(inflate_if_gzip(gzip(json)).unwrap(), json);
        let mut members = gzip(&json[..10]);
        members.extend(gzip(&json[10..]));
        assert_eq!(inflate_if_gzip(members).unwrap(), json);
        assert_eq!(inflate_if_gzip(Vec::new()).unwrap(), b"");
    }

    #[test]
    fn conditional_edges_share_each_version() {
        let json = br#"{"nodes": [], "edges": [], "conditionalEdges": [
            {"edges": [{"from": "4.1.0", "to": "4.2.0"}], "risks": []},
            {"edges": [{"from": "4.2.0", "to": "4.3.0"}], "risks": []}]}"#;
        let graph = parse(json).unwrap().graph;
        let [first, second] = graph.conditional_edges() else {
            panic!("two groups")
        };
        assert!(std::sync::Arc::ptr_eq(&first.edges[0].to, &second.edges[0].from));
    }

    #[test]
    fn a_gzip_stream_cut_short_is_an_error() {
        let whole = gzip(br#"{"nodes":[],"edges":[]}"#);
        assert!(inflate_if_gzip(whole[..whole.len() - 4].to_vec()).is_err());
    }
}
