//! Long-running tasks, supervised: a task that panics or ends is logged,
//! counted and started again after a pause that doubles with each death (see
//! [`Backoff`]), so a refresh loop never dies silently. A periodic task
//! ([`Supervisor::spawn_every`], [`crate::periodic`]) is watched: [`Liveness`]
//! turns false when it has completed no round for as long as the one rule of
//! [`crate::periodic`] allows, so a loop that hangs, or dies in every round,
//! makes the process unhealthy and the orchestrator restarts it.

use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, SystemTime};

use prometheus::{IntCounterVec, Opts};
use serde::{Deserialize, Serialize};
use tokio::task::{JoinError, JoinSet};
use tokio::time::Instant;

use crate::metrics::MetricRegistry;
use crate::periodic::Every;
use crate::timestamp::rfc3339;

/// Runs tasks until [`Supervisor::shutdown`] (or until dropped).
pub struct Supervisor {
    tasks: JoinSet<()>,
    liveness: Liveness,
    restarts: IntCounterVec,
    backoff: Backoff,
}

/// The pauses before restarts: `initial`, doubling with each death up to
/// `max`; a task that ran `max` or longer before it died starts again from
/// `initial`.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(300),
        }
    }
}

impl Backoff {
    /// The pause after a death, given the previous pause (none: the first
    /// death) and how long the task ran.
    pub fn next(&self, previous: Option<Duration>, ran_for: Duration) -> Duration {
        match previous {
            Some(previous) if ran_for < self.max => (previous * 2).min(self.max),
            _ => self.initial,
        }
    }
}

/// Whether every supervised task is making progress; cheap to clone.
#[derive(Clone, Default)]
pub struct Liveness {
    watched: Arc<Mutex<Vec<Arc<Watched>>>>,
}

/// What a periodic task reports after each round it completes.
#[derive(Clone)]
struct Heartbeat(Arc<Watched>);

#[derive(Debug)]
struct Watched {
    name: &'static str,
    stall_after: Option<Duration>,
    state: Mutex<WatchedState>,
}

#[derive(Debug)]
struct WatchedState {
    /// The last round completed, or when the task was first started.
    last_beat: Instant,
    last_round: Option<SystemTime>,
    restarts: u64,
    last_death: Option<String>,
}

/// One task as the status document shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskStatus {
    pub name: String,
    /// Seconds since the task last completed a round (or started).
    pub seconds_since_beat: f64,
    /// Seconds without a round after which the process is not live (a
    /// periodic task's [`Every::stalls_after`]).
    pub stall_after_seconds: Option<f64>,
    /// When the task last completed a round (RFC 3339).
    pub last_round: Option<String>,
    pub restarts: u64,
    pub last_death: Option<String>,
    pub live: bool,
}

impl Supervisor {
    /// Registers `task_restarts_total{task}` in `registry`.
    pub fn new(registry: &MetricRegistry, backoff: Backoff) -> prometheus::Result<Self> {
        let restarts = registry.add(IntCounterVec::new(
            Opts::new(
                "task_restarts_total",
                "Background tasks started again after they panicked or ended",
            ),
            &["task"],
        )?)?;
        Ok(Self {
            tasks: JoinSet::new(),
            liveness: Liveness::default(),
            restarts,
            backoff,
        })
    }

    pub fn liveness(&self) -> Liveness {
        self.liveness.clone()
    }

    /// Runs the future `start` makes, and makes and runs a new one whenever
    /// it panics or ends. Liveness does not depend on it: a task on a
    /// schedule is [`Supervisor::spawn_every`]'s.
    pub fn spawn<F, Fut>(&mut self, name: &'static str, mut start: F)
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.spawn_watched(name, None, move |_| start());
    }

    /// Runs `round` on the schedule of `every` (see [`crate::periodic`]),
    /// starting the task again whenever it panics or ends. Liveness fails
    /// when a watched task completes no round for [`Every::stalls_after`].
    pub fn spawn_every<F, Fut>(&mut self, every: Every, round: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let round = Arc::new(round);
        let (name, stall_after) = (every.name, every.stalls_after());
        self.spawn_watched(name, stall_after, move |heartbeat| {
            let (every, round) = (every.clone(), round.clone());
            async move { every.run(&*round, || heartbeat.beat()).await }
        });
    }

