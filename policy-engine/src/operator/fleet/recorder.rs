//! Recording update checks off the request path: a request puts its check
//! in a bounded queue without waiting ([`Recorder::note`]; a full queue
//! drops it, counted), and a supervised round takes the queue in batches of
//! at most `batch_size`, each written in one transaction. A batch the store
//! refused is kept and tried again next round, so a store that is down
//! costs the requests nothing and loses at most what the queue cannot hold
//! meanwhile; recording resumes by itself when the store is back.
//!
//! Clusters the store does not know yet are taken within a budget
//! ([`Bounds`]): at most `new_per_hour` an hour (a bucket of as many,
//! refilled evenly), and none once the store holds `max_clusters`. A
//! flood of made-up ids is refused beyond it (counted as `refused_new`);
//! clusters the store knows are always written.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use fleet_store::{Check, Recorded};
use parking_lot::Mutex;
use service_kit::freshness::Freshness;
use tokio::sync::mpsc::{self, error::TrySendError};

use super::Bounds;
use super::metrics::FleetMetrics;
use super::store::StoreHandle;

/// How often the store's clusters are counted again for the cap (between
/// counts, the clusters recorded are added).
const RECOUNT: Duration = Duration::from_secs(60);

/// How long one write may take before it counts as failed.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// What `/status` shows of the recorder.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RecorderStatus {
    pub queued: usize,
    pub queue_capacity: usize,
    /// Checks of a refused batch, waiting to be tried again.
    pub retrying: usize,
    pub written: u64,
    pub dropped: u64,
    /// When a batch was last written, and the last failure since.
    #[serde(flatten)]
    pub freshness: Freshness,
}

pub struct Recorder {
    sender: mpsc::Sender<Check>,
    writer: tokio::sync::Mutex<Writer>,
    store: Arc<StoreHandle>,
    metrics: FleetMetrics,
    freshness: Mutex<Freshness>,
    retrying: Mutex<usize>,
    /// Checks taken off the queue for the batch being written: still
    /// queued until it is in the store (or refused, and retrying).
    writing: AtomicUsize,
}

/// The receiving end, held by the round that writes.
struct Writer {
    receiver: mpsc::Receiver<Check>,
    /// A batch the store refused, tried again first.
    refused: Vec<Check>,
    batch_size: usize,
    budget: Budget,
}

/// How many clusters the store does not know may be recorded now.
struct Budget {
    bounds: Bounds,
    /// New clusters the bucket holds, and when it was last filled.
    tokens: f64,
    filled: Instant,
    /// The store's clusters, as last counted (plus those recorded since),
    /// and when counted.
    stored: Option<(u64, Instant)>,
}

impl Budget {
    fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            tokens: bounds.new_per_hour as f64,
            filled: Instant::now(),
            stored: None,
        }
    }

    /// New clusters a batch may take now, the store's count being read
    /// again (by `count`) when it is old.
    async fn allowed(&mut self, count: impl AsyncFnOnce() -> Option<u64>) -> u64 {
        let now = Instant::now();
        let per_second = self.bounds.new_per_hour as f64 / 3600.0;
        self.tokens = (self.tokens + now.duration_since(self.filled).as_secs_f64() * per_second)
            .min(self.bounds.new_per_hour as f64);
        self.filled = now;
        if self
            .stored
            .is_none_or(|(_, at)| now.duration_since(at) >= RECOUNT)
            && let Some(counted) = count().await
        {
            self.stored = Some((counted, now));
        }
        let room = self
            .stored
            .map_or(0, |(stored, _)| self.bounds.max_clusters.saturating_sub(stored));
        (self.tokens as u64).min(room)
    }

    /// `recorded` new clusters were written.
    fn spent(&mut self, recorded: u64) {
        self.tokens = (self.tokens - recorded as f64).max(0.0);
        if let Some((stored, _)) = &mut self.stored {
            *stored += recorded;
        }
    }
}

impl Recorder {
    pub fn new(
        store: Arc<StoreHandle>,
        (capacity, batch_size): (usize, usize),
        bounds: Bounds,
        metrics: FleetMetrics,
    ) -> Self {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        Self {
            sender,
            writer: tokio::sync::Mutex::new(Writer {
                receiver,
                refused: Vec::new(),
                batch_size: batch_size.max(1),
                budget: Budget::new(bounds),
            }),
            store,
            metrics,
            freshness: Mutex::new(Freshness::default()),
            retrying: Mutex::new(0),
            writing: AtomicUsize::new(0),
        }
    }

    /// Queues `check` without waiting; dropped (and counted) when the
    /// queue is full.
    pub fn note(&self, check: Check) {
        let outcome = match self.sender.try_send(check) {
            Ok(()) => "queued",
            Err(TrySendError::Full(_) | TrySendError::Closed(_)) => "dropped",
        };
        self.metrics.checks.with_label_values(&[outcome]).inc();
    }

    pub fn queued(&self) -> usize {
        self.sender.max_capacity() - self.sender.capacity() + self.writing.load(Ordering::Acquire)
    }

