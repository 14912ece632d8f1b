//! A real policy-engine on loopback ports.

use std::net::SocketAddr;
use std::time::Duration;

use policy_engine::status::EngineStatus;
use policy_engine::{Application, Settings, StopHandle};
use reqwest::header::HeaderMap;

use super::eventually;

pub struct TestApp {
    pub address: SocketAddr,
    pub status_address: SocketAddr,
    pub client: reqwest::Client,
    stop: StopHandle,
    run: tokio::task::JoinHandle<anyhow::Result<()>>,
}

/// A response read whole.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The `max-age` of its `Cache-Control`, in seconds.
    pub fn max_age(&self) -> u64 {
        let cache_control = self.header("cache-control").unwrap();
        cache_control
            .split("max-age=")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .unwrap_or_else(|| panic!("{cache_control}"))
            .parse()
            .unwrap()
    }

    pub fn json(&self) -> serde_json::Value {
        self.parse()
    }

    /// The body as a `T`, e.g. a typed status document.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| {
            panic!(
                "not the JSON expected ({error}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|value| value.to_str().unwrap())
    }

    /// Asserts a `{kind, value}` error with this status and kind.
    pub fn assert_error(&self, status: u16, kind: &str) -> String {
        assert_eq!(self.status, status, "{}", String::from_utf8_lossy(&self.body));
        assert_eq!(self.header("content-type"), Some("application/json"));
        let body = self.json();
        assert_eq!(body["kind"], kind, "{body}");
        body["value"].as_str().expect("value is a string").to_owned()
    }
}

/// Settings for a test engine: ephemeral ports, fast refreshes, `upstream`.
pub fn settings(upstream: &str) -> Settings {
    let mut settings = Settings::default();
    settings.service.api.port = 0;
    settings.status.port = 0;
    settings.service.connections.workers = 1;
    settings.upstream.cincinnati.url = upstream.parse().unwrap();
    settings.upstream.cincinnati.interval_secs = 1;
    settings.upstream.cincinnati.timeout_secs = 2;
    // The fake upstream does not wait: following would only add requests
    // that tests counting them would have to tell apart (see `follow.rs`).
    settings.upstream.cincinnati.wait_for_change = false;
    settings
}

/// Starts an engine with `settings` and waits until `/readyz` says 200.
pub async fn spawn_ready(settings: Settings) -> TestApp {
    let app = spawn(settings).await;
    app.wait_ready().await;
    app
}

/// Starts an engine with `settings`, not waiting for its upstream.
pub async fn spawn(settings: Settings) -> TestApp {
    let application = Application::build(&settings).expect("the test engine starts");
    TestApp {
        address: application.address("api"),
        status_address: application.address("status"),
        // Raw bytes: tests check compressed bodies themselves.
        client: reqwest::Client::builder().no_gzip().build().unwrap(),
        stop: application.stop_handle(),
        run: tokio::spawn(application.run_until_stopped()),
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.stop();
    }
}

impl TestApp {
    /// Asks the engine to shut down, as SIGTERM does.
    pub fn stop(&self) {
        self.stop.stop();
    }

    /// Shuts the engine down and waits until it has: its servers closed,
    /// its tasks ended (nothing it kept in memory can reach a store after).
    pub async fn shut_down(mut self) {
        self.stop();
        (&mut self.run)
            .await
            .expect("the engine does not panic")
            .expect("the engine stops cleanly");
    }

    /// The client tests send requests with (no gzip).
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    pub fn url(&self, path_and_query: &str) -> String {
        format!("http://{}{path_and_query}", self.address)
    }

    pub async fn get(&self, path_and_query: &str) -> Answer {
        self.get_with(path_and_query, &[]).await
    }

    pub async fn get_with(&self, path_and_query: &str, headers: &[(&str, &str)]) -> Answer {
        self.send(self.client.get(self.url(path_and_query)), headers)
            .await
    }

    pub async fn send(&self, mut request: reqwest::RequestBuilder, headers: &[(&str, &str)]) -> Answer {
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("the engine answers");
        Answer {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: response.bytes().await.unwrap().to_vec(),
        }
    }

    pub async fn status_get(&self, path: &str) -> Answer {
        self.send(
            self.client.get(format!("http://{}{path}", self.status_address)),
            &[],
        )
        .await
    }

    /// `/status`, typed: a field renamed or gone fails the test.
    pub async fn status_document(&self) -> EngineStatus {
        self.status_get("/status").await.parse()
    }

    pub async fn metrics(&self) -> String {
        String::from_utf8(self.status_get("/metrics").await.body).unwrap()
    }

    /// The value of one sample line of `/metrics`, e.g. `cincinnati_pe_upstream_stale`.
    pub async fn metric(&self, sample: &str) -> f64 {
        let metrics = self.metrics().await;
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(sample)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no sample {sample} in:\n{metrics}"))
            .parse()
            .unwrap()
    }

    /// The status line and headers of a GET sent with no headers but `Host`.
    pub async fn raw_request_head(&self, path_and_query: &str) -> String {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let mut stream = tokio::net::TcpStream::connect(self.address).await.unwrap();
        let request = format!("GET {path_and_query} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.unwrap();
        let response = String::from_utf8_lossy(&response).into_owned();
        response.split("\r\n\r\n").next().unwrap().to_owned()
    }

    pub async fn wait_ready(&self) {
        // Patience, not a measure: an engine whose store is down is ready
        // once rollout control's first read failed, which may wait for the
        // store's connect timeout behind another round's.
        eventually("the engine is ready", Duration::from_secs(30), || async {
            self.status_get("/readyz").await.status == 200
        })
        .await;
    }
}
