//! The engine: what the handlers ask, composed of the upstream feeds
//! ([`Feeds`]), the filter pipeline, the answers computed from a revision
//! ([`crate::client::answers`]) and the per-cluster policy ([`ClusterPolicy`]);
//! each answered update check is handed to a [`CheckSink`] (the operator
//! plane's fleet, when one records them), which it knows by that trait
//! only.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use cincinnati_core::release::without_build;
use cincinnati_core::stage::Pipeline;
use cincinnati_core::{ApiError, ErrorKind, Version};
use http_answers::{IdentityCache, PreparedBody};
use service_kit::shutdown::StopHandle;

use rollout_model::{ClusterId, Lot, Rollout};

use crate::client::UpstreamParameters;
use crate::client::answers::{Answer, CacheOutcome, Computations};
use crate::client::phased::Phase;
use crate::client::query::{ClientQuery, QueryRules};
use crate::client::request::{PolicyRequest, UpstreamKind};
use crate::client::upstream::feed::FeedStatus;
use crate::client::upstream::feeds::{FeedLimits, Feeds};
use crate::client::upstream::revision::{Revision, Served};
use crate::cluster_policy::PolicyStatus;
use crate::cluster_policy::{Asked, Explanation, phased_offers, without_policy};
use crate::cluster_policy::{ClusterPolicy, PolicyClass};
use crate::metrics::EngineMetrics;

/// Limits on the work and memory the engine may take.
#[derive(Debug, Clone)]
pub struct Limits {
    pub feeds: FeedLimits,
    /// Bytes of identity answers kept for clients without gzip.
    pub identity_cache_bytes: usize,
    /// `Cache-Control: max-age` of answers, unless their policy class
    /// changes sooner.
    pub cache_max_age: Duration,
    /// Time between reads of the policy file.
    pub policy_reload_interval: Duration,
}

/// A prepared answer and, when its policy class changes before the
/// configured max-age is over, how long it stays true.
#[derive(Debug)]
pub struct Answered {
    pub body: Arc<PreparedBody>,
    pub expires_sooner: Option<Duration>,
}

/// Who asked: a cluster checking for updates (recorded, when the engine
/// records checks), or a person or tool asking about one
/// (`Cincinnati-Question`: never recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asker {
    Cluster,
    Question,
}

/// Where answered update checks go, and who knows clusters' lots: the
/// operator plane's fleet.
pub trait CheckSink: Send + Sync {
    /// Notes the update check of an answered request for `query` (its
    /// architecture `arch`) made at `now`; `served` says which of its
    /// channel and version the upstream serves.
    fn note(&self, query: &ClientQuery, arch: &str, served: Served, now: SystemTime);

    /// A cluster's lot, for rollouts whose gates name clusters; `None`
    /// while the store's secret is not known (their gates are then not
    /// known either).
    fn lot(&self, id: &ClusterId) -> Option<Lot>;
}

pub struct Engine {
    feeds: Arc<Feeds>,
    pipeline: Arc<Pipeline<PolicyRequest>>,
    rules: QueryRules,
    /// Identity bytes of the answers most recently asked for without gzip
    /// (answers are kept compressed only).
    identities: IdentityCache,
    computations: Computations,
    cache_max_age: Duration,
    metrics: EngineMetrics,
    cluster_policy: Option<Arc<ClusterPolicy>>,
    checks: Option<Arc<dyn CheckSink>>,
    stopping: StopHandle,
    phased_rollouts: bool,
}

/// What an engine is made of besides its upstream, filters and rules.
pub struct Parts {
    pub metrics: EngineMetrics,
    pub cluster_policy: Option<Arc<ClusterPolicy>>,
    pub checks: Option<Arc<dyn CheckSink>>,
    /// Resolves when the service stops: requests held waiting for a change
    /// are answered then.
    pub stopping: StopHandle,
    /// Whether graph-data's phased rollouts are served per cluster (see
    /// [`crate::client::phased`]) when a graph-builder's graph carries them.
    pub phased_rollouts: bool,
}