    /// [`Supervisor::spawn`], the task promising a [`Heartbeat`] at least
    /// every `stall_after`.
    fn spawn_watched<F, Fut>(&mut self, name: &'static str, stall_after: Option<Duration>, mut start: F)
    where
        F: FnMut(Heartbeat) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let watched = Arc::new(Watched {
            name,
            stall_after,
            state: Mutex::new(WatchedState {
                last_beat: Instant::now(),
                last_round: None,
                restarts: 0,
                last_death: None,
            }),
        });
        self.liveness.lock().push(watched.clone());
        let restarts = self.restarts.with_label_values(&[name]);
        let backoff = self.backoff;
        self.tasks.spawn(async move {
            let mut pause = None;
            loop {
                // A task of its own, so a panic ends that task, not this loop;
                // dropping the set (at shutdown) aborts it.
                let mut run = JoinSet::new();
                let started = Instant::now();
                run.spawn(start(Heartbeat(watched.clone())));
                let death = match run.join_next().await.expect("one task was spawned") {
                    Ok(()) => "ended".to_owned(),
                    Err(error) => describe(error),
                };
                let next = backoff.next(pause, started.elapsed());
                tracing::error!(task = name, %death, "background task died; starting it again in {next:?}");
                restarts.inc();
                {
                    let mut state = watched.lock();
                    state.restarts += 1;
                    state.last_death = Some(death);
                }
                tokio::time::sleep(next).await;
                pause = Some(next);
            }
        });
    }

    /// Stops every task.
    pub async fn shutdown(mut self) {
        self.tasks.shutdown().await;
    }
}

fn describe(error: JoinError) -> String {
    if !error.is_panic() {
        return error.to_string();
    }
    let panic = error.into_panic();
    let message = panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    format!("panicked: {message}")
}

impl Heartbeat {
    /// Records that the task completed a round.
    fn beat(&self) {
        let mut state = self.0.lock();
        state.last_beat = Instant::now();
        state.last_round = Some(SystemTime::now());
    }
}

impl Watched {
    fn lock(&self) -> parking_lot::MutexGuard<'_, WatchedState> {
        self.state.lock()
    }

    fn status(&self) -> TaskStatus {
        let state = self.lock();
        let since_beat = state.last_beat.elapsed();
        TaskStatus {
            name: self.name.to_owned(),
            seconds_since_beat: since_beat.as_secs_f64(),
            stall_after_seconds: self.stall_after.map(|limit| limit.as_secs_f64()),
            last_round: state.last_round.map(rfc3339),
            restarts: state.restarts,
            last_death: state.last_death.clone(),
            live: self.stall_after.is_none_or(|limit| since_beat <= limit),
        }
    }
}

impl Liveness {
    /// True while every watched task completed a round within its limit.
    pub fn is_live(&self) -> bool {
        self.tasks().iter().all(|task| task.live)
    }

