//! A request head, as a client sends it: our connection layer
//! (`http1_server::request::parse`) and hyper's HTTP/1 server, fed the same
//! bytes, agree on it. Either both refuse the first request, or both accept
//! it and agree on its method, target, version, fields, where its body ends
//! (none, `Content-Length` bytes, chunked), what the body is (our
//! `http1_server::body::Decoder` against the bytes hyper's service read)
//! and whether the connection goes on; then the same again for the request
//! after it, wherever our decoder says the body ended. A server that takes
//! no body (the services' public ports) is held to the same bytes: it
//! takes exactly the bodies hyper reads empty, where they end, and refuses
//! every other with 413 before a byte of its content (from the
//! Content-Length, or the first chunk-size line). A difference
//! passes only when a table names it — [`DELIBERATE`] (we refuse what hyper
//! accepts, on purpose) and [`HYPER_DEVIATIONS`] (hyper does not take what
//! we accept, and the RFC is on our side or allows both), each entry naming
//! its rule — and only when the request shows the entry's reason: a new
//! kind of difference fails.
//!
//! hyper is driven over an in-memory stream that hands it the input, then
//! end of stream, on a current-thread runtime built once per thread; its
//! service records each request (method, target, version, fields, the body
//! length it announces, the body read whole) and answers 200. hyper
//! accepts a request when its service is called for it; an input our
//! parser finds incomplete is skipped.
#![no_main]

use std::cell::RefCell;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use http_body_util::{BodyExt as _, Empty};
use http1_server::Reservation;
use http1_server::body::{self, BadBody, Decoder, MAX_EXTENSION_BYTES, MAX_TRAILER_BYTES};
use http1_server::request::{self, BadHead, Body, MAX_HEAD_BYTES, MAX_HEADERS, MAX_REQUEST_LINE_BYTES};
use hyper::body::{Body as _, Bytes, Incoming};
use hyper::http::{HeaderMap, Method, Uri, Version, header};
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| check(input));

/// A difference one way: we refuse, with `refusal`, a request hyper
/// accepts.
struct Refusal {
    refusal: BadHead,
    /// Whether hyper's view of the request (and the bytes it starts at)
    /// shows the reason, so that a refusal for another reason that happens
    /// to carry the same message still fails.
    shows: fn(&Seen, &[u8]) -> bool,
}

