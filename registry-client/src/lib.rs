//! A client for one repository of an OCI registry, on oci-client: tag
//! listing with paging and a loop guard, manifests of the four formats,
//! blobs as bounded reads or streams, retries with backoff and per-attempt
//! timeouts, basic and token authentication, request counts.
//!
//! - [`address`]: where a registry is (`quay.io`, `http://127.0.0.1:5000`).
//! - [`credentials`]: Docker `config.json` lookup.
//! - [`setup`]: a client from configured keys, with one rule for
//!   credentials files and CAs ([`Access`]).
//! - [`manifest`]: Docker and OCI images, manifest lists and indexes.
//! - [`release_image`]: what makes an image an OpenShift release image.
//! - [`retry`]: which failures are retried, how often and how patiently.
//!
//! TLS is OpenSSL (native-tls), with extra CAs from `http-fetch`'s
//! [`http_fetch::ExtraRoots`]: a mirror's self-signed certificate that is its
//! own CA is accepted once trusted, which webpki (rustls) refuses.

pub mod address;
mod client;
pub mod credentials;
pub mod manifest;
pub mod release_image;
pub mod retry;
pub mod setup;

pub use address::{RegistryAddress, Scheme};
pub use client::{RegistryClient, RegistryError, RegistryFailure, RegistrySettings, RequestCounts};
pub use credentials::Credentials;
pub use retry::RetryPolicy;
pub use setup::{Access, SetupError};
