//! A feed: the last good graph for one upstream query, refreshed in the
//! background. A failed refresh never replaces a good graph; it is recorded
//! so status and metrics can say the graph is stale, and the next good
//! fetch clears it.
//!
//! Refreshes of one feed take turns: at most one upstream request per feed
//! is in flight, so a slow answer never replaces a newer one, and a request
//! waiting for its turn can tell from [`Feed::checked_after`] that another
//! refresh already did its work.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Mutex, RwLock};
use std::time::{Instant, SystemTime};

use cincinnati_core::wire::{self, WireError};
use serde::{Deserialize, Serialize};
use service_kit::freshness::{Failure, Freshness};
use service_kit::telemetry;
use service_kit::timestamp::rfc3339;
use tokio::sync::{Mutex as AsyncMutex, OnceCell, OwnedMutexGuard};

use super::UpstreamParameters;
use super::client::{FetchError, Fetched, UpstreamClient};
use super::revision::{KeptAnswers, Revision};

/// The graph of one upstream query and the history of its fetches.
#[derive(Debug)]
pub struct Feed {
    parameters: UpstreamParameters,
    state: RwLock<FeedState>,
    /// Set once the first fetch finished, well or not: requests for a new
    /// query wait for it instead of answering 503 at once.
    first_fetch: OnceCell<()>,
    /// Held by the refresh in flight.
    turn: Arc<AsyncMutex<()>>,
    last_used: Mutex<Instant>,
    max_answers: usize,
    /// Set while its upstream holds this feed's fetches until a change: the
    /// feed is fresh without the background rounds.
    followed: AtomicBool,
}

#[derive(Debug, Default)]
struct FeedState {
    revision: Option<Arc<Revision>>,
    etag: Option<String>,
    /// A digest of the last body, so an upstream without ETags that sends
    /// the same graph again does not cost a parse and the answer caches.
    body_digest: Option<u64>,
    /// The last fetch that worked (a 304 included), and the failure since.
    freshness: Freshness,
    /// When the last refresh finished, well or not.
    last_check: Option<Instant>,
}

/// The right to refresh a feed: while it is held, no other refresh of the
/// feed runs.
#[derive(Debug)]
pub struct RefreshTurn(OwnedMutexGuard<()>);

/// What one refresh did.
#[derive(Debug)]
pub enum Refresh {
    Unchanged,
    /// A new revision, with the upstream document's top-level `version`.
    Updated {
        api_version: Option<u64>,
    },
    Failed(RefreshError),
}

#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("upstream graph refused: {0}")]
    Parse(#[from] WireError),
}

/// A feed as `/status` shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedStatus {
    pub parameters: UpstreamParameters,
    pub releases: Option<usize>,
    /// When the graph served was fetched (RFC 3339).
    pub fetched_at: Option<String>,
    /// Seconds since the upstream last confirmed the graph (as the
    /// `graph_age_seconds` metric counts).
    pub age_seconds: Option<f64>,
    /// Whether the upstream holds this feed's fetches until its graph
    /// changes (`wait_for_change`): the feed is then not polled.
    #[serde(default)]
    pub followed: bool,
    /// The last fetch that worked, and the failure since: while stale, the
    /// graph served is the last good one.
    #[serde(flatten)]
    pub freshness: Freshness,
}

impl Feed {
    pub fn new(parameters: UpstreamParameters, max_answers: usize) -> Self {
        Self {
            parameters,
            state: RwLock::default(),
            first_fetch: OnceCell::new(),
            turn: Arc::default(),
            last_used: Mutex::new(Instant::now()),
            max_answers,
            followed: AtomicBool::new(false),
        }
    }

    /// The query this feed sends upstream.
    pub fn parameters(&self) -> &UpstreamParameters {
        &self.parameters
    }

    pub fn revision(&self) -> Option<Arc<Revision>> {
        self.read().revision.clone()
    }

    /// Whether the upstream serves nothing for this feed's parameters: its
    /// last answer has no release (a channel it does not have, such as one
    /// a client made up).
    pub fn is_unserved(&self) -> bool {
        self.revision()
            .is_some_and(|revision| revision.release_count() == 0)
    }

    pub fn last_error(&self) -> Option<Failure> {
        self.read().freshness.last_error().cloned()
    }

    pub fn touch(&self) {
        *self.last_used.lock() = Instant::now();
    }

    pub fn last_used(&self) -> Instant {
        *self.last_used.lock()
    }

    /// Waits for the first fetch of this feed, running the one `fetch`
    /// makes if nobody has. Boxed, and made only then: a fetch's state is
    /// kilobytes, which every request's future would otherwise carry.
    pub async fn first_fetch<F: Future<Output = ()>>(&self, fetch: impl FnOnce() -> F) {
        if !self.first_fetch.initialized() {
            Box::pin(self.first_fetch.get_or_init(fetch)).await;
        }
    }

    /// Waits until no refresh of this feed is in flight, and returns the
    /// right to run the next one.
    pub async fn refresh_turn(&self) -> RefreshTurn {
        RefreshTurn(self.turn.clone().lock_owned().await)
    }

