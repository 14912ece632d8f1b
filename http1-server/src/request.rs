//! A request head, from bytes to the request an actix-web app takes, with
//! the checks RFC 9112 asks of a server before a request may reach the app.
//! Each refusal names the rule it applies; `tests/layer/conformance.rs` sends each
//! case over a socket.

use std::mem::MaybeUninit;
use std::net::SocketAddr;

use actix_web::dev::RequestHead;
use actix_web::http::header::{CONNECTION, CONTENT_LENGTH, HOST, HeaderName, HeaderValue, TRANSFER_ENCODING};
use actix_web::http::{ConnectionType, Method, Uri, Version};
use bytes::Bytes;

/// Headers a request may carry; more is answered 431.
pub const MAX_HEADERS: usize = 96;
/// Bytes a request head may take; more is answered 431.
pub const MAX_HEAD_BYTES: usize = 32 * 1024;
/// Bytes a request line may take; more is answered 414 (no route of the
/// services takes a query anywhere near it; nginx's default is the same).
pub const MAX_REQUEST_LINE_BYTES: usize = 8 * 1024;

/// A request head, parsed and checked.
pub struct Head {
    pub request: actix_http::Request,
    /// The bytes the head took.
    pub len: usize,
    /// The client wants the connection kept open (HTTP/1.1 unless `close`,
    /// HTTP/1.0 only with `keep-alive`).
    pub keep_alive: bool,
    /// How the body that follows the head is framed.
    pub body: Body,
    /// `OPTIONS *`: a question about the server, answered by the connection
    /// layer; the app never sees it (RFC 9112 §3.2.4).
    pub asks_server: bool,
}

/// How a request's body is framed (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    None,
    Length(u64),
    Chunked,
}

impl Body {
    pub fn is_present(self) -> bool {
        self != Self::None
    }
}

/// Why a head is refused, before the app sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadHead {
    #[error("malformed request head: {0}")]
    Malformed(&'static str),
    #[error("request head too large")]
    TooLarge,
    #[error("request line longer than {MAX_REQUEST_LINE_BYTES} bytes")]
    TargetTooLong,
    #[error("HTTP version not supported")]
    VersionNotSupported,
    #[error("not implemented: {0}")]
    NotImplemented(&'static str),
}

impl BadHead {
    pub fn status(self) -> u16 {
        match self {
            Self::Malformed(_) => 400,
            Self::TooLarge => 431,
            Self::TargetTooLong => 414,
            Self::VersionNotSupported => 505,
            Self::NotImplemented(_) => 501,
        }
    }
}

/// Parses the head at the start of `bytes`: `Ok(None)` while it is
/// incomplete.
pub fn parse(bytes: &[u8], peer: SocketAddr) -> Result<Option<Head>, BadHead> {
    check_request_line(bytes)?;
    // Left uninitialised: httparse writes the fields it finds, and a
    // request has a handful, not the `MAX_HEADERS` a zeroed array would
    // cost on every request.
    let mut headers = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut []);
    let len = match parsed.parse_with_uninit_headers(bytes, &mut headers) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if bytes.len() >= MAX_HEAD_BYTES => return Err(BadHead::TooLarge),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(BadHead::TooLarge),
        Err(error) => return Err(BadHead::Malformed(describe(error))),
    };
    if len > MAX_HEAD_BYTES {
        return Err(BadHead::TooLarge);
    }
    let shared = SharedHead::copy(&bytes[..len]);

    let mut request = actix_http::Request::new();
    let head = request.head_mut();
    head.peer_addr = Some(peer);
    // httparse took it as a token; one the http crate has no method for
    // (`G%T`) is a method this server does not implement (RFC 9110 §9.1).
    head.method = Method::from_bytes(parsed.method.unwrap_or_default().as_bytes())
        .map_err(|_| BadHead::NotImplemented("method"))?;
    head.version = match parsed.version {
        Some(0) => Version::HTTP_10,
        _ => Version::HTTP_11,
    };
    let target = parsed.path.unwrap_or_default();
    let asks_server = request_target(&head.method, target)?;
    head.uri = if asks_server {
        Uri::from_static("*")
    } else {
        Uri::from_maybe_shared(shared.slice(target.as_bytes()))
            .map_err(|_| BadHead::Malformed("invalid request target"))?
    };
    for header in parsed.headers.iter() {
        let name = HeaderName::from_bytes(header.name.as_bytes())
            .map_err(|_| BadHead::Malformed("invalid header name"))?;
        let value = HeaderValue::from_maybe_shared(shared.slice(header.value))
            .map_err(|_| BadHead::Malformed("invalid header value"))?;
        head.headers.append(name, value);
    }
    check_host(head)?;
    let body = body(head)?;
    let keep_alive = wants_keep_alive(head);
    head.set_connection_type(if keep_alive {
        ConnectionType::KeepAlive
    } else {
        ConnectionType::Close
    });
    Ok(Some(Head {
        request,
        len,
        keep_alive,
        body,
        asks_server,
    }))
}

