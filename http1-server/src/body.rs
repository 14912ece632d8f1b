//! A request body, from the bytes that follow its head to the bytes the app
//! reads: framed by Content-Length or by the chunked transfer coding (RFC
//! 9112 §6.3, §7.1), read whole before the app is called, bounded by what
//! the server's gate takes (413 beyond it, RFC 9110 §15.5.14), and held
//! within the server's budget (see [`crate::BodyBudget`]: what a body will
//! hold is reserved before it is read, 503 when the budget cannot cover
//! it; the body handed to the app gives its reservation back when dropped).
//!
//! The decoder is incremental: it takes what it can of the bytes read so
//! far and says how many it took, so a body that arrives in pieces is
//! parsed once (a partial chunk-size or trailer line waits whole for its
//! end, and such a line is bounded). What it accepts of the chunked coding
//! is RFC 9112 §7.1's grammar, each line ended by CRLF:
//!
//! 1. `chunk-size` is `1*HEXDIG`; one beyond 64 bits is refused, never
//!    wrapped around.
//! 2. After it, optional whitespace (`BWS`), then `;` and extensions, which
//!    are ignored (§7.1.1: "A recipient MUST ignore unrecognized chunk
//!    extensions"), bounded together by [`MAX_EXTENSION_BYTES`].
//! 3. `chunk-data` is followed by CRLF.
//! 4. The last chunk (size 0) is followed by a trailer section, field lines
//!    as in a head (checked, then discarded: §7.1.2 lets a recipient
//!    discard them), bounded by [`MAX_TRAILER_BYTES`] and
//!    [`crate::request::MAX_HEADERS`] lines, and the empty line.
//!
//! A bare CR or LF anywhere in these lines is refused (§2.2: a recipient
//! may take a bare LF as a line end in the head; inside a body it would
//! let two parsers disagree on where the body ends).

use bytes::{Bytes, BytesMut};

use crate::budget::Reservation;
use crate::request::{Body, MAX_HEAD_BYTES, MAX_HEADERS};

/// Bytes of chunk extensions a body may carry in all (hyper's bound too).
pub const MAX_EXTENSION_BYTES: usize = 16 * 1024;
/// Bytes a trailer section may take (hyper's bound too).
pub const MAX_TRAILER_BYTES: usize = 16 * 1024;

/// What reading a body holds besides the body's own bytes, reserved with
/// them: the connection's read buffer (up to a head's bound and a step)
/// and a chunked body's trailer section.
pub const READING_BYTES: usize = MAX_HEAD_BYTES + 2 * 1024 + MAX_TRAILER_BYTES;

/// Bytes allocated for a Content-Length body before any arrives, at most.
const FIRST_ALLOCATION: usize = 16 * 1024;

/// Why a body is refused before the app sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadBody {
    #[error("request body larger than {0} bytes")]
    TooLarge(usize),
    #[error("malformed chunked body: {0}")]
    Malformed(&'static str),
    #[error("trailer section too large")]
    TrailersTooLarge,
    #[error("request body beyond what the server holds for bodies at once")]
    OverBudget,
}

impl BadBody {
    pub fn status(self) -> u16 {
        match self {
            Self::TooLarge(_) => 413,
            Self::Malformed(_) => 400,
            Self::TrailersTooLarge => 431,
            Self::OverBudget => 503,
        }
    }
}

/// What one call of [`Decoder::decode`] came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the input taken (the body's framing included).
    pub taken: usize,
    /// Whether the body is whole: what follows it is the next request.
    pub done: bool,
}

/// Decodes one request body; see the module documentation.
#[derive(Debug)]
pub struct Decoder {
    state: State,
    body: BytesMut,
    max_bytes: usize,
    /// What the body and its reading hold of the server's budget.
    reservation: Reservation,
    extension_bytes: usize,
    /// The trailer section so far, checked as field lines at its end.
    trailers: Vec<u8>,
    trailer_lines: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Content-Length: this many bytes still to come.
    Length(u64),
    /// Chunked: a chunk-size line is next.
    Size,
    /// Chunked: this many bytes of chunk-data still to come.
    Data(u64),
    /// Chunked: the CRLF after chunk-data is next.
    DataEnd,
    /// Chunked: a trailer field line or the empty line is next.
    Trailers,
    Done,
}

