//! Connections accepted in one place and handed to the worker with the
//! fewest open. Workers accepting from the shared socket themselves took
//! connections unevenly (whichever woke first won), and the busier worker's
//! queue became the latency tail: p99 7.8 ms against nginx's 0.9 ms on the
//! same load (docs/benchmarks-metadata-helper.md).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

/// How long accepting pauses after it fails (out of file descriptors, say),
/// rather than spinning.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// An accepted connection on its way to a worker. A standard stream: a
/// tokio one belongs to the runtime that accepted it.
pub type Accepted = (std::net::TcpStream, SocketAddr);

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

    /// The worker with the fewest open connections, if it has fewer than
    /// `max`; it is counted as taking one more.
    fn take_least_loaded(&self, max: usize) -> Option<Seat> {
        let (worker, open) = self
            .open
            .iter()
            .enumerate()
            .min_by_key(|(_, open)| open.load(Ordering::Relaxed))?;
        if open.load(Ordering::Relaxed) >= max {
            return None;
        }
        open.fetch_add(1, Ordering::Relaxed);
        Some(Seat {
            loads: self.clone(),
            worker,
        })
    }
}

/// Accepts until `stopping`, handing each connection to the least loaded
/// worker's inbox; a worker with `max_per_worker` connections gets none
/// until one closes, and while every worker is full, connections wait in the
/// kernel's backlog.
pub async fn run(
    server: &'static str,
    listener: tokio::net::TcpListener,
    inboxes: Vec<mpsc::UnboundedSender<(Accepted, Seat)>>,
    loads: Loads,
    max_per_worker: usize,
    stopping: CancellationToken,
) {
    loop {
        let seat = loop {
            // Registered before looking, so that a close in between wakes it.
            let freed = loads.freed.notified();
            if let Some(seat) = loads.take_least_loaded(max_per_worker) {
                break seat;
            }
            tokio::select! {
                () = freed => {}
                () = stopping.cancelled() => return,
            }
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted.and_then(|(stream, peer)| Ok((stream.into_std()?, peer))),
            () = stopping.cancelled() => return,
        };
        match accepted {
            Ok(accepted) => {
                // A worker that has ended takes nothing more; the seat goes.
                let _ = inboxes[seat.worker].send((accepted, seat));
            }
            Err(error) => pause_after(server, &error).await,
        }
    }
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
        let seats: Vec<Seat> = (0..6).map(|_| loads.take_least_loaded(2).unwrap()).collect();
        let mut workers: Vec<usize> = seats.iter().map(|seat| seat.worker).collect();
        workers.sort_unstable();
        assert_eq!(workers, [0, 0, 1, 1, 2, 2], "spread evenly");
        assert!(loads.take_least_loaded(2).is_none(), "every worker full");

        let mut seats = seats;
        let on_worker_1 = seats.iter().position(|seat| seat.worker == 1).unwrap();
        drop(seats.swap_remove(on_worker_1));
        assert_eq!(loads.take_least_loaded(2).unwrap().worker, 1);
    }
}
