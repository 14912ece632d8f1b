//! A service's probes asked throughout a run, as the kubelet asks them:
//! `/livez` and `/readyz` on its status port, every 100 ms, each with a
//! 1 s timeout (the deploy's `timeoutSeconds`). Counts what failed, so a
//! scenario can say whether they failed during one of its phases.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Between two rounds of probes.
const INTERVAL: Duration = Duration::from_millis(100);
/// A probe not answered within this failed (the deploy's `timeoutSeconds`).
const TIMEOUT: Duration = Duration::from_secs(1);

/// Probes asked so far, and how many failed (not 200 within the timeout).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub asked: u64,
    pub failed: u64,
    /// The longest a probe took (ms), failures included.
    pub slowest_ms: u64,
}

impl Tally {
    /// What was asked between `earlier` and this.
    pub fn since(self, earlier: Tally) -> Tally {
        Tally {
            asked: self.asked - earlier.asked,
            failed: self.failed - earlier.failed,
            slowest_ms: self.slowest_ms,
        }
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} of {} failed", self.failed, self.asked)
    }
}

#[derive(Default)]
struct Counters {
    asked: AtomicU64,
    failed: AtomicU64,
    slowest_ms: AtomicU64,
}

/// The probes of one service, asked until dropped.
pub struct Prober {
    counters: Arc<Counters>,
    task: tokio::task::JoinHandle<()>,
}

impl Prober {
    /// Starts asking `urls` (each probe's whole URL).
    pub fn start(urls: Vec<String>) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder().timeout(TIMEOUT).build()?;
        let counters = Arc::new(Counters::default());
        let counting = counters.clone();
        let task = tokio::spawn(async move {
            loop {
                for url in &urls {
                    let started = std::time::Instant::now();
                    let ok = http
                        .get(url)
                        .send()
                        .await
                        .is_ok_and(|answer| answer.status() == 200);
                    let took = started.elapsed().as_millis() as u64;
                    counting.asked.fetch_add(1, Ordering::Relaxed);
                    counting.failed.fetch_add(u64::from(!ok), Ordering::Relaxed);
                    counting.slowest_ms.fetch_max(took, Ordering::Relaxed);
                }
                tokio::time::sleep(INTERVAL).await;
            }
        });
        Ok(Self { counters, task })
    }

    /// What was asked so far; the slowest is reset, so the next tally says
    /// the slowest since this one.
    pub fn tally(&self) -> Tally {
        Tally {
            asked: self.counters.asked.load(Ordering::Relaxed),
            failed: self.counters.failed.load(Ordering::Relaxed),
            slowest_ms: self.counters.slowest_ms.swap(0, Ordering::Relaxed),
        }
    }
}

impl Drop for Prober {
    fn drop(&mut self) {
        self.task.abort();
    }
}