/// Where we refuse what hyper accepts on purpose: a rule has us refuse it,
/// and hyper does not check it.
const DELIBERATE: &[Refusal] = &[
    // RFC 9110 §9.1: a method the server does not implement is 501; a token
    // with `#$%&'` names none the http crate actix-web uses (0.2) knows.
    Refusal {
        refusal: BadHead::NotImplemented("method"),
        shows: |seen, _| seen.method.as_str().bytes().any(|byte| b"#$%&'".contains(&byte)),
    },
    // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status
    // code to any HTTP/1.1 request message that lacks a Host header field".
    Refusal {
        refusal: BadHead::Malformed("no Host header"),
        shows: |seen, _| seen.version == Version::HTTP_11 && seen.hosts() == 0,
    },
    // RFC 9112 §3.2: "... and to any request message that contains more
    // than one Host header field line".
    Refusal {
        refusal: BadHead::Malformed("more than one Host header"),
        shows: |seen, _| seen.hosts() > 1,
    },
    // RFC 9112 §3.2: "... or a Host header field with an invalid field
    // value" (`Host = uri-host [ ":" port ]`, RFC 9110 §7.2).
    Refusal {
        refusal: BadHead::Malformed("invalid Host header"),
        shows: |seen, _| seen.hosts() == 1,
    },
    // RFC 9112 §6.3 ¶3: a request with both Transfer-Encoding and
    // Content-Length "ought to be handled as an error" (request smuggling);
    // hyper drops the Content-Length and reads the body as chunked.
    Refusal {
        refusal: BadHead::Malformed("both transfer-encoding and content-length"),
        shows: |seen, _| seen.is_chunked(),
    },
    // The same request (RFC 9112 §6.3 ¶3) when its Content-Length lines are
    // themselves invalid (§6.3 ¶5) or conflicting (RFC 9110 §8.6): we look
    // at Content-Length first; hyper skips every Content-Length line after a
    // Transfer-Encoding line without parsing it.
    Refusal {
        refusal: BadHead::Malformed("invalid content-length"),
        shows: |seen, _| seen.is_chunked(),
    },
    Refusal {
        refusal: BadHead::Malformed("conflicting content-length"),
        shows: |seen, _| seen.is_chunked(),
    },
    // RFC 9112 §3.2.4: "The asterisk-form of request-target is only used
    // for a server-wide OPTIONS request"; hyper takes `*` with any method.
    Refusal {
        refusal: BadHead::Malformed("asterisk-form request target with a method other than OPTIONS"),
        shows: |seen, _| seen.uri == "*" && seen.method != Method::OPTIONS,
    },
    // RFC 9112 §3.2.3: "The authority-form of request-target is only used
    // for CONNECT requests"; hyper takes `host:port` with any method.
    Refusal {
        refusal: BadHead::Malformed("request target neither origin-form nor absolute-form"),
        shows: |seen, _| {
            seen.method != Method::CONNECT
                && seen.uri.scheme().is_none()
                && seen.uri.authority().is_some()
                && seen.uri.path().is_empty()
        },
    },
    // RFC 9112 §3.2 and RFC 3986 §2: a request-target is ASCII (anything
    // else percent-encoded), and §3: "Recipients of an invalid
    // request-line SHOULD respond with either a 400 (Bad Request) error or
    // a 301 (Moved Permanently) redirect with the request-target properly
    // encoded". hyper's http crate (1.x) takes UTF-8 in a path or query;
    // ours (0.2) does not, in the origin-form or in the absolute-form.
    Refusal {
        refusal: BadHead::Malformed("invalid request target"),
        shows: |seen, _| !seen.uri.to_string().is_ascii(),
    },
    Refusal {
        refusal: BadHead::Malformed("request target neither origin-form nor absolute-form"),
        shows: |seen, _| !seen.uri.to_string().is_ascii(),
    },
    // RFC 9110 §9.3.6 and §15.6.2: CONNECT asks for a tunnel, which only a
    // proxy implements: 501.
    Refusal {
        refusal: BadHead::NotImplemented("CONNECT (this server is not a proxy)"),
        shows: |seen, _| seen.method == Method::CONNECT,
    },
    // RFC 9112 §3: "A server that receives a request-target longer than any
    // URI it wishes to parse MUST respond with a 414 (URI Too Long)": ours is
    // 8 KiB, hyper's 64 KiB.
    Refusal {
        refusal: BadHead::TargetTooLong,
        shows: |_, bytes| {
            // Empty lines before the request line do not count (RFC 9112 §2.2).
            let start = bytes
                .iter()
                .take_while(|&&byte| byte == b'\r' || byte == b'\n')
                .count();
            let line = &bytes[start..];
            !line[..line.len().min(MAX_REQUEST_LINE_BYTES + 1)].contains(&b'\n')
        },
    },
    // RFC 6585 §5: 431 when the header fields are too large: ours are 96
    // fields and 32 KiB, hyper's 100 fields and about 400 KiB.
    Refusal {
        refusal: BadHead::TooLarge,
        shows: |_, bytes| header_lines(bytes) > MAX_HEADERS || bytes.len() >= MAX_HEAD_BYTES,
    },
    // RFC 9112 §6.1: "A server that receives a request message with a
    // transfer coding it does not understand SHOULD respond with 501 (Not
    // Implemented)"; hyper reads the chunked body and leaves the codings
    // before it to the service.
    Refusal {
        refusal: BadHead::NotImplemented("transfer coding"),
        shows: |seen, _| seen.is_chunked(),
    },
    // RFC 9112 §6.1 and §7: Transfer-Encoding is a list of transfer-coding,
    // each a token (with parameters): a line that is not text cannot be one,
    // and the framing is not determined (§6.3 ¶4: 400). hyper reads the
    // last line only, and takes chunked there.
    Refusal {
        refusal: BadHead::Malformed("invalid transfer-encoding"),
        shows: |seen, _| seen.is_chunked(),
    },
    // RFC 9112 §7.1: "A sender MUST NOT apply the chunked transfer coding
    // more than once to a message body"; hyper decodes one layer of chunked.
    Refusal {
        refusal: BadHead::Malformed("chunked applied more than once"),
        shows: |seen, _| seen.is_chunked(),
    },
];

