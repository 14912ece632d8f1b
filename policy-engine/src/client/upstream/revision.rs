//! One upstream revision: the parsed graph, immutable, with the cache of
//! the answers computed from it (see [`crate::client::answers`]).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use cincinnati_core::listed::Listed;
use cincinnati_core::release::{keys, without_build};
use cincinnati_core::stage::Pipeline;
use cincinnati_core::{ApiError, ErrorKind, Graph};
use service_kit::telemetry::Origin;

use crate::client::answers::{self, Answer, AnswerCache, Basis, CacheOutcome, Computations, Computed};
use crate::client::phased::PhasedRollouts;
use crate::client::request::PolicyRequest;
use crate::cluster_policy::Applied;

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
    /// What the graph serves, made when first asked.
    catalog: OnceLock<Catalog>,
    /// The phased rollouts its releases carry, read when first asked.
    phased: OnceLock<PhasedRollouts>,
    /// What it holds for each channel, indexed and digested when first
    /// asked.
    listed: OnceLock<Listed>,
}

/// How many of the answers a revision made the next one kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptAnswers {
    pub kept: usize,
    pub made: usize,
}

/// What a revision's graph serves: its channels, architectures and
/// releases (versions without build metadata, with their architecture when
/// the versions carry it, `+amd64`).
#[derive(Debug, Default)]
pub struct Catalog {
    channels: HashSet<String>,
    arches: HashSet<String>,
    /// Versions by architecture (`None`: versions without one), looked up
    /// per update check without allocating.
    releases: HashMap<Option<String>, HashSet<String>>,
}

/// Which parts of an update check a revision serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// Its channel and architecture.
    pub channel: bool,
    /// Its version, a release of the graph.
    pub version: bool,
}

impl Catalog {
    fn of(graph: &Graph) -> Self {
        let mut catalog = Self::default();
        for (_, release) in graph.releases() {
            catalog
                .channels
                .extend(release.metadata_list(keys::CHANNELS).map(str::to_owned));
            let arch = (!release.version.build.is_empty()).then(|| release.version.build.to_string());
            catalog.arches.extend(arch.clone());
            catalog
                .releases
                .entry(arch)
                .or_default()
                .insert(without_build(&release.version).to_string());
        }
        catalog
    }

    /// Which of `channel`, `arch` and `version` it serves (an architecture
    /// any, when its versions carry none: an engine's answer for one).
    pub fn serves(&self, channel: &str, arch: &str, version: &str) -> Served {
        let arch_served = self.arches.is_empty() || self.arches.contains(arch);
        Served {
            channel: self.channels.contains(channel) && arch_served,
            version: self.has_release(arch, version),
        }
    }

    /// Whether the graph has a release of `version` for `arch`.
    pub fn has_release(&self, arch: &str, version: &str) -> bool {
        let versions = if self.arches.is_empty() {
            self.releases.get(&None)
        } else {
            self.releases
                .iter()
                .find_map(|(of, versions)| (of.as_deref() == Some(arch)).then_some(versions))
        };
        versions.is_some_and(|versions| versions.contains(version))
    }
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
            catalog: OnceLock::new(),
            phased: OnceLock::new(),
            listed: OnceLock::new(),
        }
    }

    /// The revision of `graph` after `previous`, keeping the answers of
    /// `previous` made from channels `graph` holds alike (see
    /// [`AnswerCache::kept_from`]). Digests `graph` when `previous` made
    /// such answers: one pass over it, on the caller's (blocking) thread.
    pub fn following(
        previous: &Revision,
        graph: Graph,
        fetched_at: SystemTime,
        max_answers: usize,
    ) -> (Self, KeptAnswers) {
        let mut revision = Self::new(graph, fetched_at, max_answers);
        let (answers, made) = AnswerCache::kept_from(&previous.answers, max_answers, |basis| {
            let listing = basis.listing();
            revision
                .listed(listing.key)
                .and_then(|listed| listed.digest(&listing))
                == Some(basis.digest)
        });
        revision.answers = answers;
        let kept = revision.answers.len();
        (revision, KeptAnswers { kept, made })
    }

    /// What this revision holds for each value of the metadata list `key`
    /// (its channels); `None` for another key than the first one asked.
    fn listed(&self, key: &str) -> Option<&Listed> {
        Some(self.listed.get_or_init(|| Listed::of(&self.graph, key))).filter(|listed| listed.key() == key)
    }

    /// The phased rollouts this revision's graph carries (a graph-builder's).
    pub fn phased_rollouts(&self) -> &PhasedRollouts {
        self.phased.get_or_init(|| PhasedRollouts::of(&self.graph))
    }

    /// What this revision's graph serves.
    pub fn catalog(&self) -> &Catalog {
        self.catalog.get_or_init(|| Catalog::of(&self.graph))
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

    /// The answer to `request`, if it is made already (see
    /// [`AnswerCache::answered`]).
    pub fn answer_at_hand(&self, request: &PolicyRequest) -> Option<Answer> {
        self.answers.answered(request, &[])
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
        self.answers
            .get_or_compute(&request, &serials(&joined), async || {
                // Copies made on a miss only: most requests find their answer.
                let (revision, pipeline, asked) = (self.clone(), pipeline.clone(), request.clone());
                computations
                    .run(move || {
                        // Joined revisions are neither indexed nor digested:
                        // their answers are made again.
                        let listing = pipeline.listing(&asked).filter(|_| joined.is_empty());
                        let listed = listing.as_ref().and_then(|listing| revision.listed(listing.key));
                        let basis = listing.zip(listed).and_then(|(listing, listed)| {
                            Some(Basis::of(&listing, listed.digest(&listing)?))
                        });
                        let answer = revision
                            .merged_with(&joined)
                            .and_then(|base| answers::compute(&base, listed, &asked, &pipeline));
                        Ok(Computed { answer, basis })
                    })
                    .await
                    .unwrap_or_else(|error| Computed {
                        answer: Err(error),
                        basis: None,
                    })
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
