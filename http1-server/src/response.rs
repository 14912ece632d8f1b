//! A response, from an actix-web app's answer (or a [`Prepared`] one) to
//! the socket: the head written once into a small buffer, the body's
//! shared bytes handed to the kernel beside it in one vectored write, never
//! copied into a per-connection buffer.

use std::cell::RefCell;
use std::io::{self, IoSlice};
use std::time::{Duration, SystemTime};

use actix_web::HttpResponse;
use actix_web::body::{BodySize, MessageBody};
use actix_web::dev::ResponseHead;
use actix_web::http::header::{CONNECTION, CONTENT_LENGTH, DATE, HeaderValue, TRANSFER_ENCODING, VARY};
use actix_web::http::{StatusCode, Version};
use bytes::Bytes;
use tokio::net::TcpStream;

/// What the exchange settled before the response is written.
#[derive(Debug, Clone, Copy)]
pub struct Exchange {
    pub version: Version,
    /// The request was HEAD: the head says what a GET would get, no body follows.
    pub head_only: bool,
    /// The connection stays open after this response, if its framing allows.
    pub keep_alive: bool,
    /// How long a write may wait for the client to take bytes.
    pub send_timeout: Duration,
}

/// An answer made whole before the request came but for its framing: its
/// status, its header fields encoded (`name: value\r\n` lines, without
/// `Vary`, kept apart for the server's layers to extend, and without
/// framing, `Connection` or `Date`, which the server adds) and its payload.
/// Written without an actix-web response: no header map is built, cloned
/// or walked for it.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub status: StatusCode,
    pub fields: Bytes,
    pub vary: Option<HeaderValue>,
    pub payload: Payload,
}

/// What follows a [`Prepared`] answer's head.
#[derive(Debug, Clone)]
pub enum Payload {
    /// No body (a 304).
    Empty,
    /// These bytes (to a HEAD, their length only).
    Bytes(Bytes),
    /// A body of this length that is not at hand: only a HEAD may be
    /// answered so (a GET's answer fails, and its connection closes).
    Announced(u64),
}

/// Writes `prepared`; `Ok(true)` when the connection may serve another
/// request.
pub async fn send_prepared(stream: &TcpStream, prepared: Prepared, exchange: Exchange) -> io::Result<bool> {
    let size = match &prepared.payload {
        Payload::Empty => BodySize::None,
        Payload::Bytes(bytes) => BodySize::Sized(bytes.len() as u64),
        Payload::Announced(length) => BodySize::Sized(*length),
    };
    let framing = framing(prepared.status, size, exchange.version);
    let keep_alive = exchange.keep_alive && framing != Framing::UntilClose;
    let mut encoded = Vec::with_capacity(256 + prepared.fields.len());
    encode_status_line(&mut encoded, exchange.version, prepared.status);
    encoded.extend_from_slice(&prepared.fields);
    if let Some(vary) = &prepared.vary {
        encode_field(&mut encoded, VARY.as_str(), vary);
    }
    encode_end(&mut encoded, exchange.version, framing, keep_alive, false);
    match prepared.payload {
        Payload::Bytes(bytes) if !exchange.head_only && framing != Framing::Empty => {
            write_body_part(stream, &encoded, &bytes, framing, exchange.send_timeout).await?;
        }
        Payload::Announced(_) if !exchange.head_only => {
            return Err(io::Error::other(
                "a prepared answer to a GET announced a body it does not hold",
            ));
        }
        _ => write_all(stream, &mut [IoSlice::new(&encoded)], exchange.send_timeout).await?,
    }
    Ok(keep_alive)
}

/// How the body's end is known to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// No body (1xx, 204, 304, or the app sent none).
    Empty,
    Length(u64),
    Chunked,
    /// HTTP/1.0 without a length: the body ends when the connection closes.
    UntilClose,
}