impl Decoder {
    /// A decoder for a body framed as `framing`, at most `max_bytes` long,
    /// reserving what it holds in `reservation`: a Content-Length beyond
    /// the bound is refused at once, and one the budget cannot cover with
    /// [`READING_BYTES`] then; a chunked body reserves [`READING_BYTES`]
    /// now and each chunk's size when its size line arrives.
    pub fn new(framing: Body, max_bytes: usize, mut reservation: Reservation) -> Result<Self, BadBody> {
        let state = match framing {
            Body::None => State::Done,
            Body::Length(length) if length > max_bytes as u64 => return Err(BadBody::TooLarge(max_bytes)),
            Body::Length(length) => State::Length(length),
            Body::Chunked => State::Size,
        };
        let announced = match state {
            State::Length(length) => usize::try_from(length).expect("at most max_bytes"),
            _ => 0,
        };
        if framing.is_present() && !reservation.grow(READING_BYTES + announced) {
            return Err(BadBody::OverBudget);
        }
        Ok(Self {
            state,
            // What is announced is not yet sent: a client that announces
            // the bound and sends nothing costs the budget, not memory.
            body: BytesMut::with_capacity(announced.min(FIRST_ALLOCATION)),
            max_bytes,
            reservation,
            extension_bytes: 0,
            trailers: Vec::new(),
            trailer_lines: 0,
        })
    }

    /// Whether the body is whole.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Takes what it can of `input`, the bytes that follow what it took
    /// before.
    pub fn decode(&mut self, input: &[u8]) -> Result<Progress, BadBody> {
        let mut taken = 0;
        loop {
            let rest = &input[taken..];
            let step = match self.state {
                State::Done => 0,
                State::Length(remaining) | State::Data(remaining) => {
                    let remaining_bytes = usize::try_from(remaining).unwrap_or(usize::MAX);
                    let step = rest.len().min(remaining_bytes);
                    let ceiling = self.body.len().saturating_add(remaining_bytes);
                    append(&mut self.body, &rest[..step], ceiling);
                    let remaining = remaining - step as u64;
                    self.state = match self.state {
                        State::Length(_) if remaining == 0 => State::Done,
                        State::Length(_) => State::Length(remaining),
                        _ if remaining == 0 => State::DataEnd,
                        _ => State::Data(remaining),
                    };
                    step
                }
                State::Size => match line(rest, MAX_EXTENSION_BYTES + 64)? {
                    Some(line) => {
                        self.size_line(&line[..line.len() - 2])?;
                        line.len()
                    }
                    None => 0,
                },
                State::DataEnd => match rest {
                    [b'\r', b'\n', ..] => {
                        self.state = State::Size;
                        2
                    }
                    [] | [b'\r'] => 0,
                    _ => return Err(BadBody::Malformed("chunk-data not followed by CRLF")),
                },
                State::Trailers => match line(rest, MAX_TRAILER_BYTES)? {
                    Some(line) => {
                        self.trailer_line(line)?;
                        line.len()
                    }
                    None if self.trailers.len() + rest.len() > MAX_TRAILER_BYTES => {
                        return Err(BadBody::TrailersTooLarge);
                    }
                    None => 0,
                },
            };
            taken += step;
            if self.state == State::Done || step == 0 {
                return Ok(Progress {
                    taken,
                    done: self.state == State::Done,
                });
            }
        }
    }

    /// The body, once whole: bytes that hold its reservation (now its own
    /// length, the reading done) until the last of them is dropped.
    pub fn into_body(mut self) -> Bytes {
        if self.body.is_empty() {
            return Bytes::new();
        }
        self.reservation.shrink_to(self.body.len());
        Bytes::from_owner(Held {
            body: self.body,
            _reservation: self.reservation,
        })
    }

    /// Rules 1 and 2: `line` without its CRLF.
    fn size_line(&mut self, line: &[u8]) -> Result<(), BadBody> {
        let digits = line.iter().take_while(|byte| byte.is_ascii_hexdigit()).count();
        if digits == 0 {
            return Err(BadBody::Malformed("chunk-size is not 1*HEXDIG"));
        }
        let mut size: u64 = 0;
        for &digit in &line[..digits] {
            let value = u64::from(char::from(digit).to_digit(16).expect("a hex digit"));
            size = size
                .checked_mul(16)
                .and_then(|size| size.checked_add(value))
                .ok_or(BadBody::Malformed("chunk-size beyond 64 bits"))?;
        }
        let after = &line[digits..];
        let spaces = after
            .iter()
            .take_while(|&&byte| byte == b' ' || byte == b'\t')
            .count();
        match &after[spaces..] {
            [] => {}
            [b';', extensions @ ..] => {
                self.extension_bytes += extensions.len();
                if self.extension_bytes >= MAX_EXTENSION_BYTES {
                    return Err(BadBody::Malformed("chunk extensions too long"));
                }
            }
            _ => return Err(BadBody::Malformed("chunk-size followed by neither `;` nor CRLF")),
        }
        if size == 0 {
            self.state = State::Trailers;
            return Ok(());
        }
        if size > (self.max_bytes - self.body.len()) as u64 {
            return Err(BadBody::TooLarge(self.max_bytes));
        }
        if !self
            .reservation
            .grow(usize::try_from(size).expect("at most max_bytes"))
        {
            return Err(BadBody::OverBudget);
        }
        self.state = State::Data(size);
        Ok(())
    }

