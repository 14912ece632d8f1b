//! Whether a server's threads can answer: each thread (the acceptor and
//! every worker) stamps the time on its own event loop every
//! [`TURN_PERIOD`], so a thread whose loop stops turning (a handler that
//! blocks it, a connection that never yields) shows as stalled, while the
//! status port, served by other threads, would otherwise report it healthy.
//!
//! Why not a request to the public port: at the connection limit, or with
//! the backlog full during a reconnect storm, that request is refused while
//! every admitted client is served, and a probe failing then would have the
//! orchestrator restart a service that is working as configured.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often each thread stamps its loop's turn.
pub const TURN_PERIOD: Duration = Duration::from_millis(250);

/// The last turn of each thread of one server; cheap to clone.
#[derive(Clone)]
pub struct Turns {
    started: Instant,
    /// Milliseconds since `started`, one per thread.
    last: Arc<[AtomicU64]>,
}

impl Turns {
    pub fn new(threads: usize) -> Self {
        Self {
            started: Instant::now(),
            last: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Stamps thread `thread`'s turns for as long as its loop runs it.
    pub async fn stamp_forever(self, thread: usize) {
        let mut ticks = tokio::time::interval(TURN_PERIOD);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            self.last[thread].store(self.millis_since_start(), Ordering::Relaxed);
        }
    }

    /// How long thread `thread` has not turned.
    pub fn thread_stalled_for(&self, thread: usize) -> Duration {
        let last = self.last[thread].load(Ordering::Relaxed);
        Duration::from_millis(self.millis_since_start().saturating_sub(last))
    }

    /// How long the thread that turned least recently has not turned.
    pub fn stalled_for(&self) -> Duration {
        let now = self.millis_since_start();
        let oldest = self
            .last
            .iter()
            .map(|last| last.load(Ordering::Relaxed))
            .min()
            .unwrap_or(now);
        Duration::from_millis(now.saturating_sub(oldest))
    }

    fn millis_since_start(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}
