//! One client connection: requests read, handed to the app, answered, in
//! order, until the client or the server ends it.
//!
//! Between requests the connection holds no buffer: it waits for the socket
//! to become readable, and only then takes a buffer for the head, which is
//! freed once the head is parsed (unless the client already sent the next
//! request). An idle keep-alive connection costs its task and its socket,
//! about a kilobyte, where HTTP servers that keep a read and a write buffer
//! per connection spend 16 KiB or more (docs/benchmarks-policy-engine.md).

use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::Method;
use bytes::{Buf as _, BytesMut};
use tokio::io::{AsyncWriteExt as _, Interest};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Timeouts;
use super::request::{self, BadHead, Head};
use super::response::{self, Exchange};
use crate::connections::OpenConnection;

/// Bytes taken for a request head at first; a head needing more gets more,
/// up to [`request::MAX_HEAD_BYTES`].
const HEAD_BUFFER: usize = 2048;

/// How long a closing connection reads and discards what the client still
/// sends, so that the kernel does not answer it with a reset that could
/// destroy the response before the client reads it.
const LINGER: Duration = Duration::from_secs(2);

pub struct Connection<S> {
    stream: TcpStream,
    peer: SocketAddr,
    app: Rc<S>,
    timeouts: Timeouts,
    /// Cancelled when the server stops gracefully: idle connections close,
    /// busy ones after their answer.
    stopping: CancellationToken,
    /// Bytes read past the last head (the next pipelined request); empty and
    /// unallocated otherwise.
    unread: BytesMut,
    _open: Option<OpenConnection>,
}

/// What reading a head came to.
enum Read {
    Head(Head),
    /// The socket had nothing to read after all.
    Nothing,
    /// The client closed the connection, or it failed.
    Closed,
}

/// Reads what `stream` holds into `buffer`, up to a head's limit, and
/// clears the socket's readiness once it is drained, so that the next wait
/// really waits: a worker whose connections all wait then sleeps in the
/// kernel rather than finding stale readiness, and yields the CPU (to
/// clients on the same machine, too). A read that fills less than the room
/// it had drained the socket (as nginx reasons), which spares the read that
/// would only say so.
fn read_available(stream: &TcpStream, buffer: &mut BytesMut) -> Drained {
    while buffer.len() < request::MAX_HEAD_BYTES {
        if buffer.capacity() - buffer.len() < HEAD_BUFFER / 2 {
            buffer.reserve(HEAD_BUFFER);
        }
        let room = buffer.capacity() - buffer.len();
        let read = stream.try_io(Interest::READABLE, || match stream.try_read_buf(buffer)? {
            // Clears the readiness: nothing is left to read.
            short if short > 0 && short < room => Err(io::ErrorKind::WouldBlock.into()),
            read => Ok(read),
        });
        match read {
            Ok(0) => return Drained::Closed,
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Drained::Empty,
            Err(_) => return Drained::Closed,
        }
    }
    Drained::Empty
}

thread_local! {
    /// The worker's buffer for heads that arrive whole (see
    /// [`Connection::read_whole_head`]).
    static SCRATCH: std::cell::RefCell<BytesMut> =
        std::cell::RefCell::new(BytesMut::with_capacity(request::MAX_HEAD_BYTES));
}

/// What reading the socket came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drained {
    /// Nothing more to read for now (or a head's worth is in).
    Empty,
    /// The client closed the connection, or it failed.
    Closed,
}

/// How a connection ends.
enum End {
    /// Nothing more to say: close.
    Close,
    /// The client may still be sending (a request body, a refused head):
    /// close after reading what it sends for a while.
    Linger,
}

