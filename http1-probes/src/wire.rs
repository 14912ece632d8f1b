//! Responses as they come off a raw socket, framed as their heads say.

use std::io::{self, Read};
use std::net::TcpStream;

/// A response as read off the wire.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Whether the server says it closes the connection after this.
    pub fn closes(&self) -> bool {
        self.header("connection").is_some_and(|value| {
            value
                .split(',')
                .any(|option| option.trim().eq_ignore_ascii_case("close"))
        })
    }
}

/// Reads one response from `stream`, `pending` holding what was read past
/// the previous one (and, after, past this one); `head_only` for an answer
/// to HEAD.
pub fn read_response(stream: &mut TcpStream, pending: &mut Vec<u8>, head_only: bool) -> io::Result<Response> {
    let (status, headers, head_len) = loop {
        let mut parsed_headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut parsed_headers);
        match response.parse(pending) {
            Ok(httparse::Status::Complete(len)) => {
                let headers = response
                    .headers
                    .iter()
                    .map(|header| {
                        (
                            header.name.to_owned(),
                            String::from_utf8_lossy(header.value).into_owned(),
                        )
                    })
                    .collect::<Vec<_>>();
                break (response.code.unwrap_or_default(), headers, len);
            }
            Ok(httparse::Status::Partial) => fill(stream, pending)?,
            Err(error) => return Err(invalid(format!("malformed response head: {error}"))),
        }
    };
    pending.drain(..head_len);
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
    };
    if head_only || status == 304 || status == 204 || (100..200).contains(&status) {
        return Ok(response);
    }
    if let Some(length) = response.header("content-length") {
        let length: usize = length
            .trim()
            .parse()
            .map_err(|_| invalid(format!("content-length {length:?}")))?;
        while pending.len() < length {
            fill(stream, pending)?;
        }
        response.body = pending.drain(..length).collect();
    } else if response
        .header("transfer-encoding")
        .is_some_and(|coding| coding.eq_ignore_ascii_case("chunked"))
    {
        response.body = read_chunked(stream, pending)?;
    } else {
        stream.read_to_end(pending)?;
        response.body = std::mem::take(pending);
    }
    Ok(response)
}

fn read_chunked(stream: &mut TcpStream, pending: &mut Vec<u8>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(end) = pending.windows(2).position(|pair| pair == b"\r\n") {
                break end;
            }
            fill(stream, pending)?;
        };
        let line = std::str::from_utf8(&pending[..line_end]).map_err(|_| invalid("chunk size".to_owned()))?;
        let size = usize::from_str_radix(line.split(';').next().unwrap_or_default().trim(), 16)
            .map_err(|_| invalid(format!("chunk size {line:?}")))?;
        while pending.len() < line_end + 2 + size + 2 {
            fill(stream, pending)?;
        }
        body.extend_from_slice(&pending[line_end + 2..line_end + 2 + size]);
        pending.drain(..line_end + 2 + size + 2);
        if size == 0 {
            return Ok(body);
        }
    }
}

/// Reads more into `pending`; the end of the stream is an error here.
fn fill(stream: &mut TcpStream, pending: &mut Vec<u8>) -> io::Result<()> {
    let mut buffer = [0; 65536];
    let read = stream.read(&mut buffer)?;
    if read == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "the server closed the connection mid-response ({} bytes pending)",
                pending.len()
            ),
        ));
    }
    pending.extend_from_slice(&buffer[..read]);
    Ok(())
}

/// Reads until the server closes the connection: `Ok(extra)` with whatever
/// came before the end (nothing, from a server that closes cleanly).
pub fn read_until_closed(stream: &mut TcpStream, pending: &mut Vec<u8>) -> io::Result<Vec<u8>> {
    let mut rest = std::mem::take(pending);
    match stream.read_to_end(&mut rest) {
        Ok(_) => Ok(rest),
        // A reset after the answers is a close too (the server did not read
        // what the client still had in flight).
        Err(error) if error.kind() == io::ErrorKind::ConnectionReset => Ok(rest),
        Err(error) => Err(error),
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}
