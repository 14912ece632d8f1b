//! Every feed of the engine, and what keeps them fresh.
//!
//! With a graph-builder upstream there is one feed, the full graph, fetched
//! without parameters. With an engine upstream there is one feed per
//! forwarded parameter set, created by the first request that needs it and
//! dropped when no request used it for a while (or, beyond `max_feeds`, the
//! least recently used). Which kind the upstream is, is learnt from its
//! answer to the parameterless fetch, unless configured.
//!
//! A request whose answer is not computed yet (or whose feed has no graph:
//! its last fetch failed) revalidates its feed first (a conditional GET,
//! shared with concurrent requests, waited for briefly), so a new answer
//! comes from a fetch that finished after the request arrived.
//!
//! Each served feed also follows its upstream (unless configured not to): a
//! fetch the upstream holds until its graph differs from the feed's
//! (`http_answers::wait`), asked again as soon as it is answered, so a new
//! upstream revision arrives in about the time it takes to send it; while
//! the upstream holds them, the rounds leave the feed alone (an idle feed
//! costs one request per hold, 25 s, instead of one per interval and one
//! per hold). An upstream that does not wait (upstream's services,
//! older ones) answers at once without saying it waits: the feed is then
//! only polled, and asks again after [`NOT_WAITING_RETRY`] in case the
//! upstream was upgraded. New revisions wake the engine's own waiting
//! requests ([`Feeds::changes`]).
//!
//! Anyone can send a channel the upstream does not serve. Its feed (the
//! upstream answers it with no release) is unserved: never followed, asked
//! again only every [`UNSERVED_RECHECK`], the first to go beyond
//! `max_feeds`, and at most [`UNSERVED_FEEDS_KEPT`] of them are kept; a
//! made-up channel costs the upstream one request, however often it is
//! asked, and never evicts a served feed.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant, SystemTime};

use cincinnati_core::{ApiError, ErrorKind};
use parking_lot::Mutex;
use service_kit::periodic::Every;
use tokio::sync::watch;
use tracing::Instrument as _;

use super::UpstreamParameters;
use super::client::{FetchError, Fetched, UpstreamClient};
use super::feed::{Feed, FeedStatus, Refresh, RefreshError, RefreshTurn, unix_seconds};
use super::revision::Revision;
use crate::client::request::UpstreamKind;
use crate::metrics::EngineMetrics;

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

/// How soon the background rounds run again while the engine is not ready,
/// so that it becomes ready soon after its upstream.
const RETRY_BEFORE_READY: Duration = Duration::from_secs(1);

/// How long a feed whose upstream does not wait goes without asking it to
/// (see the module documentation): a rolling upgrade of the chain upgrades
/// the upstream after its followers, and this is how they find out.
const NOT_WAITING_RETRY: Duration = Duration::from_secs(300);

/// Unserved feeds kept (see the module documentation): enough for the
/// channels clusters keep asking for after the upstream dropped them.
const UNSERVED_FEEDS_KEPT: usize = 16;

/// How often an unserved feed is asked again: a channel the upstream
/// starts serving is served here within this.
const UNSERVED_RECHECK: Duration = Duration::from_secs(300);

/// Bounds on the feeds and their revisions.
#[derive(Debug, Clone)]
pub struct FeedLimits {
    /// Time between background fetches of each feed.
    pub interval: Duration,
    /// Distinct answers kept per revision.
    pub max_answers: usize,
    /// Feeds kept for an engine upstream.
    pub max_feeds: usize,
    /// An engine-upstream feed no request used for this long is dropped.
    pub idle_feed_after: Duration,
    /// Whether served feeds follow their upstream with requests it holds
    /// until a change (`upstream.cincinnati.wait_for_change`).
    pub follow: bool,
}

pub struct Feeds {
    client: UpstreamClient,
    kind: OnceLock<UpstreamKind>,
    /// The parameterless feed: the graph-builder's graph, and how the
    /// upstream's kind is detected.
    root: Arc<Feed>,
    by_parameters: Mutex<HashMap<UpstreamParameters, Arc<Feed>>>,
    /// Set once an engine upstream answered the readiness probe: until then
    /// it may have no graph itself, and would answer clients 503.
    engine_upstream_answers: OnceLock<()>,
    limits: FeedLimits,
    metrics: EngineMetrics,
    /// The runtime fetches run on, whichever thread a request arrives on.
    runtime: tokio::runtime::Handle,
    /// Counts the new revisions of every feed: the engine's requests waiting
    /// for a change wake on it.
    revisions: watch::Sender<u64>,
}