impl Engine {
    /// Must be called inside the runtime fetches are to run on.
    pub fn new(
        feeds: Feeds,
        pipeline: Pipeline<PolicyRequest>,
        rules: QueryRules,
        limits: &Limits,
        parts: Parts,
    ) -> Self {
        let feeds = Arc::new(feeds);
        feeds.follow_upstream();
        Self {
            feeds,
            pipeline: Arc::new(pipeline),
            rules,
            identities: IdentityCache::new(limits.identity_cache_bytes),
            computations: Computations::one_per_cpu(),
            cache_max_age: limits.cache_max_age,
            metrics: parts.metrics,
            cluster_policy: parts.cluster_policy,
            checks: parts.checks,
            stopping: parts.stopping,
            phased_rollouts: parts.phased_rollouts,
        }
    }

    /// Resolves when the service stops.
    pub async fn stopping(&self) {
        self.stopping.stopping().await;
    }

    pub fn rules(&self) -> &QueryRules {
        &self.rules
    }

    pub fn metrics(&self) -> &EngineMetrics {
        &self.metrics
    }

    pub fn identities(&self) -> &IdentityCache {
        &self.identities
    }

    pub fn feeds(&self) -> &Arc<Feeds> {
        &self.feeds
    }

    pub fn cluster_policy(&self) -> Option<&Arc<ClusterPolicy>> {
        self.cluster_policy.as_ref()
    }

    /// Whether graph-data's phased rollouts are served per cluster when a
    /// graph-builder's graph carries them (see [`crate::client::phased`]).
    pub fn phases_rollouts(&self) -> bool {
        self.phased_rollouts
    }

    /// `Cache-Control: max-age` of answers that do not change sooner.
    pub fn cache_max_age(&self) -> Duration {
        self.cache_max_age
    }

    /// The policy file's rollouts now, with what is known of their
    /// run-time state; none without a policy file.
    pub fn rollouts(&self) -> Arc<Vec<Rollout>> {
        self.cluster_policy
            .as_ref()
            .map(|policy| policy.rollouts())
            .unwrap_or_default()
    }

    pub fn is_ready(&self) -> bool {
        self.feeds.is_ready()
    }

    /// The upstream's full graph, as last fetched (see [`Feeds::full_graph`]).
    pub fn full_graph(&self) -> Result<Arc<Revision>, ApiError> {
        self.feeds.full_graph()
    }

    /// The prepared answer to `query`, asked by `asker`, for a request
    /// that arrived at `arrived`. One not computed yet is computed from
    /// the feed as revalidated for this request.
    pub async fn answer(
        &self,
        query: ClientQuery,
        asker: Asker,
        arrived: Instant,
    ) -> Result<Answered, ApiError> {
        let now = SystemTime::now();
        let at = rollout_model::time::from_system(now);
        let class = self.classify(&query, now).await;
        let checked = self.checked(&query, asker);
        let (request, revision, joined) = self.revision_for(query, class, arrived, at).await?;
        let valid_for = valid_for(&request, at);
        let checked = checked.map(|query| (query, request.arch().as_str().to_owned()));
        let (answer, outcome) = revision
            .answer(request, joined, &self.pipeline, &self.computations)
            .await;
        self.answered(answer, outcome, &revision, checked, valid_for, now)
    }

    /// [`Engine::answer`] when the answer is at hand: made already, from
    /// the revision served now, and every step to it at hand too (a
    /// graph-builder upstream, whose one feed needs no fetch; a class that
    /// asks no lookup service), and `respond` makes a response of it. The
    /// check is noted and counted only then: `None` (an error too) leaves
    /// the request to [`Engine::answer`], untouched.
    pub fn answer_at_hand<T>(
        &self,
        query: ClientQuery,
        asker: Asker,
        respond: impl FnOnce(&Answered) -> Option<T>,
    ) -> Option<T> {
        if self.feeds.kind() != Some(UpstreamKind::GraphBuilder) {
            return None;
        }
        let revision = self.feeds.full_graph().ok()?;
        let now = SystemTime::now();
        let at = rollout_model::time::from_system(now);
        let class = match &self.cluster_policy {
            Some(policy) => Some(policy.classify_at_hand(query.cluster(), |id| self.lot_of(id), now)?),
            None => None,
        };
        let checked = self.checked(&query, asker);
        let mut request = PolicyRequest::new(query, UpstreamKind::GraphBuilder, class, &self.rules);
        self.place(&mut request, &revision, at);
        let answered = Answered {
            body: revision.answer_at_hand(&request)?.ok()?,
            expires_sooner: self.expires_sooner(valid_for(&request, at), now),
        };
        let response = respond(&answered)?;
        let checked = checked.map(|query| (query, request.arch().as_str().to_owned()));
        self.note(CacheOutcome::Hit, &revision, checked, now);
        Some(response)
    }

