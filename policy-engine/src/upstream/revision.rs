//! One upstream revision: the parsed graph, immutable, with the cache of
//! the answers computed from it (see [`crate::answers`]).

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use cincinnati_core::stage::Pipeline;
use cincinnati_core::{ApiError, ErrorKind, Graph};
use service_kit::telemetry::Origin;

use crate::answers::{self, Answer, AnswerCache, CacheOutcome, Computations};
use crate::cluster_policy::apply::Applied;
use crate::request::PolicyRequest;

/// Numbers revisions, so that an answer can name the revisions it joined.
static SERIALS: AtomicU64 = AtomicU64::new(0);

/// A parsed upstream graph and its answers.
#[derive(Debug)]
pub struct Revision {
    graph: Graph,
    serial: u64,
    fetched_at: SystemTime,
    /// The refresh that fetched this graph: answers link to its trace.
    origin: Origin,
    answers: AnswerCache,
}

impl Revision {
    /// A revision fetched in the current span.
    pub fn new(graph: Graph, fetched_at: SystemTime, max_answers: usize) -> Self {
        Self {
            graph,
            serial: SERIALS.fetch_add(1, Ordering::Relaxed),
            fetched_at,
            origin: Origin::current(),
            answers: AnswerCache::new(max_answers),
        }
    }

    /// The graph as the upstream sent it, before any filter.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    pub fn release_count(&self) -> usize {
        self.graph.release_count()
    }

    pub fn fetched_at(&self) -> SystemTime {
        self.fetched_at
    }

    /// Whether the answer to `request` (joined with `joined`) is computed
    /// already, so asking for it costs no filtering.
    pub fn is_answered(&self, request: &PolicyRequest, joined: &[Arc<Revision>]) -> bool {
        self.answers.is_answered(request, &serials(joined))
    }

    /// The answer to `request` through `pipeline`, computed once (see
    /// [`Computations`]) from this revision's graph merged with those of
    /// `joined` (the scoped channels an engine upstream serves apart). The
    /// current span gets a link to the trace that fetched this revision,
    /// where the work behind the answer is.
    pub async fn answer(
        self: &Arc<Self>,
        request: PolicyRequest,
        joined: Vec<Arc<Revision>>,
        pipeline: &Arc<Pipeline<PolicyRequest>>,
        computations: &Computations,
    ) -> (Answer, CacheOutcome) {
        self.origin.link_current_span();
        let (revision, pipeline, asked) = (self.clone(), pipeline.clone(), request.clone());
        self.answers
            .get_or_compute(&request, &serials(&joined), async || {
                computations
                    .run(move || {
                        let base = revision.merged_with(&joined)?;
                        answers::compute(&base, &asked, &pipeline)
                    })
                    .await
            })
            .await
    }

    /// What explaining `request` is made of (see [`answers::before_rules`]),
    /// from this revision's graph.
    pub async fn before_rules(
        self: &Arc<Self>,
        request: PolicyRequest,
        pipeline: &Arc<Pipeline<PolicyRequest>>,
        computations: &Computations,
    ) -> Result<(Graph, Applied), ApiError> {
        let (revision, pipeline) = (self.clone(), pipeline.clone());
        computations
            .run(move || answers::before_rules(&revision.graph, request, &pipeline))
            .await
    }

    /// This revision's graph, with those of `joined` merged into a copy.
    fn merged_with(&self, joined: &[Arc<Revision>]) -> Result<Cow<'_, Graph>, ApiError> {
        if joined.is_empty() {
            return Ok(Cow::Borrowed(&self.graph));
        }
        let mut merged = self.graph.clone();
        for other in joined {
            merged.merge(&other.graph).map_err(|error| {
                ApiError::new(
                    ErrorKind::FailedPluginExecution,
                    format_args!("joining a scoped channel's view: {error}"),
                )
            })?;
        }
        Ok(Cow::Owned(merged))
    }
}

fn serials(revisions: &[Arc<Revision>]) -> Vec<u64> {
    revisions.iter().map(|revision| revision.serial).collect()
}
