//! The answers computed from one upstream revision, and their cache.
//!
//! An answer is computed at most once per (channel, arch, policy class) and
//! revision (while it is kept), on the first request that needs it, on a
//! blocking thread; concurrent first requests wait for that one
//! computation. Later requests clone an `Arc`. Computations of different
//! answers run at most as many at once as [`Computations`] allows: each
//! holds a copy of its channel's releases and its answer's bytes, so a flood
//! of requests for distinct channels would otherwise hold one per blocking
//! thread (up to 512). A computation copies only the releases the channel
//! filter keeps, not the whole graph (see `Pipeline::run_on`): answers of a
//! 5,900-release graph are computed several times faster, and without the
//! churn of whole-graph copies the allocator's memory stays near what is
//! live. Lazily rather than for every channel up front: most of the
//! hundreds of (channel, arch) pairs are never asked for (see
//! docs/benchmarks-policy-engine.md for the measured costs). At most
//! `max_answers` are kept, the least recently used going first: made-up
//! channels cannot grow memory, and the classes a rollout or a deferral
//! bucket leaves behind make room for the current ones.
//!
//! A new revision keeps the answers of the one before that it leaves
//! alike ([`AnswerCache::kept_from`]): an answer made from a channel's
//! releases alone (the pipeline's [`Pipeline::listing`]) records the
//! digest of what the revision held for them ([`Basis`]), and serves on
//! while the next revision digests to the same. A graph-data change that
//! blocks one update makes again only the answers of the channels holding
//! it, not every answer.

use std::num::NonZero;
use std::sync::Arc;

use cincinnati_core::listed::{Listed, ListedDigest, Listing};
use cincinnati_core::stage::Pipeline;
use cincinnati_core::{ApiError, ErrorKind, Graph, wire};
use http_answers::PreparedBody;
use lru::LruCache;
use parking_lot::Mutex;
use tokio::sync::{OnceCell, Semaphore};

use crate::client::query::{Arch, Channel};
use crate::client::request::PolicyRequest;
use crate::cluster_policy::Applied;
use crate::cluster_policy::PolicyClass;
use crate::metrics::EngineMetrics;

/// The `version` a policy-engine puts at the top of its answers.
pub const API_VERSION: u64 = 1;

pub type Answer = Result<Arc<PreparedBody>, ApiError>;

/// What an answer was made from: the releases of `listing`'s values under
/// `key`, which the revision digested to `digest`. Another revision with
/// the same digest gives the same answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Basis {
    pub key: String,
    pub values: Vec<String>,
    pub digest: ListedDigest,
}

impl Basis {
    pub fn of(listing: &Listing<'_>, digest: ListedDigest) -> Self {
        Self {
            key: listing.key.to_owned(),
            values: listing.values.iter().map(|&value| value.to_owned()).collect(),
            digest,
        }
    }

    pub fn listing(&self) -> Listing<'_> {
        Listing {
            key: &self.key,
            values: self.values.iter().map(String::as_str).collect(),
        }
    }
}

/// An answer and, when it was made from a listing alone, its basis.
#[derive(Debug, Clone)]
pub struct Computed {
    pub answer: Answer,
    pub basis: Option<Basis>,
}

type Cell = Arc<OnceCell<Computed>>;

/// What an answer depends on besides the revision: `id` only through the
/// policy class and the phase, and `version` only as the release
/// `version-prune` prunes to, so neither splits the cache otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct AnswerKey {
    channel: Option<Channel>,
    arch: Option<Arch>,
    class: Option<PolicyClass>,
    /// The phased-rollout gates passed (see [`crate::client::phased`]):
    /// the revision and the channel say which gates they are.
    phase: Option<u64>,
    version: Option<String>,
    /// The serials of the revisions joined to this one (scoped channels
    /// fetched from an engine upstream): another revision of one of them is
    /// another answer.
    joined: Vec<u64>,
}

impl AnswerKey {
    fn of(request: &PolicyRequest, joined: &[u64]) -> Self {
        Self {
            channel: request.query.channel.clone(),
            arch: request.query.arch.clone(),
            class: request.class.clone(),
            phase: request.phase.as_ref().map(|phase| phase.passed()),
            version: request.version_key.clone(),
            joined: joined.to_vec(),
        }
    }
}

/// Whether an answer came from the cache, for the cache metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    Hit,
    /// Computed; keeping it `evicted` the least recently used answer.
    Miss {
        evicted: bool,
    },
}