    /// Rule 4: `line` with its CRLF.
    fn trailer_line(&mut self, line: &[u8]) -> Result<(), BadBody> {
        self.trailers.extend_from_slice(line);
        if line.len() > 2 {
            self.trailer_lines += 1;
            if self.trailer_lines > MAX_HEADERS {
                return Err(BadBody::TrailersTooLarge);
            }
            if self.trailers.len() > MAX_TRAILER_BYTES {
                return Err(BadBody::TrailersTooLarge);
            }
            return Ok(());
        }
        let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
        match httparse::parse_headers(&self.trailers, &mut fields) {
            Ok(httparse::Status::Complete((length, _))) if length == self.trailers.len() => {}
            _ => return Err(BadBody::Malformed("invalid trailer field line")),
        }
        self.trailers = Vec::new();
        self.state = State::Done;
        Ok(())
    }
}

/// A body handed to the app, with what it holds of the budget.
struct Held {
    body: BytesMut,
    _reservation: Reservation,
}

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        &self.body
    }
}

/// Appends `bytes` to `body`, growing it as a vector grows but never past
/// `ceiling` (what the body has reserved so far), so that the memory a body
/// holds stays within its reservation.
fn append(body: &mut BytesMut, bytes: &[u8], ceiling: usize) {
    let needed = body.len() + bytes.len();
    if needed > body.capacity() {
        let capacity = (body.capacity() * 2).clamp(needed, ceiling.max(needed));
        let mut grown = BytesMut::with_capacity(capacity);
        grown.extend_from_slice(body);
        *body = grown;
    }
    body.extend_from_slice(bytes);
}