/// Writes `response`; `Ok(true)` when the connection may serve another request.
pub async fn send<B: MessageBody>(
    stream: &TcpStream,
    response: HttpResponse<B>,
    exchange: Exchange,
) -> io::Result<bool> {
    let (head, body) = response.into_parts();
    let head = head.head();
    let framing = framing(head.status, body.size(), exchange.version);
    let keep_alive = exchange.keep_alive && head.keep_alive() && framing != Framing::UntilClose;
    let mut encoded = Vec::with_capacity(256 + 32 * head.headers.len());
    encode_head(&mut encoded, head, exchange.version, framing, keep_alive);
    if exchange.head_only || framing == Framing::Empty {
        write_all(stream, &mut [IoSlice::new(&encoded)], exchange.send_timeout).await?;
        return Ok(keep_alive);
    }
    match body.try_into_bytes() {
        Ok(bytes) => {
            write_body_part(stream, &encoded, &bytes, framing, exchange.send_timeout).await?;
            finish(stream, framing, exchange.send_timeout).await?;
        }
        Err(body) => stream_body(stream, encoded, body, framing, exchange.send_timeout).await?,
    }
    Ok(keep_alive)
}

fn framing(status: StatusCode, size: BodySize, version: Version) -> Framing {
    if status.is_informational() || status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED {
        return Framing::Empty;
    }
    match size {
        BodySize::None => Framing::Empty,
        BodySize::Sized(length) => Framing::Length(length),
        BodySize::Stream if version == Version::HTTP_10 => Framing::UntilClose,
        BodySize::Stream => Framing::Chunked,
    }
}

/// The status line and headers: the app's, then framing, connection and date.
fn encode_head(out: &mut Vec<u8>, head: &ResponseHead, version: Version, framing: Framing, keep_alive: bool) {
    // Into the buffer directly, without core::fmt: a response costs this
    // one allocation.
    out.extend_from_slice(http_version(version).as_bytes());
    for part in [" ", head.status.as_str(), " ", head.reason(), "\r\n"] {
        out.extend_from_slice(part.as_bytes());
    }
    let mut has_date = false;
    for (name, value) in head.headers.iter() {
        if name == CONTENT_LENGTH || name == TRANSFER_ENCODING || name == CONNECTION {
            continue;
        }
        has_date |= name == DATE;
        encode_field(out, name.as_str(), value);
    }
    encode_end(out, version, framing, keep_alive, has_date);
}

/// A [`Prepared`] answer's status line, its reason the status's own.
fn encode_status_line(out: &mut Vec<u8>, version: Version, status: StatusCode) {
    out.extend_from_slice(http_version(version).as_bytes());
    let reason = status.canonical_reason().unwrap_or("<unknown status code>");
    for part in [" ", status.as_str(), " ", reason, "\r\n"] {
        out.extend_from_slice(part.as_bytes());
    }
}

fn http_version(version: Version) -> &'static str {
    if version == Version::HTTP_10 {
        "HTTP/1.0"
    } else {
        "HTTP/1.1"
    }
}

