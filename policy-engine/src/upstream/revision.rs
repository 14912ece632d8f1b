//! One upstream revision: the parsed graph and the answers computed from it.
//!
//! An answer is computed at most once per (channel, arch, policy class) and
//! revision (while it is kept), on
//! the first request that needs it, on a blocking thread; concurrent first
//! requests wait for that one computation. Later requests clone an `Arc`.
//! Computations of different answers run at most as many at once as the
//! engine's semaphore allows: each holds a copy of its channel's releases
//! and its answer's bytes, so a flood of requests for distinct channels
//! would otherwise hold one per blocking thread (up to 512). A computation
//! copies only the releases the channel filter keeps, not the whole graph
//! (see `Pipeline::run_on`): answers of a 5,900-release graph are computed
//! several times faster, and without the churn of whole-graph copies the
//! allocator's memory stays near what is live.
//! Lazily rather than for every channel up front: most of the hundreds of
//! (channel, arch) pairs are never asked for (see
//! docs/benchmarks-policy-engine.md for the measured costs). At most
//! `max_answers` are kept, the least recently used going first: made-up
//! channels cannot grow memory, and the classes a rollout or a deferral
//! bucket leaves behind make room for the current ones.

use std::borrow::Cow;
use std::num::NonZero;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use cincinnati_core::stage::Pipeline;
use cincinnati_core::{ApiError, ErrorKind, Graph, wire};
use lru::LruCache;
use service_kit::PreparedBody;
use service_kit::telemetry::Origin;
use tokio::sync::{OnceCell, Semaphore};

use crate::cluster_policy::PolicyClass;
use crate::cluster_policy::apply::Applied;
use crate::filters::PolicyRequest;
use crate::query::{Arch, Channel};

/// The `version` a policy-engine puts at the top of its answers.
pub const API_VERSION: u64 = 1;

type Answer = Result<Arc<PreparedBody>, ApiError>;

/// What an answer depends on besides the revision: `id` only through the
/// policy class, and `version` only when `version-prune` runs, so neither
/// splits the cache otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct AnswerKey {
    channel: Option<Channel>,
    arch: Option<Arch>,
    class: Option<PolicyClass>,
    version: Option<String>,
    /// The serials of the revisions joined to this one (scoped channels
    /// fetched from an engine upstream): another revision of one of them is
    /// another answer.
    joined: Vec<u64>,
}

impl AnswerKey {
    fn of(request: &PolicyRequest, joined: &[Arc<Revision>]) -> Self {
        Self {
            channel: request.query.channel.clone(),
            arch: request.query.arch.clone(),
            class: request.class.clone(),
            version: request
                .keyed_by_version
                .then(|| request.query.version.clone())
                .flatten(),
            joined: joined.iter().map(|revision| revision.serial).collect(),
        }
    }
}

/// Numbers revisions, so that an answer can name the revisions it joined.
static SERIALS: AtomicU64 = AtomicU64::new(0);

/// A parsed upstream graph, immutable, with its answer cache.
#[derive(Debug)]
pub struct Revision {
    graph: Graph,
    serial: u64,
    fetched_at: SystemTime,
    /// The refresh that fetched this graph: answers link to its trace.
    origin: Origin,
    /// The answers kept, least recently used first out.
    answers: Mutex<LruCache<AnswerKey, Arc<OnceCell<Answer>>>>,
}

/// Whether an answer came from the cache, for the cache metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    Hit,
    /// Computed; keeping it `evicted` the least recently used answer.
    Miss {
        evicted: bool,
    },
}