    /// One round: writes what is queued, batch after batch, until the queue
    /// is empty or the store fails (the failed batch is kept for the next
    /// round).
    pub async fn write_queued(&self) {
        let mut writer = self.writer.lock().await;
        loop {
            let mut batch = std::mem::take(&mut writer.refused);
            while batch.len() < writer.batch_size {
                // Counted as writing before it leaves the queue, so that
                // a check is always in one count or the other.
                self.writing.fetch_add(1, Ordering::AcqRel);
                match writer.receiver.try_recv() {
                    Ok(check) => batch.push(check),
                    Err(_) => {
                        self.writing.fetch_sub(1, Ordering::AcqRel);
                        break;
                    }
                }
            }
            if batch.is_empty() {
                return;
            }
            let new_allowed = writer
                .budget
                .allowed(async || {
                    let store = self.store.get().await.ok()?;
                    store.cluster_count().await.ok()
                })
                .await;
            match self.write(&batch, new_allowed).await {
                Ok(recorded) => {
                    writer.budget.spent(recorded.new_clusters);
                    self.metrics.written.inc_by(batch.len() as u64);
                    self.metrics.new_clusters.inc_by(recorded.new_clusters);
                    self.metrics
                        .checks
                        .with_label_values(&["refused_new"])
                        .inc_by(recorded.refused_new);
                    self.metrics.unchanged.inc_by(recorded.unchanged);
                    *self.retrying.lock() = 0;
                    self.writing.store(0, Ordering::Release);
                    let mut freshness = self.freshness.lock();
                    if freshness.is_stale() {
                        tracing::info!(store = %self.store.shown(), "fleet store takes update checks again");
                    }
                    freshness.succeeded(SystemTime::now());
                }
                Err(error) => {
                    self.metrics.store_errors.inc();
                    // Once per outage: a round a second would flood the log.
                    if !self.freshness.lock().is_stale() {
                        tracing::warn!(store = %self.store.shown(), %error,
                            "fleet store refused a batch of update checks; keeping it and trying again");
                    }
                    self.freshness.lock().failed(SystemTime::now(), &error);
                    *self.retrying.lock() = batch.len();
                    self.writing.store(0, Ordering::Release);
                    writer.refused = batch;
                    return;
                }
            }
        }
    }

    async fn write(&self, batch: &[Check], new_allowed: u64) -> Result<Recorded, String> {
        let attempt = async {
            let store = self.store.get().await?;
            store.record(batch, new_allowed).await
        };
        match tokio::time::timeout(WRITE_TIMEOUT, attempt).await {
            Ok(Ok(recorded)) => Ok(recorded),
            Ok(Err(error)) => Err(format!("{:#}", anyhow::Error::new(error))),
            Err(_) => Err(format!("writing took more than {} s", WRITE_TIMEOUT.as_secs())),
        }
    }

    pub fn status(&self) -> RecorderStatus {
        RecorderStatus {
            queued: self.queued(),
            queue_capacity: self.sender.max_capacity(),
            retrying: *self.retrying.lock(),
            written: self.metrics.written.get(),
            dropped: self.metrics.checks.with_label_values(&["dropped"]).get(),
            freshness: self.freshness.lock().clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use service_kit::metrics::MetricRegistry;

    use super::*;

    fn check(cluster: &str) -> Check {
        Check {
            cluster: cluster.into(),
            channel: "stable-4.18".into(),
            arch: "amd64".into(),
            version: "4.18.1".into(),
            place: 1.0,
            at: 1,
        }
    }

    fn recorder(url: &str, capacity: usize, batch_size: usize) -> Recorder {
        let metrics = FleetMetrics::register(&MetricRegistry::new("test").unwrap()).unwrap();
        Recorder::new(
            Arc::new(StoreHandle::new(
                url.parse().unwrap(),
                None,
                (Duration::ZERO, rollout_model::evidence::Evidence::default()),
            )),
            (capacity, batch_size),
            super::super::Bounds {
                max_clusters: u64::MAX,
                new_per_hour: 1_000_000,
            },
            metrics,
        )
    }

    #[tokio::test]
    async fn a_full_queue_drops_and_counts_and_a_round_writes_every_batch() {
        let dir = tempfile::tempdir().unwrap();
        let recorder = recorder(
            &format!("sqlite://{}", dir.path().join("fleet.db").display()),
            3,
            2,
        );
        for cluster in ["a", "b", "c", "d"] {
            recorder.note(check(cluster));
        }
        let status = recorder.status();
        assert_eq!((status.queued, status.dropped), (3, 1));
        recorder.write_queued().await;
        let status = recorder.status();
        assert_eq!((status.queued, status.written, status.retrying), (0, 3, 0));
        assert!(status.freshness.last_success().is_some());
    }

    #[tokio::test]
    async fn a_refused_batch_is_kept_for_the_next_round() {
        // A directory where the file should be: the store cannot open.
        let dir = tempfile::tempdir().unwrap();
        let recorder = recorder(&format!("sqlite://{}", dir.path().display()), 10, 10);
        recorder.note(check("a"));
        recorder.write_queued().await;
        let status = recorder.status();
        assert_eq!((status.queued, status.retrying, status.written), (0, 1, 0));
        assert!(status.freshness.is_stale());
        recorder.note(check("b"));
        recorder.write_queued().await;
        assert_eq!(
            recorder.status().retrying,
            2,
            "the refused batch and the new check"
        );
    }
}