/// A head's bytes copied once, out of the connection's buffer, so that its
/// target and field values are shares of one allocation rather than an
/// allocation each.
struct SharedHead<'a> {
    parsed: &'a [u8],
    copy: Bytes,
}

impl<'a> SharedHead<'a> {
    fn copy(parsed: &'a [u8]) -> Self {
        Self {
            parsed,
            copy: Bytes::copy_from_slice(parsed),
        }
    }

    /// The copy of `part`, a slice of the parsed bytes (as httparse hands
    /// them out).
    fn slice(&self, part: &[u8]) -> Bytes {
        // An empty part need not point into the head at all.
        if part.is_empty() {
            return Bytes::new();
        }
        let start = (part.as_ptr() as usize)
            .checked_sub(self.parsed.as_ptr() as usize)
            .filter(|start| start + part.len() <= self.parsed.len())
            .expect("a part of the parsed head");
        self.copy.slice(start..start + part.len())
    }
}

fn describe(error: httparse::Error) -> &'static str {
    match error {
        httparse::Error::HeaderName => "invalid header name",
        httparse::Error::HeaderValue => "invalid header value",
        httparse::Error::NewLine => "invalid line ending",
        httparse::Error::Token => "invalid token",
        httparse::Error::Version => "not HTTP/1.0 or HTTP/1.1",
        httparse::Error::Status | httparse::Error::TooManyHeaders => "invalid request line",
    }
}

/// What httparse cannot tell apart from any other malformed request line: a
/// line too long for a request target (414, RFC 9112 §3: "a server that
/// receives a request-target longer than any URI it wishes to parse MUST
/// respond with 414"), and a well-formed line of another HTTP major
/// version (505, RFC 9110 §15.6.6).
fn check_request_line(bytes: &[u8]) -> Result<(), BadHead> {
    // Empty lines before the request line are skipped (RFC 9112 §2.2), as
    // httparse skips them.
    let start = bytes
        .iter()
        .position(|&byte| byte != b'\r' && byte != b'\n')
        .unwrap_or(bytes.len());
    let bytes = &bytes[start..];
    let Some(end) = memchr::memchr(b'\n', bytes) else {
        return if bytes.len() > MAX_REQUEST_LINE_BYTES {
            Err(BadHead::TargetTooLong)
        } else {
            Ok(())
        };
    };
    if end > MAX_REQUEST_LINE_BYTES {
        return Err(BadHead::TargetTooLong);
    }
    let line = bytes[..end].strip_suffix(b"\r").unwrap_or(&bytes[..end]);
    // What every client sends: a line whose last part is HTTP/1.x is never
    // of another major version, however many parts it has.
    if line.ends_with(b" HTTP/1.1") || line.ends_with(b" HTTP/1.0") {
        return Ok(());
    }
    let mut parts = line.split(|&byte| byte == b' ');
    let (Some(_method), Some(_target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Ok(());
    };
    match version {
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() && *major != b'1' =>
        {
            Err(BadHead::VersionNotSupported)
        }
        _ => Ok(()),
    }
}

/// Checks the request target's form against the method (RFC 9112 §3.2):
/// origin-form or absolute-form for any method the services answer,
/// asterisk-form for `OPTIONS` only (then `true`: the request asks about the
/// server), authority-form for `CONNECT` only, which the services do not
/// implement.
fn request_target(method: &Method, target: &str) -> Result<bool, BadHead> {
    if *method == Method::CONNECT {
        return Err(BadHead::NotImplemented("CONNECT (this server is not a proxy)"));
    }
    if target == "*" {
        return if *method == Method::OPTIONS {
            Ok(true)
        } else {
            Err(BadHead::Malformed(
                "asterisk-form request target with a method other than OPTIONS",
            ))
        };
    }
    if target.starts_with('/') {
        return Ok(false);
    }
    match target.parse::<Uri>() {
        Ok(uri) if uri.scheme().is_some() && uri.authority().is_some() => Ok(false),
        _ => Err(BadHead::Malformed(
            "request target neither origin-form nor absolute-form",
        )),
    }
}

/// RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status
/// code to any HTTP/1.1 request message that lacks a Host header field and
/// to any request message that contains more than one Host header field
/// line or a Host header field with an invalid field value."
fn check_host(head: &RequestHead) -> Result<(), BadHead> {
    let mut hosts = head.headers.get_all(HOST);
    match (hosts.next(), hosts.next()) {
        (None, _) if head.version == Version::HTTP_11 => Err(BadHead::Malformed("no Host header")),
        (None, _) => Ok(()),
        (Some(_), Some(_)) => Err(BadHead::Malformed("more than one Host header")),
        (Some(host), None) if is_valid_host(host.as_bytes()) => Ok(()),
        (Some(_), None) => Err(BadHead::Malformed("invalid Host header")),
    }
}

/// `Host = uri-host [ ":" port ]` (RFC 9110 §7.2), or empty (a target
/// without an authority).
fn is_valid_host(value: &[u8]) -> bool {
    let (host, port) = match value {
        [b'[', rest @ ..] => match rest.iter().position(|&byte| byte == b']') {
            Some(close) => {
                let literal = &rest[..close];
                let after = &rest[close + 1..];
                let literal_ok = !literal.is_empty()
                    && literal.iter().all(|&byte| {
                        byte.is_ascii_hexdigit()
                            || b":.vV".contains(&byte)
                            || is_unreserved(byte)
                            || is_sub_delim(byte)
                    });
                if !literal_ok {
                    return false;
                }
                match after {
                    [] => return true,
                    [b':', port @ ..] => (&b""[..], port),
                    _ => return false,
                }
            }
            None => return false,
        },
        _ => match value.iter().rposition(|&byte| byte == b':') {
            Some(colon) => (&value[..colon], &value[colon + 1..]),
            None => (value, &b""[..]),
        },
    };
    let reg_name_ok = host
        .iter()
        .all(|&byte| is_unreserved(byte) || is_sub_delim(byte) || byte == b'%');
    reg_name_ok && port.iter().all(u8::is_ascii_digit)
}

fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-._~".contains(&byte)
}