impl Revision {
    /// A revision fetched in the current span.
    pub fn new(graph: Graph, fetched_at: SystemTime, max_answers: usize) -> Self {
        Self {
            graph,
            serial: SERIALS.fetch_add(1, Ordering::Relaxed),
            fetched_at,
            origin: Origin::current(),
            // Sparse: grown as answers are kept. An engine chained to an
            // engine holds a revision per feed, most with an answer or two;
            // room for `max_answers` up front cost ~130 KiB each.
            answers: Mutex::new(LruCache::sparse(
                NonZero::new(max_answers).unwrap_or(NonZero::<usize>::MIN),
            )),
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
        let answers = self.answers.lock().expect("answer cache lock poisoned");
        answers
            .peek(&AnswerKey::of(request, joined))
            .is_some_and(|cell| cell.initialized())
    }

    /// The answer to `request` through `pipeline`, computed once, while
    /// holding one of the `computations` permits, from this revision's graph
    /// merged with those of `joined` (the scoped channels an engine
    /// upstream serves apart). The current span gets a link to the trace
    /// that fetched this revision, where the work behind the answer is.
    pub async fn answer(
        self: &Arc<Self>,
        request: PolicyRequest,
        joined: Vec<Arc<Revision>>,
        pipeline: &Arc<Pipeline<PolicyRequest>>,
        computations: &Arc<Semaphore>,
    ) -> (Answer, Lookup) {
        self.origin.link_current_span();
        let key = AnswerKey::of(&request, &joined);
        let (cell, evicted) = {
            let mut answers = self.answers.lock().expect("answer cache lock poisoned");
            match answers.get(&key) {
                Some(cell) => (cell.clone(), false),
                None => {
                    let cell = Arc::<OnceCell<Answer>>::default();
                    let evicted = answers.push(key, cell.clone()).is_some();
                    (cell, evicted)
                }
            }
        };
        if let Some(answer) = cell.get() {
            return (answer.clone(), Lookup::Hit);
        }
        let (revision, pipeline) = (self.clone(), pipeline.clone());
        // Only the request that computes is a miss; those that waited for it are hits.
        let mut computed = false;
        let answer = cell
            .get_or_init(|| {
                computed = true;
                async move {
                    let permit = computations
                        .clone()
                        .acquire_owned()
                        .await
                        .expect("the computation semaphore is never closed");
                    // The permit goes with the computation, which runs on even
                    // if the request that started it is dropped.
                    tokio::task::spawn_blocking(move || {
                        let _permit = permit;
                        revision.compute(&request, &joined, &pipeline)
                    })
                    .await
                    .unwrap_or_else(|error| Err(ApiError::new(ErrorKind::FailedPluginExecution, error)))
                }
            })
            .await;
        let lookup = if computed {
            Lookup::Miss { evicted }
        } else {
            Lookup::Hit
        };
        (answer.clone(), lookup)
    }

    /// The graph `request` gets without its policy class (its view's
    /// channels still those the class sees), and what the class does to
    /// it: what an explanation is made of. Computed anew (holding a permit),
    /// never cached: operators ask rarely.
    pub async fn explain(
        self: &Arc<Self>,
        request: PolicyRequest,
        pipeline: &Arc<Pipeline<PolicyRequest>>,
        computations: &Arc<Semaphore>,
    ) -> Result<(Graph, Applied), ApiError> {
        let permit = computations
            .clone()
            .acquire_owned()
            .await
            .expect("the computation semaphore is never closed");
        let (revision, pipeline) = (self.clone(), pipeline.clone());
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let class = request.class.clone();
            let request = request.without_rules();
            let graph = pipeline
                .run_on(&revision.graph, &request)
                .map_err(|failure| failure.error)?;
            let applied = class
                .map(|class| class.apply(&mut graph.clone(), request.arch()))
                .unwrap_or_default();
            Ok((graph, applied))
        })
        .await
        .unwrap_or_else(|error| Err(ApiError::new(ErrorKind::FailedPluginExecution, error)))
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

