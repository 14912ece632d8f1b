//! The conformance cases: what a client sends, byte for byte, the rule of
//! RFC 9112 (or RFC 9110) it exercises, and what a server that follows the
//! rule answers. In the bytes, `{path}` is a path the server answers 200 to
//! a GET, `{host}` its authority. Bodies that look like a request carry
//! `/smuggled`: a server that answers one has taken a body for a request.
//!
//! What a server answers depends, for some cases, on two choices the RFCs
//! leave to it ([`Server`]): whether `{path}` takes a request body (a
//! server that takes none refuses one with 413 before reading it, RFC 9110
//! §15.5.14), and whether it answers only for the hosts it knows (421 to
//! another, RFC 9110 §15.5.20).

use std::time::Duration;

/// One case; see the module documentation.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: &'static str,
    /// The rule, as `RFC 9112 §6.3 ¶4: …`.
    pub rule: &'static str,
    pub steps: Vec<Step>,
    /// What a server following the rule answers when `{path}` takes a body
    /// and any host is answered.
    pub expect: Expect,
    /// What it answers instead when `{path}` takes no body, if that
    /// differs: the body is announced (Content-Length, or a chunk's size),
    /// so 413 before it is read, and the connection closes.
    pub without_bodies: Option<Expect>,
    /// What it answers instead when it checks the host, if that differs.
    pub checking_host: Option<Expect>,
    /// A request any front end (a proxy before the server, say) must answer
    /// as the server does: well-formed, unambiguous.
    pub well_formed: bool,
}

/// What the server under test chose where the RFCs leave it a choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Server {
    /// `{path}` takes a request body; otherwise a body is refused with 413
    /// before it is read (RFC 9110 §15.5.14).
    pub takes_bodies: bool,
    /// Only hosts the server knows are answered (`{host}` is one); another
    /// is answered 421 Misdirected Request (RFC 9110 §15.5.20).
    pub checks_host: bool,
}

impl Case {
    /// Whether the first request is a HEAD, whose answer has no body.
    pub fn starts_with_head(&self) -> bool {
        matches!(self.steps.first(), Some(Step::Send(text)) if text.starts_with("HEAD "))
    }

    /// What `server` answers if it follows the rule.
    pub fn expected(&self, server: Server) -> &Expect {
        let differs = [
            (!server.takes_bodies).then_some(self.without_bodies.as_ref()),
            server.checks_host.then_some(self.checking_host.as_ref()),
        ];
        differs
            .into_iter()
            .flatten()
            .flatten()
            .next()
            .unwrap_or(&self.expect)
    }
}

/// What the client does, in order.
#[derive(Debug, Clone)]
pub enum Step {
    Send(String),
    /// Waits before the next step (a request split across reads).
    Pause(Duration),
    /// Closes the client's sending side (half-close).
    CloseWrite,
}

/// What a server following the rule answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Refused before any handler sees the request: this status, then the
    /// connection closes.
    Refused(u16),
    /// Answered with these statuses, in order, then the connection stays
    /// open (another request on it is answered) or closes.
    Answered(Vec<u16>, After),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    Open,
    Closed,
}

/// A request that must never be answered: a body carrying it that is read
/// as a request has been smuggled.
pub const SMUGGLED: &str = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";

fn send(text: impl Into<String>) -> Vec<Step> {
    vec![Step::Send(text.into())]
}

fn get(headers: &str) -> String {
    format!("GET {{path}} HTTP/1.1\r\nHost: {{host}}\r\n{headers}\r\n")
}

fn post(headers: &str, body: &str) -> String {
    format!("POST {{path}} HTTP/1.1\r\nHost: {{host}}\r\n{headers}\r\n{body}")
}

fn case(name: &'static str, rule: &'static str, steps: Vec<Step>, expect: Expect) -> Case {
    Case {
        name,
        rule,
        steps,
        expect,
        without_bodies: None,
        checking_host: None,
        well_formed: false,
    }
}

impl Case {
    /// A server that takes no body on `{path}` refuses this one with 413
    /// before reading it, and closes the connection.
    fn body_refused(self) -> Self {
        self.without_bodies(Expect::Refused(413))
    }