/// A difference in a body: we refuse, with `refusal`, a body hyper reads
/// whole.
struct BodyRefusal {
    refusal: BadBody,
    /// Whether the bytes after the head show the reason.
    shows: fn(&[u8]) -> bool,
}

/// Where we refuse a body hyper reads, on purpose.
const BODY_DELIBERATE: &[BodyRefusal] = &[
    // RFC 9112 §7.1: every line of the chunked coding ends with CRLF; §2.2
    // lets a recipient take a bare LF as a line end, which inside a body
    // lets two parsers disagree on where it ends. hyper takes a bare LF
    // inside a trailer section (httparse reads it as a line end).
    BodyRefusal {
        refusal: BadBody::Malformed("a chunk line ended by a bare LF"),
        shows: |bytes| {
            bytes.first() == Some(&b'\n')
                || bytes
                    .windows(2)
                    .any(|pair| pair[1] == b'\n' && pair[0] != b'\r')
        },
    },
    // Our bound on one chunk-size line (its extensions, and whitespace or
    // leading zeros hyper reads without end).
    BodyRefusal {
        refusal: BadBody::Malformed("chunk line too long"),
        shows: |bytes| bytes.len() > MAX_EXTENSION_BYTES,
    },
    // RFC 6585 §5 for trailer fields: ours are 96 lines and 16 KiB (hyper's
    // 100 and 16 KiB, counted a little differently).
    BodyRefusal {
        refusal: BadBody::TrailersTooLarge,
        shows: |bytes| {
            bytes.len() >= MAX_TRAILER_BYTES - 8
                || bytes.windows(2).filter(|pair| pair == b"\r\n").count() > MAX_HEADERS
        },
    },
];

/// The bound on bodies here: beyond what a fuzzed input holds, so a body
/// refused as too large is one hyper cannot read whole either.
const MAX_BODY_BYTES: usize = 1 << 20;

/// A difference the other way: hyper does not take a request we accept.
struct Acceptance {
    /// hyper's error, or `None`: hyper closed the connection after the
    /// request, where we keep it open.
    hyper: Option<&'static str>,
    /// Whether our head of the request shows the reason.
    shows: fn(&request::Head) -> bool,
}

/// Where hyper does not take what we accept, and the RFC is on our side
/// or allows both.
const HYPER_DEVIATIONS: &[Acceptance] = &[
    // RFC 9110 §5.6.1: "a recipient MUST parse and ignore a reasonable
    // number of empty list elements"; hyper looks at the last element of
    // the last Transfer-Encoding line only, so `chunked,` (or a last line
    // `,`) is not chunked to it: 400.
    Acceptance {
        hyper: Some("invalid transfer-encoding parsed"),
        shows: |head| head.body == Body::Chunked && last_coding_is_empty(head),
    },
    // RFC 9110 §8.6: "Any Content-Length field value greater than or equal
    // to zero is valid"; hyper cannot represent 2^64 - 2 and 2^64 - 1 (it
    // keeps them for chunked and close-delimited) and answers 431, a
    // defensible limit of its own. Our head takes any length; the body's
    // bound refuses it (413) before a byte of it is read.
    Acceptance {
        hyper: Some("message head is too large"),
        shows: |head| matches!(head.body, Body::Length(length) if length >= u64::MAX - 1),
    },
];

/// Where our peer is, as far as the parser cares.
const PEER: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 40000);

