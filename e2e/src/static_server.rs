//! A loopback HTTP server answering every request with one fixed body:
//! an upstream that serves a graph file, as a test stand-in.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use anyhow::anyhow;

/// Serves until dropped.
pub struct StaticServer {
    server: Arc<tiny_http::Server>,
    worker: Option<JoinHandle<()>>,
    url: String,
}

impl StaticServer {
    pub fn start(body: Vec<u8>, content_type: &'static str) -> anyhow::Result<Self> {
        let server = tiny_http::Server::http((Ipv4Addr::LOCALHOST, 0))
            .map_err(|error| anyhow!("starting the static server: {error}"))?;
        let address = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| anyhow!("the static server has no IP address"))?;
        let server = Arc::new(server);
        let requests = Arc::clone(&server);
        let header = tiny_http::Header::from_bytes("Content-Type", content_type)
            .map_err(|()| anyhow!("invalid content type {content_type:?}"))?;
        let worker = thread::spawn(move || {
            for request in requests.incoming_requests() {
                let response = tiny_http::Response::from_data(body.clone()).with_header(header.clone());
                // A client that went away needs no answer.
                let _ = request.respond(response);
            }
        });
        Ok(Self {
            server,
            worker: Some(worker),
            url: format!("http://{address}"),
        })
    }

    /// `http://127.0.0.1:PORT`; every path answers the body.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(worker) = self.worker.take() {
            // A panicked worker has nothing left to clean up.
            let _ = worker.join();
        }
    }
}
