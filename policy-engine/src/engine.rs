//! The engine: the upstream feeds, the filter pipeline and the answers, as
//! the state every handler and the background refresher share.
//!
//! With a graph-builder upstream there is one feed, the full graph, fetched
//! without parameters. With an engine upstream there is one feed per
//! forwarded parameter set, created by the first request that needs it and
//! dropped when no request used it for a while.
//!
//! A request whose answer is not computed yet (or whose feed has no graph:
//! its last fetch failed) revalidates its feed first (a conditional GET,
//! shared with concurrent requests, waited for briefly), so a new answer
//! comes from a fetch that finished after the request arrived.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use cincinnati_core::stage::Pipeline;
use cincinnati_core::{ApiError, ErrorKind};
use serde::{Deserialize, Serialize};
use service_kit::supervisor::{Heartbeat, TaskStatus};
use service_kit::{IdentityCache, PreparedBody};
use tokio::sync::Semaphore;
use tracing::Instrument as _;

use crate::cluster_policy;
use crate::cluster_policy::explain::Explanation;
use crate::cluster_policy::lookup::Outcome;
use crate::cluster_policy::source::{PolicyStatus, Reload};
use crate::cluster_policy::{PolicyClass, PolicySource};
use crate::filters::PolicyRequest;
use crate::metrics::EngineMetrics;
use crate::query::{Arch, Channel, ClientQuery, QueryRules};
use crate::upstream::client::{FetchError, UpstreamClient};
use crate::upstream::feed::{Feed, FeedStatus, Refresh, RefreshError, RefreshTurn, unix_seconds};
use crate::upstream::revision::{Lookup, Revision};
use crate::upstream::{UpstreamKind, UpstreamParameters};

/// How long a request whose answer is not computed yet waits for the
/// revalidation of its feed before answering from the graph at hand. A
/// healthy upstream answers the conditional GET with a 304 in milliseconds,
/// and sends a changed graph well within this; a slow or unreachable one
/// adds at most this to such a request instead of its whole timeout. The
/// fetch goes on without the request and still updates the feed.
const REVALIDATION_WAIT: Duration = Duration::from_secs(2);

/// What an engine asks an engine upstream to learn whether it can answer: a
/// valid channel no release lists, so a ready upstream answers an empty graph
/// (upstream's own readiness check asked its handler the same way).
const READINESS_PROBE: [(&str, &str); 1] = [("channel", "readiness-probe")];

/// Limits on the work and memory one upstream revision may take.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Time between background fetches of each feed.
    pub interval: Duration,
    /// Distinct (channel, arch) answers kept per revision.
    pub max_answers: usize,
    /// Feeds kept for an engine upstream.
    pub max_feeds: usize,
    /// An engine-upstream feed no request used for this long is dropped.
    pub idle_feed_after: Duration,
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

pub struct Engine {
    client: UpstreamClient,
    pipeline: Arc<Pipeline<PolicyRequest>>,
    rules: QueryRules,
    kind: OnceLock<UpstreamKind>,
    /// The parameterless feed: the graph-builder's graph, and how the
    /// upstream's kind is detected.
    root: Arc<Feed>,
    feeds: Mutex<HashMap<UpstreamParameters, Arc<Feed>>>,
    /// Set once an engine upstream answered the readiness probe: until then
    /// it may have no graph itself, and would answer clients 503.
    engine_upstream_answers: OnceLock<()>,
    /// Identity bytes of the answers most recently asked for without gzip
    /// (answers are kept compressed only).
    identities: IdentityCache,
    /// Answers computed at once, one per CPU: each filters a copy of the
    /// whole graph (see `upstream::revision`).
    computations: Arc<Semaphore>,
    limits: Limits,
    metrics: EngineMetrics,
    /// The runtime fetches run on, whichever thread a request arrives on.
    runtime: tokio::runtime::Handle,
    /// The per-cluster policy, if one is configured.
    cluster_policy: Option<Arc<PolicySource>>,
}

