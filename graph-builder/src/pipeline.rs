//! Building the served graph: the latest releases, the graph-data in use, and
//! the configured stages, serialised once.

use std::sync::Arc;

use parking_lot::Mutex;
use std::time::SystemTime;

use cincinnati_core::stage::{Pipeline, PipelineError};
use cincinnati_core::wire;
use http_answers::PreparedBody;
use jiff::Timestamp;
use openshift_graph_data::{Diagnostic, GraphData, GraphDataInput};

use crate::sources::releases::ReleaseSnapshot;
use crate::state::ServedGraph;

/// What the stages see: the graph-data in use, the moment the graph is
/// built for, and a place for the warnings they find while applying it.
#[derive(Default)]
pub struct BuildContext {
    graph_data: Option<Arc<GraphData>>,
    now: Timestamp,
    warnings: Mutex<Vec<Diagnostic>>,
}

impl BuildContext {
    pub fn new(graph_data: Option<Arc<GraphData>>, now: Timestamp) -> Self {
        Self {
            graph_data,
            now,
            warnings: Mutex::default(),
        }
    }

    pub fn into_warnings(self) -> Vec<Diagnostic> {
        self.warnings.into_inner()
    }
}

impl GraphDataInput for BuildContext {
    fn graph_data(&self) -> Option<&GraphData> {
        self.graph_data.as_deref()
    }

    fn now(&self) -> Timestamp {
        self.now
    }

    fn report(&self, stage: &'static str, warnings: Vec<Diagnostic>) {
        if !warnings.is_empty() {
            tracing::debug!(
                stage,
                count = warnings.len(),
                "warnings while applying graph-data"
            );
        }
        self.warnings.lock().extend(warnings);
    }
}

/// A built graph and what applying graph-data warned about.
pub struct Built {
    pub served: ServedGraph,
    pub warnings: Vec<Diagnostic>,
}

/// Applies the stages to a copy of the releases and serialises the result:
/// the graph at `now` (graph-data's phased rollouts decide which releases are
/// in which channels at a moment). The releases are kept untouched, so a
/// graph-data change, or a phased rollout's next moment, rebuilds from them
/// without a re-scrape.
pub fn build(
    releases: &ReleaseSnapshot,
    graph_data: Option<Arc<GraphData>>,
    pipeline: &Pipeline<BuildContext>,
    now: Timestamp,
) -> Result<Built, PipelineError> {
    let graph_data_revision = graph_data.as_ref().map(|data| data.revision().to_string());
    let context = BuildContext::new(graph_data, now);
    let mut graph = releases.graph.unpack();
    pipeline.run(&mut graph, &context)?;
    // The full graph is megabytes of JSON: kept compressed only.
    let body = PreparedBody::compressed(|out| wire::serialize_into(&graph, None, out))
        .expect("serialising into memory cannot fail");
    Ok(Built {
        served: ServedGraph {
            body,
            built_at: SystemTime::now(),
            releases: graph.release_count(),
            edges: graph.edge_count(),
            conditional_edges: graph
                .conditional_edges()
                .iter()
                .map(|group| group.edges.len())
                .sum(),
            graph_data_revision,
        },
        warnings: context.into_warnings(),
    })
}
