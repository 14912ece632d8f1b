//! The lookup service (the design's Tollbooth): asked `GET {url}/{id}`, it
//! answers a cluster's groups as `{"groups": ["production", ...]}`; a 404
//! means the service does not know the cluster (no groups).
//!
//! A request never waits for it longer than the lookup timeout, and never
//! fails because of it:
//! - a fresh answer (younger than the TTL) is used as is;
//! - an expired one is used at once and asked again in the background;
//! - a cluster not known yet waits for one lookup (shared by concurrent
//!   requests), at most the timeout; then it gets the policy file's groups;
//! - after [`OPEN_AFTER_FAILURES`] failures in a row (errors, timeouts,
//!   garbage) the breaker opens: nothing is asked for [`COOL_DOWN`], then one
//!   lookup probes whether the service is back.
//!
//! Answers are kept in LRUs of bounded size: clusters the service knows in
//! one, clusters it does not know (404, no groups) in another of the same
//! size, so that a flood of made-up ids cannot push the real clusters' groups
//! out. At most [`MAX_IN_FLIGHT`] lookups run at once; a cluster not known
//! yet that would need one more gets the policy file's groups at once.

use std::collections::HashMap;
#[cfg(test)]
use std::num::NonZero;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, Instant, SystemTime};

use futures::FutureExt as _;
use futures::future::{BoxFuture, Shared};
use http_fetch::{ClientSettings, HttpClient, Request, StatusCode, Url};
use lru::LruCache;
use serde::{Deserialize, Serialize};
use service_kit::freshness::Freshness;
use service_kit::secret::RedactedUrl;

use rollout_model::ClusterId;

/// Failures in a row that open the breaker.
pub const OPEN_AFTER_FAILURES: u32 = 5;
/// How long an open breaker stops lookups before one probe.
pub const COOL_DOWN: Duration = Duration::from_secs(30);
/// Lookups running at once: beyond, new clusters are not looked up (and not
/// waited for) until some end, which bounds the tasks and the service's load.
pub const MAX_IN_FLIGHT: usize = 256;
/// A groups answer is a few hundred bytes; anything near this is not one.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// A cluster's groups, as the service said.
pub type Groups = Arc<[String]>;

/// How the lookup service is asked.
#[derive(Debug, Clone)]
pub struct LookupSettings {
    /// `{url}/{id}` is asked.
    pub url: RedactedUrl,
    pub timeout: Duration,
    pub ttl: Duration,
    pub cache_size: usize,
    pub roots: http_fetch::ExtraRoots,
}

/// Why a lookup gave no groups.
#[derive(Debug, thiserror::Error)]
enum LookupError {
    #[error(transparent)]
    Fetch(#[from] http_fetch::FetchError),
    #[error("{url} answered {status}")]
    Status { url: Url, status: StatusCode },
    #[error("{url} answered something else than {{\"groups\": [...]}}: {error}")]
    Garbage { url: Url, error: serde_json::Error },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupsAnswer {
    groups: Vec<String>,
}

/// What the lookups did, for the metrics (counted by the caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A fresh answer from the cache.
    Cached,
    /// Asked the service, which answered in time.
    Asked,
    /// Answered without (current) groups from the service: it was slow,
    /// failing, or the breaker was open; last known groups or none.
    Fallback,
}

pub struct GroupLookup {
    http: HttpClient,
    settings: LookupSettings,
    answers: Mutex<Answers>,
    in_flight: Mutex<HashMap<ClusterId, Shared<BoxFuture<'static, Option<Groups>>>>>,
    breaker: Mutex<Breaker>,
    /// Lookups sent and failed, for the metrics.
    counters: Mutex<Counters>,
}

#[derive(Clone)]
struct Known {
    groups: Groups,
    fetched: Instant,
}

/// What the service said, kept apart by whether it knew the cluster.
struct Answers {
    known: LruCache<ClusterId, Known>,
    unknown: LruCache<ClusterId, Known>,
}

impl Answers {
    fn get(&mut self, id: &ClusterId) -> Option<Known> {
        self.known.get(id).or_else(|| self.unknown.get(id)).cloned()
    }

    fn put(&mut self, id: ClusterId, answer: Known) {
        let (into, other) = if answer.groups.is_empty() {
            (&mut self.unknown, &mut self.known)
        } else {
            (&mut self.known, &mut self.unknown)
        };
        other.pop(&id);
        into.put(id, answer);
    }
}

#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    pub sent: u64,
    pub failed: u64,
}

impl std::fmt::Debug for GroupLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupLookup")
            .field("url", &self.settings.url)
            .finish_non_exhaustive()
    }
}

