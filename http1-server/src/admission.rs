//! What a server does with a request once its head has passed RFC 9112's
//! checks, decided from the head alone, before a byte of its body is read:
//! the server's [`Gate`] takes the request (and its body, up to a bound)
//! or answers it itself. A body is read whole before the app is called, so
//! reading one a route will not take (on a path that does not exist, from
//! a client without a token) costs the server memory for nothing; the gate
//! turns those away unread. A gate may also answer a request whose answer
//! is at hand (made already, as the app would answer it), without the
//! app's routing and middleware.

use std::sync::Arc;

use actix_web::HttpResponse;
use actix_web::dev::RequestHead;

use crate::request::Body;
use crate::response::Prepared;

/// The gate's verdict on one request.
pub enum Admission {
    /// Call the app, with the request's body if it has one, read whole, of
    /// up to this many bytes: a longer one is answered 413 (RFC 9110
    /// §15.5.14), before it is read when its Content-Length says so, at the
    /// first chunk that passes the bound when it is chunked. `Take(0)`
    /// takes no body: Content-Length 0 and an empty chunked body pass.
    Take(usize),
    /// Answer this, without calling the app or reading the body: a refusal,
    /// or an answer at hand. When the request announced a body the
    /// connection then closes (gently: what the client still sends is read
    /// and discarded for a while).
    Answer(HttpResponse),
    /// [`Admission::Answer`] with an answer prepared whole already, written
    /// without an actix-web response.
    Prepared(Prepared),
}

type Decide = dyn Fn(&RequestHead, Body) -> Admission + Send + Sync;

/// Decides each request's [`Admission`] from its head and its body's
/// framing; cheap to clone (every worker of a server holds one).
#[derive(Clone)]
pub struct Gate(Arc<Decide>);

impl Gate {
    /// A gate that asks `decide` about every request: called on the
    /// worker's thread, so it must answer at once (it must not block).
    pub fn new(decide: impl Fn(&RequestHead, Body) -> Admission + Send + Sync + 'static) -> Self {
        Self(Arc::new(decide))
    }

    /// Takes every request, with a body of up to `max_bytes`.
    pub fn taking(max_bytes: usize) -> Self {
        Self::new(move |_, _| Admission::Take(max_bytes))
    }

    pub(crate) fn admit(&self, head: &RequestHead, body: Body) -> Admission {
        (self.0)(head, body)
    }
}

impl Default for Gate {
    /// Takes every request and no body: a server takes bodies only where
    /// its options say so.
    fn default() -> Self {
        Self::taking(0)
    }
}
