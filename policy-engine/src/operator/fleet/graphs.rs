//! The update graphs the fleet answers compare clusters with: as the
//! upstream serves them, one per architecture, made of the full graph (a
//! graph-builder upstream) or of the channels the clusters are on (an
//! engine upstream, which answers per channel).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cincinnati_client::Document;
use cincinnati_client::graph::UpdateGraph;
use cincinnati_core::ApiError;

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
