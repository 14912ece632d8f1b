//! Connections accepted on a thread of their own and handed to the worker
//! with the fewest open. Workers accepting from the shared socket themselves
//! took connections unevenly (whichever woke first won), and the busier
//! worker's queue became the latency tail: p99 7.8 ms against nginx's 0.9
//! ms on the same load (docs/benchmarks-metadata-helper.md). The acceptor
//! runs on no worker, so that a busy worker never delays accepting for the
//! others.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::limit::{Admitted, ConnectionLimit};
use crate::linger::linger;
use crate::turns::{TURN_PERIOD, Turns};

/// A worker whose loop has not turned for this long (four turns) gets no
/// new connection while another worker turns: a handler that blocks its
/// thread then holds up the connections it already had, not every one
/// that arrives (probes on the status port, say).
const STUCK_AFTER: Duration = TURN_PERIOD.saturating_mul(4);

/// How long accepting pauses after it fails (out of file descriptors, say),
/// rather than spinning.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// How long a refused connection is read from after its 503, so that its
/// request arriving late does not make the kernel reset the connection
/// before the client reads the answer…
const REFUSAL_LINGER: Duration = Duration::from_secs(1);
/// …for this many refused connections at once; beyond, one is closed at
/// once (a storm beyond the limit must not cost more than the limit does).
const MAX_LINGERING_REFUSALS: usize = 1024;

/// An accepted connection on its way to a worker. A standard stream: a
/// tokio one belongs to the runtime that accepted it.
pub struct Accepted {
    pub stream: std::net::TcpStream,
    pub peer: SocketAddr,
    pub accepted_at: Instant,
    /// Counts it on its worker while it is open.
    pub seat: Seat,
    /// Counts it against the server's bound, if it has one.
    pub admitted: Option<Admitted>,
}

/// The open connections of every worker, and the wake-up of an acceptor
/// waiting for one to close when all are full.
#[derive(Clone)]
pub struct Loads {
    open: Arc<[AtomicUsize]>,
    freed: Arc<Notify>,
}

/// Held by a connection: counts it on its worker while it is open.
pub struct Seat {
    loads: Loads,
    worker: usize,
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.loads.open[self.worker].fetch_sub(1, Ordering::Relaxed);
        self.loads.freed.notify_one();
    }
}

impl Loads {
    pub fn new(workers: usize) -> Self {
        Self {
            open: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            freed: Arc::new(Notify::new()),
        }
    }

    /// Whether a worker has fewer than `max` connections.
    fn has_room(&self, max: usize) -> bool {
        self.open.iter().any(|open| open.load(Ordering::Relaxed) < max)
    }

    /// The worker with the fewest open connections among those with fewer
    /// than `max`, one that is not `stuck` if there is one; it is counted
    /// as taking one more.
    fn take_least_loaded(&self, max: usize, stuck: impl Fn(usize) -> bool) -> Option<Seat> {
        let with_room = || {
            self.open
                .iter()
                .enumerate()
                .map(|(worker, open)| (worker, open.load(Ordering::Relaxed)))
                .filter(|(_, open)| *open < max)
        };
        let (worker, _) = with_room()
            .filter(|(worker, _)| !stuck(*worker))
            .min_by_key(|(_, open)| *open)
            .or_else(|| with_room().min_by_key(|(_, open)| *open))?;
        self.open[worker].fetch_add(1, Ordering::Relaxed);
        Some(Seat {
            loads: self.clone(),
            worker,
        })
    }
}

/// What the acceptor needs; see [`Acceptor::run`].
pub struct Acceptor {
    pub server: &'static str,
    /// Registered with the acceptor's own runtime when it starts.
    pub listener: std::net::TcpListener,
    pub inboxes: Vec<mpsc::UnboundedSender<Accepted>>,
    pub loads: Loads,
    pub max_per_worker: usize,
    pub limit: Option<ConnectionLimit>,
    /// The workers' turns (thread `n` is worker `n`).
    pub turns: Turns,
    pub stopping: CancellationToken,
}