impl CacheOutcome {
    /// Counts this outcome in the answer cache's metrics.
    pub fn count(self, metrics: &EngineMetrics) {
        match self {
            CacheOutcome::Hit => metrics.cache_hits.inc(),
            CacheOutcome::Miss { evicted } => {
                metrics.cache_misses.inc();
                if evicted {
                    metrics.cache_evictions.inc();
                }
            }
        }
    }
}

/// An empty cache of at most `capacity`, grown as answers are kept: an
/// engine chained to an engine holds a revision per feed, most with an
/// answer or two, and room for `max_answers` up front cost ~130 KiB each.
/// Keys are hashed with foldhash (seeded per process, as SipHash is): every
/// request hashes its key twice, and SipHash took a tenth of a cached
/// answer's instructions.
fn sparse<K: std::hash::Hash + Eq, V>(
    capacity: NonZero<usize>,
) -> LruCache<K, V, foldhash::fast::RandomState> {
    let mut cache = LruCache::unbounded_with_hasher(foldhash::fast::RandomState::default());
    cache.resize(capacity);
    cache
}

/// The answers of one revision, least recently used first out.
#[derive(Debug)]
pub struct AnswerCache {
    answers: Mutex<LruCache<AnswerKey, Cell, foldhash::fast::RandomState>>,
}

impl AnswerCache {
    pub fn new(max_answers: usize) -> Self {
        Self {
            answers: Mutex::new(sparse(NonZero::new(max_answers).unwrap_or(NonZero::<usize>::MIN))),
        }
    }

    /// A cache of at most `max_answers` holding the answers of `previous`
    /// whose basis `holds` still (in their order of use), and how many
    /// answers `previous` had made. Errors, answers being made and answers
    /// without a basis are made again.
    pub fn kept_from(
        previous: &AnswerCache,
        max_answers: usize,
        holds: impl Fn(&Basis) -> bool,
    ) -> (Self, usize) {
        let cache = Self::new(max_answers);
        let previous = previous.answers.lock();
        let mut made = 0;
        {
            let mut answers = cache.answers.lock();
            for (key, cell) in previous.iter().rev() {
                let Some(computed) = cell.get() else { continue };
                made += 1;
                if computed.answer.is_ok() && computed.basis.as_ref().is_some_and(&holds) {
                    answers.push(key.clone(), cell.clone());
                }
            }
        }
        (cache, made)
    }

    /// How many answers are kept (made or being made).
    pub fn len(&self) -> usize {
        self.answers.lock().len()
    }

    /// Whether the answer to `request` (joined with the revisions of
    /// serials `joined`) is computed already.
    pub fn is_answered(&self, request: &PolicyRequest, joined: &[u64]) -> bool {
        self.answers
            .lock()
            .peek(&AnswerKey::of(request, joined))
            .is_some_and(|cell| cell.initialized())
    }

    /// The answer to `request` (joined with the revisions of serials
    /// `joined`), if it is computed already: used, as
    /// [`AnswerCache::get_or_compute`] uses it.
    pub fn answered(&self, request: &PolicyRequest, joined: &[u64]) -> Option<Answer> {
        let mut answers = self.answers.lock();
        let computed = answers.get(&AnswerKey::of(request, joined))?.get()?;
        Some(computed.answer.clone())
    }

    /// The answer to `request`, computed by `compute` unless it is kept or
    /// being computed already (then waited for).
    pub async fn get_or_compute<F>(
        &self,
        request: &PolicyRequest,
        joined: &[u64],
        compute: F,
    ) -> (Answer, CacheOutcome)
    where
        F: AsyncFnOnce() -> Computed,
    {
        let key = AnswerKey::of(request, joined);
        let (cell, evicted) = {
            let mut answers = self.answers.lock();
            match answers.get(&key) {
                Some(cell) => (cell.clone(), false),
                None => {
                    let cell = Cell::default();
                    let evicted = answers.push(key, cell.clone()).is_some();
                    (cell, evicted)
                }
            }
        };
        if let Some(computed) = cell.get() {
            return (computed.answer.clone(), CacheOutcome::Hit);
        }
        // Boxed: a computation's state would otherwise be moved with every
        // request's future, most of which find their answer above.
        Box::pin(async move {
            // Only the request that computes is a miss; those that waited for it are hits.
            let mut computed = false;
            let made = cell
                .get_or_init(|| {
                    computed = true;
                    compute()
                })
                .await;
            let outcome = if computed {
                CacheOutcome::Miss { evicted }
            } else {
                CacheOutcome::Hit
            };
            (made.answer.clone(), outcome)
        })
        .await
    }
}

/// How many answers are computed at once: one per CPU, each on a blocking
/// thread. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Computations(Arc<Semaphore>);

