//! The settings every service shares, declared once: logging, the API
//! listener, the status listener, connection tuning and the rules of graph
//! requests. A service composes them into its own settings type, flattening
//! the parts of `[service]` it takes:
//!
//! ```ignore
//! #[derive(Debug, Default, Serialize, Deserialize)]
//! #[serde(default)]
//! pub struct Settings {
//!     #[serde(flatten)]
//!     pub logging: Logging,
//!     pub service: ServiceSettings, // #[serde(flatten)] api: ApiSettings<Defaults>, ...
//!     pub status: StatusSettings<Defaults>,
//!     pub signatures: SignatureSettings,
//! }
//! ```
//!
//! Defaults that differ between services (ports, `cache_max_age_secs`) are
//! the service's [`Defaults`], a type parameter of each section, so each
//! section's `Default` is the service's default.
//! Unknown keys are refused by the configuration layers
//! ([`crate::config::Layers::extract`]), against the keys the settings type
//! serialises ([`crate::schema`]): serde's `deny_unknown_fields` cannot be
//! combined with `flatten`.

use std::fmt::Debug;
use std::marker::PhantomData;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::config::string_list;
use crate::logging::{LogFormat, Verbosity};
use http_answers::query::RequiredParameters;
use http_answers::{CachePolicy, PathPrefix};

/// The defaults in which services differ.
pub trait Defaults: Debug + Clone + Send + Sync + 'static {
    const API_PORT: u16;
    const STATUS_PORT: u16;
    const CACHE_MAX_AGE_SECS: u64 = 0;
}

/// What the skeleton reads from a service's settings.
pub trait SkeletonSettings: Serialize + DeserializeOwned + Default + Debug + Send + Sync + 'static {
    fn logging(&self) -> &Logging;
    /// Where the status server listens.
    fn status_address(&self) -> SocketAddr;
    /// Where the API servers listen (for the check that no two ports clash).
    fn api_addresses(&self) -> Vec<SocketAddr>;
}

/// `verbosity` and `log_format`, at the top of every service's settings.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Logging {
    pub verbosity: Verbosity,
    pub log_format: LogFormat,
}

/// `[service] address, port, path_prefix, tracing_endpoint`: the API
/// listener, its route prefix, and upstream's Jaeger endpoint (accepted so
/// existing configurations load; ignored with a warning: spans go over
/// OTLP, configured by the standard `OTEL_EXPORTER_OTLP_*` variables).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, bound = "")]
pub struct ApiSettings<D: Defaults> {
    pub address: IpAddr,
    pub port: u16,
    pub path_prefix: PathPrefix,
    pub tracing_endpoint: Option<String>,
    #[serde(skip)]
    defaults: PhantomData<D>,
}

impl<D: Defaults> Default for ApiSettings<D> {
    fn default() -> Self {
        Self {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: D::API_PORT,
            path_prefix: PathPrefix::default(),
            tracing_endpoint: None,
            defaults: PhantomData,
        }
    }
}

impl<D: Defaults> ApiSettings<D> {
    pub fn socket_address(&self) -> SocketAddr {
        SocketAddr::new(self.address, self.port)
    }

    /// The same address on another port (the graph-builder's public port).
    pub fn on_port(&self, port: u16) -> SocketAddr {
        SocketAddr::new(self.address, port)
    }
}

/// `[status] address, port, hosts`: probes, `/metrics` and `/status`, and
/// the names the status server answers for besides IP literals,
/// `localhost`, its hostname and Kubernetes service names (see
/// [`crate::hosts`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, bound = "")]
pub struct StatusSettings<D: Defaults> {
    pub address: IpAddr,
    pub port: u16,
    #[serde(deserialize_with = "string_list")]
    pub hosts: Vec<String>,
    #[serde(skip)]
    defaults: PhantomData<D>,
}