    /// Whether a refresh finished after `instant`.
    pub fn checked_after(&self, instant: Instant) -> bool {
        self.read().last_check.is_some_and(|checked| checked > instant)
    }

    /// Whether the upstream holds this feed's fetches until a change.
    pub fn is_followed(&self) -> bool {
        self.followed.load(Ordering::Relaxed)
    }

    pub fn set_followed(&self, followed: bool) {
        self.followed.store(followed, Ordering::Relaxed);
    }

    /// The entity tag of the graph held, as the upstream sent it.
    pub fn etag(&self) -> Option<String> {
        self.read().etag.clone()
    }

    /// Fetches the upstream graph in `turn` unless unchanged, and parses a
    /// new one once, off the async threads. A background refresh is a trace
    /// of its own; a fetch a request waits for (the first for a new query, a
    /// revalidation for an answer not computed yet) is part of the request's
    /// trace.
    #[tracing::instrument(
        name = "upstream refresh",
        skip_all,
        fields(
            channel = self.parameter("channel"),
            arch = self.parameter("arch"),
            outcome = tracing::field::Empty,
        )
    )]
    pub async fn refresh(&self, turn: RefreshTurn, client: &UpstreamClient) -> Refresh {
        let etag = self.etag();
        let fetched = client.fetch(&self.parameters, etag.as_deref()).await;
        self.settle(turn, fetched).await
    }

    /// Takes in what a fetch of this feed's query brought (in `turn`): a new
    /// graph parsed once, off the async threads, or the failure recorded.
    pub async fn settle(&self, turn: RefreshTurn, fetched: Result<Fetched, FetchError>) -> Refresh {
        debug_assert!(
            Arc::ptr_eq(OwnedMutexGuard::mutex(&turn.0), &self.turn),
            "a turn of another feed"
        );
        let (previous_digest, previous) = {
            let state = self.read();
            (state.body_digest, state.revision.clone())
        };
        let (now, max_answers) = (SystemTime::now(), self.max_answers);
        // The revision's answers link to this refresh's trace.
        let span = tracing::Span::current();
        let outcome = match fetched {
            Ok(Fetched::NotModified) => Ok(None),
            Ok(Fetched::Body { body, etag }) => {
                let parsed = tokio::task::spawn_blocking(move || {
                    let _entered = span.enter();
                    let digest = digest(&body);
                    if Some(digest) == previous_digest {
                        return Ok(None);
                    }
                    let document = wire::parse(&body)?;
                    let (revision, kept) = match previous {
                        Some(previous) => {
                            let (revision, kept) =
                                Revision::following(&previous, document.graph, now, max_answers);
                            (revision, Some(kept))
                        }
                        None => (Revision::new(document.graph, now, max_answers), None),
                    };
                    Ok(Some((revision, document.api_version, kept, etag, digest)))
                })
                .await;
                parsed
                    .expect("parsing does not panic")
                    .map_err(RefreshError::Parse)
            }
            Err(error) => Err(RefreshError::Fetch(error)),
        };
        let mut state = self.state.write();
        state.last_check = Some(Instant::now());
        let span = tracing::Span::current();
        match outcome {
            Ok(None) => {
                span.record("outcome", "unchanged");
                state.freshness.succeeded(now);
                Refresh::Unchanged
            }
            Ok(Some((revision, api_version, kept, etag, digest))) => {
                span.record("outcome", "updated");
                if let Some(KeptAnswers { kept, made }) = kept {
                    tracing::info!(kept, made, "kept the answers the new revision leaves alike");
                }
                state.revision = Some(Arc::new(revision));
                state.etag = etag;
                state.body_digest = Some(digest);
                state.freshness.succeeded(now);
                self.first_fetch.set(()).ok();
                Refresh::Updated { api_version }
            }
            Err(error) => {
                span.record("outcome", "failed");
                telemetry::mark_failed(&error);
                state.freshness.failed(now, &error);
                Refresh::Failed(error)
            }
        }
    }

    fn parameter(&self, name: &str) -> Option<&str> {
        self.parameters.get(name)
    }

    pub fn status(&self) -> FeedStatus {
        let state = self.read();
        FeedStatus {
            parameters: self.parameters.clone(),
            releases: state.revision.as_ref().map(|revision| revision.release_count()),
            fetched_at: state
                .revision
                .as_ref()
                .map(|revision| rfc3339(revision.fetched_at())),
            age_seconds: state
                .freshness
                .age(SystemTime::now())
                .map(|age| age.as_secs_f64()),
            followed: self.is_followed(),
            freshness: state.freshness.clone(),
        }
    }

    /// When the feed last worked and the failure since, for the gauges.
    pub fn freshness(&self) -> Freshness {
        self.read().freshness.clone()
    }

    fn read(&self) -> parking_lot::RwLockReadGuard<'_, FeedState> {
        self.state.read()
    }
}

fn digest(body: &[u8]) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::hash::DefaultHasher::new();
    body.hash(&mut hasher);
    hasher.finish()
}

pub fn unix_seconds(time: SystemTime) -> f64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64())
}