impl Computations {
    pub fn new(at_once: usize) -> Self {
        Self(Arc::new(Semaphore::new(at_once.max(1))))
    }

    pub fn one_per_cpu() -> Self {
        Self::new(std::thread::available_parallelism().map_or(1, NonZero::get))
    }

    /// Runs `work` on a blocking thread once a permit is free. The permit
    /// goes with the work, which runs on even if the caller is dropped.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let permit = self
            .0
            .clone()
            .acquire_owned()
            .await
            .expect("the computation semaphore is never closed");
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            work()
        })
        .await
        .unwrap_or_else(|error| Err(ApiError::new(ErrorKind::FailedPluginExecution, error)))
    }

    #[cfg(test)]
    pub(crate) fn semaphore(&self) -> &Arc<Semaphore> {
        &self.0
    }
}

/// Filters `base` for `request` (a copy of the channel's releases only, see
/// [`Pipeline::run_on`]; read through `listed`, what `base` holds per
/// channel, when given) and prepares the bytes answered, kept compressed
/// only: nearly every client takes gzip, and the identity bytes of the few
/// answers asked for without it are kept by the server's `IdentityCache`.
pub fn compute(
    base: &Graph,
    listed: Option<&Listed>,
    request: &PolicyRequest,
    pipeline: &Pipeline<PolicyRequest>,
) -> Answer {
    let graph = match listed {
        Some(listed) => pipeline.run_on_listed(base, listed, request),
        None => pipeline.run_on(base, request),
    }
    .map_err(|failure| failure.error)?;
    let body = PreparedBody::compressed(|out| wire::serialize_into(&graph, Some(API_VERSION), out))
        .expect("serialising into memory cannot fail");
    Ok(Arc::new(body))
}