impl GroupLookup {
    pub fn new(settings: LookupSettings) -> Result<Self, http_fetch::ClientError> {
        let http = HttpClient::new(ClientSettings {
            user_agent: concat!("cincinnati-rs-policy-engine/", env!("CARGO_PKG_VERSION")).to_owned(),
            timeout: settings.timeout,
            roots: settings.roots.clone(),
            gzip: false,
        })?;
        let size = std::num::NonZero::new(settings.cache_size).unwrap_or(std::num::NonZero::<usize>::MIN);
        Ok(Self {
            http,
            // Sparse: grown as clusters are met, not sized for a fleet up front.
            answers: Mutex::new(Answers {
                known: LruCache::sparse(size),
                unknown: LruCache::sparse(size),
            }),
            in_flight: Mutex::default(),
            breaker: Mutex::default(),
            counters: Mutex::default(),
            settings,
        })
    }

    /// The groups of `id` the service said last, within the lookup timeout
    /// (see the module); `None` when none are known.
    pub async fn groups(self: &Arc<Self>, id: &ClusterId) -> (Option<Groups>, Outcome) {
        let known = self.answers().get(id);
        match known {
            Some(known) if known.fetched.elapsed() < self.settings.ttl => {
                (Some(known.groups), Outcome::Cached)
            }
            Some(known) => {
                // Served at once; the answer to this lookup is for later requests.
                drop(self.lookup(*id));
                (Some(known.groups), Outcome::Fallback)
            }
            None => match self.lookup(*id) {
                Some(lookup) => match tokio::time::timeout(self.settings.timeout, lookup).await {
                    Ok(Some(groups)) => (Some(groups), Outcome::Asked),
                    _ => (None, Outcome::Fallback),
                },
                None => (None, Outcome::Fallback),
            },
        }
    }

    /// The lookup of `id` in flight, or a new one if the breaker allows it.
    /// It runs to its end (bounded by the timeout) whoever waits for it.
    fn lookup(self: &Arc<Self>, id: ClusterId) -> Option<Shared<BoxFuture<'static, Option<Groups>>>> {
        let mut in_flight = self.in_flight.lock();
        if let Some(lookup) = in_flight.get(&id) {
            return Some(lookup.clone());
        }
        if in_flight.len() >= MAX_IN_FLIGHT || !self.breaker().allows(Instant::now()) {
            return None;
        }
        let lookup = self.clone();
        let task = tokio::spawn(async move {
            let groups = lookup.ask(&id).await;
            lookup.in_flight.lock().remove(&id);
            groups
        });
        let shared = task.map(Result::ok).map(Option::flatten).boxed().shared();
        in_flight.insert(id, shared.clone());
        Some(shared)
    }

    /// Asks the service once, keeping what it says and telling the breaker.
    async fn ask(&self, id: &ClusterId) -> Option<Groups> {
        self.counters().sent += 1;
        match self.fetch(id).await {
            Ok(groups) => {
                self.breaker().succeeded();
                let known = Known {
                    groups: groups.clone(),
                    fetched: Instant::now(),
                };
                self.answers().put(*id, known);
                Some(groups)
            }
            Err(error) => {
                self.counters().failed += 1;
                self.breaker().failed(Instant::now(), error.to_string());
                tracing::debug!(%id, "cluster group lookup failed: {error}");
                None
            }
        }
    }

    async fn fetch(&self, id: &ClusterId) -> Result<Groups, LookupError> {
        let mut url = self.settings.url.expose();
        // An http(s) URL (checked at start-up) has path segments.
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().push(id.as_str());
        }
        let response = self
            .http
            .send(Request::get("cluster groups", &url, MAX_ANSWER_BYTES).accept("application/json"))
            .await?;
        match response.status {
            StatusCode::NOT_FOUND => Ok(Arc::from([])),
            status if status.is_success() => serde_json::from_slice::<GroupsAnswer>(&response.body)
                .map(|answer| {
                    // In the order the policy's group sets are kept in.
                    let mut groups = answer.groups;
                    groups.sort();
                    groups.dedup();
                    Groups::from(groups)
                })
                .map_err(|error| LookupError::Garbage {
                    url: response.url,
                    error,
                }),
            status => Err(LookupError::Status {
                url: response.url,
                status,
            }),
        }
    }

    fn answers(&self) -> parking_lot::MutexGuard<'_, Answers> {
        self.answers.lock()
    }

    fn breaker(&self) -> parking_lot::MutexGuard<'_, Breaker> {
        self.breaker.lock()
    }

    fn counters(&self) -> parking_lot::MutexGuard<'_, Counters> {
        self.counters.lock()
    }

    pub fn sent_and_failed(&self) -> Counters {
        *self.counters()
    }

    pub fn is_open(&self) -> bool {
        self.breaker().open_until.is_some()
    }

    /// What `/status` shows.
    pub fn status(&self) -> LookupStatus {
        let breaker = self.breaker();
        let counters = *self.counters();
        let (known_clusters, unknown_clusters) = {
            let answers = self.answers();
            (answers.known.len(), answers.unknown.len())
        };
        LookupStatus {
            url: self.settings.url.to_string(),
            breaker_open: breaker.open_until.is_some(),
            failures_in_a_row: breaker.failures_in_a_row,
            freshness: breaker.freshness.clone(),
            known_clusters,
            unknown_clusters,
            lookups: counters.sent,
            failed_lookups: counters.failed,
        }
    }
}