impl<S, B> Connection<S>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error> + 'static,
    B: MessageBody + 'static,
{
    pub fn new(
        stream: TcpStream,
        peer: SocketAddr,
        app: Rc<S>,
        timeouts: Timeouts,
        stopping: CancellationToken,
        open: Option<OpenConnection>,
    ) -> Self {
        // Heads and bodies go out in one vectored write; what Nagle's
        // algorithm would hold back is only a response's last segment.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {error}");
        }
        Self {
            stream,
            peer,
            app,
            timeouts,
            stopping,
            unread: BytesMut::new(),
            _open: open,
        }
    }

    pub async fn serve(mut self) {
        // A new connection's first request is due within the client
        // timeout; later ones within the keep-alive timeout.
        let mut idle_until = Instant::now() + self.timeouts.client_request;
        let end = loop {
            if self.unread.is_empty() && !self.wait_for_bytes(idle_until).await {
                break End::Close;
            }
            // Boxed, as everything but the wait for bytes: the task's size is
            // that of its largest state, and idle is the state that counts.
            let head = match Box::pin(self.read_head()).await {
                Ok(Read::Head(head)) => head,
                Ok(Read::Nothing) => continue,
                Ok(Read::Closed) => break End::Close,
                Err(refusal) => {
                    Box::pin(self.refuse(refusal)).await;
                    break End::Linger;
                }
            };
            match Box::pin(self.answer(head)).await {
                Ok(None) => idle_until = Instant::now() + self.timeouts.keep_alive,
                Ok(Some(end)) => break end,
                Err(error) => {
                    tracing::debug!(peer = %self.peer, "connection ended while answering: {error}");
                    break End::Close;
                }
            }
        };
        if let End::Linger = end {
            Box::pin(linger(self.stream)).await;
        }
    }

    /// Waits, holding no buffer, until the client sends something; `false`
    /// when it sends nothing until `deadline` or the server stops.
    async fn wait_for_bytes(&mut self, deadline: Instant) -> bool {
        tokio::select! {
            readable = self.stream.readable() => readable.is_ok(),
            () = tokio::time::sleep_until(deadline) => false,
            () = self.stopping.cancelled() => false,
        }
    }

    /// Reads until a whole head is in; a head must be whole within the
    /// client timeout.
    async fn read_head(&mut self) -> Result<Read, Refusal> {
        if self.unread.is_empty()
            && let Some(read) = SCRATCH.with_borrow_mut(|scratch| self.read_whole_head(scratch))
        {
            return read;
        }
        let deadline = Instant::now() + self.timeouts.client_request;
        loop {
            let drained = read_available(&self.stream, &mut self.unread);
            match request::parse(&self.unread, self.peer) {
                Ok(Some(head)) => {
                    self.unread.advance(head.len);
                    if self.unread.is_empty() {
                        // Free the buffer: an idle connection holds none.
                        self.unread = BytesMut::new();
                    }
                    return Ok(Read::Head(head));
                }
                Ok(None) if drained == Drained::Closed => return Ok(Read::Closed),
                Ok(None) => {}
                Err(bad) => return Err(Refusal::Bad(bad)),
            }
            match tokio::time::timeout_at(deadline, self.stream.readable()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Ok(Read::Closed),
                Err(_) => return Err(Refusal::Timeout),
            }
        }
    }

    /// Most heads arrive whole in one read: read into the worker's scratch
    /// buffer, parse, and keep only what follows the head (a pipelined
    /// request), so that a request costs no buffer of its own. `None` when
    /// only a part of a head came, which is then kept in `unread`.
    fn read_whole_head(&mut self, scratch: &mut BytesMut) -> Option<Result<Read, Refusal>> {
        scratch.clear();
        let drained = read_available(&self.stream, scratch);
        if scratch.is_empty() {
            return Some(Ok(match drained {
                Drained::Closed => Read::Closed,
                // Readiness left over from the last read: nothing new.
                Drained::Empty => Read::Nothing,
            }));
        }
        match request::parse(scratch, self.peer) {
            Ok(Some(head)) => {
                self.unread.extend_from_slice(&scratch[head.len..]);
                Some(Ok(Read::Head(head)))
            }
            Ok(None) if drained == Drained::Closed => Some(Ok(Read::Closed)),
            Ok(None) => {
                self.unread.extend_from_slice(scratch);
                None
            }
            Err(bad) => Some(Err(Refusal::Bad(bad))),
        }
    }

    /// Hands the request to the app and writes its answer; `Ok(None)` when
    /// the connection may take another request.
    async fn answer(&mut self, head: Head) -> io::Result<Option<End>> {
        let version = head.request.head().version;
        let head_only = head.request.head().method == Method::HEAD;
        let response: HttpResponse<EitherBody<B>> = match self.app.call(head.request).await {
            Ok(response) => response.into_parts().1.map_into_left_body(),
            Err(error) => error.error_response().map_into_right_body(),
        };
        let exchange = Exchange {
            version,
            head_only,
            keep_alive: head.keep_alive && !head.has_body && !self.stopping.is_cancelled(),
            send_timeout: self.timeouts.send,
        };
        if response::send(&self.stream, response, exchange).await? {
            Ok(None)
        } else if head.has_body || !self.unread.is_empty() {
            Ok(Some(End::Linger))
        } else {
            Ok(Some(End::Close))
        }
    }

    /// Answers a head the app never sees (malformed, too large, too slow)
    /// with its bare status, as HTTP servers do.
    async fn refuse(&mut self, refusal: Refusal) {
        tracing::debug!(peer = %self.peer, "request refused: {refusal}");
        let status = actix_web::http::StatusCode::from_u16(refusal.status()).expect("a valid status");
        let response = HttpResponse::new(status);
        let exchange = Exchange {
            version: actix_web::http::Version::HTTP_11,
            head_only: false,
            keep_alive: false,
            send_timeout: self.timeouts.send,
        };
        if let Err(error) = response::send(&self.stream, response, exchange).await {
            tracing::debug!(peer = %self.peer, "cannot send the refusal: {error}");
        }
    }
}

/// A head refused before the app sees it.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    #[error(transparent)]
    Bad(BadHead),
    #[error("request head not received within the client timeout")]
    Timeout,
}

impl Refusal {
    fn status(&self) -> u16 {
        match self {
            Self::Bad(bad) => bad.status(),
            Self::Timeout => 408,
        }
    }
}

/// Closes the sending side, then reads and discards what the client still
/// sends for up to [`LINGER`], then closes.
async fn linger(mut stream: TcpStream) {
    if stream.shutdown().await.is_err() {
        return;
    }
    let mut discard = vec![0; 4096];
    let reading = async {
        loop {
            if stream.readable().await.is_err() {
                return;
            }
            match stream.try_read(&mut discard) {
                Ok(0) => return,
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, reading).await;
}

#[cfg(test)]
mod tests {
    use actix_web::{App, HttpResponse, web};

    use super::*;

    /// What an idle keep-alive connection costs is mostly its task, whose
    /// size is the future's: the app's and the response's futures must stay
    /// boxed out of it.
    #[actix_web::test]
    async fn an_idle_connection_s_task_is_small() {
        let app = actix_web::test::init_service(App::new().route("/", web::get().to(HttpResponse::Ok))).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (stream, peer) = listener.accept().await.unwrap();
        let connection = Connection::new(
            stream,
            peer,
            Rc::new(app),
            crate::http1::Timeouts::default(),
            CancellationToken::new(),
            None,
        );
        let serving = connection.serve();
        let size = std::mem::size_of_val(&serving);
        assert!(size <= 1024, "{size} bytes");
        drop(client);
    }
}
