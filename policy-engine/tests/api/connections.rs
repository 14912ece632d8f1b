//! Open connections are counted and bounded: a connection arriving beyond
//! `max_open_connections` is answered 503 and closed, while connections
//! admitted before keep being served. (The layer's own tests:
//! `http1-server/tests/layer/front_door.rs`.)

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::app::{TestApp, settings, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, fixture};

/// A client connection kept open between requests.
struct Connection(TcpStream);

/// An answer's status line, its `Connection` header and its body.
struct RawAnswer {
    status: u16,
    closes: bool,
    body: String,
}

impl Connection {
    async fn open(app: &TestApp) -> Self {
        Self(TcpStream::connect(app.address).await.unwrap())
    }

    async fn get(&mut self, path_and_query: &str) -> RawAnswer {
        let request =
            format!("GET {path_and_query} HTTP/1.1\r\nHost: test\r\nAccept: application/json\r\n\r\n");
        self.0.write_all(request.as_bytes()).await.unwrap();
        let mut received = Vec::new();
        let head_end = loop {
            if let Some(end) = received.windows(4).position(|window| window == b"\r\n\r\n") {
                break end + 4;
            }
            let mut chunk = [0; 4096];
            let read = self.0.read(&mut chunk).await.unwrap();
            assert!(read > 0, "closed before the answer");
            received.extend_from_slice(&chunk[..read]);
        };
        let head = String::from_utf8_lossy(&received[..head_end]).to_ascii_lowercase();
        let header = |name: &str| {
            head.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':').map(str::trim))
        };
        let length: usize = header("content-length").unwrap().parse().unwrap();
        while received.len() < head_end + length {
            let mut chunk = [0; 65536];
            let read = self.0.read(&mut chunk).await.unwrap();
            assert!(read > 0, "closed within the body");
            received.extend_from_slice(&chunk[..read]);
        }
        RawAnswer {
            status: head.split_whitespace().nth(1).unwrap().parse().unwrap(),
            closes: header("connection") == Some("close"),
            body: String::from_utf8_lossy(&received[head_end..]).into_owned(),
        }
    }

    /// Whether the server closed the connection (reads end of stream).
    async fn is_closed(&mut self) -> bool {
        let mut byte = [0];
        matches!(
            tokio::time::timeout(Duration::from_secs(10), self.0.read(&mut byte)).await,
            Ok(Ok(0) | Err(_))
        )
    }
}

const QUERY: &str = "/graph?channel=stable-4.6";

#[tokio::test]
async fn connections_beyond_the_limit_are_refused_clearly() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut limited = settings(&upstream.url());
    limited.service.connections.max_open_connections = 2;
    let app = spawn_ready(limited).await;

    let mut held = [Connection::open(&app).await, Connection::open(&app).await];
    for connection in &mut held {
        let answer = connection.get(QUERY).await;
        assert_eq!(answer.status, 200);
        assert!(!answer.closes);
    }
    assert_eq!(app.metric("cincinnati_pe_open_connections").await, 2.0);

    let mut third = Connection::open(&app).await;
    let refused = third.get(QUERY).await;
    assert_eq!(refused.status, 503);
    assert!(refused.closes, "the refused connection is closed");
    let body: serde_json::Value = serde_json::from_str(&refused.body).unwrap();
    assert_eq!(body["kind"], "service_unavailable");
    assert!(
        body["value"]
            .as_str()
            .unwrap()
            .contains("limit of 2 open connections"),
        "{body}"
    );
    assert!(third.is_closed().await);
    assert_eq!(app.metric("cincinnati_pe_connections_refused_total").await, 1.0);
    assert_eq!(
        app.metric("cincinnati_pe_graph_response_errors_total{code=\"503\",kind=\"service_unavailable\"}")
            .await,
        1.0
    );

    // Those already connected are still served; a closed one makes room.
    assert_eq!(held[0].get(QUERY).await.status, 200);
    let [first, _second] = held;
    drop(first);
    eventually(
        "the closed connection is no longer counted",
        Duration::from_secs(10),
        || async { app.metric("cincinnati_pe_open_connections").await == 1.0 },
    )
    .await;
    assert_eq!(Connection::open(&app).await.get(QUERY).await.status, 200);
}