impl Engine {
    pub fn new(
        client: UpstreamClient,
        pipeline: Pipeline<PolicyRequest>,
        rules: QueryRules,
        fixed_kind: Option<UpstreamKind>,
        limits: Limits,
        metrics: EngineMetrics,
        cluster_policy: Option<Arc<PolicySource>>,
    ) -> Self {
        Self {
            client,
            pipeline: Arc::new(pipeline),
            rules,
            kind: fixed_kind.map(OnceLock::from).unwrap_or_default(),
            root: Arc::new(Feed::new(UpstreamParameters::default(), limits.max_answers)),
            feeds: Mutex::default(),
            engine_upstream_answers: OnceLock::new(),
            identities: IdentityCache::new(limits.identity_cache_bytes),
            computations: Arc::new(Semaphore::new(
                std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            )),
            limits,
            metrics,
            runtime: tokio::runtime::Handle::current(),
            cluster_policy,
        }
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

    pub fn upstream_kind(&self) -> Option<UpstreamKind> {
        self.kind.get().copied()
    }

    /// Ready once a client's request would be answered: the upstream's kind
    /// is known and its graph has arrived (a graph-builder upstream) or it
    /// answered a request with a channel (an engine upstream).
    pub fn is_ready(&self) -> bool {
        match self.upstream_kind() {
            Some(UpstreamKind::GraphBuilder) => self.root.revision().is_some(),
            Some(UpstreamKind::PolicyEngine) => self.engine_upstream_answers.get().is_some(),
            None => false,
        }
    }

    pub fn cluster_policy(&self) -> Option<&Arc<PolicySource>> {
        self.cluster_policy.as_ref()
    }

    /// The prepared answer to `query`, for a request that arrived at
    /// `arrived`. One not computed yet is computed from the feed as
    /// revalidated for this request.
    pub async fn answer(
        self: &Arc<Self>,
        query: ClientQuery,
        arrived: Instant,
    ) -> Result<Answered, ApiError> {
        let now = SystemTime::now();
        let class = self.classify(&query, now).await;
        let valid_for = class.as_ref().and_then(|class| class.valid_for(now));
        let (request, revision, joined) = self.revision_for(query, class, arrived).await?;
        let (answer, lookup) = revision
            .answer(request, joined, &self.pipeline, &self.computations)
            .await;
        // Less the waits above (lookup, refresh, computation): caches count
        // max-age from when the answer reaches them.
        let expires_sooner = valid_for
            .map(|valid_for| valid_for.saturating_sub(now.elapsed().unwrap_or_default()))
            .filter(|valid_for| *valid_for < self.limits.cache_max_age);
        match lookup {
            Lookup::Hit => self.metrics.cache_hits.inc(),
            Lookup::Miss { evicted } => {
                self.metrics.cache_misses.inc();
                if evicted {
                    self.metrics.cache_evictions.inc();
                }
            }
        }
        Ok(Answered {
            body: answer?,
            expires_sooner,
        })
    }

    /// Why the cluster of `query` sees what it sees (see
    /// [`cluster_policy::explain`]); an error without a cluster policy.
    pub async fn explain(
        self: &Arc<Self>,
        query: ClientQuery,
        arrived: Instant,
    ) -> Result<Explanation, ApiError> {
        let now = SystemTime::now();
        let Some(class) = self.classify(&query, now).await else {
            return Err(ApiError::new(
                ErrorKind::InvalidParams,
                "no cluster policy is configured (cluster_policy.file): every cluster sees the same",
            ));
        };
        let asked = (query.channel.clone(), query.arch.clone(), query.version.clone());
        let (request, revision, _) = self.revision_for(query, Some(class.clone()), arrived).await?;
        let view_channels = request
            .view_channels()
            .map(|channels| channels.into_iter().map(str::to_owned).collect())
            .unwrap_or_default();
        let (base, applied) = revision
            .explain(request, &self.pipeline, &self.computations)
            .await?;
        let asked = cluster_policy::explain::Asked {
            channel: asked.0.as_ref().map(Channel::as_str),
            arch: asked.1.as_ref().map(Arch::as_str),
            version: asked.2.as_deref(),
            view_channels,
        };
        Ok(cluster_policy::explain::explain(
            &class, asked, &base, &applied, now,
        ))
    }

    /// The request's policy class, if a cluster policy is configured.
    async fn classify(&self, query: &ClientQuery, now: SystemTime) -> Option<PolicyClass> {
        let policy = self.cluster_policy.as_ref()?;
        let (class, lookup) = policy.classify(query.id.as_deref(), now).await;
        if lookup == Some(Outcome::Fallback) {
            self.metrics.lookup_fallbacks.inc();
        }
        Some(class)
    }

    /// The request to filter for `query`, the revision to answer it from
    /// (one whose answer is computed, or the feed revalidated first), and
    /// the revisions of the scoped channels its view joins that an engine
    /// upstream serves apart.
    async fn revision_for(
        self: &Arc<Self>,
        query: ClientQuery,
        class: Option<PolicyClass>,
        arrived: Instant,
    ) -> Result<(PolicyRequest, Arc<Revision>, Vec<Arc<Revision>>), ApiError> {
        let source = self
            .upstream_kind()
            .ok_or_else(|| self.unavailable(self.root.last_error().map(|failure| failure.message)))?;
        let feed = match source {
            UpstreamKind::GraphBuilder => self.root.clone(),
            UpstreamKind::PolicyEngine => self.engine_feed(query.upstream_parameters()).await,
        };
        let request = PolicyRequest::new(query, source, class, self.rules.keyed_by_version);
        let joined = self.joined_revisions(&request).await?;
        let revision = match feed.revision() {
            Some(revision) if revision.is_answered(&request, &joined) => revision,
            // Not computed yet, or no graph yet (the last fetch failed): ask
            // the upstream first.
            _ => {
                self.revalidate(&feed, arrived).await;
                self.served_revision(&feed)?
            }
        };
        Ok((request, revision, joined))
    }

    /// On an engine upstream, which serves channels apart, the revisions of
    /// the scoped channels `request`'s view joins to the channel asked for
    /// (a graph-builder's full graph has them already).
    async fn joined_revisions(
        self: &Arc<Self>,
        request: &PolicyRequest,
    ) -> Result<Vec<Arc<Revision>>, ApiError> {
        if request.source != UpstreamKind::PolicyEngine || request.class.is_none() {
            return Ok(Vec::new());
        }
        let (Some(requested), Some(view)) = (&request.query.channel, request.view_channels()) else {
            return Ok(Vec::new());
        };
        let mut joined = Vec::new();
        for channel in view.into_iter().filter(|channel| *channel != requested.as_str()) {
            let parameters = request.query.upstream_parameters().with("channel", channel);
            let feed = self.engine_feed(parameters).await;
            joined.push(self.served_revision(&feed)?);
        }
        Ok(joined)
    }

    /// The upstream's full graph, as last fetched: only a graph-builder
    /// upstream sends one (an engine upstream answers per channel).
    pub fn full_graph(&self) -> Result<Arc<Revision>, ApiError> {
        match self.upstream_kind() {
            Some(UpstreamKind::GraphBuilder) => self.served_revision(&self.root),
            Some(UpstreamKind::PolicyEngine) => Err(ApiError::new(
                ErrorKind::ServiceUnavailable,
                format_args!(
                    "the upstream {} is a policy-engine, which sends no full graph: ask the engine nearest the graph-builder",
                    self.client.url()
                ),
            )),
            None => Err(self.unavailable(self.root.last_error().map(|failure| failure.message))),
        }
    }

    /// On an engine chained to another engine (which sends no full graph),
    /// the upstream engine's explorer answer to `endpoint` and `query`;
    /// `None` when this engine has the full graph itself.
    pub async fn upstream_explorer_answer(
        &self,
        endpoint: &str,
        query: &str,
    ) -> Option<Result<http_fetch::Response, http_fetch::FetchError>> {
        match self.upstream_kind() {
            Some(UpstreamKind::PolicyEngine) => {
                Some(self.client.fetch_explorer_answer(endpoint, query).await)
            }
            _ => None,
        }
    }

    fn served_revision(&self, feed: &Feed) -> Result<Arc<Revision>, ApiError> {
        feed.revision()
            .ok_or_else(|| self.unavailable(feed.last_error().map(|failure| failure.message)))
    }

    fn unavailable(&self, last_error: Option<String>) -> ApiError {
        let reason = last_error.unwrap_or_else(|| "the first fetch has not finished".to_owned());
        ApiError::new(
            ErrorKind::ServiceUnavailable,
            format_args!("no graph from upstream {} yet: {reason}", self.client.url()),
        )
    }

    /// The feed of one forwarded parameter set, fetched before it is returned
    /// the first time. Concurrent first requests share that fetch.
    async fn engine_feed(self: &Arc<Self>, parameters: UpstreamParameters) -> Arc<Feed> {
        let feed = {
            let mut feeds = self.feeds.lock().expect("feeds lock poisoned");
            if !feeds.contains_key(&parameters) && feeds.len() >= self.limits.max_feeds {
                let least_recent = feeds
                    .iter()
                    .min_by_key(|(_, feed)| feed.last_used())
                    .map(|(key, _)| key.clone());
                if let Some(key) = least_recent {
                    feeds.remove(&key);
                }
            }
            feeds
                .entry(parameters.clone())
                .or_insert_with(|| Arc::new(Feed::new(parameters, self.limits.max_answers)))
                .clone()
        };
        feed.touch();
        let (engine, fetched) = (self.clone(), feed.clone());
        feed.first_fetch(self.fetch_for_request(async move { engine.refresh_feed(&fetched).await }))
            .await;
        feed
    }

    /// Refreshes `feed` for a request that arrived at `arrived` and needs an
    /// answer not computed yet, unless a refresh finished after it arrived
    /// (another request's, the background one, or a new feed's first fetch):
    /// concurrent misses share one upstream request. Waits at most
    /// [`REVALIDATION_WAIT`]; a failure is recorded as a background one is.
    async fn revalidate(self: &Arc<Self>, feed: &Arc<Feed>, arrived: Instant) {
        let revalidation = async {
            let turn = feed.refresh_turn().await;
            if feed.checked_after(arrived) {
                return;
            }
            let (engine, fetched) = (self.clone(), feed.clone());
            self.fetch_for_request(async move { engine.refresh_in_turn(&fetched, turn).await })
                .await;
        };
        if tokio::time::timeout(REVALIDATION_WAIT, revalidation)
            .await
            .is_err()
        {
            tracing::debug!(
                "upstream revalidation still running after {REVALIDATION_WAIT:?}; answering from the graph at hand"
            );
        }
    }

    /// Runs `fetch` on the engine's runtime, where the HTTP client's
    /// connections live, in the request's span: the request waits for it.
    async fn fetch_for_request(&self, fetch: impl Future<Output = Refresh> + Send + 'static) {
        self.runtime.spawn(fetch.in_current_span()).await.ok();
    }

    /// Refreshes `feed` once no other refresh of it is in flight.
    async fn refresh_feed(&self, feed: &Feed) -> Refresh {
        self.refresh_in_turn(feed, feed.refresh_turn().await).await
    }

    /// Refreshes `feed`, counting the fetch in the upstream metrics.
    async fn refresh_in_turn(&self, feed: &Feed, turn: RefreshTurn) -> Refresh {
        self.metrics.upstream_requests.inc();
        let refresh = feed.refresh(turn, &self.client).await;
        self.record_failure(feed, &refresh);
        refresh
    }

    fn record_failure(&self, feed: &Feed, refresh: &Refresh) {
        if let Refresh::Failed(error) = refresh {
            self.metrics.upstream_errors.inc();
            tracing::warn!(parameters = ?feed.parameters(), "upstream fetch failed: {error}");
        }
    }

    /// One round of background fetches: the root feed until the upstream is
    /// known to be an engine, then a readiness probe until it answers, then
    /// every engine feed still in use.
    pub async fn refresh_all(&self) {
        if self.upstream_kind() != Some(UpstreamKind::PolicyEngine) {
            let turn = self.root.refresh_turn().await;
            self.metrics.upstream_requests.inc();
            let refresh = self.root.refresh(turn, &self.client).await;
            match self
                .upstream_kind()
                .is_none()
                .then(|| detect_kind(&refresh))
                .flatten()
            {
                // An engine's `missing_params` answer is how it is recognised, not a failure.
                Some(kind) => {
                    tracing::info!(?kind, url = %self.client.url(), "upstream kind detected");
                    self.kind.set(kind).ok();
                }
                None => self.record_failure(&self.root, &refresh),
            }
            return;
        }
        if !self.is_ready() {
            self.probe_engine_upstream().await;
        }
        let feeds: Vec<Arc<Feed>> = {
            let mut feeds = self.feeds.lock().expect("feeds lock poisoned");
            let idle_after = self.limits.idle_feed_after;
            feeds.retain(|_, feed| feed.last_used().elapsed() < idle_after);
            feeds.values().cloned().collect()
        };
        futures::future::join_all(feeds.iter().map(|feed| self.refresh_feed(feed))).await;
    }

    /// Asks an engine upstream for an answer, as a client's request would be
    /// forwarded. An answer, or an error about parameters (an upstream that
    /// requires more than it is sent answers every client so), means client
    /// requests will be answered; a 503 or no answer means not yet.
    async fn probe_engine_upstream(&self) {
        let probe = UpstreamParameters::new(
            READINESS_PROBE
                .iter()
                .map(|&(name, value)| (name.to_owned(), value.to_owned())),
        );
        self.metrics.upstream_requests.inc();
        let answers = match self.client.fetch(&probe, None).await {
            Ok(_) => true,
            Err(FetchError::Status {
                error_kind: Some(kind),
                ..
            }) if is_parameter_error(kind) => true,
            Err(error) => {
                self.metrics.upstream_errors.inc();
                tracing::info!("the upstream engine cannot answer yet: {error}");
                false
            }
        };
        if answers {
            tracing::info!(url = %self.client.url(), "the upstream engine answers; ready");
            self.engine_upstream_answers.set(()).ok();
        }
    }

    /// Refreshes on the interval, with a heartbeat after each round, until
    /// the supervisor stops it; while not ready, retries sooner so the engine
    /// becomes ready soon after its upstream.
    pub async fn run_refresher(self: Arc<Self>, heartbeat: Heartbeat) {
        const RETRY_BEFORE_READY: Duration = Duration::from_secs(1);
        loop {
            self.refresh_all().await;
            heartbeat.beat();
            let pause = if self.is_ready() {
                self.limits.interval
            } else {
                self.limits.interval.min(RETRY_BEFORE_READY)
            };
            tokio::time::sleep(pause).await;
        }
    }

    /// Reads the policy file on its interval, until the supervisor stops it.
    pub async fn run_policy_reloader(self: Arc<Self>, heartbeat: Heartbeat) {
        let Some(policy) = self.cluster_policy.clone() else {
            return;
        };
        loop {
            tokio::time::sleep(self.limits.policy_reload_interval).await;
            // Reading and hashing the file must not hold a worker that
            // answers clients.
            let reloading = policy.clone();
            let reloaded = tokio::task::spawn_blocking(move || reloading.reload())
                .await
                .expect("a policy reload does not panic");
            match reloaded {
                Reload::Unchanged => {}
                Reload::Loaded { .. } => self.metrics.policy_reloads.inc(),
                Reload::Failed(_) => self.metrics.policy_reload_errors.inc(),
            }
            heartbeat.beat();
        }
    }

    fn served_feeds(&self) -> Vec<Arc<Feed>> {
        match self.upstream_kind() {
            Some(UpstreamKind::PolicyEngine) => self
                .feeds
                .lock()
                .expect("feeds lock poisoned")
                .values()
                .cloned()
                .collect(),
            _ => vec![self.root.clone()],
        }
    }

    /// Updates the gauges derived from feed state; called before a scrape.
    pub fn update_gauges(&self) {
        let times: Vec<_> = self.served_feeds().iter().map(|feed| feed.times()).collect();
        let oldest_success = times.iter().filter_map(|feed| feed.last_success).min();
        if let Some(oldest) = oldest_success {
            let age = SystemTime::now().duration_since(oldest).unwrap_or_default();
            self.metrics.graph_age_seconds.set(age.as_secs_f64());
            self.metrics.last_successful_refresh.set(unix_seconds(oldest));
        }
        self.metrics
            .upstream_stale
            .set(i64::from(times.iter().any(|feed| feed.last_error.is_some())));
        let last_error = times.iter().filter_map(|feed| feed.last_error).max();
        self.metrics
            .upstream_last_error_timestamp
            .set(last_error.map_or(0.0, unix_seconds));
        self.metrics.update_cache_ratio();
        self.metrics
            .identity_cache_bytes
            .set(self.identities.held_bytes() as i64);
        if let Some(policy) = &self.cluster_policy {
            self.metrics.policy_stale.set(i64::from(policy.is_stale()));
            if let Some(lookup) = policy.lookup() {
                let counters = lookup.sent_and_failed();
                let metrics = &self.metrics;
                // Counted by the lookups; brought up to date for the scrape.
                // Saturating: two scrapes at once may both have added the difference.
                metrics
                    .lookups
                    .inc_by(counters.sent.saturating_sub(metrics.lookups.get()));
                metrics
                    .lookup_errors
                    .inc_by(counters.failed.saturating_sub(metrics.lookup_errors.get()));
                metrics.lookup_breaker_open.set(i64::from(lookup.is_open()));
            }
        }
    }

    /// The `/status` document.
    pub fn status(&self, tasks: Vec<TaskStatus>) -> EngineStatus {
        EngineStatus {
            ready: self.is_ready(),
            upstream: UpstreamStatus {
                url: self.client.url().to_string(),
                kind: self.upstream_kind(),
            },
            pipeline: self.pipeline.stage_names().map(str::to_owned).collect(),
            feeds: self.served_feeds().iter().map(|feed| feed.status()).collect(),
            cluster_policy: self
                .cluster_policy
                .as_ref()
                .map(|policy| policy.status(SystemTime::now())),
            tasks,
        }
    }
}

/// The `/status` document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineStatus {
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
    pub tasks: Vec<TaskStatus>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamStatus {
    /// Its password redacted.
    pub url: String,
    /// Until detected: none.
    pub kind: Option<UpstreamKind>,
}

/// The upstream's kind from its answer to a request without parameters.
fn detect_kind(refresh: &Refresh) -> Option<UpstreamKind> {
    match refresh {
        Refresh::Updated { api_version: None } => Some(UpstreamKind::GraphBuilder),
        Refresh::Updated { api_version: Some(_) } => Some(UpstreamKind::PolicyEngine),
        Refresh::Failed(RefreshError::Fetch(FetchError::Status {
            error_kind: Some(kind),
            ..
        })) if is_parameter_error(*kind) => Some(UpstreamKind::PolicyEngine),
        Refresh::Unchanged | Refresh::Failed(_) => None,
    }
}

/// An engine's answer to parameters it refuses.
fn is_parameter_error(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::MissingParams | ErrorKind::InvalidParams)
}