impl<D: Defaults> Default for StatusSettings<D> {
    fn default() -> Self {
        Self {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: D::STATUS_PORT,
            hosts: Vec::new(),
            defaults: PhantomData,
        }
    }
}

impl<D: Defaults> StatusSettings<D> {
    pub fn socket_address(&self) -> SocketAddr {
        SocketAddr::new(self.address, self.port)
    }
}

/// `[service]` connection tuning: upstream's actix knobs, with defaults
/// that queue load rather than refuse it, and a bound on open connections
/// (see [`crate::connections`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct ConnectionSettings {
    /// HTTP worker threads; 0 means one per CPU core.
    pub workers: usize,
    /// Seconds an idle keep-alive connection stays open.
    pub keep_alive: u64,
    /// Seconds a client has to send its request head.
    pub client_timeout: u64,
    /// Pending connections the kernel queues.
    pub backlog: u32,
    /// Concurrent connections per worker.
    pub max_connections: usize,
    /// Open connections across workers beyond which requests are refused.
    pub max_open_connections: usize,
    /// Concurrent TLS handshakes per worker (upstream's knob; no TLS here).
    pub max_connection_rate: usize,
}

impl Default for ConnectionSettings {
    fn default() -> Self {
        Self {
            workers: 0,
            keep_alive: 75,
            client_timeout: 5,
            backlog: 2048,
            max_connections: 25_000,
            max_open_connections: 10_000,
            max_connection_rate: 256,
        }
    }
}

/// `[service] mandatory_client_parameters, cache_max_age_secs`: what graph
/// requests must carry, and how long their answers may be cached.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, bound = "")]
pub struct RequestSettings<D: Defaults> {
    /// Parameters every graph request must carry (presence only).
    #[serde(deserialize_with = "string_list")]
    pub mandatory_client_parameters: Vec<String>,
    /// `Cache-Control: max-age` of graph answers; 0 means revalidate always.
    pub cache_max_age_secs: u64,
    #[serde(skip)]
    defaults: PhantomData<D>,
}

impl<D: Defaults> Default for RequestSettings<D> {
    fn default() -> Self {
        Self {
            mandatory_client_parameters: Vec::new(),
            cache_max_age_secs: D::CACHE_MAX_AGE_SECS,
            defaults: PhantomData,
        }
    }
}

impl<D: Defaults> RequestSettings<D> {
    pub fn required(&self) -> RequiredParameters {
        RequiredParameters::new(self.mandatory_client_parameters.iter().cloned())
    }

    pub fn caching(&self) -> CachePolicy {
        CachePolicy::revalidate_after(Duration::from_secs(self.cache_max_age_secs))
    }
}

/// Two listeners of one process on the same address and port.
#[derive(Debug, thiserror::Error)]
#[error("two servers would listen on {0}: give each its own port")]
pub struct SharedAddress(pub SocketAddr);

/// Refuses settings under which two servers would bind the same address
/// (port 0 picks a free port, so it never clashes).
pub fn distinct_addresses(settings: &impl SkeletonSettings) -> Result<(), SharedAddress> {
    let mut addresses = settings.api_addresses();
    addresses.push(settings.status_address());
    for (position, address) in addresses.iter().enumerate() {
        if address.port() != 0 && addresses[position + 1..].contains(address) {
            return Err(SharedAddress(*address));
        }
    }
    Ok(())
}

/// A configured plugin (a `[[plugin_settings]]` or `[[policy]]` table) as
/// printed: its `name`, and the fields of its typed settings that are set,
/// secrets redacted by their types.
pub struct Named<'a, T>(pub &'a str, pub &'a T);

impl<T: Serialize> Serialize for Named<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut table = serde_json::to_value(self.1).map_err(serde::ser::Error::custom)?;
        if let Some(fields) = table.as_object_mut() {
            // TOML has no null: unset fields are left out.
            fields.retain(|_, value| !value.is_null());
            fields.insert("name".to_owned(), self.0.into());
        }
        table.serialize(serializer)
    }
}