fn is_sub_delim(byte: u8) -> bool {
    b"!$&'()*+,;=".contains(&byte)
}

/// How the body is framed, refusing the framings that let a proxy and a
/// server disagree on where the request ends (RFC 9112 §6).
fn body(head: &RequestHead) -> Result<Body, BadHead> {
    let length = content_length(head)?;
    if !head.headers.contains_key(TRANSFER_ENCODING) {
        return Ok(length
            .filter(|&length| length > 0)
            .map_or(Body::None, Body::Length));
    }
    // §6.1: "A server or client that receives an HTTP/1.0 message containing
    // a Transfer-Encoding header field MUST treat the message as if the
    // framing is faulty".
    if head.version == Version::HTTP_10 {
        return Err(BadHead::Malformed("transfer-encoding in an HTTP/1.0 request"));
    }
    // §6.3 ¶3: both may be an attempt at request smuggling.
    if length.is_some() {
        return Err(BadHead::Malformed("both transfer-encoding and content-length"));
    }
    let mut codings = Vec::new();
    for value in head.headers.get_all(TRANSFER_ENCODING) {
        let value = value
            .to_str()
            .map_err(|_| BadHead::Malformed("invalid transfer-encoding"))?;
        // RFC 9110 §5.6.1: empty list elements are ignored.
        codings.extend(
            value
                .split(',')
                .map(str::trim)
                .filter(|coding| !coding.is_empty()),
        );
    }
    let Some((last, before)) = codings.split_last() else {
        return Err(BadHead::Malformed("empty transfer-encoding"));
    };
    // §6.3 ¶4: chunked must be the final coding, and applied once (§7.1).
    if !last.eq_ignore_ascii_case("chunked") {
        return Err(BadHead::Malformed("the final transfer coding is not chunked"));
    }
    if before.iter().any(|coding| coding.eq_ignore_ascii_case("chunked")) {
        return Err(BadHead::Malformed("chunked applied more than once"));
    }
    if !before.iter().all(|coding| is_known_coding(coding)) {
        return Err(BadHead::NotImplemented("transfer coding"));
    }
    Ok(Body::Chunked)
}

/// Transfer codings registered besides chunked (RFC 9112 §7): known, so a
/// body framed by chunked after them has a determined length; any other
/// coding is answered 501 (§6.1).
fn is_known_coding(coding: &str) -> bool {
    ["gzip", "x-gzip", "deflate", "compress", "x-compress"]
        .iter()
        .any(|known| coding.eq_ignore_ascii_case(known))
}