    /// A copy of `query` for the fleet's checks, where they are kept.
    fn checked(&self, query: &ClientQuery, asker: Asker) -> Option<ClientQuery> {
        (asker == Asker::Cluster && self.checks.is_some()).then(|| query.clone())
    }

    /// What `answer` (looked up with `outcome`, from `revision`) is, valid
    /// for `valid_for` from `now`, once its check is noted (see
    /// [`Engine::note`]).
    fn answered(
        &self,
        answer: Answer,
        outcome: CacheOutcome,
        revision: &Revision,
        checked: Option<(ClientQuery, String)>,
        valid_for: Option<Duration>,
        now: SystemTime,
    ) -> Result<Answered, ApiError> {
        let answered = answer.map(|body| Answered {
            body,
            expires_sooner: self.expires_sooner(valid_for, now),
        });
        self.note(outcome, revision, checked.filter(|_| answered.is_ok()), now);
        answered
    }

    /// How much sooner than the configured max-age an answer valid for
    /// `valid_for` from `now` stops being true. Less the waits since
    /// (lookup, refresh, computation): caches count max-age from when the
    /// answer reaches them.
    fn expires_sooner(&self, valid_for: Option<Duration>, now: SystemTime) -> Option<Duration> {
        valid_for
            .map(|valid_for| valid_for.saturating_sub(now.elapsed().unwrap_or_default()))
            .filter(|valid_for| *valid_for < self.cache_max_age)
    }

    /// Notes the answered check of `checked` (a query and its
    /// architecture, asked of `revision` at `now`) and counts the cache's
    /// `outcome`.
    fn note(
        &self,
        outcome: CacheOutcome,
        revision: &Revision,
        checked: Option<(ClientQuery, String)>,
        now: SystemTime,
    ) {
        if let (Some(checks), Some((query, arch))) = (&self.checks, checked) {
            let served = match (&query.channel, &query.version) {
                (Some(channel), Some(version)) => revision.catalog().serves(channel.as_str(), &arch, version),
                _ => Served {
                    channel: false,
                    version: false,
                },
            };
            checks.note(&query, &arch, served, now);
        }
        outcome.count(&self.metrics);
    }

    /// Why the cluster of `query` sees what it sees (see
    /// [`crate::cluster_policy::explain`]); an error without a cluster
    /// policy, unless a release phases into the channel asked.
    pub async fn explain(&self, query: ClientQuery, arrived: Instant) -> Result<Explanation, ApiError> {
        let now = SystemTime::now();
        let at = rollout_model::time::from_system(now);
        let class = self.classify(&query, now).await;
        let cluster = query.cluster();
        let asked = (query.channel.clone(), query.arch.clone(), query.version.clone());
        let (request, revision, _) = self.revision_for(query, class.clone(), arrived, at).await?;
        let version = asked
            .2
            .as_deref()
            .and_then(|version| Version::parse(version).ok());
        let phased = match (&request.phase, &request.query.channel, version) {
            (Some(_), Some(channel), Some(version)) => phased_offers(
                (revision.phased_rollouts(), self.knowledge().as_ref()),
                channel.as_str(),
                request.arch().as_str(),
                &version,
                cluster,
                at,
            ),
            _ => Vec::new(),
        };
        let view_channels = request
            .view_channels()
            .map(|channels| channels.into_iter().map(str::to_owned).collect())
            .unwrap_or_default();
        let asked_of = |view_channels, phased| Asked {
            channel: asked.0.as_ref().map(|channel| channel.as_str()),
            arch: asked.1.as_ref().map(|arch| arch.as_str()),
            version: asked.2.as_deref(),
            view_channels,
            phased,
        };
        let (Some(policy), Some(class)) = (&self.cluster_policy, class) else {
            let Some(phase) = &request.phase else {
                return Err(ApiError::new(
                    ErrorKind::InvalidParams,
                    "no cluster policy is configured (cluster_policy.file) and no release phases into this channel: every cluster sees the same",
                ));
            };
            let valid_for_secs = phase.valid_for(at).map(|valid_for| valid_for.as_secs());
            return Ok(without_policy(
                cluster,
                asked_of(view_channels, phased),
                valid_for_secs,
            ));
        };
        let (base, applied) = revision
            .before_rules(request, &self.pipeline, &self.computations)
            .await?;
        Ok(policy.explain(&class, asked_of(view_channels, phased), &base, &applied, now))
    }

