//! The planning library's view of the upstream's full graph: one
//! [`UpdateGraph`] per architecture, built on first use and kept until the
//! upstream sends another revision (or the cluster policy another
//! generation). The page is public: a cluster policy's scoped channels are
//! not in it.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Weak};
use std::time::Duration;

use cincinnati_client::document::{self, Document, Shape};
use cincinnati_client::{ChannelAt, UpdateGraph};
use cincinnati_core::{ApiError, ErrorKind};
use parking_lot::{Mutex, MutexGuard};
use rollout_model::time::Timestamp;
use tokio::sync::OnceCell;

use crate::client::Engine;
use crate::client::Revision;
use crate::client::query::Arch;
use crate::client::request::UpstreamKind;

/// See the [module documentation](self).
pub struct Graphs {
    engine: Arc<Engine>,
    cached: Mutex<Cached>,
}

/// What was built from one revision. Weak: an old revision is freed when
/// the engine drops it, not when the explorer is next asked.
#[derive(Default)]
struct Cached {
    revision: Weak<Revision>,
    /// The cluster policy's generation, if the engine has one.
    policy_generation: Option<u64>,
    architectures: Arc<BTreeSet<String>>,
    /// Concurrent first requests for one architecture wait for one build
    /// (each build reads a copy of the whole graph).
    by_arch: HashMap<String, Arc<OnceCell<Arc<UpdateGraph>>>>,
}

impl Graphs {
    pub fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            cached: Mutex::default(),
        }
    }

    /// On an engine chained to another engine (which sends no full graph),
    /// the upstream engine's explorer answer to `endpoint` and `query`;
    /// `None` when this engine has the full graph itself.
    pub async fn upstream_answer(
        &self,
        endpoint: &str,
        query: &str,
    ) -> Option<Result<http_fetch::Response, http_fetch::FetchError>> {
        let feeds = self.engine.feeds();
        match feeds.kind() {
            Some(UpstreamKind::PolicyEngine) => {
                Some(feeds.client().fetch_explorer_answer(endpoint, query).await)
            }
            _ => None,
        }
    }

    /// The architecture asked about when none is given.
    pub fn default_arch(&self) -> &Arch {
        &self.engine.rules().default_arch
    }

    /// `channel` of `graph` at `now` as this engine serves it: with the
    /// releases phasing into it whose `start` has come, unless the engine
    /// does not phase (then as the graph lists it).
    pub fn channel_at<'g>(&self, graph: &'g UpdateGraph, channel: &'g str, now: Timestamp) -> ChannelAt<'g> {
        if self.engine.phases_rollouts() {
            graph.channel_at(channel, now)
        } else {
            graph.channel_as_listed(channel)
        }
    }

    /// `Cache-Control: max-age` of answers that do not change sooner.
    pub fn cache_max_age(&self) -> Duration {
        self.engine.cache_max_age()
    }

    /// The architectures of the current full graph.
    pub fn architectures(&self) -> Result<Arc<BTreeSet<String>>, ApiError> {
        let revision = self.engine.full_graph()?;
        Ok(self.current(&revision).architectures.clone())
    }

    /// The graph of `arch`, built once from the current full graph (on a
    /// blocking thread: it reads every release). Only architectures the
    /// graph has are built (others are 404 `does_not_exist`), so made-up
    /// ones cannot grow the cache.
    pub async fn of(&self, arch: &Arch) -> Result<Arc<UpdateGraph>, ApiError> {
        let revision = self.engine.full_graph()?;
        let cell = {
            let mut cached = self.current(&revision);
            if !cached.architectures.contains(arch.as_str()) {
                let known: Vec<&str> = cached.architectures.iter().map(String::as_str).collect();
                // Not 400: a valid name, of no architecture this graph has.
                return Err(ApiError::new(
                    ErrorKind::DoesNotExist,
                    format_args!("arch '{arch}' has no release (known: {})", known.join(", ")),
                ));
            }
            cached
                .by_arch
                .entry(arch.as_str().to_owned())
                .or_default()
                .clone()
        };
        let name = arch.as_str().to_owned();
        let policy = self.engine.cluster_policy().map(|policy| policy.current());
        cell.get_or_try_init(|| async move {
            tokio::task::spawn_blocking(move || {
                let graph = match policy {
                    Some(policy) if !policy.scoped_channels().is_empty() => {
                        policy.without_scoped_channels(revision.graph())
                    }
                    _ => revision.graph().clone(),
                };
                let full = Document {
                    graph,
                    shape: Shape::Full,
                };
                Arc::new(UpdateGraph::build(&name, &[full]))
            })
            .await
            .map_err(|error| ApiError::new(ErrorKind::FailedPluginExecution, error))
        })
        .await
        .cloned()
    }

    /// The cache, emptied first if it was built from another revision or
    /// cluster policy.
    fn current(&self, revision: &Arc<Revision>) -> MutexGuard<'_, Cached> {
        let policy_generation = self
            .engine
            .cluster_policy()
            .map(|policy| policy.current().generation());
        let mut cached = self.cached.lock();
        if !Weak::ptr_eq(&cached.revision, &Arc::downgrade(revision))
            || cached.policy_generation != policy_generation
        {
            *cached = Cached {
                revision: Arc::downgrade(revision),
                policy_generation,
                architectures: Arc::new(
                    document::architectures(revision.graph())
                        .into_iter()
                        .map(str::to_owned)
                        .collect(),
                ),
                by_arch: HashMap::new(),
            };
        }
        cached
    }
}