    /// Every supervised task, for the status document.
    pub fn tasks(&self) -> Vec<TaskStatus> {
        self.lock().iter().map(|watched| watched.status()).collect()
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Vec<Arc<Watched>>> {
        self.watched.lock()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use registry_testkit::poll::eventually;

    use super::*;

    const QUICK: Backoff = Backoff {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(40),
    };

    /// Far beyond what any of these tests waits for: it bounds a hung test.
    const DEADLINE: Duration = Duration::from_secs(10);

    fn supervisor() -> (Supervisor, MetricRegistry) {
        let registry = MetricRegistry::new("test").unwrap();
        (Supervisor::new(&registry, QUICK).unwrap(), registry)
    }

    #[tokio::test]
    async fn a_task_that_panics_is_started_again() {
        let (mut supervisor, registry) = supervisor();
        let starts = Arc::new(AtomicUsize::new(0));
        let counted = starts.clone();
        supervisor.spawn("refresh", move || {
            let start = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                if start < 3 {
                    panic!("refresh {start} failed");
                }
                std::future::pending::<()>().await;
            }
        });
        eventually("the fourth start", DEADLINE, || {
            let started = starts.load(Ordering::SeqCst);
            async move { started == 4 }
        })
        .await;
        let status = &supervisor.liveness().tasks()[0];
        assert_eq!(status.restarts, 3);
        assert_eq!(status.last_death.as_deref(), Some("panicked: refresh 2 failed"));
        assert!(supervisor.liveness().is_live(), "not a watched task");
        let restarts = registry.prometheus().gather()[0].get_metric()[0]
            .get_counter()
            .get_value();
        assert_eq!(restarts, 3.0);
        supervisor.shutdown().await;
    }

    #[test]
    fn pauses_double_up_to_the_limit_and_reset_after_a_long_run() {
        let backoff = Backoff::default();
        let short = Duration::from_secs(1);
        let mut pause = None;
        let pauses: Vec<u64> = (0..11)
            .map(|_| {
                let next = backoff.next(pause, short);
                pause = Some(next);
                next.as_secs()
            })
            .collect();
        assert_eq!(pauses, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
        assert_eq!(backoff.next(pause, backoff.max), backoff.initial);
    }

    #[tokio::test]
    async fn shutdown_stops_the_running_task() {
        let (mut supervisor, _registry) = supervisor();
        let (sender, mut receiver) = tokio::sync::mpsc::channel::<()>(1);
        supervisor.spawn("holds a sender", move || {
            let sender = sender.clone();
            async move {
                sender.send(()).await.unwrap();
                std::future::pending::<()>().await;
            }
        });
        assert_eq!(receiver.recv().await, Some(()), "the task runs");
        supervisor.shutdown().await;
        let closed = tokio::time::timeout(DEADLINE, receiver.recv()).await;
        assert_eq!(closed, Ok(None), "every sender was dropped");
    }

    /// A round that never ends, as a deadlocked refresh would.
    #[tokio::test(start_paused = true)]
    async fn a_periodic_task_that_hangs_is_stalled_after_three_rounds_and_its_allowance() {
        let (mut supervisor, _registry) = supervisor();
        let rounds = Arc::new(AtomicUsize::new(0));
        let counted = rounds.clone();
        let every = Every::new("scheduled", Duration::from_secs(10)).allowing(Duration::from_secs(5));
        let stalls_after = every.stalls_after().unwrap();
        assert_eq!(stalls_after, Duration::from_secs(3 * (10 + 5)));
        // The first round completes at once; the second, 10 s later, hangs.
        supervisor.spawn_every(every, move || {
            let round = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                if round > 0 {
                    std::future::pending::<()>().await;
                }
            }
        });
        let liveness = supervisor.liveness();

        tokio::time::sleep(stalls_after - Duration::from_millis(1)).await;
        assert_eq!(rounds.load(Ordering::SeqCst), 2);
        let task = &liveness.tasks()[0];
        assert!(task.live && task.last_round.is_some(), "{task:?}");
        assert_eq!(task.stall_after_seconds, Some(45.0));
        assert!(liveness.is_live(), "within three rounds");

        tokio::time::sleep(Duration::from_millis(2)).await;
        assert!(!liveness.is_live(), "stalled");
        assert_eq!(liveness.tasks()[0].restarts, 0, "a hung task is not restarted");
        supervisor.shutdown().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_periodic_task_that_dies_in_every_round_is_stalled_too() {
        let (mut supervisor, _registry) = supervisor();
        supervisor.spawn_every(Every::new("dies", Duration::from_secs(1)), || async {
            panic!("a bug in every round")
        });
        let liveness = supervisor.liveness();
        tokio::time::sleep(Duration::from_millis(2999)).await;
        assert!(liveness.is_live());
        assert!(liveness.tasks()[0].restarts > 10, "{:?}", liveness.tasks());
        tokio::time::sleep(Duration::from_millis(2)).await;
        assert!(!liveness.is_live());
        supervisor.shutdown().await;
    }

    #[tokio::test(start_paused = true)]
    async fn an_unwatched_periodic_task_never_fails_liveness() {
        let (mut supervisor, _registry) = supervisor();
        let every = Every::new("policy reload", Duration::from_secs(1)).unwatched();
        assert_eq!(every.stalls_after(), None);
        supervisor.spawn_every(every, std::future::pending::<()>);
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert!(supervisor.liveness().is_live());
        assert_eq!(supervisor.liveness().tasks()[0].stall_after_seconds, None);
        supervisor.shutdown().await;
    }
}