impl Feeds {
    /// Must be called inside the runtime fetches are to run on.
    pub fn new(
        client: UpstreamClient,
        fixed_kind: Option<UpstreamKind>,
        limits: FeedLimits,
        metrics: EngineMetrics,
    ) -> Self {
        Self {
            client,
            kind: fixed_kind.map(OnceLock::from).unwrap_or_default(),
            root: Arc::new(Feed::new(UpstreamParameters::default(), limits.max_answers)),
            by_parameters: Mutex::default(),
            engine_upstream_answers: OnceLock::new(),
            limits,
            metrics,
            runtime: tokio::runtime::Handle::current(),
            revisions: watch::Sender::new(0),
        }
    }

    /// Wakes when any feed gets a new revision.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.revisions.subscribe()
    }

    /// Counts `refresh` among the new revisions when it brought one.
    fn note(&self, refresh: &Refresh) {
        if matches!(refresh, Refresh::Updated { .. }) {
            self.revisions.send_modify(|count| *count += 1);
        }
    }

    /// Starts following the root feed (see the module documentation); the
    /// feeds of an engine upstream are followed as they are created.
    pub fn follow_upstream(self: &Arc<Self>) {
        self.follow(&self.root);
    }

    fn follow(self: &Arc<Self>, feed: &Arc<Feed>) {
        if self.limits.follow {
            let follower = follow(Arc::downgrade(self), Arc::downgrade(feed));
            self.runtime.spawn(follower);
        }
    }

    pub fn client(&self) -> &UpstreamClient {
        &self.client
    }

    pub fn kind(&self) -> Option<UpstreamKind> {
        self.kind.get().copied()
    }

    /// Ready once a client's request would be answered: the upstream's kind
    /// is known and its graph has arrived (a graph-builder upstream) or it
    /// answered a request with a channel (an engine upstream).
    pub fn is_ready(&self) -> bool {
        match self.kind() {
            Some(UpstreamKind::GraphBuilder) => self.root.revision().is_some(),
            Some(UpstreamKind::PolicyEngine) => self.engine_upstream_answers.get().is_some(),
            None => false,
        }
    }

    /// The feed a request forwarding `parameters` is answered from: the
    /// root feed of a graph-builder upstream, or the parameters' own feed of
    /// an engine upstream (created and fetched first if new). `parameters`
    /// is called for an engine upstream only: a graph-builder's requests,
    /// nearly all, need no sorted copy of their query.
    pub async fn feed_for(
        self: &Arc<Self>,
        parameters: impl FnOnce() -> UpstreamParameters,
    ) -> Result<(UpstreamKind, Arc<Feed>), ApiError> {
        match self.kind() {
            Some(UpstreamKind::GraphBuilder) => Ok((UpstreamKind::GraphBuilder, self.root.clone())),
            Some(UpstreamKind::PolicyEngine) => {
                Ok((UpstreamKind::PolicyEngine, self.engine_feed(parameters()).await))
            }
            None => Err(self.unavailable(&self.root)),
        }
    }

    /// The revision `feed` serves, or 503 naming why it has none.
    pub fn served(&self, feed: &Feed) -> Result<Arc<Revision>, ApiError> {
        feed.revision().ok_or_else(|| self.unavailable(feed))
    }

    /// The upstream's full graph, as last fetched: only a graph-builder
    /// upstream sends one (an engine upstream answers per channel).
    pub fn full_graph(&self) -> Result<Arc<Revision>, ApiError> {
        match self.kind() {
            Some(UpstreamKind::GraphBuilder) => self.served(&self.root),
            Some(UpstreamKind::PolicyEngine) => Err(ApiError::new(
                ErrorKind::ServiceUnavailable,
                format_args!(
                    "the upstream {} is a policy-engine, which sends no full graph: ask the engine nearest the graph-builder",
                    self.client.url()
                ),
            )),
            None => Err(self.unavailable(&self.root)),
        }
    }

    fn unavailable(&self, feed: &Feed) -> ApiError {
        let reason = feed.last_error().map_or_else(
            || "the first fetch has not finished".to_owned(),
            |failure| failure.message,
        );
        ApiError::new(
            ErrorKind::ServiceUnavailable,
            format_args!("no graph from upstream {} yet: {reason}", self.client.url()),
        )
    }

    /// The feed of one forwarded parameter set, fetched before it is returned
    /// the first time. Concurrent first requests share that fetch.
    pub async fn engine_feed(self: &Arc<Self>, parameters: UpstreamParameters) -> Arc<Feed> {
        let feed = {
            let mut feeds = self.by_parameters.lock();
            if !feeds.contains_key(&parameters) && feeds.len() >= self.limits.max_feeds {
                // Unserved feeds go first (false sorts first).
                let least_recent = feeds
                    .iter()
                    .min_by_key(|(_, feed)| (!feed.is_unserved(), feed.last_used()))
                    .map(|(key, _)| key.clone());
                if let Some(key) = least_recent {
                    feeds.remove(&key);
                }
            }
            let mut created = None;
            let feed = feeds
                .entry(parameters.clone())
                .or_insert_with(|| {
                    let feed = Arc::new(Feed::new(parameters, self.limits.max_answers));
                    created = Some(feed.clone());
                    feed
                })
                .clone();
            if let Some(created) = created {
                self.follow(&created);
            }
            feed
        };
        feed.touch();
        let (feeds, fetched) = (self.clone(), feed.clone());
        feed.first_fetch(|| self.fetch_for_request(async move { feeds.refresh_feed(&fetched).await }))
            .await;
        if feed.is_unserved() {
            self.keep_unserved_within_bound(&feed);
        }
        feed
    }

    /// Drops the least recently used unserved feeds but `kept` beyond
    /// [`UNSERVED_FEEDS_KEPT`].
    fn keep_unserved_within_bound(&self, kept: &Arc<Feed>) {
        let mut feeds = self.by_parameters.lock();
        let mut unserved: Vec<(Instant, UpstreamParameters)> = feeds
            .iter()
            .filter(|(_, feed)| feed.is_unserved() && !Arc::ptr_eq(feed, kept))
            .map(|(parameters, feed)| (feed.last_used(), parameters.clone()))
            .collect();
        let beyond = (unserved.len() + 1).saturating_sub(UNSERVED_FEEDS_KEPT);
        unserved.sort_by_key(|(last_used, _)| *last_used);
        for (_, parameters) in unserved.into_iter().take(beyond) {
            feeds.remove(&parameters);
        }
    }

    /// Refreshes `feed` for a request that arrived at `arrived` and needs an
    /// answer not computed yet, unless a refresh finished after it arrived
    /// (another request's, the background one, or a new feed's first fetch):
    /// concurrent misses share one upstream request. Waits at most
    /// [`REVALIDATION_WAIT`]; a failure is recorded as a background one is.
    pub async fn revalidate(self: &Arc<Self>, feed: &Arc<Feed>, arrived: Instant) {
        let revalidation = async {
            let turn = feed.refresh_turn().await;
            if feed.checked_after(arrived) {
                return;
            }
            let (feeds, fetched) = (self.clone(), feed.clone());
            self.fetch_for_request(async move { feeds.refresh_in_turn(&fetched, turn).await })
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
        self.note(&refresh);
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
    /// every engine feed still in use; feeds whose upstream holds their
    /// fetches until a change (followed) are fresh without it.
    pub async fn refresh_round(&self) {
        if self.kind() != Some(UpstreamKind::PolicyEngine) {
            if self.root.is_followed() {
                return;
            }
            let turn = self.root.refresh_turn().await;
            self.metrics.upstream_requests.inc();
            let refresh = self.root.refresh(turn, &self.client).await;
            self.note(&refresh);
            match self.kind().is_none().then(|| detect_kind(&refresh)).flatten() {
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
            let mut feeds = self.by_parameters.lock();
            let idle_after = self.limits.idle_feed_after;
            feeds.retain(|_, feed| feed.last_used().elapsed() < idle_after);
            let recheck_from = Instant::now().checked_sub(UNSERVED_RECHECK);
            let unserved_checked_recently =
                |feed: &Feed| feed.is_unserved() && recheck_from.is_none_or(|from| feed.checked_after(from));
            feeds
                .values()
                .filter(|feed| !feed.is_followed() && !unserved_checked_recently(feed))
                .cloned()
                .collect()
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

    /// When the background rounds ([`Feeds::refresh_round`]) run: every
    /// interval, sooner while the engine is not ready; a round may take
    /// `upstream_timeout`.
    pub fn refresh_schedule(self: &Arc<Self>, upstream_timeout: Duration) -> Every {
        let feeds = self.clone();
        Every::new("upstream refresh", self.limits.interval)
            .allowing(upstream_timeout)
            .sooner_until(RETRY_BEFORE_READY, move || feeds.is_ready())
    }

    /// The feeds clients are answered from.
    fn served_feeds(&self) -> Vec<Arc<Feed>> {
        match self.kind() {
            Some(UpstreamKind::PolicyEngine) => self.by_parameters.lock().values().cloned().collect(),
            _ => vec![self.root.clone()],
        }
    }

    pub fn status(&self) -> Vec<FeedStatus> {
        self.served_feeds().iter().map(|feed| feed.status()).collect()
    }

    /// Updates the gauges derived from the feeds' state.
    pub fn update_gauges(&self) {
        let feeds: Vec<_> = self.served_feeds().iter().map(|feed| feed.freshness()).collect();
        let oldest_success = feeds.iter().filter_map(|feed| feed.last_success()).min();
        if let Some(oldest) = oldest_success {
            let age = SystemTime::now().duration_since(oldest).unwrap_or_default();
            self.metrics.graph_age_seconds.set(age.as_secs_f64());
            self.metrics.last_successful_refresh.set(unix_seconds(oldest));
        }
        self.metrics
            .upstream_stale
            .set(i64::from(feeds.iter().any(|feed| feed.is_stale())));
        let last_error = feeds
            .iter()
            .filter_map(|feed| feed.last_error().map(|failure| failure.at))
            .max();
        self.metrics
            .upstream_last_error_timestamp
            .set(last_error.map_or(0.0, unix_seconds));
    }
}

/// Follows `feed` while it is served (see the module documentation): asks
/// the upstream for its query, held until the graph differs from the
/// feed's, again and again. Holds no feed while a request is out, so a feed
/// dropped as idle ends its follower.
async fn follow(all: Weak<Feeds>, feed: Weak<Feed>) {
    loop {
        let (Some(feeds), Some(followed)) = (all.upgrade(), feed.upgrade()) else {
            return;
        };
        let interval = feeds.limits.interval;
        let is_root = Arc::ptr_eq(&followed, &feeds.root);
        if is_root && feeds.kind() == Some(UpstreamKind::PolicyEngine) {
            // An engine upstream is followed per parameter set.
            return;
        }
        if followed.is_unserved() {
            // The rounds ask again now and then; it is followed once served.
            followed.set_followed(false);
            drop((feeds, followed));
            tokio::time::sleep(UNSERVED_RECHECK.max(interval)).await;
            continue;
        }
        // Nothing to wait on before the first graph (or from an upstream
        // without tags): the rounds fetch it, and say so.
        let mut revisions = feeds.changes();
        let Some(etag) = followed.etag() else {
            drop((feeds, followed));
            if revisions.changed().await.is_err() {
                return;
            }
            continue;
        };
        let (client, parameters) = (feeds.client.clone(), followed.parameters().clone());
        let metrics = feeds.metrics.clone();
        drop((feeds, followed));
        metrics.upstream_requests.inc();
        let pause = match client.fetch_when_changed(&parameters, &etag).await {
            Ok((fetched, waits)) => {
                if let (Some(feeds), Some(followed)) = (all.upgrade(), feed.upgrade()) {
                    followed.set_followed(waits);
                    let turn = followed.refresh_turn().await;
                    // Another refresh may have brought it (or a newer one)
                    // meanwhile. A 304 is settled too: the feed was confirmed.
                    if followed.etag().as_deref() == Some(etag.as_str()) {
                        // A trace for a new graph, not for every confirmation.
                        let span = match fetched {
                            Fetched::Body { .. } => tracing::info_span!(
                                "upstream refresh",
                                channel = parameters.get("channel"),
                                arch = parameters.get("arch"),
                                outcome = tracing::field::Empty,
                            ),
                            Fetched::NotModified => tracing::Span::none(),
                        };
                        let refresh = followed.settle(turn, Ok(fetched)).instrument(span).await;
                        feeds.record_failure(&followed, &refresh);
                        feeds.note(&refresh);
                    }
                }
                if waits {
                    None
                } else {
                    tracing::info!(
                        url = %client.url(),
                        "the upstream does not wait for changes; polling it every interval"
                    );
                    Some(NOT_WAITING_RETRY.max(interval))
                }
            }
            Err(error) => {
                if let Some(followed) = feed.upgrade() {
                    followed.set_followed(false);
                }
                metrics.upstream_errors.inc();
                tracing::debug!(parameters = ?parameters, "waiting for an upstream change failed: {error}");
                Some(interval)
            }
        };
        if let Some(pause) = pause {
            tokio::time::sleep(pause).await;
        }
    }
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use service_kit::metrics::{MetricRegistry, ServiceMetrics as _};
    use service_kit::secret::RedactedUrl;

    use super::*;

    /// Feeds of an engine upstream nobody answers on (every fetch fails at
    /// once: the port is closed).
    fn unreachable(max_feeds: usize, idle_feed_after: Duration) -> Arc<Feeds> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url: RedactedUrl = format!("http://{}/graph", listener.local_addr().unwrap())
            .parse()
            .unwrap();
        drop(listener);
        let client =
            UpstreamClient::new(&url, Duration::from_secs(5), 1 << 20, Path::new("/nonexistent")).unwrap();
        let metrics = EngineMetrics::register(&MetricRegistry::new("test").unwrap()).unwrap();
        let limits = FeedLimits {
            interval: Duration::from_secs(1),
            max_answers: 8,
            max_feeds,
            idle_feed_after,
            follow: false,
        };
        Arc::new(Feeds::new(
            client,
            Some(UpstreamKind::PolicyEngine),
            limits,
            metrics,
        ))
    }

    fn channel(name: &str) -> UpstreamParameters {
        UpstreamParameters::new([("channel".to_owned(), name.to_owned())])
    }

    fn channels_served(feeds: &Feeds) -> Vec<String> {
        let mut served: Vec<String> = feeds
            .status()
            .into_iter()
            .filter_map(|status| status.parameters.get("channel").map(str::to_owned))
            .collect();
        served.sort();
        served
    }

    #[tokio::test]
    async fn beyond_max_feeds_the_least_recently_used_feed_goes() {
        let feeds = unreachable(2, Duration::from_secs(600));
        feeds.engine_feed(channel("a")).await;
        feeds.engine_feed(channel("b")).await;
        feeds.engine_feed(channel("a")).await;
        let c = feeds.engine_feed(channel("c")).await;
        assert_eq!(channels_served(&feeds), ["a", "c"]);
        // The first fetch of a new feed ran, and failed: no graph, a reason.
        assert!(c.revision().is_none());
        assert!(
            feeds
                .served(&c)
                .unwrap_err()
                .value
                .contains("no graph from upstream")
        );
        assert_eq!(feeds.metrics.upstream_errors.get(), 3);
    }

    #[tokio::test]
    async fn a_round_drops_idle_feeds_and_an_unanswering_engine_upstream_is_not_ready() {
        let feeds = unreachable(8, Duration::ZERO);
        feeds.engine_feed(channel("a")).await;
        assert_eq!(channels_served(&feeds), ["a"]);
        feeds.refresh_round().await;
        assert!(channels_served(&feeds).is_empty());
        assert!(!feeds.is_ready(), "the readiness probe was not answered");
    }

    #[test]
    fn the_upstream_kind_is_told_by_its_answer_to_no_parameters() {
        let status = |kind| {
            Refresh::Failed(RefreshError::Fetch(FetchError::Status {
                url: "http://upstream/graph".parse().unwrap(),
                status: http_fetch::StatusCode::BAD_REQUEST,
                body: String::new(),
                error_kind: Some(kind),
            }))
        };
        assert_eq!(
            detect_kind(&Refresh::Updated { api_version: None }),
            Some(UpstreamKind::GraphBuilder)
        );
        assert_eq!(
            detect_kind(&Refresh::Updated { api_version: Some(1) }),
            Some(UpstreamKind::PolicyEngine)
        );
        assert_eq!(
            detect_kind(&status(ErrorKind::MissingParams)),
            Some(UpstreamKind::PolicyEngine)
        );
        assert_eq!(detect_kind(&status(ErrorKind::ServiceUnavailable)), None);
        assert_eq!(detect_kind(&Refresh::Unchanged), None);
    }
}