    /// The request's policy class, if a cluster policy is configured.
    async fn classify(&self, query: &ClientQuery, now: SystemTime) -> Option<PolicyClass> {
        let policy = self.cluster_policy.as_ref()?;
        Some(policy.classify(query.cluster(), |id| self.lot_of(id), now).await)
    }

    /// A cluster's lot, where the fleet knows it.
    fn lot_of(&self, id: &ClusterId) -> Option<Lot> {
        self.checks.as_ref().and_then(|checks| checks.lot(id))
    }

    /// The request to filter for `query` at `now` (its phase that of the
    /// revision answering it), the revision to answer it from (one whose
    /// answer is computed, or the feed revalidated first), and the
    /// revisions of the scoped channels its view joins that an engine
    /// upstream serves apart.
    async fn revision_for(
        &self,
        query: ClientQuery,
        class: Option<PolicyClass>,
        arrived: Instant,
        now: rollout_model::time::Timestamp,
    ) -> Result<(PolicyRequest, Arc<Revision>, Vec<Arc<Revision>>), ApiError> {
        let (source, feed) = self
            .feeds
            .feed_for(|| UpstreamParameters::forwarded(&query))
            .await?;
        let mut request = PolicyRequest::new(query, source, class, &self.rules);
        // Only an engine upstream serves scoped channels apart; boxed, as
        // rare (see `AnswerCache::get_or_compute`).
        let joined = if request.source == UpstreamKind::PolicyEngine && request.class.is_some() {
            Box::pin(self.joined_revisions(&request)).await?
        } else {
            Vec::new()
        };
        let current = feed.revision();
        if let Some(revision) = &current {
            self.place(&mut request, revision, now);
        }
        let revision = match current {
            Some(revision) if revision.is_answered(&request, &joined) => revision,
            // Not computed yet, or no graph yet (the last fetch failed): ask
            // the upstream first.
            _ => {
                // Boxed, as rare: see `AnswerCache::get_or_compute`.
                Box::pin(self.feeds.revalidate(&feed, arrived)).await;
                let revision = self.feeds.served(&feed)?;
                self.place(&mut request, &revision, now);
                revision
            }
        };
        Ok((request, revision, joined))
    }

    /// Places `request` in `revision` at `now`: its phase and the release
    /// its answer is keyed by.
    fn place(&self, request: &mut PolicyRequest, revision: &Revision, now: rollout_model::time::Timestamp) {
        request.phase = self.phase_of(request, revision, now);
        request.version_key = self.version_key(request, revision);
    }

    /// Where `request` stands at `now` in the phased rollouts into its
    /// channel that `revision` carries. Only a graph-builder's graph
    /// carries them: an engine upstream answered already phased, for the
    /// `id` it was forwarded or as for a request without one.
    fn phase_of(
        &self,
        request: &PolicyRequest,
        revision: &Revision,
        now: rollout_model::time::Timestamp,
    ) -> Option<Phase> {
        if !self.phased_rollouts || request.source != UpstreamKind::GraphBuilder {
            return None;
        }
        let channel = request.query.channel.as_ref()?.as_str();
        let place = || request.query.cluster().map(|cluster| cluster.place);
        let phase = revision
            .phased_rollouts()
            .phase(channel, place, now, || self.knowledge())?;
        // A scoped channel the request's class may not see stays unseen.
        let sees_channel = request.class.is_none()
            || request
                .view_channels()
                .is_some_and(|view| view.contains(&channel));
        sees_channel.then_some(phase)
    }

    /// What is known of the rollouts' run-time state (graph-data's phased
    /// rollouts are under the same control); none without a policy.
    fn knowledge(&self) -> Option<Arc<rollout_model::Knowledge>> {
        self.cluster_policy.as_ref().map(|policy| policy.knowledge())
    }