/// The graph `request` gets from `base` without its policy class's rules
/// (its view's channels still those the class sees), and what the rules do
/// to it: what an explanation is made of. Computed anew, never cached:
/// operators ask rarely.
pub fn before_rules(
    base: &Graph,
    request: PolicyRequest,
    pipeline: &Pipeline<PolicyRequest>,
) -> Result<(Graph, Applied), ApiError> {
    let class = request.class.clone();
    let request = request.without_rules();
    let graph = pipeline.run_on(base, &request).map_err(|failure| failure.error)?;
    let applied = class
        .map(|class| class.apply(&mut graph.clone(), request.arch().as_str()))
        .unwrap_or_default();
    Ok((graph, applied))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::client::filters::{catalog, default_tables};
    use crate::client::request::UpstreamKind;
    use crate::test_graphs::graph;

    const GRAPH: &str = r#"{"nodes": [
        {"version": "4.1.0+amd64", "payload": "p", "metadata": {
          "io.openshift.upgrades.graph.release.arch": "amd64",
          "io.openshift.upgrades.graph.release.channels": "a-4.1,b-4.1"}}],
      "edges": []}"#;

    struct Fixture {
        cache: AnswerCache,
        graph: Arc<Graph>,
        pipeline: Arc<Pipeline<PolicyRequest>>,
        computations: Computations,
    }

    fn fixture(max_answers: usize) -> Fixture {
        Fixture {
            cache: AnswerCache::new(max_answers),
            graph: Arc::new(graph(GRAPH)),
            pipeline: Arc::new(catalog().pipeline(&default_tables(false)).unwrap()),
            computations: Computations::new(2),
        }
    }

    impl Fixture {
        async fn ask(&self, query: &str) -> (Answer, CacheOutcome) {
            let request = PolicyRequest::for_test(query, UpstreamKind::GraphBuilder);
            let (graph, pipeline, asked) = (self.graph.clone(), self.pipeline.clone(), request.clone());
            self.cache
                .get_or_compute(&request, &[], async || {
                    let answer = self
                        .computations
                        .run(move || compute(&graph, None, &asked, &pipeline))
                        .await;
                    let basis = query.contains("channel=").then(|| basis(query));
                    Computed { answer, basis }
                })
                .await
        }

        async fn outcome(&self, query: &str) -> CacheOutcome {
            let (answer, outcome) = self.ask(query).await;
            assert!(answer.is_ok());
            outcome
        }

        fn is_answered(&self, query: &str) -> bool {
            self.cache
                .is_answered(&PolicyRequest::for_test(query, UpstreamKind::GraphBuilder), &[])
        }
    }

    const MISS: CacheOutcome = CacheOutcome::Miss { evicted: false };

    /// A basis naming the query (its digest does not matter: each test
    /// says which bases hold).
    fn basis(query: &str) -> Basis {
        let listing = Listing {
            key: "channels",
            values: vec![query],
        };
        let digest = Listed::of(&Graph::new(), listing.key).digest(&listing);
        Basis::of(&listing, digest.unwrap())
    }

    #[tokio::test]
    async fn a_new_revision_keeps_the_answers_whose_basis_holds_in_their_order_of_use() {
        let answers = fixture(8);
        for query in ["channel=a-4.1", "channel=b-4.1", "channel=made-up"] {
            answers.outcome(query).await;
        }
        assert!(answers.ask("arch=amd64").await.0.is_err());
        answers.outcome("channel=a-4.1").await;
        let changed = "channel=b-4.1";
        let (kept, made) = AnswerCache::kept_from(&answers.cache, 2, |basis| basis.values != [changed]);
        assert_eq!(made, 4);
        let next = Fixture {
            cache: kept,
            ..fixture(2)
        };
        assert_eq!(next.cache.len(), 2, "a-4.1 and made-up, not b-4.1 nor the error");
        assert!(!next.is_answered(changed));
        assert!(!next.is_answered("arch=amd64"), "errors are made again");
        assert_eq!(next.outcome("channel=made-up").await, CacheOutcome::Hit);
        assert_eq!(next.outcome("channel=a-4.1").await, CacheOutcome::Hit);
        assert_eq!(
            next.outcome(changed).await,
            CacheOutcome::Miss { evicted: true },
            "made again, in place of the least recently used"
        );
        assert!(next.is_answered("channel=a-4.1"));
        assert!(!next.is_answered("channel=made-up"));
    }

    #[tokio::test]
    async fn each_key_is_computed_once_and_version_and_id_do_not_split_it() {
        let answers = fixture(8);
        assert_eq!(answers.outcome("channel=a-4.1").await, MISS);
        assert_eq!(
            answers.outcome("channel=a-4.1&version=4.1.0&id=x").await,
            CacheOutcome::Hit
        );
        assert_eq!(answers.outcome("channel=b-4.1").await, MISS);
        assert_eq!(answers.outcome("channel=a-4.1&arch=amd64").await, MISS);
    }

    #[tokio::test]
    async fn beyond_the_limit_the_least_recently_used_answer_is_evicted() {
        let answers = fixture(2);
        assert_eq!(answers.outcome("channel=a-4.1").await, MISS);
        assert_eq!(answers.outcome("channel=b-4.1").await, MISS);
        assert_eq!(answers.outcome("channel=a-4.1").await, CacheOutcome::Hit);
        assert_eq!(
            answers.outcome("channel=made-up").await,
            CacheOutcome::Miss { evicted: true }
        );
        assert_eq!(answers.outcome("channel=a-4.1").await, CacheOutcome::Hit);
        assert_eq!(
            answers.outcome("channel=b-4.1").await,
            CacheOutcome::Miss { evicted: true },
            "b was the least recently used"
        );
    }

    #[tokio::test]
    async fn a_key_is_answered_once_computed_and_until_evicted() {
        let answers = fixture(1);
        assert!(!answers.is_answered("channel=a-4.1"));
        answers.outcome("channel=a-4.1").await;
        assert!(answers.is_answered("channel=a-4.1&version=4.1.0"));
        answers.outcome("channel=made-up").await;
        assert!(answers.is_answered("channel=made-up"));
        assert!(!answers.is_answered("channel=a-4.1"), "evicted");
    }

    /// On tokio's paused clock, which moves only when every task waits: the
    /// hour passes once the asking task waits for a permit.
    #[tokio::test(start_paused = true)]
    async fn an_answer_is_computed_only_with_a_free_permit() {
        let answers = Arc::new(Fixture {
            computations: Computations::new(1),
            ..fixture(8)
        });
        let busy = answers
            .computations
            .semaphore()
            .clone()
            .acquire_owned()
            .await
            .unwrap();
        let waiting = tokio::spawn({
            let answers = answers.clone();
            async move { answers.ask("channel=a-4.1").await }
        });
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert!(
            !answers.is_answered("channel=a-4.1"),
            "computed while every permit was taken"
        );
        drop(busy);
        let (answer, outcome) = waiting.await.unwrap();
        assert!(answer.is_ok());
        assert_eq!(outcome, MISS);
        assert!(answers.is_answered("channel=a-4.1"));
    }

    #[tokio::test]
    async fn filter_errors_are_answers_too() {
        let (answer, _) = fixture(8).ask("arch=amd64").await;
        assert_eq!(answer.unwrap_err().kind, ErrorKind::MissingParams);
    }
}