/// The lookup service in `/status`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupStatus {
    pub url: String,
    pub breaker_open: bool,
    pub failures_in_a_row: u32,
    /// The last lookup that worked, and the failure since.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// Clusters whose groups are cached.
    pub known_clusters: usize,
    /// Clusters the service said it does not know, cached apart.
    pub unknown_clusters: usize,
    pub lookups: u64,
    pub failed_lookups: u64,
}

/// A circuit breaker: closed (lookups go out) until [`OPEN_AFTER_FAILURES`]
/// failures in a row; then open for [`COOL_DOWN`]; then one probe at a time
/// until a lookup succeeds (closed) or fails (open again).
#[derive(Debug, Default)]
struct Breaker {
    failures_in_a_row: u32,
    open_until: Option<Instant>,
    probing: bool,
    freshness: Freshness,
}

impl Breaker {
    fn allows(&mut self, now: Instant) -> bool {
        match self.open_until {
            None => true,
            Some(until) if now >= until && !self.probing => {
                self.probing = true;
                true
            }
            Some(_) => false,
        }
    }

    fn succeeded(&mut self) {
        self.failures_in_a_row = 0;
        self.open_until = None;
        self.probing = false;
        self.freshness.succeeded(SystemTime::now());
    }

    fn failed(&mut self, now: Instant, error: String) {
        self.failures_in_a_row += 1;
        self.probing = false;
        self.freshness.failed(SystemTime::now(), error);
        if self.failures_in_a_row >= OPEN_AFTER_FAILURES {
            self.open_until = Some(now + COOL_DOWN);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(number: u128) -> ClusterId {
        let hex = format!("{number:032x}");
        let uuid = format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        );
        ClusterId::parse(&uuid).expect("a UUID")
    }

    fn answer(groups: &[&str]) -> Known {
        Known {
            groups: groups.iter().map(|group| group.to_string()).collect(),
            fetched: Instant::now(),
        }
    }

    #[test]
    fn clusters_the_service_does_not_know_cannot_push_known_ones_out() {
        let size = NonZero::new(2).unwrap();
        let mut answers = Answers {
            known: LruCache::new(size),
            unknown: LruCache::new(size),
        };
        answers.put(id(1), answer(&["production"]));
        for made_up in 100..200 {
            answers.put(id(made_up), answer(&[]));
        }
        assert_eq!(answers.get(&id(1)).unwrap().groups[..], ["production".to_owned()]);
        assert!(answers.get(&id(199)).unwrap().groups.is_empty());
        assert!(
            answers.get(&id(100)).is_none(),
            "the unknown ones are bounded too"
        );

        // Known at last: moved, not kept twice.
        answers.put(id(199), answer(&["test"]));
        assert_eq!((answers.known.len(), answers.unknown.len()), (2, 1));
        assert_eq!(answers.get(&id(199)).unwrap().groups[..], ["test".to_owned()]);
    }

    #[test]
    fn the_breaker_opens_after_failures_in_a_row_and_probes_after_the_cool_down() {
        let start = Instant::now();
        let mut breaker = Breaker::default();
        for _ in 0..OPEN_AFTER_FAILURES - 1 {
            assert!(breaker.allows(start));
            breaker.failed(start, "down".into());
        }
        breaker.succeeded();
        for _ in 0..OPEN_AFTER_FAILURES {
            assert!(breaker.allows(start));
            breaker.failed(start, "down".into());
        }
        assert!(!breaker.allows(start + COOL_DOWN / 2));
        let later = start + COOL_DOWN;
        assert!(breaker.allows(later), "one probe");
        assert!(!breaker.allows(later), "one probe at a time");
        breaker.failed(later, "still down".into());
        assert!(!breaker.allows(later + COOL_DOWN / 2), "open again");
        assert!(breaker.allows(later + COOL_DOWN));
        breaker.succeeded();
        assert!(breaker.allows(later + COOL_DOWN) && breaker.allows(later + COOL_DOWN));
        assert_eq!(breaker.failures_in_a_row, 0);
    }
}
