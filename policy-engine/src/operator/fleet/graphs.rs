//! The update graphs the fleet answers compare clusters with: as the
//! upstream serves them, one per architecture, made of the full graph (a
//! graph-builder upstream) or of the channels the clusters are on (an
//! engine upstream, which answers per channel).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cincinnati_client::Document;
use cincinnati_client::graph::UpdateGraph;
use cincinnati_client::view::Cluster;
use cincinnati_core::{ApiError, Version};
use fleet_store::questions::VersionCount;

use crate::client::Feeds;
use crate::client::UpstreamParameters;
use crate::client::request::UpstreamKind;
use crate::operator::OperatorError;

/// The graph of each architecture of `pairs` (channel, architecture).
pub async fn upstream_graphs(
    feeds: &Arc<Feeds>,
    pairs: &BTreeSet<(String, String)>,
) -> Result<BTreeMap<String, UpdateGraph>, OperatorError> {
    let mut documents: BTreeMap<String, Vec<Document>> = BTreeMap::new();
    if feeds.kind() == Some(UpstreamKind::PolicyEngine) {
        for (channel, arch) in pairs {
            let parameters = UpstreamParameters::new([
                ("channel".to_owned(), channel.clone()),
                ("arch".to_owned(), arch.clone()),
            ]);
            let feed = feeds.engine_feed(parameters).await;
            let revision = feeds.served(&feed).map_err(upstream)?;
            documents
                .entry(arch.clone())
                .or_default()
                .push(Document::classify(revision.graph().clone(), arch, Some(channel)));
        }
    } else {
        let full = feeds.full_graph().map_err(upstream)?;
        for (_, arch) in pairs {
            documents
                .entry(arch.clone())
                .or_insert_with(|| vec![Document::classify(full.graph().clone(), arch, None)]);
        }
    }
    // Building reads every release: off the status server's worker, whose
    // probes must keep answering meanwhile.
    tokio::task::spawn_blocking(move || {
        documents
            .into_iter()
            .map(|(arch, documents)| {
                let graph = UpdateGraph::build(&arch, &documents);
                (arch, graph)
            })
            .collect()
    })
    .await
    .map_err(|error| OperatorError::Graphs(error.to_string()))
}

fn upstream(error: ApiError) -> OperatorError {
    OperatorError::Upstream(error.value)
}

/// The update graph of each architecture the fleet runs, as the upstream
/// serves it.
pub trait Graphs {
    fn graph(&self, arch: &str) -> Option<&UpdateGraph>;
}

impl Graphs for BTreeMap<String, UpdateGraph> {
    fn graph(&self, arch: &str) -> Option<&UpdateGraph> {
        self.get(arch)
    }
}

/// Whether clusters of a version count are offered an update to `target`
/// (recommended or conditional) in their channel.
pub(super) fn updates_to(graphs: &dyn Graphs, count: &VersionCount, target: &Version) -> bool {
    let Ok(version) = Version::parse(&count.version) else {
        return false;
    };
    let Some(view) = graphs
        .graph(&count.arch)
        .and_then(|graph| graph.channel(&count.channel))
    else {
        return false;
    };
    let cluster = Cluster {
        version,
        arch: count.arch.clone(),
    };
    view.updates_for(&cluster).is_ok_and(|updates| {
        let same = |release: &cincinnati_core::Release| {
            release.version.major == target.major
                && release.version.minor == target.minor
                && release.version.patch == target.patch
                && release.version.pre == target.pre
        };
        updates.recommended.iter().any(same) || updates.conditional.iter().any(|update| same(&update.release))
    })
}
