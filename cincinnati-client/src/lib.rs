//! A Cincinnati client: asks an update service for a channel's graph and
//! works out what a cluster at one version may update to, the way the
//! OpenShift cluster-version operator (CVO) does:
//!
//! - the cluster's own version must be a node of the graph (else
//!   [`ClientError::VersionNotFound`]);
//! - the targets of its outgoing edges are the recommended updates;
//! - `conditionalEdges` from its version are updates with risks, and a target
//!   that is both is conditional.

pub mod signatures;

use std::collections::BTreeMap;

use cincinnati_core::wire;
use cincinnati_core::{Graph, Release, Risk, Version};

/// What a cluster may update to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Updates {
    /// The cluster's own release as the service knows it.
    pub current: Release,
    /// Recommended updates, newest first.
    pub available: Vec<Release>,
    /// Updates with known risks, newest first.
    pub conditional: Vec<ConditionalUpdate>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionalUpdate {
    pub release: Release,
    pub risks: Vec<Risk>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("the update service has no release {0} in this channel")]
    VersionNotFound(Version),
    #[error("request to the update service failed: {0}")]
    Request(#[from] reqwest::Error),
    #[error("the update service answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the update service answered a graph that is not valid: {0}")]
    Graph(#[from] wire::WireError),
}

/// The updates from `version` in `graph` (a client's view: one channel, one
/// architecture, versions without `+arch`).
pub fn updates_from(graph: &Graph, version: &Version) -> Result<Updates, ClientError> {
    let current_id = graph
        .find(version)
        .ok_or_else(|| ClientError::VersionNotFound(version.clone()))?;
    let release = |id| graph.release(id).expect("ids come from this graph").clone();

    let mut conditional: BTreeMap<Version, Vec<Risk>> = BTreeMap::new();
    for group in graph.conditional_edges() {
        for edge in group.edges.iter().filter(|edge| &edge.from == version) {
            conditional
                .entry(edge.to.clone())
                .or_default()
                .extend(group.risks.iter().cloned());
        }
    }
    let mut available: Vec<Release> = graph
        .children(current_id)
        .map(release)
        .filter(|target| !conditional.contains_key(&target.version))
        .collect();
    available.sort_by(|a, b| b.version.cmp(&a.version));
    let conditional = conditional
        .into_iter()
        .rev()
        .filter_map(|(target, risks)| {
            let id = graph.find(&target)?;
            Some(ConditionalUpdate {
                release: release(id),
                risks,
            })
        })
        .collect();
    Ok(Updates {
        current: release(current_id),
        available,
        conditional,
    })
}

/// Asks the update service at `graph_url` (`…/graph`) as a cluster would:
/// `GET ?arch=&channel=&id=&version=` with `Accept: application/json`.
pub async fn fetch_updates(
    client: &reqwest::Client,
    graph_url: &str,
    channel: &str,
    arch: &str,
    version: &Version,
    cluster_id: &str,
) -> Result<Updates, ClientError> {
    let response = client
        .get(graph_url)
        .query(&[
            ("arch", arch),
            ("channel", channel),
            ("id", cluster_id),
            ("version", &version.to_string()),
        ])
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await?;
    let status = response.status();
    let body = response.bytes().await?;
    if !status.is_success() {
        return Err(ClientError::Status {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body).into_owned(),
        });
    }
    let document = wire::parse(&body)?;
    updates_from(&document.graph, version)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAPH: &str = r#"{"version":1,
      "nodes":[{"version":"4.1.0","payload":"p0","metadata":{}},
               {"version":"4.1.1","payload":"p1","metadata":{}},
               {"version":"4.1.2","payload":"p2","metadata":{}},
               {"version":"4.1.3","payload":"p3","metadata":{}}],
      "edges":[[0,1],[0,2],[1,3]],
      "conditionalEdges":[
        {"edges":[{"from":"4.1.0","to":"4.1.2"},{"from":"4.1.0","to":"4.1.3"}],
         "risks":[{"url":"u","name":"A","message":"m","matchingRules":[{"type":"Always"}]}]},
        {"edges":[{"from":"4.1.0","to":"4.1.3"}],
         "risks":[{"url":"u","name":"B","message":"m","matchingRules":[{"type":"Always"}]}]}]}"#;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn a_target_that_is_also_conditional_is_conditional() {
        let graph = wire::parse(GRAPH.as_bytes()).unwrap().graph;
        let updates = updates_from(&graph, &v("4.1.0")).unwrap();
        let names = |releases: &[Release]| releases.iter().map(|r| r.version.to_string()).collect::<Vec<_>>();
        assert_eq!(names(&updates.available), ["4.1.1"]);
        let conditional: Vec<(String, Vec<&str>)> = updates
            .conditional
            .iter()
            .map(|update| {
                let risks = update.risks.iter().map(|risk| risk.name.as_str()).collect();
                (update.release.version.to_string(), risks)
            })
            .collect();
        assert_eq!(
            conditional,
            [
                ("4.1.3".to_owned(), vec!["A", "B"]),
                ("4.1.2".to_owned(), vec!["A"])
            ]
        );
    }

    #[test]
    fn an_unknown_version_is_version_not_found() {
        let graph = wire::parse(GRAPH.as_bytes()).unwrap().graph;
        assert!(matches!(
            updates_from(&graph, &v("4.2.0")),
            Err(ClientError::VersionNotFound(_))
        ));
        assert!(updates_from(&graph, &v("4.1.3")).unwrap().available.is_empty());
    }
}
