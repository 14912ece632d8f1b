//! Periodic tasks: a round, a pause, another round, for ever, under the
//! [`Supervisor`](crate::supervisor::Supervisor) (see
//! [`Supervisor::spawn_every`](crate::supervisor::Supervisor::spawn_every)).
//! Every refresh of every service is one: the graph-builder's releases and
//! graph-data, the metadata-helper's signatures, the policy-engine's
//! upstream and policy file.
//!
//! The pause runs from the end of a round to the start of the next, so a
//! slow round delays the next rather than piling rounds up. The first round
//! runs at once, or after one pause ([`Every::first_after_a_pause`]); while
//! the service is not ready, rounds may come sooner ([`Every::sooner_until`]).
//!
//! Liveness, the one rule: a watched task is stalled when
//! [`STALLED_ROUNDS`] rounds have passed without one completing, a round
//! being its interval plus its allowance (what one round may take: its
//! timeout, say). A task that hangs, or dies in every round, is stalled
//! after `STALLED_ROUNDS × (interval + allowance)`, and the process is not
//! live.

use std::sync::Arc;
use std::time::Duration;

/// Rounds that may pass without one completing before a watched task is
/// stalled: one late round is a slow upstream, three are a hung task.
pub const STALLED_ROUNDS: u32 = 3;

type Ready = Arc<dyn Fn() -> bool + Send + Sync>;

/// A periodic task's name, schedule and liveness.
#[derive(Clone)]
pub struct Every {
    pub(crate) name: &'static str,
    interval: Duration,
    allowance: Duration,
    watched: bool,
    first_after_a_pause: bool,
    sooner: Option<(Duration, Ready)>,
}

impl Every {
    /// A task named `name` (in logs, metrics and `/status`), a round every
    /// `interval`, the first at once; watched, with no allowance until
    /// [`Every::allowing`] gives one.
    pub fn new(name: &'static str, interval: Duration) -> Self {
        Self {
            name,
            interval,
            allowance: Duration::ZERO,
            watched: true,
            first_after_a_pause: false,
            sooner: None,
        }
    }

    /// What one round may take (its timeout, say), on top of the interval.
    pub fn allowing(self, allowance: Duration) -> Self {
        Self { allowance, ..self }
    }

    /// Rounds every `interval` at the most while `ready` does not hold: a
    /// service that is not ready yet retries soon.
    pub fn sooner_until(self, interval: Duration, ready: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        Self {
            sooner: Some((interval, Arc::new(ready))),
            ..self
        }
    }

    /// The first round after one pause, not at once (start-up did its work).
    pub fn first_after_a_pause(self) -> Self {
        Self {
            first_after_a_pause: true,
            ..self
        }
    }

    /// Liveness does not depend on this task.
    pub fn unwatched(self) -> Self {
        Self {
            watched: false,
            ..self
        }
    }

    /// How long a watched task may go without completing a round before it
    /// is stalled: [`STALLED_ROUNDS`] × (interval + allowance).
    pub fn stalls_after(&self) -> Option<Duration> {
        self.watched
            .then(|| STALLED_ROUNDS * (self.interval + self.allowance))
    }

    /// The pause before the next round.
    fn pause(&self) -> Duration {
        match &self.sooner {
            Some((sooner, ready)) if !ready() => self.interval.min(*sooner),
            _ => self.interval,
        }
    }

    /// Runs rounds for ever, calling `completed` after each.
    pub(crate) async fn run<F, Fut>(&self, round: &F, completed: impl Fn())
    where
        F: Fn() -> Fut,
        Fut: Future<Output = ()>,
    {
        if self.first_after_a_pause {
            tokio::time::sleep(self.pause()).await;
        }
        loop {
            round().await;
            completed();
            tokio::time::sleep(self.pause()).await;
        }
    }
}

impl std::fmt::Debug for Every {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Every")
            .field("name", &self.name)
            .field("interval", &self.interval)
            .field("allowance", &self.allowance)
            .field("watched", &self.watched)
            .field("first_after_a_pause", &self.first_after_a_pause)
            .field("sooner", &self.sooner.as_ref().map(|(sooner, _)| sooner))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use parking_lot::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    use tokio::time::Instant;

    use super::*;
    use crate::metrics::MetricRegistry;
    use crate::supervisor::{Backoff, Supervisor};

    /// Runs `every` with rounds that take `round_takes`, for `window` of the
    /// paused clock; returns when each round started, in seconds from the
    /// start.
    async fn round_starts(every: Every, round_takes: Duration, window: Duration) -> Vec<f64> {
        let registry = MetricRegistry::new("test").unwrap();
        let mut supervisor = Supervisor::new(&registry, Backoff::default()).unwrap();
        let (started, starts) = (Instant::now(), Arc::new(Mutex::new(Vec::new())));
        let recorded = starts.clone();
        supervisor.spawn_every(every, move || {
            recorded.lock().push(started.elapsed().as_secs_f64());
            tokio::time::sleep(round_takes)
        });
        tokio::time::sleep(window).await;
        supervisor.shutdown().await;
        starts.lock().clone()
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_round_runs_at_once_and_each_next_one_a_pause_after_the_last_ended() {
        let every = Every::new("refresh", Duration::from_secs(10));
        let starts = round_starts(every, Duration::from_secs(2), Duration::from_secs(40)).await;
        assert_eq!(starts, [0.0, 12.0, 24.0, 36.0]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_round_may_wait_for_one_pause() {
        let every = Every::new("policy reload", Duration::from_secs(10)).first_after_a_pause();
        let starts = round_starts(every, Duration::ZERO, Duration::from_secs(25)).await;
        assert_eq!(starts, [10.0, 20.0]);
    }

    #[tokio::test(start_paused = true)]
    async fn rounds_come_sooner_until_the_service_is_ready() {
        let ready = Arc::new(AtomicBool::new(false));
        let every =
            Every::new("upstream refresh", Duration::from_secs(10)).sooner_until(Duration::from_secs(1), {
                let ready = ready.clone();
                move || ready.load(Ordering::SeqCst)
            });
        let becomes_ready = async {
            tokio::time::sleep(Duration::from_millis(2500)).await;
            ready.store(true, Ordering::SeqCst);
        };
        let (starts, ()) = tokio::join!(
            round_starts(every, Duration::ZERO, Duration::from_secs(25)),
            becomes_ready
        );
        assert_eq!(starts, [0.0, 1.0, 2.0, 3.0, 13.0, 23.0]);
    }

    #[test]
    fn a_task_stalls_after_three_rounds_of_its_interval_and_allowance() {
        let every = Every::new("releases", Duration::from_secs(300));
        assert_eq!(every.stalls_after(), Some(Duration::from_secs(900)));
        let every = every.allowing(Duration::from_secs(60));
        assert_eq!(every.stalls_after(), Some(Duration::from_secs(3 * 360)));
        let sooner = every.sooner_until(Duration::from_secs(1), || false);
        assert_eq!(
            sooner.stalls_after(),
            Some(Duration::from_secs(3 * 360)),
            "the longer interval counts"
        );
        assert_eq!(sooner.unwatched().stalls_after(), None);
    }
}