fn check(input: &[u8]) {
    let mut ours = request::parse(input, PEER);
    if matches!(ours, Ok(None)) {
        return;
    }
    let hyper = Hyper::serve(input);
    let known = |hyper_did: Option<&str>, head: &request::Head| {
        HYPER_DEVIATIONS
            .iter()
            .any(|entry| entry.hyper == hyper_did && (entry.shows)(head))
    };
    let mut at = 0;
    for index in 0.. {
        let bytes = &input[at..];
        let seen = hyper.requests.get(index);
        let head = match (ours, seen) {
            // Both refuse (hyper's error ended the connection), or both
            // wait for more (hyper's error is the end of stream).
            (Err(_), None) | (Ok(None), None) => return,
            (Err(bad), Some(seen)) => {
                if DELIBERATE
                    .iter()
                    .any(|entry| entry.refusal == bad && (entry.shows)(seen, bytes))
                {
                    return;
                }
                hyper.fail(input, at, &format!("we refuse ({bad:?}), hyper accepts"));
            }
            (Ok(None), Some(_)) => {
                hyper.fail(input, at, "hyper takes a whole request where we wait for more")
            }
            (Ok(Some(head)), None) => {
                if let Err(error) = &hyper.end
                    && known(Some(error), &head)
                {
                    return;
                }
                // A body we refuse (too large: before reading it) ends our
                // connection as hyper's error ends its.
                if let Err(BadBody::TooLarge(_)) = Decoder::new(head.body, MAX_BODY_BYTES, Reservation::unbudgeted()) {
                    return;
                }
                hyper.fail(
                    input,
                    at,
                    &format!(
                        "we accept ({} {}, {:?}), hyper refuses",
                        head.request.head().method,
                        head.request.head().uri,
                        head.body,
                    ),
                );
            }
            (Ok(Some(head)), Some(seen)) => match same_request(&head, seen, &bytes[head.len..]) {
                Ok(Some(taken)) => (head, taken),
                Ok(None) => return,
                Err(what) => hyper.fail(input, at, &what),
            },
        };
        let (head, taken) = head;
        // Where the next request starts: where our decoder says the body ends.
        let next = head.len + taken;
        let hyper_went_on = hyper.requests.len() > index + 1;
        if !head.keep_alive {
            if hyper_went_on {
                hyper.fail(
                    input,
                    at,
                    "keep-alive: we close after the request, hyper takes another",
                );
            }
            return;
        }
        at += next;
        let rest = &input[at..];
        // hyper's connection ended without an error, before the bytes that
        // follow (an empty line or two it ends quietly on): it closed.
        if !hyper_went_on && hyper.end.is_ok() && rest.iter().any(|&byte| byte != b'\r' && byte != b'\n') {
            if known(None, &head) {
                return;
            }
            hyper.fail(
                input,
                at - next,
                "keep-alive: we keep the connection open after the request, hyper closes it",
            );
        }
        if rest.is_empty() {
            return;
        }
        ours = request::parse(rest, PEER);
    }
}

/// Whether the last Transfer-Encoding line ends with an empty list element
/// (or is one).
fn last_coding_is_empty(head: &request::Head) -> bool {
    head.request
        .head()
        .headers
        .get_all("transfer-encoding")
        .last()
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.rsplit(',').next())
        .is_some_and(|coding| coding.trim().is_empty())
}

/// What our decoder makes of the body at the start of `after`.
#[derive(Debug)]
enum OurBody {
    /// Read whole, after taking this many bytes.
    Whole(Bytes, usize),
    /// The input ends within it.
    Incomplete,
    Refused(BadBody),
}

fn our_body(framing: Body, after: &[u8], max_bytes: usize) -> OurBody {
    let mut decoder = match Decoder::new(framing, max_bytes, Reservation::unbudgeted()) {
        Ok(decoder) => decoder,
        Err(refused) => return OurBody::Refused(refused),
    };
    match decoder.decode(after) {
        Ok(body::Progress { taken, done: true }) => OurBody::Whole(decoder.into_body(), taken),
        Ok(_) => OurBody::Incomplete,
        Err(refused) => OurBody::Refused(refused),
    }
}

