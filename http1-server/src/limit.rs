//! A bound on open client connections. Every connection costs memory for as
//! long as it is open, idle keep-alive ones included, so a reconnect storm
//! could otherwise grow a service past its memory limit and get it killed.
//!
//! Admission is decided once, when a connection is accepted. Below the
//! limit it is admitted, and an admitted connection is served for as long
//! as it stays open: no later count of other sockets (silent ones
//! included) turns its requests away. At the limit a new connection is
//! answered 503 with `connection: close` at once, before it sends anything,
//! and closed (`connections_refused_total`): the client hears a clear
//! refusal and retries, and a storm of silent sockets costs the clients
//! already admitted nothing. Sockets that never speak are closed by the
//! client timeout, which makes room again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use prometheus::{IntCounter, IntGauge};

/// The open connections of one server and their limit; cheap to clone.
#[derive(Clone)]
pub struct ConnectionLimit(Arc<Shared>);

struct Shared {
    open: AtomicUsize,
    limit: usize,
    metrics: LimitMetrics,
    /// The whole answer a refused connection gets.
    refusal: Bytes,
}

/// What the limit counts in, registered by the service.
#[derive(Clone)]
pub struct LimitMetrics {
    /// Connections admitted and open.
    pub open: IntGauge,
    /// Counters a refusal adds one to (the limit's own, and the service's
    /// count of error answers, say).
    pub refused: Vec<IntCounter>,
}

/// Held by an admitted connection: counts it while it is open.
pub(crate) struct Admitted(ConnectionLimit);

impl ConnectionLimit {
    /// A bound of `limit` open connections; a connection beyond it is
    /// answered 503 with `body` (of type `content_type`) and closed.
    pub fn new(limit: usize, metrics: LimitMetrics, content_type: &str, body: &[u8]) -> Self {
        let head = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: {content_type}\r\ncache-control: no-store\r\n\
             retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        let mut refusal = head.into_bytes();
        refusal.extend_from_slice(body);
        Self(Arc::new(Shared {
            open: AtomicUsize::new(0),
            limit,
            metrics,
            refusal: refusal.into(),
        }))
    }

    /// Admits one more connection, unless `limit` are open.
    pub(crate) fn admit(&self) -> Option<Admitted> {
        let shared = &self.0;
        shared
            .open
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |open| {
                (open < shared.limit).then_some(open + 1)
            })
            .ok()?;
        shared.metrics.open.inc();
        Some(Admitted(self.clone()))
    }

    /// Counts a refused connection; returns what it is answered.
    pub(crate) fn refuse(&self) -> &Bytes {
        for counter in &self.0.metrics.refused {
            counter.inc();
        }
        &self.0.refusal
    }

    /// Connections admitted and still open.
    pub fn open(&self) -> usize {
        self.0.open.load(Ordering::SeqCst)
    }

    pub fn limit(&self) -> usize {
        self.0.limit
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.0.metrics.open.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(limit: usize) -> ConnectionLimit {
        let metrics = LimitMetrics {
            open: IntGauge::new("open", "open").unwrap(),
            refused: vec![IntCounter::new("refused", "refused").unwrap()],
        };
        ConnectionLimit::new(
            limit,
            metrics,
            "application/json",
            br#"{"kind":"service_unavailable"}"#,
        )
    }

    #[test]
    fn admits_up_to_the_limit_and_again_once_one_closes() {
        let limit = limit(2);
        let first = limit.admit().unwrap();
        let _second = limit.admit().unwrap();
        assert!(limit.admit().is_none());
        assert_eq!((limit.open(), limit.0.metrics.open.get()), (2, 2));
        drop(first);
        assert!(limit.admit().is_some());
    }

    #[test]
    fn a_refusal_is_a_whole_answer_and_is_counted() {
        let limit = limit(0);
        let refusal = String::from_utf8(limit.refuse().to_vec()).unwrap();
        assert!(
            refusal.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
            "{refusal}"
        );
        assert!(
            refusal.contains("connection: close\r\ncontent-length: 30\r\n\r\n{\"kind\""),
            "{refusal}"
        );
        assert_eq!(limit.0.metrics.refused[0].get(), 1);
    }
}
