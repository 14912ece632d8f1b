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
use actix_web::http::{Method, StatusCode, header};
use bytes::{Buf as _, Bytes, BytesMut};
use tokio::io::AsyncWriteExt as _;
use tokio::io::Interest;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::admission::{Admission, Gate};
use crate::body::{self, BadBody, Decoder};
use crate::budget::BodyBudget;
use crate::limit::Admitted;
use crate::linger::linger;
use crate::request::{self, BadHead, Head};
use crate::response::{self, Exchange, Prepared};
use crate::{Options, Timeouts};

/// Bytes taken for a request head at first; a head needing more gets more,
/// up to [`request::MAX_HEAD_BYTES`].
const HEAD_BUFFER: usize = 2048;

/// Room made for each read of a body (a head's reads are smaller; see
/// [`read_available`]).
const BODY_READ: usize = 16 * 1024;

/// How long a closing connection reads and discards what the client still
/// sends (see [`linger`]).
const LINGER: Duration = Duration::from_secs(2);

/// Requests answered in a row before the connection lets the worker's other
/// connections run. A pipelining client that reads as fast as the worker
/// answers always has its next request buffered: without a yield, its
/// connection would hold the worker for as long as it keeps sending
/// (hyper yields as often).
const REQUESTS_BETWEEN_YIELDS: u32 = 16;

