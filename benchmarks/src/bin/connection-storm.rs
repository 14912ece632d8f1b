//! Connection storm: many clients that each fetch one answer and keep their
//! connection open, as after a network blip every cluster reconnects at
//! once. Measures what the server's memory (RSS, summed over `--pid`s) does:
//! before, while the connections are held idle, and after they are closed.
//!
//!     connection-storm --url 'http://127.0.0.1:8081/graph?channel=stable-4.18' \
//!         --connections 10000 --pid "$(pidof policy-engine)" [--gzip]
//!
//! The caller raises `ulimit -n` (scripts/bench-policy-engine.sh does).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use benchmarks::rss_mib;
use clap::Parser;
use futures::StreamExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

#[derive(Parser)]
struct Args {
    /// `http://host:port/path?query`, loaded with GET.
    #[arg(long)]
    url: String,
    /// Connections opened and held.
    #[arg(long, default_value_t = 10_000)]
    connections: usize,
    /// The server's processes (several for nginx's workers); RSS is summed.
    #[arg(long = "pid", required = true)]
    pids: Vec<u32>,
    /// Send `Accept-Encoding: gzip`, as the cluster-version operator does.
    #[arg(long)]
    gzip: bool,
    /// Connections being opened at the same time.
    #[arg(long, default_value_t = 256)]
    concurrency: usize,
    /// Seconds the connections are held idle before measuring.
    #[arg(long, default_value_t = 5)]
    hold_secs: u64,
    /// Seconds after closing at which memory is measured again.
    #[arg(long, default_value_t = 60)]
    settle_secs: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let target = Target::parse(&args.url, args.gzip)?;
    let rss = || -> anyhow::Result<f64> { args.pids.iter().map(|&pid| rss_mib(pid)).sum() };
    let before = rss()?;
    println!("RSS before: {before:.1} MiB");

    let outcomes: Vec<Outcome> = futures::stream::iter(0..args.connections)
        .map(|_| target.fetch_and_keep())
        .buffer_unordered(args.concurrency)
        .collect()
        .await;
    let mut held = Vec::new();
    let mut statuses = BTreeMap::<String, usize>::new();
    for outcome in outcomes {
        let label = match outcome {
            Ok((status, Some(stream))) => {
                held.push(stream);
                status.to_string()
            }
            Ok((status, None)) => format!("{status} (closed by the server)"),
            Err(error) => format!("error: {error:#}"),
        };
        *statuses.entry(label).or_default() += 1;
    }
    println!("answers: {statuses:?}; connections held: {}", held.len());
    tokio::time::sleep(Duration::from_secs(args.hold_secs)).await;
    let loaded = rss()?;
    let per_connection = (loaded - before) * 1024.0 / held.len().max(1) as f64;
    println!(
        "RSS with {} idle connections: {loaded:.1} MiB (+{:.1} MiB, {per_connection:.1} KiB each)",
        held.len(),
        loaded - before
    );

    drop(held);
    tokio::time::sleep(Duration::from_secs(1)).await;
    println!("RSS 1 s after closing: {:.1} MiB", rss()?);
    tokio::time::sleep(Duration::from_secs(args.settle_secs.saturating_sub(1))).await;
    let settled = rss()?;
    println!(
        "RSS {} s after closing: {settled:.1} MiB ({:+.0}% of before)",
        args.settle_secs,
        (settled / before - 1.0) * 100.0
    );
    Ok(())
}

/// The HTTP status and, when the server kept it open, the connection.
type Outcome = anyhow::Result<(u16, Option<TcpStream>)>;

struct Target {
    address: String,
    request: Vec<u8>,
}

impl Target {
    fn parse(url: &str, gzip: bool) -> anyhow::Result<Self> {
        let rest = url.strip_prefix("http://").context("only http:// URLs")?;
        let (address, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let path = if path.is_empty() { "/" } else { path };
        let encoding = if gzip { "Accept-Encoding: gzip\r\n" } else { "" };
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nAccept: application/json\r\n{encoding}\r\n");
        Ok(Self {
            address: address.to_owned(),
            request: request.into_bytes(),
        })
    }

    /// Sends one request, reads the whole answer and keeps the connection,
    /// unless the server said it closes it.
    async fn fetch_and_keep(&self) -> Outcome {
        let mut stream = TcpStream::connect(&self.address).await.context("connecting")?;
        stream.write_all(&self.request).await.context("sending")?;
        let mut received = Vec::with_capacity(1024);
        let head_end = loop {
            if let Some(end) = received.windows(4).position(|window| window == b"\r\n\r\n") {
                break end + 4;
            }
            let mut chunk = [0; 1024];
            let read = stream.read(&mut chunk).await.context("reading the head")?;
            anyhow::ensure!(read > 0, "closed before the answer's head");
            received.extend_from_slice(&chunk[..read]);
        };
        let head = String::from_utf8_lossy(&received[..head_end]).to_ascii_lowercase();
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .context("no status")?;
        let header = |name: &str| {
            head.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':').map(str::trim))
        };
        let length: usize = header("content-length")
            .and_then(|value| value.parse().ok())
            .context("no content-length")?;
        let mut remaining = length.saturating_sub(received.len() - head_end);
        let mut chunk = vec![0; 64 * 1024];
        while remaining > 0 {
            let read = stream.read(&mut chunk).await.context("reading the body")?;
            anyhow::ensure!(read > 0, "closed within the body");
            remaining = remaining.saturating_sub(read);
        }
        let kept = header("connection") != Some("close");
        Ok((status, kept.then_some(stream)))
    }
}