impl Acceptor {
    /// Accepts until `stopping`, handing each connection to the least
    /// loaded worker's inbox, passing over a worker that is stuck; a worker
    /// with `max_per_worker` connections gets none until one closes, and
    /// while every worker is full, connections wait in the kernel's
    /// backlog. Beyond the [`ConnectionLimit`], a connection is answered 503
    /// here and closed.
    pub async fn run(self) {
        let listener = match tokio::net::TcpListener::from_std(self.listener) {
            Ok(listener) => listener,
            Err(error) => {
                tracing::error!(server = self.server, "cannot listen: {error}");
                return;
            }
        };
        let lingering = Arc::new(AtomicUsize::new(0));
        loop {
            // Connections wait in the kernel's backlog while every worker is
            // full; the worker is chosen once one has arrived, so that it
            // is one that turns at that moment.
            loop {
                // Registered before looking, so that a close in between wakes it.
                let freed = self.loads.freed.notified();
                if self.loads.has_room(self.max_per_worker) {
                    break;
                }
                tokio::select! {
                    () = freed => {}
                    () = self.stopping.cancelled() => return,
                }
            }
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = self.stopping.cancelled() => return,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    pause_after(self.server, &error).await;
                    continue;
                }
            };
            let admitted = match &self.limit {
                None => None,
                Some(limit) => match limit.admit() {
                    Some(admitted) => Some(admitted),
                    None => {
                        refuse(stream, limit, &lingering);
                        continue;
                    }
                },
            };
            let stuck = |worker| self.turns.thread_stalled_for(worker) >= STUCK_AFTER;
            let seat = self
                .loads
                .take_least_loaded(self.max_per_worker, stuck)
                .expect("a worker had room, and only this thread takes seats");
            let accepted_at = Instant::now();
            let stream = match stream.into_std() {
                Ok(stream) => stream,
                Err(error) => {
                    tracing::warn!(
                        server = self.server,
                        "cannot hand over an accepted connection: {error}"
                    );
                    continue;
                }
            };
            let worker = seat.worker;
            let accepted = Accepted {
                stream,
                peer,
                accepted_at,
                seat,
                admitted,
            };
            // A worker that has ended takes nothing more; the seat goes.
            let _ = self.inboxes[worker].send(accepted);
        }
    }
}

/// Answers a connection beyond the limit with the limit's 503 and closes
/// it, reading what the client sends for a while first (up to
/// [`MAX_LINGERING_REFUSALS`] at once).
fn refuse(stream: TcpStream, limit: &ConnectionLimit, lingering: &Arc<AtomicUsize>) {
    // A fresh connection's send buffer takes the few hundred bytes whole.
    if let Err(error) = stream.try_write(limit.refuse()) {
        tracing::debug!("cannot send a refusal: {error}");
        return;
    }
    if lingering.fetch_add(1, Ordering::Relaxed) >= MAX_LINGERING_REFUSALS {
        lingering.fetch_sub(1, Ordering::Relaxed);
        return;
    }
    let lingering = lingering.clone();
    tokio::spawn(async move {
        linger(stream, REFUSAL_LINGER).await;
        lingering.fetch_sub(1, Ordering::Relaxed);
    });
}

async fn pause_after(server: &str, error: &io::Error) {
    tracing::warn!(server, "accepting a connection failed: {error}");
    tokio::time::sleep(ACCEPT_PAUSE).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_go_to_the_least_loaded_worker_up_to_the_bound() {
        let loads = Loads::new(3);
        let seats: Vec<Seat> = (0..6)
            .map(|_| loads.take_least_loaded(2, none_stuck()).unwrap())
            .collect();
        let mut workers: Vec<usize> = seats.iter().map(|seat| seat.worker).collect();
        workers.sort_unstable();
        assert_eq!(workers, [0, 0, 1, 1, 2, 2], "spread evenly");
        assert!(
            loads.take_least_loaded(2, none_stuck()).is_none(),
            "every worker full"
        );

        let mut seats = seats;
        let on_worker_1 = seats.iter().position(|seat| seat.worker == 1).unwrap();
        drop(seats.swap_remove(on_worker_1));
        assert_eq!(loads.take_least_loaded(2, none_stuck()).unwrap().worker, 1);
    }

    #[test]
    fn a_stuck_worker_gets_connections_only_when_no_other_has_room() {
        let loads = Loads::new(2);
        let worker_1_stuck = |worker| worker == 1;
        let first = loads.take_least_loaded(2, none_stuck()).unwrap();
        assert_eq!(first.worker, 0);
        let second = loads.take_least_loaded(2, worker_1_stuck).unwrap();
        assert_eq!(second.worker, 0, "the busier worker, which turns");
        let third = loads.take_least_loaded(2, worker_1_stuck).unwrap();
        assert_eq!(third.worker, 1, "the worker that turns is full");
    }

    fn none_stuck() -> impl Fn(usize) -> bool {
        |_| false
    }
}