pub struct Connection<S> {
    stream: TcpStream,
    peer: SocketAddr,
    app: Rc<S>,
    timeouts: Timeouts,
    /// Decides from each head whether the request is taken, and its body.
    gate: Gate,
    /// What the server's bodies hold at once.
    budget: BodyBudget,
    /// Cancelled when the server stops gracefully: idle connections close,
    /// busy ones after their answer.
    stopping: CancellationToken,
    /// Bytes read past the last head (the next pipelined request); empty and
    /// unallocated otherwise.
    unread: BytesMut,
    /// When waiting for the next request's first byte ends: the client
    /// timeout after the accept, then the keep-alive timeout after each
    /// answer.
    idle_until: Instant,
    /// Nothing answered yet: the first head must be whole by `idle_until`
    /// (the client timeout after the accept); a later head within the
    /// client timeout of its first byte.
    first: bool,
    /// Counts the connection against the server's bound while it is open.
    _admitted: Option<Admitted>,
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
        options: &Options,
        stopping: CancellationToken,
        accepted_at: Instant,
        admitted: Option<Admitted>,
    ) -> Self {
        let timeouts = options.timeouts;
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
            gate: options.gate.clone(),
            budget: options.body_budget.clone(),
            stopping,
            unread: BytesMut::new(),
            idle_until: accepted_at + timeouts.client_request,
            first: true,
            _admitted: admitted,
        }
    }

    pub async fn serve(mut self) {
        let mut answered_in_a_row = 0;
        let end = loop {
            if self.unread.is_empty() {
                if !self.wait_for_bytes().await {
                    break End::Close;
                }
                answered_in_a_row = 0;
            } else if answered_in_a_row >= REQUESTS_BETWEEN_YIELDS {
                tokio::task::yield_now().await;
                answered_in_a_row = 0;
            }
            // A head that came whole is read without waiting; the rest is
            // boxed, as everything but the wait for bytes: the task's size
            // is that of its largest state, and idle is the state that counts.
            let read = match self.read_arrived_head() {
                Some(read) => read,
                None => Box::pin(self.read_head()).await,
            };
            let head = match read {
                Ok(Read::Head(head)) => head,
                Ok(Read::Nothing) => continue,
                Ok(Read::Closed) => break End::Close,
                Err(refusal) => {
                    Box::pin(self.refuse(refusal)).await;
                    break End::Linger;
                }
            };
            answered_in_a_row += 1;
            match Box::pin(self.answer(head)).await {
                Ok(None) => {
                    self.idle_until = Instant::now() + self.timeouts.keep_alive;
                    self.first = false;
                }
                Ok(Some(end)) => break end,
                Err(error) => {
                    tracing::debug!(peer = %self.peer, "connection ended while answering: {error}");
                    break End::Close;
                }
            }
        };
        if let End::Linger = end {
            // What came after the head is never read now (a refused body
            // sent with its head, up to a head's bound): freed before the
            // linger, which holds every refused connection for seconds.
            self.unread = BytesMut::new();
            Box::pin(linger(self.stream, LINGER)).await;
        }
    }

    /// Waits, holding no buffer, until the client sends something; `false`
    /// when it sends nothing until the next head is due or the server stops.
    async fn wait_for_bytes(&mut self) -> bool {
        tokio::select! {
            readable = self.stream.readable() => readable.is_ok(),
            () = tokio::time::sleep_until(self.idle_until) => false,
            () = self.stopping.cancelled() => false,
        }
    }

    /// Reads until a whole head is in. The first head must be whole within
    /// the client timeout of the accept; a later one within the client
    /// timeout of its first byte.
    async fn read_head(&mut self) -> Result<Read, Refusal> {
        let deadline = if self.first {
            self.idle_until
        } else {
            Instant::now() + self.timeouts.client_request
        };
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

    /// The head, when it came whole (see [`Connection::read_whole_head`]);
    /// `None` when more must be waited for ([`Connection::read_head`]).
    fn read_arrived_head(&mut self) -> Option<Result<Read, Refusal>> {
        if !self.unread.is_empty() {
            return None;
        }
        SCRATCH.with_borrow_mut(|scratch| self.read_whole_head(scratch))
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

    /// Reads the body that follows `head`, whole, of up to `max_bytes`,
    /// within the client timeout of the head (as a head is due within it of
    /// its first byte): `None` when the client closed the connection first.
    async fn read_body(&mut self, head: &Head, max_bytes: usize) -> Result<Option<Bytes>, Refusal> {
        let deadline = Instant::now() + self.timeouts.client_request;
        // A body no whole budget could cover is too large, not a moment too early.
        let max_bytes = max_bytes.min(self.budget.total().saturating_sub(body::READING_BYTES));
        let mut decoder =
            Decoder::new(head.body, max_bytes, self.budget.reservation()).map_err(Refusal::Body)?;
        if self.unread.is_empty() && expects_continue(head) {
            // RFC 9110 §10.1.1: a client that asked may wait for this before
            // it sends the body.
            let interim = tokio::time::timeout(
                self.timeouts.send,
                self.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n"),
            );
            if !matches!(interim.await, Ok(Ok(()))) {
                return Ok(None);
            }
        }
        loop {
            let progress = decoder.decode(&self.unread).map_err(Refusal::Body)?;
            self.unread.advance(progress.taken);
            if progress.done {
                if self.unread.is_empty() {
                    self.unread = BytesMut::new();
                }
                return Ok(Some(decoder.into_body()));
            }
            match tokio::time::timeout_at(deadline, self.stream.readable()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Ok(None),
                Err(_) => return Err(Refusal::SlowBody),
            }
            // Reads of a body's size, not a head's.
            self.unread.reserve(BODY_READ);
            if read_available(&self.stream, &mut self.unread) == Drained::Closed {
                // What came before the close may still finish the body.
                let progress = decoder.decode(&self.unread).map_err(Refusal::Body)?;
                self.unread.advance(progress.taken);
                return Ok(progress.done.then(|| decoder.into_body()));
            }
        }
    }

    /// Asks the gate about the request; then reads its body, if any, hands
    /// the request to the app and writes its answer, or writes the gate's
    /// own answer. `Ok(None)` when the connection may take another request.
    async fn answer(&mut self, head: Head) -> io::Result<Option<End>> {
        let admission = self.gate.admit(head.request.head(), head.body);
        let (body, gate_answer) = match admission {
            Admission::Answer(response) => (None, Some(Reply::Response(response.map_into_right_body()))),
            Admission::Prepared(prepared) => (None, Some(Reply::Prepared(prepared))),
            Admission::Take(_) if !head.body.is_present() => (None, None),
            Admission::Take(max_bytes) => match self.read_body(&head, max_bytes).await {
                Ok(Some(body)) => (Some(body), None),
                Ok(None) => return Ok(Some(End::Close)),
                Err(refusal) => {
                    self.refuse(refusal).await;
                    return Ok(Some(End::Linger));
                }
            },
        };
        let version = head.request.head().version;
        let head_only = head.request.head().method == Method::HEAD;
        // A body left unread ends the connection after the answer.
        let unread_body = gate_answer.is_some() && head.body.is_present();
        let reply: Reply<B> = if let Some(answer) = gate_answer {
            answer
        } else if head.asks_server {
            // RFC 9110 §9.3.7: what the server allows, as no resource says.
            Reply::Response(
                HttpResponse::Ok()
                    .insert_header((header::ALLOW, "GET, HEAD"))
                    .finish()
                    .map_into_right_body(),
            )
        } else {
            let mut request = head.request;
            if let Some(body) = body {
                *request.payload() = payload(body);
            }
            Reply::Response(match self.app.call(request).await {
                Ok(response) => response.into_parts().1.map_into_left_body(),
                Err(error) => error.error_response().map_into_right_body(),
            })
        };
        let exchange = Exchange {
            version,
            head_only,
            // Decided after the answer: a stop meanwhile closes the connection.
            keep_alive: head.keep_alive && !unread_body && !self.stopping.is_cancelled(),
            send_timeout: self.timeouts.send,
        };
        let keep_alive = match reply {
            Reply::Response(response) => response::send(&self.stream, response, exchange).await?,
            Reply::Prepared(prepared) => response::send_prepared(&self.stream, prepared, exchange).await?,
        };
        if keep_alive {
            Ok(None)
        } else if unread_body || !self.unread.is_empty() {
            Ok(Some(End::Linger))
        } else {
            Ok(Some(End::Close))
        }
    }

    /// Answers a head the app never sees (malformed, too large, too slow)
    /// with its bare status, as HTTP servers do; a body beyond the budget
    /// with the budget's answer, which says when to try again.
    async fn refuse(&mut self, refusal: Refusal) {
        tracing::debug!(peer = %self.peer, "request refused: {refusal}");
        let response = match refusal {
            Refusal::Body(BadBody::OverBudget) => self.budget.refusal(),
            _ => HttpResponse::new(StatusCode::from_u16(refusal.status()).expect("a valid status")),
        };
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

/// Whether an HTTP/1.1 client asks for `100 Continue` before it sends
/// the body (RFC 9110 §10.1.1: the only expectation defined).
fn expects_continue(head: &Head) -> bool {
    let request = head.request.head();
    request.version == actix_web::http::Version::HTTP_11
        && request
            .headers
            .get(header::EXPECT)
            .is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// The payload the app reads: the body, read whole.
fn payload(body: Bytes) -> actix_http::Payload {
    let (mut sender, payload) = actix_http::h1::Payload::create(false);
    sender.feed_data(body);
    sender.feed_eof();
    actix_http::Payload::from(payload)
}

/// What answers a request: the app's response (or the server's own), or
/// one the gate prepared.
enum Reply<B> {
    Response(HttpResponse<EitherBody<B>>),
    Prepared(Prepared),
}

/// A head refused before the app sees it.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    #[error(transparent)]
    Bad(BadHead),
    #[error("request head not received within the client timeout")]
    Timeout,
    #[error(transparent)]
    Body(BadBody),
    #[error("request body not received within the client timeout of its head")]
    SlowBody,
}

impl Refusal {
    fn status(&self) -> u16 {
        match self {
            Self::Bad(bad) => bad.status(),
            Self::Body(bad) => bad.status(),
            Self::Timeout | Self::SlowBody => 408,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use actix_web::{App, HttpResponse, web};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    const TIMEOUTS: Timeouts = Timeouts {
        keep_alive: Duration::from_secs(75),
        client_request: Duration::from_secs(5),
        send: Duration::from_secs(30),
    };

    fn options() -> Options {
        Options {
            timeouts: TIMEOUTS,
            gate: crate::Gate::taking(64),
            ..Options::new("test")
        }
    }

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
            &options(),
            CancellationToken::new(),
            Instant::now(),
            None,
        );
        let serving = connection.serve();
        let size = std::mem::size_of_val(&serving);
        assert!(size <= 1024, "{size} bytes");
        drop(client);
    }

    /// Serves one connection on tokio's paused clock (which moves to the
    /// next timer whenever nothing else can run, so that timeouts are
    /// exact) while `client` talks to it; returns what the client returns.
    async fn on_paused_clock<T>(client: impl AsyncFnOnce(TcpStream, Instant) -> T) -> T {
        on_paused_clock_with(options(), client).await
    }

    /// [`on_paused_clock`] for a server run with `options`. Besides `/` and
    /// `/echo`, the app answers `POST /held` with what the server's budget
    /// held while the handler had the body and after it dropped it.
    async fn on_paused_clock_with<T>(
        options: Options,
        client: impl AsyncFnOnce(TcpStream, Instant) -> T,
    ) -> T {
        let budget = web::Data::new(options.body_budget.clone());
        let app = actix_web::test::init_service(
            App::new()
                .app_data(budget)
                .route("/", web::get().to(HttpResponse::Ok))
                .route(
                    "/echo",
                    web::post().to(|body: web::Bytes| async move { HttpResponse::Ok().body(body) }),
                )
                .route("/held", web::post().to(held)),
        )
        .await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (client_stream, accepted) = tokio::join!(
            TcpStream::connect(listener.local_addr().unwrap()),
            listener.accept()
        );
        let (stream, peer) = accepted.unwrap();
        let accepted_at = Instant::now();
        let connection = Connection::new(
            stream,
            peer,
            Rc::new(app),
            &options,
            CancellationToken::new(),
            accepted_at,
            None,
        );
        let ((), answer) = tokio::join!(connection.serve(), client(client_stream.unwrap(), accepted_at));
        answer
    }

    /// Takes the body as the layer hands it over (not copied, as the
    /// `Bytes` extractor would): `"<held with it> <held after>"`.
    async fn held(mut payload: web::Payload, budget: web::Data<BodyBudget>) -> HttpResponse {
        use futures::StreamExt as _;
        let body = payload.next().await.unwrap().unwrap();
        let with_body = budget.held();
        drop(body);
        HttpResponse::Ok().body(format!("{with_body} {}", budget.held()))
    }

    /// Reads one bodiless answer's status line, or `None` at the end of the stream.
    async fn status(stream: &mut TcpStream) -> Option<String> {
        let mut read = Vec::new();
        let mut byte = [0];
        while !read.ends_with(b"\r\n\r\n") {
            if stream.read(&mut byte).await.ok()? == 0 {
                return None;
            }
            read.push(byte[0]);
        }
        let text = String::from_utf8(read).unwrap();
        Some(text.lines().next().unwrap().to_owned())
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_head_is_due_within_the_client_timeout_of_the_accept() {
        let (status, after) = on_paused_clock(async |mut client, accepted_at| {
            tokio::time::sleep(Duration::from_secs(4)).await;
            client
                .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .await
                .unwrap();
            (status(&mut client).await, accepted_at.elapsed())
        })
        .await;
        assert_eq!(status.as_deref(), Some("HTTP/1.1 408 Request Timeout"));
        assert_eq!(after.as_secs(), TIMEOUTS.client_request.as_secs(), "{after:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_later_head_is_due_within_the_client_timeout_of_its_first_byte() {
        let (first, second, after) = on_paused_clock(async |mut client, _| {
            client
                .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                .await
                .unwrap();
            let first = status(&mut client).await;
            tokio::time::sleep(Duration::from_secs(60)).await;
            client
                .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .await
                .unwrap();
            let started = Instant::now();
            (first, status(&mut client).await, started.elapsed())
        })
        .await;
        assert_eq!(first.as_deref(), Some("HTTP/1.1 200 OK"));
        assert_eq!(second.as_deref(), Some("HTTP/1.1 408 Request Timeout"));
        assert_eq!(after.as_secs(), TIMEOUTS.client_request.as_secs(), "{after:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_connection_closes_after_the_keep_alive_timeout() {
        let (answered, closed_after) = on_paused_clock(async |mut client, _| {
            client
                .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                .await
                .unwrap();
            let answered = status(&mut client).await;
            let idle_since = Instant::now();
            assert_eq!(status(&mut client).await, None);
            (answered, idle_since.elapsed())
        })
        .await;
        assert_eq!(answered.as_deref(), Some("HTTP/1.1 200 OK"));
        assert_eq!(
            closed_after.as_secs(),
            TIMEOUTS.keep_alive.as_secs(),
            "{closed_after:?}"
        );
    }

    /// Reads one answer with a Content-Length body: its status line and body.
    async fn answer_with_body(stream: &mut TcpStream) -> (String, String) {
        let mut read = Vec::new();
        let mut byte = [0];
        while !read.ends_with(b"\r\n\r\n") {
            assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "{read:?}");
            read.push(byte[0]);
        }
        let head = String::from_utf8(read).unwrap();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length: "))
            .map_or(0, |length| length.parse().unwrap());
        let mut body = vec![0; length];
        stream.read_exact(&mut body).await.unwrap();
        (
            head.lines().next().unwrap().to_owned(),
            String::from_utf8(body).unwrap(),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_reaches_the_app_and_the_connection_goes_on() {
        let answers = on_paused_clock(async |mut client, _| {
            client
                .write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhel")
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_secs(1)).await;
            client
                .write_all(
                    b"lo\
                    POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n\
                    POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
                )
                .await
                .unwrap();
            let first = answer_with_body(&mut client).await;
            let second = answer_with_body(&mut client).await;
            let interim = answer_with_body(&mut client).await;
            client.write_all(b"ok").await.unwrap();
            let third = answer_with_body(&mut client).await;
            client.shutdown().await.unwrap();
            [first, second, interim, third]
        })
        .await;
        let ok = |body: &str| ("HTTP/1.1 200 OK".to_owned(), body.to_owned());
        assert_eq!(
            answers,
            [
                ok("hello"),
                ok("abc"),
                ("HTTP/1.1 100 Continue".to_owned(), String::new()),
                ok("ok")
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_is_due_within_the_client_timeout_of_its_head() {
        let (status, after) = on_paused_clock(async |mut client, _| {
            client
                .write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhe")
                .await
                .unwrap();
            let sent = Instant::now();
            (status(&mut client).await, sent.elapsed())
        })
        .await;
        assert_eq!(status.as_deref(), Some("HTTP/1.1 408 Request Timeout"));
        assert_eq!(after.as_secs(), TIMEOUTS.client_request.as_secs(), "{after:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_beyond_the_bound_is_refused_unread() {
        let status = on_paused_clock(async |mut client, _| {
            client
                .write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 65\r\n\r\n")
                .await
                .unwrap();
            status(&mut client).await
        })
        .await;
        assert_eq!(status.as_deref(), Some("HTTP/1.1 413 Payload Too Large"));
    }

    /// Whether the server closed the connection, once what it sent is read.
    async fn closed(stream: &mut TcpStream) -> bool {
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).await.is_ok() && rest.is_empty()
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_the_gate_does_not_take_is_refused_before_it_is_read() {
        let options = Options {
            timeouts: TIMEOUTS,
            ..Options::new("test")
        };
        let refused = |request: &'static str| {
            let options = options.clone();
            async move {
                on_paused_clock_with(options, async |mut client, _| {
                    // Only the head: a server that read the body would wait
                    // for it, and answer 408 after the client timeout.
                    client.write_all(request.as_bytes()).await.unwrap();
                    let status = status(&mut client).await;
                    (status, closed(&mut client).await)
                })
                .await
            }
        };
        let too_large = Some("HTTP/1.1 413 Payload Too Large".to_owned());
        assert_eq!(
            refused("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n").await,
            (too_large.clone(), true)
        );
        assert_eq!(
            refused("GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n").await,
            (too_large, true)
        );
        let answers = on_paused_clock_with(options, async |mut client, _| {
            client
                .write_all(
                    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n\
                      GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n\r\n\
                      GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                )
                .await
                .unwrap();
            let mut answers = Vec::new();
            for _ in 0..3 {
                answers.push(status(&mut client).await);
            }
            answers
        })
        .await;
        assert_eq!(answers, vec![Some("HTTP/1.1 200 OK".to_owned()); 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_the_gate_refuses_gets_the_gate_s_answer_and_its_body_is_never_read() {
        let options = Options {
            gate: crate::Gate::new(|head, _| {
                if head.uri.path() == "/echo" {
                    Admission::Answer(HttpResponse::Unauthorized().finish())
                } else {
                    Admission::Take(64)
                }
            }),
            ..options()
        };
        let (with_body, closed_after) = on_paused_clock_with(options.clone(), async |mut client, _| {
            client
                .write_all(
                    b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 50\r\n\r\n",
                )
                .await
                .unwrap();
            (status(&mut client).await, closed(&mut client).await)
        })
        .await;
        assert_eq!(
            with_body.as_deref(),
            Some("HTTP/1.1 401 Unauthorized"),
            "no 100 first"
        );
        assert!(closed_after, "the body unread, the connection cannot go on");
        let without_body = on_paused_clock_with(options, async |mut client, _| {
            client
                .write_all(b"GET /echo HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
                .await
                .unwrap();
            (status(&mut client).await, status(&mut client).await)
        })
        .await;
        assert_eq!(
            without_body,
            (
                Some("HTTP/1.1 401 Unauthorized".to_owned()),
                Some("HTTP/1.1 200 OK".to_owned())
            )
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_beyond_the_budget_is_refused_unread_and_one_within_holds_it_until_dropped() {
        let budget = BodyBudget::new(
            body::READING_BYTES + 10,
            "application/json",
            br#"{"kind":"busy"}"#,
        );
        let options = Options {
            body_budget: budget.clone(),
            ..options()
        };
        let mut elsewhere = budget.reservation();
        assert!(elsewhere.grow(body::READING_BYTES));
        let (refusal, closed_after) = on_paused_clock_with(options.clone(), async |mut client, _| {
            client
                .write_all(b"POST /held HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
                .await
                .unwrap();
            let refusal = answer_with_body(&mut client).await;
            (refusal, closed(&mut client).await)
        })
        .await;
        assert_eq!(
            refusal,
            (
                "HTTP/1.1 503 Service Unavailable".to_owned(),
                r#"{"kind":"busy"}"#.to_owned()
            )
        );
        assert!(closed_after);
        assert_eq!(budget.held(), body::READING_BYTES, "the refusal held nothing");

        drop(elsewhere);
        let held = on_paused_clock_with(options.clone(), async |mut client, _| {
            client
                .write_all(b"POST /held HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789")
                .await
                .unwrap();
            answer_with_body(&mut client).await
        })
        .await;
        assert_eq!(held, ("HTTP/1.1 200 OK".to_owned(), "10 0".to_owned()));
        let too_large = on_paused_clock_with(options, async |mut client, _| {
            client
                .write_all(b"POST /held HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n")
                .await
                .unwrap();
            status(&mut client).await
        })
        .await;
        assert_eq!(
            too_large.as_deref(),
            Some("HTTP/1.1 413 Payload Too Large"),
            "a body no whole budget covers"
        );
        assert_eq!(budget.held(), 0);
    }
}
