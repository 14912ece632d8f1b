//! Every outgoing HTTP request of the services that is not to a registry —
//! the policy-engine's upstream, the graph-builder's graph-data tarball URL,
//! signature stores — goes through [`HttpClient::send`] (a [`Request`], built
//! with `Request::get`, another method with `with_method`), so each one is
//!
//! - bounded: a body over the caller's limit is refused from its
//!   `Content-Length` or while it is read, never buffered whole, with an
//!   error naming the limit;
//! - CA-aware: the client trusts the system's roots plus [`ExtraRoots`] from
//!   a `root_certificate_dir`, through OpenSSL (native-tls), the TLS stack
//!   the registry client needs too (see the workspace `Cargo.toml`), set up
//!   on a client's first `https://` request: loading the system's CA bundle
//!   costs about 100 ms of CPU, which a command asking an `http://` URL
//!   never pays;
//! - traced: it runs in a client span whose W3C trace context the server
//!   receives (`traceparent`), so the server's span joins the caller's trace.
//!
//! Registry requests go through oci-client (the `registry-client` crate),
//! which takes its extra CAs from [`ExtraRoots`] as well.
//!
//! This crate knows HTTP clients only: no server, no actix, so libraries
//! (openshift-graph-data's signature store) can use it.

mod bounded;
mod client;
mod error_chain;
mod plain;
mod trace;
pub mod trust;

pub use client::{ClientError, ClientSettings, FetchError, HttpClient, Request, Response};
pub use reqwest::header::HeaderMap;
pub use reqwest::{Method, StatusCode, Url};
pub use trust::ExtraRoots;
