//! A real HTTP or HTTPS server on `127.0.0.1` answering fixed bodies by
//! path: what the services fetch besides registries (signature stores,
//! graph-data tarballs, a Graph API upstream). A test changes what it serves
//! while it runs; it stops when dropped.

use std::collections::HashMap;
use std::io::Read;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use crate::error::Error;
use crate::options::CertificateShape;
use crate::tls;

/// What the server answers for one path.
#[derive(Debug, Clone)]
pub enum Body {
    /// These bytes, with their `Content-Length`.
    Bytes(Vec<u8>),
    /// These bytes with a strong `ETag` made from them, and `304 Not
    /// Modified` to a request whose `If-None-Match` holds it: a server to
    /// follow with conditional GETs.
    Tagged(Vec<u8>),
    /// This many zero bytes, streamed without a `Content-Length` (chunked),
    /// so a client learns the size only by reading.
    Streamed(u64),
    /// An empty answer with this status.
    Status(u16),
    /// These bytes, gzip-compressed already, labelled `Content-Encoding:
    /// gzip`: a server compressing its answer.
    Gzip(Vec<u8>),
    /// `302 Found` to this location.
    Redirect(String),
}

/// One request the server saw.
#[derive(Debug, Clone)]
pub struct ServedRequest {
    pub path: String,
    /// What followed the `?`, empty without one.
    pub query: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
}

#[derive(Default)]
struct Files {
    bodies: HashMap<String, Body>,
    requests: Vec<ServedRequest>,
}

/// Answers the paths given to [`FileServer::serve`], 404 for others.
pub struct FileServer {
    server: Arc<tiny_http::Server>,
    files: Arc<Mutex<Files>>,
    url: String,
    ca_pem: Option<String>,
}

impl FileServer {
    /// A plain-HTTP server.
    pub fn start() -> Result<Self, Error> {
        let server = tiny_http::Server::http((Ipv4Addr::LOCALHOST, 0)).map_err(Error::FileServer)?;
        Ok(Self::run(server, "http", None))
    }

    /// An HTTPS server with a certificate of `shape` for `127.0.0.1` and
    /// `localhost`; clients must trust [`FileServer::ca_pem`].
    pub fn start_tls(shape: CertificateShape) -> Result<Self, Error> {
        let material = tls::generate(shape)?;
        let config = tiny_http::SslConfig {
            certificate: material.server_certificate_pem.into_bytes(),
            private_key: material.server_key_pem.into_bytes(),
        };
        let server = tiny_http::Server::https((Ipv4Addr::LOCALHOST, 0), config).map_err(Error::FileServer)?;
        Ok(Self::run(server, "https", Some(material.ca_pem)))
    }

    fn run(server: tiny_http::Server, scheme: &str, ca_pem: Option<String>) -> Self {
        let address = server
            .server_addr()
            .to_ip()
            .expect("a TCP listener has an IP address");
        let server = Arc::new(server);
        let files = Arc::new(Mutex::new(Files::default()));
        thread::spawn({
            let (server, files) = (Arc::clone(&server), Arc::clone(&files));
            move || {
                for request in server.incoming_requests() {
                    let body = record(&files, &request);
                    // A client that went away (or stopped reading a body it
                    // found too large) needs no answer.
                    let _ = match body {
                        None => request.respond(tiny_http::Response::empty(404)),
                        Some(Body::Status(status)) => request.respond(tiny_http::Response::empty(status)),
                        Some(Body::Bytes(bytes)) => request.respond(tiny_http::Response::from_data(bytes)),
                        Some(Body::Tagged(bytes)) => {
                            let etag = entity_tag(&bytes);
                            let header = tiny_http::Header::from_bytes("ETag", etag.as_bytes())
                                .expect("an entity tag is a valid header value");
                            if if_none_match(&request).is_some_and(|tags| tags.contains(&etag)) {
                                request.respond(tiny_http::Response::empty(304).with_header(header))
                            } else {
                                request.respond(tiny_http::Response::from_data(bytes).with_header(header))
                            }
                        }
                        Some(Body::Gzip(bytes)) => request.respond(
                            tiny_http::Response::from_data(bytes).with_header(
                                tiny_http::Header::from_bytes("Content-Encoding", "gzip")
                                    .expect("a valid header"),
                            ),
                        ),
                        Some(Body::Redirect(location)) => request.respond(
                            tiny_http::Response::empty(302).with_header(
                                tiny_http::Header::from_bytes("Location", location.as_bytes())
                                    .expect("a location is a valid header value"),
                            ),
                        ),
                        Some(Body::Streamed(length)) => request.respond(tiny_http::Response::new(
                            tiny_http::StatusCode(200),
                            Vec::new(),
                            std::io::repeat(0).take(length),
                            None,
                            None,
                        )),
                    };
                }
            }
        });
        Self {
            server,
            files,
            url: format!("{scheme}://{address}"),
            ca_pem,
        }
    }

    /// `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The PEM certificate a client must trust, for HTTPS servers.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// Answers `body` to `GET path` (the path without its query) from now on.
    pub fn serve(&self, path: &str, body: Body) {
        self.lock().bodies.insert(path.to_owned(), body);
    }

    /// The requests answered so far, oldest first.
    pub fn requests(&self) -> Vec<ServedRequest> {
        self.lock().requests.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Files> {
        self.files.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A strong entity tag for `bytes`: equal bytes, equal tags.
fn entity_tag(bytes: &[u8]) -> String {
    use std::hash::{DefaultHasher, Hash as _, Hasher as _};
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    format!("\"{:016x}\"", hasher.finish())
}

fn if_none_match(request: &tiny_http::Request) -> Option<String> {
    request
        .headers()
        .iter()
        .find(|header| header.field.equiv("If-None-Match"))
        .map(|header| header.value.as_str().to_owned())
}

/// Logs `request` and finds what to answer.
fn record(files: &Mutex<Files>, request: &tiny_http::Request) -> Option<Body> {
    let (path, query) = request.url().split_once('?').unwrap_or((request.url(), ""));
    let (path, query) = (path.to_owned(), query.to_owned());
    let headers = request
        .headers()
        .iter()
        .map(|header| {
            (
                header.field.as_str().as_str().to_ascii_lowercase(),
                header.value.as_str().to_owned(),
            )
        })
        .collect();
    let mut files = files.lock().unwrap_or_else(PoisonError::into_inner);
    let body = files.bodies.get(&path).cloned();
    files.requests.push(ServedRequest { path, query, headers });
    body
}

impl std::fmt::Debug for FileServer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("FileServer")
            .field("url", &self.url)
            .finish()
    }
}

impl Drop for FileServer {
    /// Stops taking requests. The worker is not waited for: it may be
    /// writing a body to a client that nothing reads from any more (a test's
    /// runtime drops the connection only after the test); it ends when that
    /// write fails.
    fn drop(&mut self) {
        self.server.unblock();
    }
}