/// The Content-Length, refusing an invalid one (RFC 9112 §6.3 ¶5) and lines
/// that disagree.
fn content_length(head: &RequestHead) -> Result<Option<u64>, BadHead> {
    let mut length = None;
    for value in head.headers.get_all(CONTENT_LENGTH) {
        let parsed = value
            .to_str()
            .ok()
            .filter(|text| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()))
            .and_then(|text| text.parse::<u64>().ok())
            .ok_or(BadHead::Malformed("invalid content-length"))?;
        if length.is_some_and(|length| length != parsed) {
            return Err(BadHead::Malformed("conflicting content-length"));
        }
        length = Some(parsed);
    }
    Ok(length)
}

/// RFC 9112 §9.3: `close` ends the connection whatever the version; else
/// HTTP/1.1 persists, and HTTP/1.0 only with `keep-alive`.
fn wants_keep_alive(head: &RequestHead) -> bool {
    let has = |wanted: &str| {
        head.headers
            .get_all(CONNECTION)
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|option| option.trim().eq_ignore_ascii_case(wanted))
    };
    if has("close") {
        false
    } else {
        head.version != Version::HTTP_10 || has("keep-alive")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer() -> SocketAddr {
        "127.0.0.1:40000".parse().unwrap()
    }

    fn complete(bytes: &str) -> Head {
        parse(bytes.as_bytes(), peer()).unwrap().expect("a complete head")
    }

    fn refused(bytes: &str) -> BadHead {
        match parse(bytes.as_bytes(), peer()) {
            Err(bad) => bad,
            Ok(Some(_)) => panic!("accepted: {bytes:?}"),
            Ok(None) => panic!("incomplete: {bytes:?}"),
        }
    }

    #[test]
    fn a_head_becomes_the_app_s_request() {
        let text = "GET /graph?channel=stable-4.18 HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nAccept: text/plain\r\n\r\nGET /next";
        let head = complete(text);
        assert_eq!(head.len, text.find("GET /next").unwrap());
        let request = head.request.head();
        assert_eq!(request.method, Method::GET);
        assert_eq!(request.uri.path(), "/graph");
        assert_eq!(request.uri.query(), Some("channel=stable-4.18"));
        assert_eq!(request.headers.get_all("accept").count(), 2);
        assert_eq!(request.peer_addr, Some(peer()));
        assert!(head.keep_alive);
        assert_eq!(head.body, Body::None);
        assert!(!head.asks_server);
    }

    #[test]
    fn the_target_and_field_values_share_one_copy_of_the_head() {
        let text = "GET /graph?channel=a HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nX-Empty:\r\n\r\n";
        let head = complete(text);
        let request = head.request.head();
        let at = |value: &[u8]| value.as_ptr() as usize;
        let host = request.headers.get("host").unwrap().as_bytes();
        let accept = request.headers.get("accept").unwrap().as_bytes();
        assert_eq!(
            at(accept) - at(host),
            text.find("application/json").unwrap() - text.find("x\r\n").unwrap(),
            "values sit where the head holds them, in one copy"
        );
        assert_eq!(request.headers.get("x-empty").unwrap(), "");
        assert_eq!(request.uri.query(), Some("channel=a"));
    }

    #[test]
    fn an_incomplete_head_asks_for_more_until_it_is_too_large() {
        assert!(
            parse(b"GET /graph HTTP/1.1\r\nHost: x\r\n", peer())
                .unwrap()
                .is_none()
        );
        let mut huge = b"GET / HTTP/1.1\r\n".to_vec();
        while huge.len() < MAX_HEAD_BYTES {
            huge.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
        }
        huge.truncate(MAX_HEAD_BYTES);
        assert_eq!(parse(&huge, peer()).err(), Some(BadHead::TooLarge));

        let many: String = (0..=MAX_HEADERS).map(|n| format!("X-{n}: 1\r\n")).collect();
        let text = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert_eq!(parse(text.as_bytes(), peer()).err(), Some(BadHead::TooLarge));
    }

    #[test]
    fn a_request_line_too_long_is_refused_before_it_ends() {
        let long = format!(
            "GET /{} HTTP/1.1\r\nHost: x\r\n\r\n",
            "a".repeat(MAX_REQUEST_LINE_BYTES)
        );
        assert_eq!(refused(&long), BadHead::TargetTooLong);
        let unfinished = format!("GET /{}", "a".repeat(MAX_REQUEST_LINE_BYTES));
        assert_eq!(
            parse(unfinished.as_bytes(), peer()).err(),
            Some(BadHead::TargetTooLong)
        );
        let fits = format!(
            "GET /{} HTTP/1.1\r\nHost: x\r\n\r\n",
            "a".repeat(MAX_REQUEST_LINE_BYTES - 20)
        );
        assert!(complete(&fits).request.head().uri.path().len() > 8000);
    }

    #[test]
    fn keep_alive_follows_the_version_and_connection_header() {
        let cases = [
            ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n", false),
            (
                "GET / HTTP/1.1\r\nHost: x\r\nConnection: TE, close\r\n\r\n",
                false,
            ),
            ("GET / HTTP/1.0\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
            ("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false),
        ];
        for (text, keep_alive) in cases {
            let head = complete(text);
            assert_eq!(head.keep_alive, keep_alive, "{text:?}");
            assert_eq!(
                head.request.head().connection_type() == ConnectionType::KeepAlive,
                keep_alive
            );
        }
    }

    #[test]
    fn host_is_required_once_and_well_formed() {
        for host in [
            "x",
            "127.0.0.1:8080",
            "[::1]:80",
            "[::1]",
            "a.example.com",
            "",
            "xn--d1acj3b",
            "a%20b",
        ] {
            complete(&format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n"));
        }
        complete("GET / HTTP/1.0\r\n\r\n");
        for text in [
            "GET / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a b/c\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a:80x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a@b\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n",
            "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n",
        ] {
            assert!(matches!(refused(text), BadHead::Malformed(_)), "{text:?}");
        }
    }

    #[test]
    fn a_body_is_noticed_and_ambiguous_framing_refused() {
        let with = |headers: &str| complete(&format!("POST / HTTP/1.1\r\nHost: x\r\n{headers}\r\n")).body;
        assert_eq!(with("Content-Length: 3\r\n"), Body::Length(3));
        assert_eq!(with("Transfer-Encoding: chunked\r\n"), Body::Chunked);
        assert_eq!(with("Transfer-Encoding: gzip, chunked\r\n"), Body::Chunked);
        assert_eq!(
            with("Transfer-Encoding: gzip\r\nTransfer-Encoding: CHUNKED\r\n"),
            Body::Chunked
        );
        assert_eq!(with("Transfer-Encoding: chunked,\r\n"), Body::Chunked);
        assert_eq!(with("Content-Length: 0\r\n"), Body::None);
        assert_eq!(
            with("Content-Length: 3\r\nContent-Length: 3\r\n"),
            Body::Length(3)
        );
        for headers in [
            "Content-Length: 3\r\nContent-Length: 4\r\n",
            "Content-Length: +3\r\n",
            "Content-Length: 3, 3\r\n",
            "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
            "Transfer-Encoding: chunked, identity\r\n",
            "Transfer-Encoding: identity\r\n",
            "Transfer-Encoding: xchunked\r\n",
            "Transfer-Encoding: chunked;x=1\r\n",
            "Transfer-Encoding: chunked, chunked\r\n",
            "Transfer-Encoding: \r\n",
        ] {
            let text = format!("POST / HTTP/1.1\r\nHost: x\r\n{headers}\r\n");
            assert!(matches!(refused(&text), BadHead::Malformed(_)), "{text:?}");
        }
        assert_eq!(
            refused("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: foo, chunked\r\n\r\n"),
            BadHead::NotImplemented("transfer coding")
        );
        assert!(matches!(
            refused("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"),
            BadHead::Malformed(_)
        ));
    }

    #[test]
    fn request_targets_match_their_method() {
        let options = complete("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(options.asks_server);
        let absolute = complete("GET http://x/graph?channel=a HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(absolute.request.head().uri.path(), "/graph");
        assert!(matches!(
            refused("CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n"),
            BadHead::NotImplemented(_)
        ));
        assert_eq!(
            refused("G%T / HTTP/1.1\r\nHost: x\r\n\r\n"),
            BadHead::NotImplemented("method")
        );
        for text in [
            "GET * HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET x:443 HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET graph HTTP/1.1\r\nHost: x\r\n\r\n",
        ] {
            assert!(matches!(refused(text), BadHead::Malformed(_)), "{text:?}");
        }
    }

    #[test]
    fn other_http_versions_are_not_supported_and_other_protocols_malformed() {
        for text in [
            "GET / HTTP/2.0\r\nHost: x\r\n\r\n",
            "GET / HTTP/0.9\r\n\r\n",
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        ] {
            assert_eq!(refused(text), BadHead::VersionNotSupported, "{text:?}");
        }
        for text in [
            &b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n"[..],
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
            b"GET /a b HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\rX: a\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n",
        ] {
            let refused = parse(text, peer());
            assert!(matches!(refused, Err(BadHead::Malformed(_))), "{text:?}");
        }
    }
}