    /// The release `request`'s answer is pruned to and keyed by, when
    /// `version-prune` runs: its `version` without build metadata, if
    /// `revision`'s graph has that release for the request's architecture.
    /// Any other version is answered, and kept, as a request without one:
    /// made-up versions are not more answers to compute and hold.
    fn version_key(&self, request: &PolicyRequest, revision: &Revision) -> Option<String> {
        if !self.rules.keyed_by_version {
            return None;
        }
        let version = Version::parse(request.query.version.as_deref()?).ok()?;
        let release = without_build(&version).to_string();
        revision
            .catalog()
            .has_release(request.arch().as_str(), &release)
            .then_some(release)
    }

    /// On an engine upstream, which serves channels apart, the revisions of
    /// the scoped channels `request`'s view joins to the channel asked for
    /// (a graph-builder's full graph has them already).
    async fn joined_revisions(&self, request: &PolicyRequest) -> Result<Vec<Arc<Revision>>, ApiError> {
        let (Some(requested), Some(view)) = (&request.query.channel, request.view_channels()) else {
            return Ok(Vec::new());
        };
        let mut joined = Vec::new();
        for channel in view.into_iter().filter(|channel| *channel != requested.as_str()) {
            let parameters = UpstreamParameters::forwarded(&request.query).with("channel", channel);
            let feed = self.feeds.engine_feed(parameters).await;
            joined.push(self.feeds.served(&feed)?);
        }
        Ok(joined)
    }

    /// The rollouts graph-data's phased rollouts declare, from the
    /// upstream's full graph: none while it is not read, with phasing off,
    /// or on an engine upstream (which answered already phased).
    pub fn graph_data_rollouts(&self) -> Vec<Arc<rollout_model::Declaration>> {
        match self.feeds.full_graph() {
            Ok(revision) if self.phased_rollouts => revision.phased_rollouts().declarations().to_vec(),
            _ => Vec::new(),
        }
    }

    /// Updates the gauges derived from state; called before a scrape.
    pub fn update_gauges(&self) {
        self.feeds.update_gauges();
        self.metrics.update_cache_ratio();
        self.metrics
            .identity_cache_bytes
            .set(self.identities.held_bytes() as i64);
        if let Some(policy) = &self.cluster_policy {
            policy.update_gauges();
        }
        self.update_phased_gauge(rollout_model::time::Timestamp::now());
    }

    /// `phased_update_rollout` at `now` (see
    /// [`crate::client::phased::PhasedRollouts::set_rollout_gauge`]):
    /// only a graph-builder's full graph carries the windows.
    fn update_phased_gauge(&self, now: rollout_model::time::Timestamp) {
        let gauge = &self.metrics.phased_update_rollout;
        match self.feeds.full_graph() {
            Ok(revision) if self.phased_rollouts => {
                revision
                    .phased_rollouts()
                    .set_rollout_gauge(gauge, now, self.knowledge().as_ref())
            }
            _ => gauge.reset(),
        }
    }

    /// The client plane's part of the `/status` document.
    pub fn status(&self) -> ClientStatus {
        ClientStatus {
            ready: self.is_ready(),
            upstream: UpstreamStatus {
                url: self.feeds.client().url().to_string(),
                kind: self.feeds.kind(),
            },
            pipeline: self.pipeline.stage_names().map(str::to_owned).collect(),
            feeds: self.feeds.status(),
            cluster_policy: self
                .cluster_policy
                .as_ref()
                .map(|policy| policy.status(SystemTime::now())),
        }
    }
}

/// How long the answer to `request` stays true from `now`, when its policy
/// class or phase says.
fn valid_for(request: &PolicyRequest, now: rollout_model::time::Timestamp) -> Option<Duration> {
    [
        request.class.as_ref().and_then(|class| class.valid_for(now)),
        request.phase.as_ref().and_then(|phase| phase.valid_for(now)),
    ]
    .into_iter()
    .flatten()
    .min()
}

/// The client plane's part of `/status`.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientStatus {
    pub ready: bool,
    pub upstream: UpstreamStatus,
    /// The filters, in order.
    pub pipeline: Vec<String>,
    /// The root feed (a graph-builder upstream), or one per forwarded
    /// parameter set (an engine upstream).
    pub feeds: Vec<FeedStatus>,
    /// The per-cluster policy served, if one is configured.
    #[serde(default)]
    pub cluster_policy: Option<PolicyStatus>,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamStatus {
    /// Its password redacted.
    pub url: String,
    /// Until detected: none.
    pub kind: Option<UpstreamKind>,
}