/// The line at the start of `bytes`, CRLF included, once it is whole;
/// refused when it ends with a bare LF, holds a CR elsewhere, or runs past
/// `max` bytes.
fn line(bytes: &[u8], max: usize) -> Result<Option<&[u8]>, BadBody> {
    let searched = &bytes[..bytes.len().min(max)];
    let Some(end) = searched.iter().position(|&byte| byte == b'\n') else {
        if searched.contains(&b'\r') && !searched.ends_with(b"\r") {
            return Err(BadBody::Malformed("bare CR in a chunk line"));
        }
        return if bytes.len() > max {
            Err(BadBody::Malformed("chunk line too long"))
        } else {
            Ok(None)
        };
    };
    let line = &bytes[..=end];
    if end == 0 || line[end - 1] != b'\r' {
        return Err(BadBody::Malformed("a chunk line ended by a bare LF"));
    }
    if line[..end - 1].contains(&b'\r') {
        return Err(BadBody::Malformed("bare CR in a chunk line"));
    }
    Ok(Some(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 64;

    /// Decodes `input` given in pieces of `step` bytes (each call sees what
    /// is left over plus the next piece, as the connection does).
    fn decoded(framing: Body, input: &[u8], step: usize) -> Result<(Bytes, usize), BadBody> {
        let mut decoder = Decoder::new(framing, MAX, Reservation::unbudgeted())?;
        let mut buffered = Vec::new();
        let mut taken_in_all = 0;
        for piece in input.chunks(step.max(1)) {
            buffered.extend_from_slice(piece);
            let progress = decoder.decode(&buffered)?;
            buffered.drain(..progress.taken);
            taken_in_all += progress.taken;
            if progress.done {
                return Ok((decoder.into_body(), taken_in_all));
            }
        }
        panic!("incomplete: {input:?}");
    }

    fn in_every_split(framing: Body, input: &[u8]) -> Result<(Bytes, usize), BadBody> {
        let whole = decoded(framing, input, input.len());
        for step in 1..input.len() {
            assert_eq!(decoded(framing, input, step), whole, "in pieces of {step}");
        }
        whole
    }

    #[test]
    fn a_content_length_body_is_that_many_bytes() {
        let (body, taken) = in_every_split(Body::Length(5), b"hello GET /next").unwrap();
        assert_eq!((&body[..], taken), (&b"hello"[..], 5));
        assert_eq!(
            Decoder::new(Body::Length(65), MAX, Reservation::unbudgeted()).err(),
            Some(BadBody::TooLarge(MAX))
        );
    }

    #[test]
    fn chunks_are_joined_and_what_follows_the_last_is_the_next_request() {
        let input = b"5\r\nhello\r\n1;name=value\r\n \r\n0\r\n\r\nGET /next";
        let (body, taken) = in_every_split(Body::Chunked, input).unwrap();
        assert_eq!(&body[..], b"hello ");
        assert_eq!(&input[taken..], b"GET /next");
        let with_trailers = b"A \t;x\r\n0123456789\r\n000\r\nX-Sum: 1\r\nX-B: 2\r\n\r\n";
        let (body, taken) = in_every_split(Body::Chunked, with_trailers).unwrap();
        assert_eq!((&body[..], taken), (&b"0123456789"[..], with_trailers.len()));
    }

    #[test]
    fn malformed_chunks_are_refused() {
        for input in [
            &b"\r\nhello\r\n0\r\n\r\n"[..],
            b"x\r\n",
            b"5 5\r\nhello\r\n0\r\n\r\n",
            b"5\nhello\r\n0\r\n\r\n",
            b"5\r\nhelloXX0\r\n\r\n",
            b"5;a\rb\r\nhello\r\n0\r\n\r\n",
            b"0\r\nno colon\r\n\r\n",
            b"0\r\nX: a\n\r\n",
            b"10000000000000005\r\nhello\r\n0\r\n\r\n",
        ] {
            assert!(
                matches!(
                    decoded(Body::Chunked, input, input.len()),
                    Err(BadBody::Malformed(_))
                ),
                "{:?}",
                input.escape_ascii().to_string()
            );
        }
    }

    #[test]
    fn a_body_reserves_what_it_will_hold_before_it_is_read_and_gives_it_back_when_dropped() {
        use crate::BodyBudget;

        let budget = BodyBudget::new(READING_BYTES + 10, "text/plain", b"busy");
        let announced = Decoder::new(Body::Length(11), MAX, budget.reservation());
        assert_eq!(announced.err(), Some(BadBody::OverBudget));
        assert_eq!(budget.held(), 0);

        let mut chunked = Decoder::new(Body::Chunked, MAX, budget.reservation()).unwrap();
        assert_eq!(budget.held(), READING_BYTES, "the reading, before any chunk");
        assert!(!chunked.decode(b"6\r\nabcdef\r\n").unwrap().done);
        assert_eq!(
            chunked.decode(b"5\r\n").err(),
            Some(BadBody::OverBudget),
            "refused at the size line, before the chunk's data"
        );
        drop(chunked);
        assert_eq!(budget.held(), 0);

        let mut whole = Decoder::new(Body::Length(10), MAX, budget.reservation()).unwrap();
        assert!(whole.decode(b"0123456789").unwrap().done);
        let body = whole.into_body();
        assert_eq!(budget.held(), 10, "the body's own bytes, the reading done");
        let shared = body.slice(2..4);
        drop(body);
        assert_eq!(budget.held(), 10, "while any of its bytes are held");
        drop(shared);
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn a_growing_body_never_holds_more_than_it_reserved() {
        let mut body = BytesMut::with_capacity(4);
        for _ in 0..10 {
            append(&mut body, b"abc", 30);
            assert!(body.capacity() <= 30, "{}", body.capacity());
        }
        assert_eq!(body.len(), 30);
    }

    #[test]
    fn bounds_hold_however_the_body_is_framed() {
        let big = format!("{:x}\r\n{}\r\n0\r\n\r\n", MAX + 1, "a".repeat(MAX + 1));
        assert_eq!(
            decoded(Body::Chunked, big.as_bytes(), 7),
            Err(BadBody::TooLarge(MAX))
        );
        let many = format!(
            "{}0\r\n\r\n",
            "20\r\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".repeat(3)
        );
        assert_eq!(
            decoded(Body::Chunked, many.as_bytes(), 5),
            Err(BadBody::TooLarge(MAX))
        );
        let extensions = format!("1;{}\r\na\r\n0\r\n\r\n", "e".repeat(MAX_EXTENSION_BYTES));
        assert!(matches!(
            decoded(Body::Chunked, extensions.as_bytes(), 1000),
            Err(BadBody::Malformed(_))
        ));
        let trailers = format!("0\r\n{}\r\n", "X-T: 1\r\n".repeat(MAX_HEADERS + 1));
        assert_eq!(
            decoded(Body::Chunked, trailers.as_bytes(), 100),
            Err(BadBody::TrailersTooLarge)
        );
    }
}
