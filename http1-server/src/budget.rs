//! The bytes of request bodies one server holds at once, shared by its
//! workers. A body is read whole before the app is called, so every
//! connection reading or handing over a body holds memory for it; a bound
//! per body alone lets enough connections together hold any amount (9,000
//! connections each announcing 64 KiB held a gigabyte). Each body reserves
//! what it will hold before a byte of it is read: a body the budget cannot
//! cover is refused (503, `Retry-After`) unread, and what a body reserved
//! goes back when it is dropped, by the layer (a refusal, a client gone)
//! or by the app once it has read it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actix_web::HttpResponse;
use actix_web::http::header;
use bytes::Bytes;

/// The budget of a server unless its options say otherwise: 16 bodies of a
/// MiB (the largest any route takes, an Alertmanager notification) at once,
/// or a few hundred small ones.
pub const DEFAULT_BODY_BUDGET_BYTES: usize = 16 * 1024 * 1024;

/// The body bytes one server holds at once, across its workers; cheap to
/// clone. See the module documentation.
#[derive(Clone)]
pub struct BodyBudget(Arc<Shared>);

struct Shared {
    held: AtomicUsize,
    total: usize,
    /// The content type and body of the 503 a body beyond the budget gets.
    content_type: String,
    refusal: Bytes,
}

/// Bytes of a [`BodyBudget`] one body holds, given back when it is dropped
/// (or of no budget at all: see [`Reservation::unbudgeted`]).
pub struct Reservation {
    budget: Option<BodyBudget>,
    bytes: usize,
}

impl BodyBudget {
    /// A budget of `total` bytes; a body beyond it is answered 503 with
    /// `body` (of type `content_type`).
    pub fn new(total: usize, content_type: &str, body: &[u8]) -> Self {
        Self(Arc::new(Shared {
            held: AtomicUsize::new(0),
            total,
            content_type: content_type.to_owned(),
            refusal: Bytes::copy_from_slice(body),
        }))
    }

    /// A reservation of nothing yet, to grow as a body's size becomes known.
    pub fn reservation(&self) -> Reservation {
        Reservation {
            budget: Some(self.clone()),
            bytes: 0,
        }
    }

    /// Bytes reserved now.
    pub fn held(&self) -> usize {
        self.0.held.load(Ordering::SeqCst)
    }

    pub fn total(&self) -> usize {
        self.0.total
    }

    /// The answer to a body beyond the budget: the server is busy, not the
    /// request wrong, so the client may send it again in a moment.
    pub(crate) fn refusal(&self) -> HttpResponse {
        HttpResponse::ServiceUnavailable()
            .content_type(self.0.content_type.as_str())
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .insert_header((header::RETRY_AFTER, "1"))
            .body(self.0.refusal.clone())
    }

    fn take(&self, bytes: usize) -> bool {
        let shared = &self.0;
        shared
            .held
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |held| {
                held.checked_add(bytes).filter(|after| *after <= shared.total)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: usize) {
        self.0.held.fetch_sub(bytes, Ordering::SeqCst);
    }
}

impl Default for BodyBudget {
    fn default() -> Self {
        Self::new(
            DEFAULT_BODY_BUDGET_BYTES,
            "text/plain; charset=utf-8",
            b"the server holds as many request bodies as it may; try again later",
        )
    }
}

impl Reservation {
    /// A reservation that holds no budget: every growth is granted (for a
    /// decoder used outside a server, a fuzz target's, say).
    pub fn unbudgeted() -> Self {
        Self {
            budget: None,
            bytes: 0,
        }
    }

    /// Reserves `more` bytes; `false`, reserving nothing, when the budget
    /// cannot cover them now.
    pub fn grow(&mut self, more: usize) -> bool {
        if let Some(budget) = &self.budget
            && !budget.take(more)
        {
            return false;
        }
        self.bytes += more;
        true
    }

    /// Gives back what is reserved beyond `bytes`.
    pub fn shrink_to(&mut self, bytes: usize) {
        if bytes < self.bytes {
            if let Some(budget) = &self.budget {
                budget.give_back(self.bytes - bytes);
            }
            self.bytes = bytes;
        }
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl std::fmt::Debug for Reservation {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Reservation")
            .field("bytes", &self.bytes)
            .field("budgeted", &self.budget.is_some())
            .finish()
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.shrink_to(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_take_from_the_budget_until_it_is_spent_and_give_back_when_dropped() {
        let budget = BodyBudget::new(100, "text/plain", b"busy");
        let mut first = budget.reservation();
        assert!(first.grow(60));
        let mut second = budget.reservation();
        assert!(!second.grow(41), "beyond the budget");
        assert_eq!(
            (second.bytes(), budget.held()),
            (0, 60),
            "a refusal takes nothing"
        );
        assert!(second.grow(40));
        assert_eq!(budget.held(), 100);
        first.shrink_to(10);
        assert_eq!(budget.held(), 50);
        drop(first);
        drop(second);
        assert_eq!(budget.held(), 0);
        let mut unbudgeted = Reservation::unbudgeted();
        assert!(unbudgeted.grow(usize::MAX / 2));
    }
}