/// Whether our accepted `head` and hyper's are the same request, `after`
/// being the bytes that follow the head: the bytes our body took when they
/// are, `None` when both refuse the body (or we do, deliberately).
fn same_request(head: &request::Head, seen: &Seen, after: &[u8]) -> Result<Option<usize>, String> {
    let ours = head.request.head();
    if ours.method.as_str() != seen.method.as_str() {
        return Err(format!("method: ours {}, hyper's {}", ours.method, seen.method));
    }
    let path = |uri: Option<&str>| uri.unwrap_or_default().to_owned();
    let (our_target, hyper_target) = (
        path(ours.uri.path_and_query().map(|path| path.as_str())),
        path(seen.uri.path_and_query().map(|path| path.as_str())),
    );
    if our_target != hyper_target {
        return Err(format!(
            "path and query: ours {our_target:?}, hyper's {hyper_target:?}"
        ));
    }
    // Two versions of the http crate (actix-web's 0.2, hyper's 1.x): their
    // versions compare as text.
    let our_version = format!("{:?}", ours.version);
    if our_version != format!("{:?}", seen.version) {
        return Err(format!("version: ours {our_version}, hyper's {:?}", seen.version));
    }
    // hyper keeps one of several (equal) Content-Length lines.
    let lengths = ours.headers.get_all("content-length").count();
    let fields = ours.headers.len() - lengths.saturating_sub(1);
    if fields != seen.headers.len() {
        return Err(format!(
            "field lines: ours {} ({lengths} Content-Length), hyper's {}",
            ours.headers.len(),
            seen.headers.len()
        ));
    }
    let read = seen
        .body
        .as_ref()
        .ok_or("hyper's service never finished reading the body")?;
    match head.body {
        Body::None if seen.announced != Some(0) || !read.as_ref().is_ok_and(Bytes::is_empty) => {
            return Err(format!(
                "body: ours none, hyper's announced {:?}, read {read:?}",
                seen.announced
            ));
        }
        Body::None => return Ok(Some(0)),
        Body::Length(length) if seen.announced != Some(length) => {
            return Err(format!(
                "body: ours {length} bytes, hyper's announced {:?}",
                seen.announced
            ));
        }
        Body::Chunked if seen.announced.is_some() => {
            return Err(format!(
                "body: ours chunked, hyper's announced {:?}",
                seen.announced
            ));
        }
        Body::Length(_) | Body::Chunked => {}
    }
    let taken = match (our_body(head.body, after, MAX_BODY_BYTES), read) {
        (OurBody::Whole(ours, taken), Ok(read)) if ours == read => Some(taken),
        (OurBody::Incomplete | OurBody::Refused(_), Err(_)) => None,
        (OurBody::Refused(refused), Ok(_))
            if BODY_DELIBERATE
                .iter()
                .any(|entry| entry.refusal == refused && (entry.shows)(after)) =>
        {
            None
        }
        (ours, read) => return Err(format!("body ({:?}): ours {ours:?}, hyper read {read:?}", head.body)),
    };
    without_bodies(head.body, after, read)?;
    Ok(taken)
}

/// What a server that takes no body does with the body at the start of
/// `after`, against what hyper's service read of it: an empty one taken
/// whole, where the other decoder ends it; any other refused with 413
/// before a byte of its content, from its Content-Length or first line.
fn without_bodies(framing: Body, after: &[u8], read: &Result<Bytes, String>) -> Result<(), String> {
    let refused_unread = |verdict: &OurBody| matches!(verdict, OurBody::Refused(BadBody::TooLarge(0)));
    match (our_body(framing, after, MAX_BODY_BYTES), read) {
        (OurBody::Whole(body, taken), _) if body.is_empty() => match our_body(framing, after, 0) {
            OurBody::Whole(none, taken_too) if none.is_empty() && taken_too == taken => Ok(()),
            other => Err(format!("an empty body, taking none: {other:?}")),
        },
        (OurBody::Whole(..), Ok(read)) if !read.is_empty() => {
            let first_line = match framing {
                Body::Chunked => after
                    .windows(2)
                    .position(|pair| pair == b"\r\n")
                    .map_or(after, |end| &after[..end + 2]),
                _ => &[],
            };
            match our_body(framing, first_line, 0) {
                verdict if refused_unread(&verdict) => Ok(()),
                other => Err(format!("a body of {} bytes, taking none: {other:?}", read.len())),
            }
        }
        // Never taking what the bounded decoder refuses or waits for.
        (OurBody::Whole(..), _) => Ok(()),
        (bounded, _) => match our_body(framing, after, 0) {
            OurBody::Whole(..) => Err(format!("taking none, a body the bounded decoder finds {bounded:?}")),
            _ => Ok(()),
        },
    }
}

