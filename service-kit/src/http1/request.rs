//! A request head, from bytes to the request an actix-web app takes.

use std::net::SocketAddr;

use actix_web::dev::RequestHead;
use actix_web::http::header::{CONNECTION, CONTENT_LENGTH, HeaderName, HeaderValue, TRANSFER_ENCODING};
use actix_web::http::{ConnectionType, Method, Uri, Version};

/// Headers a request may carry; more is answered 431.
pub const MAX_HEADERS: usize = 96;
/// Bytes a request head may take; more is answered 431.
pub const MAX_HEAD_BYTES: usize = 32 * 1024;

/// A request head, parsed.
pub struct Head {
    pub request: actix_http::Request,
    /// The bytes the head took.
    pub len: usize,
    /// The client wants the connection kept open (HTTP/1.1 unless `close`,
    /// HTTP/1.0 only with `keep-alive`).
    pub keep_alive: bool,
    /// A body follows the head. The services take none; such a request is
    /// answered (405 or 404, as the app says) and its connection closed, so
    /// the body is never read as a request.
    pub has_body: bool,
}

/// Why a head is refused, before the app sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadHead {
    #[error("malformed request head: {0}")]
    Malformed(&'static str),
    #[error("request head too large")]
    TooLarge,
}

impl BadHead {
    pub fn status(self) -> u16 {
        match self {
            Self::Malformed(_) => 400,
            Self::TooLarge => 431,
        }
    }
}

/// Parses the head at the start of `bytes`: `Ok(None)` while it is
/// incomplete.
pub fn parse(bytes: &[u8], peer: SocketAddr) -> Result<Option<Head>, BadHead> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    let len = match parsed.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if bytes.len() >= MAX_HEAD_BYTES => return Err(BadHead::TooLarge),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(BadHead::TooLarge),
        Err(error) => return Err(BadHead::Malformed(describe(error))),
    };
    if len > MAX_HEAD_BYTES {
        return Err(BadHead::TooLarge);
    }

    let mut request = actix_http::Request::new();
    let head = request.head_mut();
    head.peer_addr = Some(peer);
    head.method = Method::from_bytes(parsed.method.unwrap_or_default().as_bytes())
        .map_err(|_| BadHead::Malformed("invalid method"))?;
    head.uri = parsed
        .path
        .unwrap_or_default()
        .parse::<Uri>()
        .map_err(|_| BadHead::Malformed("invalid request target"))?;
    head.version = match parsed.version {
        Some(0) => Version::HTTP_10,
        _ => Version::HTTP_11,
    };
    for header in parsed.headers.iter() {
        let name = HeaderName::from_bytes(header.name.as_bytes())
            .map_err(|_| BadHead::Malformed("invalid header name"))?;
        let value =
            HeaderValue::from_bytes(header.value).map_err(|_| BadHead::Malformed("invalid header value"))?;
        head.headers.append(name, value);
    }
    let has_body = has_body(head)?;
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
        has_body,
    }))
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

/// Whether a body follows, refusing the framings that let a proxy and a
/// server disagree on where the request ends (RFC 9112 §6.3).
fn has_body(head: &RequestHead) -> Result<bool, BadHead> {
    let chunked = head.headers.contains_key(TRANSFER_ENCODING);
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
    match (chunked, length) {
        (true, Some(_)) => Err(BadHead::Malformed("both transfer-encoding and content-length")),
        (true, None) => Ok(true),
        (false, length) => Ok(length.unwrap_or(0) > 0),
    }
}

fn wants_keep_alive(head: &RequestHead) -> bool {
    let mut options = head
        .headers
        .get_all(CONNECTION)
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim);
    if head.version == Version::HTTP_10 {
        options.any(|option| option.eq_ignore_ascii_case("keep-alive"))
    } else {
        !options.any(|option| option.eq_ignore_ascii_case("close"))
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
        assert!(!head.has_body);
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
    fn keep_alive_follows_the_version_and_connection_header() {
        let cases = [
            ("GET / HTTP/1.1\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nConnection: TE, close\r\n\r\n", false),
            ("GET / HTTP/1.0\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
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
    fn a_body_is_noticed_and_ambiguous_framing_refused() {
        assert!(complete("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc").has_body);
        assert!(complete("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").has_body);
        assert!(!complete("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").has_body);
        assert!(complete("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n").has_body);
        for refused in [
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            assert!(
                matches!(parse(refused.as_bytes(), peer()), Err(BadHead::Malformed(_))),
                "{refused:?}"
            );
        }
    }

    #[test]
    fn what_is_not_http_1_is_malformed() {
        for text in [
            &b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
            b"GET /a b HTTP/1.1\r\n\r\n",
        ] {
            let refused = parse(text, peer());
            assert!(matches!(refused, Err(BadHead::Malformed(_))), "{text:?}");
        }
    }
}