    /// Filters a copy of the graph (of the channel's releases only, see
    /// [`Pipeline::run_on`]) and prepares the bytes answered, kept
    /// compressed only: nearly every client takes gzip, and the identity
    /// bytes of the few answers asked for without it are kept by the
    /// server's `IdentityCache`.
    fn compute(
        &self,
        request: &PolicyRequest,
        joined: &[Arc<Revision>],
        pipeline: &Pipeline<PolicyRequest>,
    ) -> Answer {
        let base = self.merged_with(joined)?;
        let graph = pipeline.run_on(&base, request).map_err(|failure| failure.error)?;
        let body = PreparedBody::compressed(|out| wire::serialize_into(&graph, Some(API_VERSION), out))
            .expect("serialising into memory cannot fail");
        Ok(Arc::new(body))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::filters::test_graphs::{graph, request};
    use crate::filters::{catalog, default_tables};
    use crate::upstream::UpstreamKind;

    const GRAPH: &str = r#"{"nodes": [
        {"version": "4.1.0+amd64", "payload": "p", "metadata": {
          "io.openshift.upgrades.graph.release.arch": "amd64",
          "io.openshift.upgrades.graph.release.channels": "a-4.1,b-4.1"}}],
      "edges": []}"#;

    fn revision(max_answers: usize) -> (Arc<Revision>, Arc<Pipeline<PolicyRequest>>) {
        let pipeline = Arc::new(catalog().pipeline(&default_tables(false)).unwrap());
        (
            Arc::new(Revision::new(graph(GRAPH), SystemTime::now(), max_answers)),
            pipeline,
        )
    }

    async fn lookup(
        revision: &Arc<Revision>,
        pipeline: &Arc<Pipeline<PolicyRequest>>,
        query: &str,
    ) -> Lookup {
        let computations = Arc::new(Semaphore::new(2));
        let (answer, lookup) = revision
            .answer(
                request(query, UpstreamKind::GraphBuilder),
                Vec::new(),
                pipeline,
                &computations,
            )
            .await;
        assert!(answer.is_ok());
        lookup
    }

    const MISS: Lookup = Lookup::Miss { evicted: false };

    #[tokio::test]
    async fn each_key_is_computed_once_and_version_and_id_do_not_split_it() {
        let (revision, pipeline) = revision(8);
        assert_eq!(lookup(&revision, &pipeline, "channel=a-4.1").await, MISS);
        assert_eq!(
            lookup(&revision, &pipeline, "channel=a-4.1&version=4.1.0&id=x").await,
            Lookup::Hit
        );
        assert_eq!(lookup(&revision, &pipeline, "channel=b-4.1").await, MISS);
        assert_eq!(
            lookup(&revision, &pipeline, "channel=a-4.1&arch=amd64").await,
            MISS
        );
    }

    #[tokio::test]
    async fn beyond_the_limit_the_least_recently_used_answer_is_evicted() {
        let (revision, pipeline) = revision(2);
        assert_eq!(lookup(&revision, &pipeline, "channel=a-4.1").await, MISS);
        assert_eq!(lookup(&revision, &pipeline, "channel=b-4.1").await, MISS);
        assert_eq!(lookup(&revision, &pipeline, "channel=a-4.1").await, Lookup::Hit);
        assert_eq!(
            lookup(&revision, &pipeline, "channel=made-up").await,
            Lookup::Miss { evicted: true }
        );
        assert_eq!(lookup(&revision, &pipeline, "channel=a-4.1").await, Lookup::Hit);
        assert_eq!(
            lookup(&revision, &pipeline, "channel=b-4.1").await,
            Lookup::Miss { evicted: true },
            "b was the least recently used"
        );
    }

    #[tokio::test]
    async fn a_key_is_answered_once_computed_and_until_evicted() {
        let (revision, pipeline) = revision(1);
        let asked = |text: &str| request(text, UpstreamKind::GraphBuilder);
        assert!(!revision.is_answered(&asked("channel=a-4.1"), &[]));
        lookup(&revision, &pipeline, "channel=a-4.1").await;
        assert!(revision.is_answered(&asked("channel=a-4.1&version=4.1.0"), &[]));
        lookup(&revision, &pipeline, "channel=made-up").await;
        assert!(revision.is_answered(&asked("channel=made-up"), &[]));
        assert!(!revision.is_answered(&asked("channel=a-4.1"), &[]), "evicted");
    }

    #[tokio::test]
    async fn an_answer_is_computed_only_with_a_free_permit() {
        let (revision, pipeline) = revision(8);
        let computations = Arc::new(Semaphore::new(1));
        let busy = computations.clone().acquire_owned().await.unwrap();
        let waiting = tokio::spawn({
            let (revision, computations) = (revision.clone(), computations.clone());
            async move {
                revision
                    .answer(
                        request("channel=a-4.1", UpstreamKind::GraphBuilder),
                        Vec::new(),
                        &pipeline,
                        &computations,
                    )
                    .await
            }
        });
        // Ample for this one-release graph: unbounded, it is answered at once.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let asked = request("channel=a-4.1", UpstreamKind::GraphBuilder);
        assert!(
            !revision.is_answered(&asked, &[]),
            "computed while every permit was taken"
        );
        drop(busy);
        let (answer, lookup) = waiting.await.unwrap();
        assert!(answer.is_ok());
        assert_eq!(lookup, MISS);
        assert!(revision.is_answered(&asked, &[]));
    }

    #[tokio::test]
    async fn filter_errors_are_answers_too() {
        let (revision, pipeline) = revision(8);
        let (answer, _) = revision
            .answer(
                request("arch=amd64", UpstreamKind::GraphBuilder),
                Vec::new(),
                &pipeline,
                &Arc::new(Semaphore::new(1)),
            )
            .await;
        assert_eq!(
            answer.unwrap_err().kind,
            cincinnati_core::ErrorKind::MissingParams
        );
    }
}
