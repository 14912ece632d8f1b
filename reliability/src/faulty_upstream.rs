//! An upstream that misbehaves on command: a loopback HTTP server that
//! answers each request (one per connection) the way it is told to at that
//! moment — a good graph, garbage, a body too large or too slow, a redirect
//! loop, a 500, a graph that breaks the graph's invariants.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// How the upstream answers, from now on.
#[derive(Debug, Clone)]
pub enum Behaviour {
    /// 200 with this JSON body.
    Json(Arc<Vec<u8>>),
    /// 200, `application/json`, and bytes that are not JSON.
    Garbage,
    /// 200 with a body of this many bytes (zeros), sent as fast as read.
    Huge(u64),
    /// 200 with this body, one byte a second.
    Trickle(Arc<Vec<u8>>),
    /// 302 to itself, forever.
    RedirectLoop,
    /// 500 with a JSON error.
    ServerError,
}

/// The server; stops when dropped.
pub struct FaultyUpstream {
    address: SocketAddr,
    behaviour: Arc<Mutex<Behaviour>>,
    task: JoinHandle<()>,
}

impl FaultyUpstream {
    pub async fn start(behaviour: Behaviour) -> anyhow::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let address = listener.local_addr()?;
        let behaviour = Arc::new(Mutex::new(behaviour));
        let shared = Arc::clone(&behaviour);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let now = shared.lock().unwrap_or_else(PoisonError::into_inner).clone();
                // A client that goes away mid-answer is what some faults expect.
                tokio::spawn(async move { drop(answer(stream, now).await) });
            }
        });
        Ok(Self {
            address,
            behaviour,
            task,
        })
    }

    /// `http://127.0.0.1:<port>/graph`.
    pub fn url(&self) -> String {
        format!("http://{}/graph", self.address)
    }

    pub fn behave(&self, behaviour: Behaviour) {
        *self.behaviour.lock().unwrap_or_else(PoisonError::into_inner) = behaviour;
    }
}

impl Drop for FaultyUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

const CHUNK: usize = 64 * 1024;

async fn answer(stream: TcpStream, behaviour: Behaviour) -> std::io::Result<()> {
    let mut stream = BufReader::new(stream);
    // The request head; its content does not matter.
    let mut line = String::new();
    while stream.read_line(&mut line).await? > 0 && line != "\r\n" {
        line.clear();
    }
    let stream = stream.get_mut();
    match behaviour {
        Behaviour::Json(body) => {
            stream
                .write_all(head(200, "application/json", body.len() as u64).as_bytes())
                .await?;
            stream.write_all(&body).await
        }
        Behaviour::Garbage => {
            let body: Vec<u8> = (0..CHUNK as u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect();
            stream
                .write_all(head(200, "application/json", body.len() as u64).as_bytes())
                .await?;
            stream.write_all(&body).await
        }
        Behaviour::Huge(length) => {
            stream
                .write_all(head(200, "application/json", length).as_bytes())
                .await?;
            let zeros = vec![b' '; CHUNK];
            let mut left = length;
            while left > 0 {
                let now = left.min(CHUNK as u64);
                stream.write_all(&zeros[..now as usize]).await?;
                left -= now;
            }
            Ok(())
        }
        Behaviour::Trickle(body) => {
            stream
                .write_all(head(200, "application/json", body.len() as u64).as_bytes())
                .await?;
            for byte in body.iter() {
                stream.write_all(&[*byte]).await?;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Ok(())
        }
        Behaviour::RedirectLoop => {
            let response =
                "HTTP/1.1 302 Found\r\nLocation: /graph\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            stream.write_all(response.as_bytes()).await
        }
        Behaviour::ServerError => {
            let body = br#"{"kind":"internal_error","value":"the upstream is failing on purpose"}"#;
            stream
                .write_all(head(500, "application/json", body.len() as u64).as_bytes())
                .await?;
            stream.write_all(body).await
        }
    }
}

fn head(status: u16, content_type: &str, length: u64) -> String {
    format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    )
}