/// The number of field lines of the head at the start of `bytes`, up to one
/// more than we allow.
fn header_lines(bytes: &[u8]) -> usize {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS + 1];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(bytes) {
        Ok(_) => request.headers.len(),
        Err(httparse::Error::TooManyHeaders) => MAX_HEADERS + 1,
        Err(_) => 0,
    }
}

/// A request hyper's service got.
#[derive(Debug)]
struct Seen {
    method: Method,
    uri: Uri,
    version: Version,
    headers: HeaderMap,
    /// The body's exact length as hyper announces it (`None`: chunked).
    announced: Option<u64>,
    /// The body, read whole; `None` until it is.
    body: Option<Result<Bytes, String>>,
}

impl Seen {
    fn hosts(&self) -> usize {
        self.headers.get_all(header::HOST).iter().count()
    }

    fn is_chunked(&self) -> bool {
        self.announced.is_none() && self.headers.contains_key(header::TRANSFER_ENCODING)
    }
}

/// What hyper made of an input.
struct Hyper {
    requests: Vec<Seen>,
    /// How the connection ended.
    end: Result<(), String>,
}

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
}

impl Hyper {
    fn fail(&self, input: &[u8], at: usize, what: &str) -> ! {
        panic!(
            "{what}\ninput: b\"{}\"\nrequest at byte {at}\nhyper: {} request(s) {:#?}, then {:?}",
            input.escape_ascii(),
            self.requests.len(),
            self.requests,
            self.end,
        )
    }

    fn serve(input: &[u8]) -> Self {
        let requests = Rc::new(RefCell::new(Vec::new()));
        let log = Rc::clone(&requests);
        let service = service_fn(move |request: Request<Incoming>| {
            let log = Rc::clone(&log);
            let announced = request.body().size_hint().exact();
            let (parts, body) = request.into_parts();
            let index = {
                let mut log = log.borrow_mut();
                log.push(Seen {
                    method: parts.method,
                    uri: parts.uri,
                    version: parts.version,
                    headers: parts.headers,
                    announced,
                    body: None,
                });
                log.len() - 1
            };
            async move {
                let read = body
                    .collect()
                    .await
                    .map(|collected| collected.to_bytes())
                    .map_err(|error| error.to_string());
                log.borrow_mut()[index].body = Some(read);
                Ok::<_, Infallible>(Response::new(Empty::<Bytes>::new()))
            }
        });
        let connection = http1::Builder::new()
            // The end of the input is the client closing its side, not an
            // abort of the requests hyper has yet to answer.
            .half_close(true)
            .auto_date_header(false)
            .serve_connection(Wire { input, read: 0 }, service);
        let end = RUNTIME
            .with(|runtime| runtime.block_on(connection))
            .map_err(|error| error.to_string());
        let requests = std::mem::take(&mut *requests.borrow_mut());
        Self { requests, end }
    }
}

/// A connection whose client sends `input`, then closes its side; what the
/// server writes is dropped.
struct Wire<'a> {
    input: &'a [u8],
    read: usize,
}

impl Read for Wire<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let rest = &self.input[self.read..];
        let taken = rest.len().min(buf.remaining());
        buf.put_slice(&rest[..taken]);
        self.read += taken;
        Poll::Ready(Ok(()))
    }
}

impl Write for Wire<'_> {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