    fn without_bodies(self, expect: Expect) -> Self {
        Self {
            without_bodies: Some(expect),
            ..self
        }
    }

    fn checking_host(self, expect: Expect) -> Self {
        Self {
            checking_host: Some(expect),
            ..self
        }
    }
}

fn well_formed(name: &'static str, rule: &'static str, steps: Vec<Step>, expect: Expect) -> Case {
    Case {
        well_formed: true,
        ..case(name, rule, steps, expect)
    }
}

fn ok_then(after: After) -> Expect {
    Expect::Answered(vec![200], after)
}

/// The status a server answers a POST to a resource that takes GET and HEAD
/// only (RFC 9110 §15.5.6).
const NOT_ALLOWED: u16 = 405;

/// Every case, in a stable order.
pub fn all() -> Vec<Case> {
    let chunked_smuggle = format!("0\r\n\r\n{SMUGGLED}");
    // A chunked body whose one chunk is a request.
    let chunked_carrier = format!("{:x}\r\n{SMUGGLED}\r\n0\r\n\r\n", SMUGGLED.len());
    let mut cases = vec![
        // Message framing (RFC 9112 §6).
        case(
            "content-length-and-transfer-encoding",
            "RFC 9112 §6.3 ¶3: a request with both Transfer-Encoding and Content-Length ought to be handled as an error (smuggling)",
            send(post(
                &format!(
                    "Content-Length: {}\r\nTransfer-Encoding: chunked\r\n",
                    chunked_smuggle.len()
                ),
                &chunked_smuggle,
            )),
            Expect::Refused(400),
        ),
        case(
            "transfer-encoding-chunked-not-final",
            "RFC 9112 §6.3 ¶4: chunked not the final coding of a request: respond 400 and close",
            send(post("Transfer-Encoding: chunked, identity\r\n", &chunked_smuggle)),
            Expect::Refused(400),
        ),
        case(
            "transfer-encoding-identity",
            "RFC 9112 §6.3 ¶4: a final coding other than chunked: respond 400 and close (identity is no coding since RFC 7230)",
            send(post("Transfer-Encoding: identity\r\n", SMUGGLED)),
            Expect::Refused(400),
        ),
        case(
            "transfer-encoding-xchunked",
            "RFC 9112 §6.3 ¶4: an unknown final coding: respond 400 and close",
            send(post("Transfer-Encoding: xchunked\r\n", SMUGGLED)),
            Expect::Refused(400),
        ),
        case(
            "transfer-encoding-chunked-with-parameter",
            "RFC 9112 §7.1: chunked takes no parameters; `chunked;x=1` is not chunked, so the final coding is not chunked (§6.3 ¶4)",
            send(post("Transfer-Encoding: chunked;x=1\r\n", &chunked_smuggle)),
            Expect::Refused(400),
        ),
        case(
            "transfer-encoding-chunked-twice",
            "RFC 9112 §7.1: a sender MUST NOT apply chunked more than once",
            send(post("Transfer-Encoding: chunked, chunked\r\n", &chunked_smuggle)),
            Expect::Refused(400),
        ),
        case(
            "transfer-encoding-unknown-coding-before-chunked",
            "RFC 9112 §6.1: a server that receives a transfer coding it does not understand SHOULD respond 501",
            send(post("Transfer-Encoding: foo, chunked\r\n", &chunked_smuggle)),
            Expect::Refused(501),
        ),
        case(
            "transfer-encoding-in-http-1-0",
            "RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding MUST be treated as faulty framing",
            send(format!(
                "POST {{path}} HTTP/1.0\r\nHost: {{host}}\r\nTransfer-Encoding: chunked\r\n\r\n{chunked_smuggle}"
            )),
            Expect::Refused(400),
        ),
        case(
            "transfer-encoding-space-before-colon",
            "RFC 9112 §5.1: whitespace between a field name and the colon MUST be rejected with 400",
            send(post("Transfer-Encoding : chunked\r\n", &chunked_smuggle)),
            Expect::Refused(400),
        ),
        case(
            "transfer-encoding-empty",
            "RFC 9112 §6.3 ¶4: an empty Transfer-Encoding has no final chunked coding",
            send(post("Transfer-Encoding:\r\n", SMUGGLED)),
            Expect::Refused(400),
        ),
        case(
            "transfer-encoding-chunked-with-tab",
            "RFC 9110 §5.6.3: optional whitespace around a field value (HTAB too); the chunked body is read, never taken as a request",
            send(post("Transfer-Encoding:\tchunked\r\n", &chunked_carrier)),
            Expect::Answered(vec![NOT_ALLOWED], After::Open),
        )
        .body_refused(),
        case(
            "chunked-body-carrying-a-request",
            "RFC 9112 §6.3 ¶4 and §7.1: a chunked body's bytes belong to the body, up to the last chunk and the trailer section; the request inside is never answered",
            send(post("Transfer-Encoding: chunked\r\n", &chunked_carrier)),
            Expect::Answered(vec![NOT_ALLOWED], After::Open),
        )
        .body_refused(),
        well_formed(
            "chunked-body-then-a-request",
            "RFC 9112 §7.1 and §9.3.2: the request after a chunked body's last chunk and trailer section is the next request",
            send(format!(
                "{}{}",
                post(
                    "Transfer-Encoding: chunked\r\n",
                    "3;name=value\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n"
                ),
                get("")
            )),
            Expect::Answered(vec![NOT_ALLOWED, 200], After::Open),
        )
        .body_refused(),
        case(
            "chunked-body-with-a-bare-lf",
            "RFC 9112 §7.1: a chunk-size line ends with CRLF; a body whose end two parsers could place apart is refused: 400",
            send(post(
                "Transfer-Encoding: chunked\r\n",
                &format!("3\nabc\r\n0\r\n\r\n{SMUGGLED}"),
            )),
            Expect::Refused(400),
        ),
        case(
            "chunked-data-longer-than-its-size",
            "RFC 9112 §7.1: chunk-data is chunk-size octets, then CRLF: 400 otherwise",
            send(post(
                "Transfer-Encoding: chunked\r\n",
                &format!("3\r\nabcd\r\n0\r\n\r\n{SMUGGLED}"),
            )),
            Expect::Refused(400),
        )
        .body_refused(),
        case(
            "chunked-body-too-large",
            "RFC 9110 §15.5.14: a body larger than the server is willing to process: 413",
            send(post(
                "Transfer-Encoding: chunked\r\n",
                &format!("ffffffffff\r\n{SMUGGLED}"),
            )),
            Expect::Refused(413),
        ),
        case(
            "content-length-too-large",
            "RFC 9110 §15.5.14: a Content-Length larger than the server is willing to process: 413, before the body is read",
            send(post("Content-Length: 1000000000000\r\n", SMUGGLED)),
            Expect::Refused(413),
        ),
        case(
            "slow-body",
            "RFC 9110 §15.5.9: a body that does not arrive within the server's time is answered 408 and the connection closed",
            send(post("Content-Length: 100\r\n", "abc")),
            Expect::Refused(408),
        )
        .body_refused(),
        case(
            "chunked-body-with-a-bad-chunk-size",
            "RFC 9112 §7.1: chunk-size is 1*HEXDIG: 400 otherwise",
            send(post(
                "Transfer-Encoding: chunked\r\n",
                &format!("zz\r\n{SMUGGLED}"),
            )),
            Expect::Refused(400),
        ),
        case(
            "chunked-body-with-an-overflowing-chunk-size",
            "RFC 9112 §7.1: a chunk size beyond 64 bits must not wrap around into a small one: 400",
            send(post(
                "Transfer-Encoding: chunked\r\n",
                &format!("10000000000000023\r\n{SMUGGLED}\r\n0\r\n\r\n"),
            )),
            Expect::Refused(400),
        ),
        case(
            "content-length-body-carrying-a-request",
            "RFC 9112 §6.2: Content-Length bytes are the body; a request inside is never answered",
            send(post(&format!("Content-Length: {}\r\n", SMUGGLED.len()), SMUGGLED)),
            Expect::Answered(vec![NOT_ALLOWED], After::Open),
        )
        .body_refused(),
        case(
            "content-length-conflicting",
            "RFC 9112 §6.3 ¶5 and RFC 9110 §8.6: Content-Length lines that differ are invalid: 400",
            send(post(
                &format!("Content-Length: {}\r\nContent-Length: 0\r\n", SMUGGLED.len()),
                SMUGGLED,
            )),
            Expect::Refused(400),
        ),
        case(
            "content-length-repeated-equal",
            "RFC 9110 §8.6: identical Content-Length lines may be taken as one",
            send(post(
                &format!("Content-Length: {0}\r\nContent-Length: {0}\r\n", SMUGGLED.len()),
                SMUGGLED,
            )),
            Expect::Answered(vec![NOT_ALLOWED], After::Open),
        )
        .body_refused(),
        case(
            "content-length-list",
            "RFC 9110 §8.6: a list of lengths MAY be rejected; this server rejects any value that is not 1*DIGIT",
            send(post(
                &format!("Content-Length: {0}, {0}\r\n", SMUGGLED.len()),
                SMUGGLED,
            )),
            Expect::Refused(400),
        ),
        case(
            "content-length-plus-sign",
            "RFC 9112 §6.3 ¶5: Content-Length is 1*DIGIT; anything else is invalid: 400",
            send(post("Content-Length: +35\r\n", SMUGGLED)),
            Expect::Refused(400),
        ),
        case(
            "content-length-negative",
            "RFC 9112 §6.3 ¶5: a negative Content-Length is invalid: 400",
            send(post("Content-Length: -1\r\n", SMUGGLED)),
            Expect::Refused(400),
        ),
        case(
            "content-length-hexadecimal",
            "RFC 9112 §6.3 ¶5: Content-Length is decimal: 400",
            send(post("Content-Length: 0x23\r\n", SMUGGLED)),
            Expect::Refused(400),
        ),
        case(
            "content-length-overflowing",
            "RFC 9110 §8.6: a Content-Length beyond what the recipient can represent is invalid",
            send(post("Content-Length: 99999999999999999999999\r\n", SMUGGLED)),
            Expect::Refused(400),
        ),
        case(
            "content-length-empty",
            "RFC 9112 §6.3 ¶5: an empty Content-Length is invalid: 400",
            send(post("Content-Length:\r\n", SMUGGLED)),
            Expect::Refused(400),
        ),
        well_formed(
            "content-length-zero",
            "RFC 9112 §6.2: Content-Length 0 is no body: the connection persists",
            send(get("Content-Length: 0\r\n")),
            ok_then(After::Open),
        ),
        // Bodies where a route takes none (RFC 9110 §15.5.14, §9.3.1).
        well_formed(
            "body-on-a-get",
            "RFC 9110 §9.3.1 and §15.5.14: content on a GET has no meaning; a server that takes none refuses it with 413 before reading it",
            send(format!("{}hello", get("Content-Length: 5\r\n"))),
            ok_then(After::Open),
        )
        .body_refused(),
        case(
            "body-on-an-unknown-path",
            "RFC 9110 §15.5.14: content no resource takes is refused with 413 before it is read, whatever the path",
            send("GET /nowhere HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\n\r\nhello"),
            Expect::Answered(vec![404], After::Open),
        )
        .body_refused(),
        well_formed(
            "chunked-body-on-a-get",
            "RFC 9110 §15.5.14 and RFC 9112 §7.1: a chunk's size announces content: a server that takes none refuses it with 413 before reading the chunk",
            send(format!("{}5\r\nhello\r\n0\r\n\r\n", get("Transfer-Encoding: chunked\r\n"))),
            ok_then(After::Open),
        )
        .body_refused(),
        well_formed(
            "empty-chunked-body",
            "RFC 9112 §7.1: a chunked body whose first chunk is the last chunk is empty: no content, and the connection persists",
            send(format!("{}0\r\n\r\n", get("Transfer-Encoding: chunked\r\n"))),
            ok_then(After::Open),
        ),
        case(
            "expect-100-continue-without-the-body",
            "RFC 9110 §10.1.1: a server that will not take the content answers with its final status instead of 100 (Continue), and the client need not send it",
            send(get("Expect: 100-continue\r\nContent-Length: 5\r\n")),
            Expect::Answered(vec![100, 408], After::Closed),
        )
        .body_refused(),
        // The host a server answers for (RFC 9110 §7.4, §15.5.20).
        case(
            "another-host",
            "RFC 9110 §7.4 and §15.5.20: a server that answers only for its own hosts answers another with 421 Misdirected Request (a page rebinding a name it owns to the server names its own host)",
            send(format!("GET {{path}} HTTP/1.1\r\nHost: rebound.example\r\n\r\n{}", get(""))),
            Expect::Answered(vec![200, 200], After::Open),
        )
        .checking_host(Expect::Answered(vec![421, 200], After::Open)),
        case(
            "another-host-in-the-absolute-form",
            "RFC 9112 §3.2.2 and RFC 9110 §15.5.20: the absolute-form's authority is the request's host, whatever Host says: another is answered 421",
            send("GET http://rebound.example{path} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
            ok_then(After::Open),
        )
        .checking_host(Expect::Answered(vec![421], After::Open)),
        // Lines and fields (RFC 9112 §2, §5).
        well_formed(
            "bare-lf-line-endings",
            "RFC 9112 §2.2: a recipient MAY recognise a single LF as a line terminator",
            send("GET {path} HTTP/1.1\nHost: {host}\n\n"),
            ok_then(After::Open),
        ),
        case(
            "bare-cr-in-a-field",
            "RFC 9112 §2.2: a bare CR MUST be considered invalid (or replaced by SP)",
            send(get("X-A: a\rTransfer-Encoding: chunked\r\n")),
            Expect::Refused(400),
        ),
        case(
            "request-target-too-long-after-an-empty-line",
            "RFC 9112 §2.2 and §3: the empty line before the request line is skipped, the line after it judged",
            send(format!(
                "\r\nGET /{} HTTP/1.1\r\nHost: {{host}}\r\n\r\n",
                "a".repeat(16_000)
            )),
            Expect::Refused(414),
        ),
        well_formed(
            "empty-lines-before-the-request-line",
            "RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line",
            send(format!("\r\n{}", get(""))),
            ok_then(After::Open),
        ),
        case(
            "whitespace-before-the-first-field",
            "RFC 9112 §2.2: whitespace between the start-line and the first field MUST be rejected or consumed",
            send("GET {path} HTTP/1.1\r\n Transfer-Encoding: chunked\r\nHost: {host}\r\n\r\n"),
            Expect::Refused(400),
        ),
        case(
            "obs-fold",
            "RFC 9112 §5.2: a server MUST reject obs-fold with 400 (or replace it with SP)",
            send(get("X-A: a\r\n Transfer-Encoding: chunked\r\n")),
            Expect::Refused(400),
        ),
        case(
            "nul-in-a-field-value",
            "RFC 9110 §5.5: NUL in a field value is invalid and dangerous: reject or replace",
            send(get("X-A: a\0b\r\n")),
            Expect::Refused(400),
        ),
        case(
            "invalid-field-name",
            "RFC 9110 §5.1: a field name is a token",
            send(get("X A: b\r\n")),
            Expect::Refused(400),
        ),
        case(
            "too-many-fields",
            "RFC 6585 §5: 431 when the header fields are too large (here: too many)",
            send(get(&(0..200)
                .map(|n| format!("X-{n}: 1\r\n"))
                .collect::<String>())),
            Expect::Refused(431),
        ),
        case(
            "fields-too-large",
            "RFC 6585 §5: 431 when the header fields are too large",
            send(get(&format!("X-Large: {}\r\n", "a".repeat(40_000)))),
            Expect::Refused(431),
        ),
        // The request line (RFC 9112 §3).
        case(
            "request-target-too-long",
            "RFC 9112 §3: a request-target longer than any URI the server parses: 414",
            send(format!(
                "GET /{} HTTP/1.1\r\nHost: {{host}}\r\n\r\n",
                "a".repeat(16_000)
            )),
            Expect::Refused(414),
        ),
        case(
            "http-2-0-request-line",
            "RFC 9110 §15.6.6: a major version the server does not support: 505",
            send("GET {path} HTTP/2.0\r\nHost: {host}\r\n\r\n"),
            Expect::Refused(505),
        ),
        case(
            "two-spaces-in-the-request-line",
            "RFC 9112 §3: recipients SHOULD NOT autocorrect a request line that is not method SP target SP version",
            send("GET  {path} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
            Expect::Refused(400),
        ),
        case(
            "connect",
            "RFC 9110 §9.1: a method the origin server does not implement: 501 (CONNECT is for proxies)",
            send("CONNECT {host} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
            Expect::Refused(501),
        ),
        case(
            "unknown-method",
            "RFC 9110 §9.1: a method the origin server does not implement: 501",
            send("G%T {path} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
            Expect::Refused(501),
        ),
        // nginx answers it 400 itself.
        case(
            "options-asterisk",
            "RFC 9112 §3.2.4: OPTIONS * asks about the server, not a resource",
            send("OPTIONS * HTTP/1.1\r\nHost: {host}\r\n\r\n"),
            ok_then(After::Open),
        ),
        case(
            "asterisk-form-with-get",
            "RFC 9112 §3.2.4: the asterisk-form is only used for OPTIONS",
            send("GET * HTTP/1.1\r\nHost: {host}\r\n\r\n"),
            Expect::Refused(400),
        ),
        case(
            "authority-form-with-get",
            "RFC 9112 §3.2.3: the authority-form is only used for CONNECT",
            send("GET {host} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
            Expect::Refused(400),
        ),
        well_formed(
            "absolute-form",
            "RFC 9112 §3.2.2: a server MUST accept the absolute-form",
            send("GET http://{host}{path} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
            ok_then(After::Open),
        ),
        // HAProxy refuses it itself (a Host that differs from the target's
        // authority), as RFC 9112 §3.2.2 lets a proxy do.
        case(
            "absolute-form-with-another-host",
            "RFC 9112 §3.2.2: a server MUST ignore Host for the absolute-form target's authority",
            send("GET http://{host}{path} HTTP/1.1\r\nHost: elsewhere.example\r\n\r\n"),
            ok_then(After::Open),
        ),
        // Host (RFC 9112 §3.2).
        case(
            "no-host-in-http-1-1",
            "RFC 9112 §3.2: a server MUST respond 400 to an HTTP/1.1 request without Host",
            send("GET {path} HTTP/1.1\r\n\r\n"),
            Expect::Refused(400),
        ),
        case(
            "two-hosts",
            "RFC 9112 §3.2: a server MUST respond 400 to more than one Host field line",
            send("GET {path} HTTP/1.1\r\nHost: {host}\r\nHost: {host}\r\n\r\n"),
            Expect::Refused(400),
        ),
        case(
            "invalid-host",
            "RFC 9112 §3.2: a server MUST respond 400 to a Host with an invalid value",
            send("GET {path} HTTP/1.1\r\nHost: a b/c\r\n\r\n"),
            Expect::Refused(400),
        ),
        // nginx requires a Host of HTTP/1.0 requests too.
        case(
            "no-host-in-http-1-0",
            "RFC 9112 §3.2: Host is required of HTTP/1.1 requests; an HTTP/1.0 one is answered, then closed (§9.3)",
            send("GET {path} HTTP/1.0\r\n\r\n"),
            ok_then(After::Closed),
        ),
        // Connections (RFC 9112 §9).
        well_formed(
            "http-1-0-keep-alive",
            "RFC 9112 §9.3 and Appendix C.2.2: an HTTP/1.0 client asking for keep-alive keeps its connection",
            send("GET {path} HTTP/1.0\r\nHost: {host}\r\nConnection: keep-alive\r\n\r\n"),
            ok_then(After::Open),
        ),
        case(
            "http-1-0-keep-alive-and-close",
            "RFC 9112 §9.3: with the close option present the connection does not persist, whatever else is asked",
            send("GET {path} HTTP/1.0\r\nHost: {host}\r\nConnection: keep-alive, close\r\n\r\n"),
            ok_then(After::Closed),
        ),
        well_formed(
            "connection-close",
            "RFC 9112 §9.6: after a request with Connection: close the server closes",
            send(get("Connection: close\r\n")),
            ok_then(After::Closed),
        ),
        well_formed(
            "pipelined-requests",
            "RFC 9112 §9.3.2: responses to pipelined requests in the order of the requests",
            send(format!(
                "{0}{1}{0}",
                get(""),
                "GET /nowhere HTTP/1.1\r\nHost: {host}\r\n\r\n"
            )),
            Expect::Answered(vec![200, 404, 200], After::Open),
        ),
        well_formed(
            "a-head-across-reads",
            "RFC 9112 §2.2: a message is parsed as octets, whatever reads it arrives in",
            vec![
                Step::Send("GET {path} HTTP/1.1\r\nHo".to_owned()),
                Step::Pause(Duration::from_millis(50)),
                Step::Send("st: {host}\r\n\r".to_owned()),
                Step::Pause(Duration::from_millis(50)),
                Step::Send("\nGET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".to_owned()),
            ],
            Expect::Answered(vec![200, 200], After::Open),
        ),
        well_formed(
            "head",
            "RFC 9110 §9.3.2: HEAD is answered as GET without the body; the next response follows at once",
            send(format!(
                "HEAD {{path}} HTTP/1.1\r\nHost: {{host}}\r\n\r\n{}",
                get("")
            )),
            Expect::Answered(vec![200, 200], After::Open),
        ),
        // nginx takes the half-close for an abort and answers nothing.
        case(
            "half-close",
            "RFC 9112 §9.6: a client that closes its sending side still gets its answer, then the close",
            vec![Step::Send(get("")), Step::CloseWrite],
            ok_then(After::Closed),
        ),
        case(
            "expect-100-continue-with-a-body",
            "RFC 9110 §10.1.1: a server need not send 100 for a body already received; the body is never read as a request",
            send(post(
                &format!("Expect: 100-continue\r\nContent-Length: {}\r\n", SMUGGLED.len()),
                SMUGGLED,
            )),
            Expect::Answered(vec![NOT_ALLOWED], After::Open),
        )
        .body_refused(),
        well_formed(
            "reuse-after-an-error-answer",
            "RFC 9112 §9.3: a 4xx answer leaves the connection persistent",
            send(format!(
                "GET /nowhere HTTP/1.1\r\nHost: {{host}}\r\n\r\n{}",
                get("")
            )),
            Expect::Answered(vec![404, 200], After::Open),
        ),
        case(
            "no-reuse-after-a-refused-head",
            "RFC 9112 §6.3 ¶4: after a refused head the server closes; the request after it is not answered",
            send(format!("GET {{path}} HTTP/1.1\r\n\r\n{SMUGGLED}")),
            Expect::Refused(400),
        ),
        case(
            "slowloris",
            "RFC 9110 §15.5.9: a head that never ends is answered 408 and the connection closed",
            send("GET {path} HTTP/1.1\r\nHost: {host}\r\nX-Slow: "),
            Expect::Refused(408),
        ),
    ];
    cases.sort_by_key(|case| case.name);
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_rules_named() {
        let cases = all();
        let mut names: Vec<_> = cases.iter().map(|case| case.name).collect();
        names.dedup();
        assert_eq!(names.len(), cases.len());
        for case in &cases {
            assert!(case.rule.starts_with("RFC "), "{}", case.name);
        }
    }

    #[test]
    fn each_server_gets_the_answer_of_its_choices() {
        let cases = all();
        let case = |name| cases.iter().find(|case| case.name == name).unwrap();
        let taking = Server {
            takes_bodies: true,
            checks_host: false,
        };
        let body = case("body-on-a-get");
        assert_eq!(body.expected(taking), &Expect::Answered(vec![200], After::Open));
        assert_eq!(body.expected(Server::default()), &Expect::Refused(413));
        let host = case("another-host");
        assert_eq!(host.expected(Server::default()), &host.expect);
        let checking = Server {
            checks_host: true,
            ..taking
        };
        assert_eq!(
            host.expected(checking),
            &Expect::Answered(vec![421, 200], After::Open)
        );
    }
}