/// One `name: value` line.
pub(crate) fn encode_field(out: &mut Vec<u8>, name: &str, value: &HeaderValue) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// What ends every head: framing, connection and (unless the app gave
/// one) date, then the empty line.
fn encode_end(out: &mut Vec<u8>, version: Version, framing: Framing, keep_alive: bool, has_date: bool) {
    match framing {
        Framing::Length(length) => {
            out.extend_from_slice(b"content-length: ");
            out.extend_from_slice(itoa::Buffer::new().format(length).as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        Framing::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
        Framing::Empty | Framing::UntilClose => {}
    }
    match (keep_alive, version) {
        (false, _) => out.extend_from_slice(b"connection: close\r\n"),
        (true, Version::HTTP_10) => out.extend_from_slice(b"connection: keep-alive\r\n"),
        (true, _) => {}
    }
    if !has_date {
        out.extend_from_slice(b"date: ");
        with_date(|date| out.extend_from_slice(date.as_bytes()));
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// Sends a body chunk by chunk, the head with the first one.
async fn stream_body<B: MessageBody>(
    stream: &TcpStream,
    head: Vec<u8>,
    body: B,
    framing: Framing,
    send_timeout: Duration,
) -> io::Result<()> {
    let mut body = std::pin::pin!(body);
    let mut pending_head = Some(head);
    let mut sent = 0u64;
    while let Some(chunk) = std::future::poll_fn(|cx| body.as_mut().poll_next(cx)).await {
        let chunk = chunk.map_err(|error| {
            let error: Box<dyn std::error::Error> = error.into();
            io::Error::other(format!("response body failed: {error}"))
        })?;
        if chunk.is_empty() {
            continue;
        }
        sent += chunk.len() as u64;
        if let Framing::Length(length) = framing
            && sent > length
        {
            return Err(io::Error::other("response body longer than announced"));
        }
        let head = pending_head.take().unwrap_or_default();
        write_body_part(stream, &head, &chunk, framing, send_timeout).await?;
    }
    if let Some(head) = pending_head {
        write_all(stream, &mut [IoSlice::new(&head)], send_timeout).await?;
    }
    if let Framing::Length(length) = framing
        && sent != length
    {
        // The client would wait for bytes that never come: the connection
        // must end, which the caller does on error.
        return Err(io::Error::other("response body shorter than announced"));
    }
    finish(stream, framing, send_timeout).await
}

/// `before` (a head, or nothing) and one piece of the body, framed.
async fn write_body_part(
    stream: &TcpStream,
    before: &[u8],
    part: &Bytes,
    framing: Framing,
    send_timeout: Duration,
) -> io::Result<()> {
    if framing == Framing::Chunked {
        let size = format!("{:x}\r\n", part.len());
        let mut slices = [
            IoSlice::new(before),
            IoSlice::new(size.as_bytes()),
            IoSlice::new(part),
            IoSlice::new(b"\r\n"),
        ];
        return write_all(stream, &mut slices, send_timeout).await;
    }
    write_all(
        stream,
        &mut [IoSlice::new(before), IoSlice::new(part)],
        send_timeout,
    )
    .await
}

async fn finish(stream: &TcpStream, framing: Framing, send_timeout: Duration) -> io::Result<()> {
    if framing == Framing::Chunked {
        write_all(stream, &mut [IoSlice::new(b"0\r\n\r\n")], send_timeout).await?;
    }
    Ok(())
}

/// Writes every slice, waiting at most `send_timeout` each time the client
/// takes nothing (a client that stops reading is dropped, not waited for).
async fn write_all(
    stream: &TcpStream,
    mut slices: &mut [IoSlice<'_>],
    send_timeout: Duration,
) -> io::Result<()> {
    // Empty slices first (no head before a chunk) would make a write of 0.
    IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        match stream.try_write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => IoSlice::advance_slices(&mut slices, written),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                tokio::time::timeout(send_timeout, stream.writable())
                    .await
                    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "the client took no bytes"))??;
            }
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// The `Date` header's value, formatted once a second per thread.
fn with_date<T>(use_date: impl FnOnce(&str) -> T) -> T {
    thread_local! {
        static DATE: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    let now = SystemTime::now();
    let second = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|since| since.as_secs())
        .unwrap_or_default();
    DATE.with_borrow_mut(|(cached_second, date)| {
        if *cached_second != second {
            *date = httpdate::fmt_http_date(now);
            *cached_second = second;
        }
        use_date(date)
    })
}

#[cfg(test)]
mod tests {
    use actix_web::http::header;

    use super::*;

    fn encoded(response: &HttpResponse, version: Version, framing: Framing, keep_alive: bool) -> String {
        let mut out = Vec::new();
        encode_head(&mut out, response.head(), version, framing, keep_alive);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_head_carries_the_app_s_headers_then_framing_connection_and_date() {
        let response = HttpResponse::Ok()
            .insert_header((header::ETAG, "\"abc\""))
            .insert_header((header::CONTENT_LENGTH, "999"))
            .finish();
        let text = encoded(&response, Version::HTTP_11, Framing::Length(12), true);
        assert!(
            text.starts_with("HTTP/1.1 200 OK\r\netag: \"abc\"\r\ncontent-length: 12\r\ndate: "),
            "{text}"
        );
        assert!(text.ends_with(" GMT\r\n\r\n"), "{text}");
        assert!(
            !text.contains("999"),
            "the app's length is not the body's: {text}"
        );
        assert!(!text.contains("connection"), "{text}");

        let closing = encoded(&response, Version::HTTP_11, Framing::Chunked, false);
        assert!(
            closing.contains("transfer-encoding: chunked\r\nconnection: close\r\n"),
            "{closing}"
        );
        let old = encoded(&response, Version::HTTP_10, Framing::Length(1), true);
        assert!(old.starts_with("HTTP/1.0 200 OK\r\n"), "{old}");
        assert!(old.contains("connection: keep-alive\r\n"), "{old}");
    }

    #[test]
    fn bodiless_statuses_have_no_framing_and_streams_are_chunked_in_http_1_1_only() {
        for status in [
            StatusCode::CONTINUE,
            StatusCode::NO_CONTENT,
            StatusCode::NOT_MODIFIED,
        ] {
            assert_eq!(
                framing(status, BodySize::Sized(10), Version::HTTP_11),
                Framing::Empty
            );
        }
        assert_eq!(
            framing(StatusCode::OK, BodySize::None, Version::HTTP_11),
            Framing::Empty
        );
        assert_eq!(
            framing(StatusCode::OK, BodySize::Sized(0), Version::HTTP_11),
            Framing::Length(0)
        );
        assert_eq!(
            framing(StatusCode::OK, BodySize::Stream, Version::HTTP_11),
            Framing::Chunked
        );
        assert_eq!(
            framing(StatusCode::OK, BodySize::Stream, Version::HTTP_10),
            Framing::UntilClose
        );
    }

    /// What `write` puts on a socket, read whole by its peer.
    async fn written(write: impl AsyncFnOnce(&TcpStream)) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        write(&server).await;
        drop(server);
        let mut bytes = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut { client }, &mut bytes)
            .await
            .unwrap();
        String::from_utf8(bytes).unwrap()
    }

    /// A response's head lines but `Date` (sorted: a header map keeps no
    /// order), then its body.
    fn comparable(response: &str) -> (Vec<&str>, &str) {
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        let mut lines: Vec<&str> = head.lines().filter(|line| !line.starts_with("date: ")).collect();
        lines[1..].sort_unstable();
        (lines, body)
    }

    #[tokio::test]
    async fn a_prepared_answer_is_written_as_the_same_actix_response_is() {
        let body = Bytes::from_static(b"{\"nodes\":[]}");
        let cases = [
            (StatusCode::OK, Payload::Bytes(body.clone()), false),
            (StatusCode::OK, Payload::Bytes(body.clone()), true),
            (StatusCode::OK, Payload::Announced(body.len() as u64), true),
            (StatusCode::NOT_MODIFIED, Payload::Empty, false),
        ];
        for (status, payload, head_only) in cases {
            for version in [Version::HTTP_11, Version::HTTP_10] {
                for keep_alive in [true, false] {
                    let exchange = Exchange {
                        version,
                        head_only,
                        keep_alive,
                        send_timeout: Duration::from_secs(5),
                    };
                    let prepared = Prepared {
                        status,
                        fields: Bytes::from_static(b"etag: \"abc\"\r\ncontent-type: application/json\r\n"),
                        vary: Some(HeaderValue::from_static("Accept")),
                        payload: payload.clone(),
                    };
                    let mut response = HttpResponse::build(status);
                    response
                        .insert_header((header::ETAG, "\"abc\""))
                        .insert_header((header::CONTENT_TYPE, "application/json"))
                        .insert_header((header::VARY, "Accept"));
                    let response = match status {
                        StatusCode::OK => response.body(body.clone()),
                        _ => response.finish(),
                    };
                    let mut kept = [None, None];
                    let ours = written(async |stream| {
                        kept[0] = Some(send_prepared(stream, prepared, exchange).await.unwrap());
                    })
                    .await;
                    let actix = written(async |stream| {
                        kept[1] = Some(send(stream, response, exchange).await.unwrap());
                    })
                    .await;
                    let case = format!("{status} {version:?} head only {head_only}, keep-alive {keep_alive}");
                    assert_eq!(comparable(&ours), comparable(&actix), "{case}");
                    assert_eq!(kept[0], kept[1], "{case}");
                }
            }
        }
    }

    #[tokio::test]
    async fn a_prepared_get_answer_without_its_body_is_an_error() {
        let prepared = Prepared {
            status: StatusCode::OK,
            fields: Bytes::new(),
            vary: None,
            payload: Payload::Announced(10),
        };
        let exchange = Exchange {
            version: Version::HTTP_11,
            head_only: false,
            keep_alive: true,
            send_timeout: Duration::from_secs(5),
        };
        let sent =
            written(async |stream| assert!(send_prepared(stream, prepared, exchange).await.is_err())).await;
        assert_eq!(sent, "", "nothing is written");
    }
}
