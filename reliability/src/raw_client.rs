//! Clients as the storms need them, on raw TCP: one that fetches an answer
//! and then keeps its connection open doing nothing, and one that sends its
//! request head a byte at a time and never finishes it (slowloris).

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

/// A connection that fetched one answer and now sits idle (HTTP keep-alive).
pub struct IdleConnection {
    _stream: BufReader<TcpStream>,
}

/// Connects to `address`, GETs `path_and_query` as a cluster does (gzip,
/// keep-alive) and reads the whole answer: returns the connection, kept open
/// (unless the server closed it after answering), and the answer's status.
pub async fn fetch(address: SocketAddr, path_and_query: &str) -> anyhow::Result<(IdleConnection, u16)> {
    let mut stream = BufReader::new(TcpStream::connect(address).await.context("connecting")?);
    let request = format!(
        "GET {path_and_query} HTTP/1.1\r\nHost: {address}\r\nAccept: application/json\r\n\
         Accept-Encoding: gzip\r\nConnection: keep-alive\r\n\r\n"
    );
    stream.get_mut().write_all(request.as_bytes()).await?;
    let status = read_answer(&mut stream).await?;
    Ok((IdleConnection { _stream: stream }, status))
}

/// Reads one HTTP/1.1 answer with a `Content-Length` body; returns its status.
async fn read_answer(stream: &mut BufReader<TcpStream>) -> anyhow::Result<u16> {
    let mut line = String::new();
    stream.read_line(&mut line).await?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("status line {line:?}"))?;
    let mut length = None;
    loop {
        line.clear();
        if stream.read_line(&mut line).await? == 0 {
            bail!("connection closed in the answer's head");
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = Some(value.trim().parse::<u64>()?);
        }
    }
    let length = length.context("no Content-Length")?;
    let copied = tokio::io::copy(&mut stream.take(length), &mut tokio::io::sink()).await?;
    ensure!(copied == length, "body cut after {copied} of {length} bytes");
    Ok(status)
}

/// A client that started a request and sends it ever so slowly.
pub struct Slowloris {
    stream: TcpStream,
}

impl Slowloris {
    /// Connects and sends the first bytes of a request head.
    pub async fn start(address: SocketAddr) -> anyhow::Result<Self> {
        let mut stream = TcpStream::connect(address).await.context("connecting")?;
        stream
            .write_all(b"GET /api/upgrades_info/graph?channel=stable-4.18 HTTP/1.1\r\n")
            .await?;
        Ok(Self { stream })
    }

    /// Sends one more header byte; `false` once the server has closed the
    /// connection (a write fails, or a read sees its end).
    pub async fn trickle(&mut self) -> bool {
        let mut probe = [0u8; 512];
        match tokio::time::timeout(Duration::from_millis(1), self.stream.read(&mut probe)).await {
            // The server answered (408, say) or closed: either way it is done with us.
            Ok(Ok(_)) | Ok(Err(_)) => return false,
            Err(_still_open) => {}
        }
        self.stream.write_all(b"X").await.is_ok()
    }
}
