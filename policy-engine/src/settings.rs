//! The policy-engine's settings: upstream's TOML layout and flag names, with
//! defaults that do not turn load into refusals.
//!
//! ```toml
//! verbosity = "vv"
//! [service]
//! address = "0.0.0.0"
//! port = 8081
//! path_prefix = "/api/upgrades_info"
//! mandatory_client_parameters = ["channel"]
//! [status]
//! port = 9081
//! [upstream.cincinnati]
//! url = "http://localhost:8080/api/upgrades_info/graph"
//! [[policy]]
//! name = "channel-filter"
//! ```

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use cincinnati_core::stage::Pipeline;
use serde::Deserialize;
use service_kit::PathPrefix;
use service_kit::config::string_list;
use service_kit::logging::{LogFormat, Verbosity};

use crate::engine::Limits;
use crate::filters::{self, PolicyRequest};
use crate::query::QueryRules;
use crate::upstream::KindSetting;

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub verbosity: Verbosity,
    pub log_format: LogFormat,
    pub service: ServiceSettings,
    pub status: StatusSettings,
    pub upstream: UpstreamSettings,
    /// Filter tables, in order; none means channel-filter then arch-filter.
    pub policy: Vec<toml::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServiceSettings {
    pub address: IpAddr,
    pub port: u16,
    pub path_prefix: PathPrefix,
    /// Parameters every graph request must carry (presence only).
    #[serde(deserialize_with = "string_list")]
    pub mandatory_client_parameters: Vec<String>,
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
    /// `Cache-Control: max-age` of graph answers; 0 means revalidate always.
    pub cache_max_age_secs: u64,
    /// Bytes of identity (not gzip) answers kept for clients without gzip.
    pub identity_cache_bytes: usize,
    /// Upstream's Jaeger endpoint. Accepted so existing configurations load,
    /// and ignored with a warning: spans go over OTLP, configured by the
    /// standard `OTEL_EXPORTER_OTLP_*` environment variables.
    pub tracing_endpoint: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StatusSettings {
    pub address: IpAddr,
    pub port: u16,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpstreamSettings {
    /// Upstream's deprecated `[upstream] method`; accepted and ignored.
    pub method: Option<String>,
    pub cincinnati: CincinnatiUpstream,
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CincinnatiUpstream {
    pub url: String,
    pub kind: KindSetting,
    pub interval_secs: u64,
    pub timeout_secs: u64,
    pub max_body_bytes: usize,
    /// CAs trusted besides the system's, for an HTTPS upstream.
    pub root_certificate_dir: PathBuf,
    /// Parameters forwarded to an engine upstream besides channel and arch.
    #[serde(deserialize_with = "string_list")]
    pub forward_parameters: Vec<String>,
    /// Parameter sets kept (each with its graph) for an engine upstream.
    pub max_feeds: usize,
    /// (channel, arch) answers kept per upstream revision.
    pub max_answers: usize,
}

impl Default for ServiceSettings {
    fn default() -> Self {
        Self {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 8081,
            path_prefix: PathPrefix::default(),
            mandatory_client_parameters: Vec::new(),
            workers: 0,
            keep_alive: 75,
            client_timeout: 5,
            backlog: 2048,
            max_connections: 25_000,
            max_open_connections: 10_000,
            max_connection_rate: 256,
            cache_max_age_secs: 60,
            identity_cache_bytes: 8 * 1024 * 1024,
            tracing_endpoint: None,
        }
    }
}

impl Default for StatusSettings {
    fn default() -> Self {
        Self {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 9081,
        }
    }
}

impl Default for CincinnatiUpstream {
    fn default() -> Self {
        Self {
            url: "http://localhost:8080/graph".to_owned(),
            kind: KindSetting::Auto,
            interval_secs: 30,
            timeout_secs: 30,
            max_body_bytes: 128 * 1024 * 1024,
            root_certificate_dir: PathBuf::from(http_fetch::trust::DEFAULT_ROOT_CERTIFICATE_DIR),
            forward_parameters: Vec::new(),
            max_feeds: 1024,
            max_answers: 4096,
        }
    }
}

/// `[[policy]] name = "cincinnati-graph-fetch"`: upstream's way to set the
/// upstream URL and timeout; it configures the fetcher, not a filter.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphFetchSettings {
    upstream: Option<String>,
    timeout: Option<u64>,
}

const GRAPH_FETCH: &str = "cincinnati-graph-fetch";

/// Settings that do not fit together.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("service and status both listen on {0}")]
    SamePort(SocketAddr),
    #[error("[[policy]] {GRAPH_FETCH}: {0}")]
    GraphFetch(#[from] toml::de::Error),
    #[error("[[policy]]: {0}")]
    Policy(#[from] cincinnati_core::stage::ConfigError),
}

/// What the settings resolve to once `[[policy]]` is read.
#[derive(Debug)]
pub struct Resolved {
    pub pipeline: Pipeline<PolicyRequest>,
    pub upstream_url: String,
    pub upstream_timeout: Duration,
    pub rules: QueryRules,
    pub limits: Limits,
}

impl Settings {
    pub fn service_address(&self) -> SocketAddr {
        SocketAddr::new(self.service.address, self.service.port)
    }

    pub fn status_address(&self) -> SocketAddr {
        SocketAddr::new(self.status.address, self.status.port)
    }

    /// Checks the settings and builds the filter pipeline.
    pub fn resolve(&self) -> Result<Resolved, SettingsError> {
        if self.service.port != 0 && self.service_address() == self.status_address() {
            return Err(SettingsError::SamePort(self.service_address()));
        }
        let mut upstream_url = self.upstream.cincinnati.url.clone();
        let mut upstream_timeout = Duration::from_secs(self.upstream.cincinnati.timeout_secs);
        let mut filter_tables = Vec::new();
        for table in &self.policy {
            if table.get("name").and_then(toml::Value::as_str) == Some(GRAPH_FETCH) {
                let mut settings = table.clone();
                settings.remove("name");
                let fetch: GraphFetchSettings = toml::Value::Table(settings).try_into()?;
                upstream_url = fetch.upstream.unwrap_or(upstream_url);
                upstream_timeout = fetch.timeout.map_or(upstream_timeout, Duration::from_secs);
            } else {
                filter_tables.push(table.clone());
            }
        }
        if filter_tables.is_empty() {
            filter_tables = filters::default_tables();
        }
        let pipeline = filters::catalog().pipeline(&filter_tables)?;
        Ok(Resolved {
            rules: self.query_rules(&pipeline),
            limits: self.limits(),
            pipeline,
            upstream_url,
            upstream_timeout,
        })
    }

    /// The configured mandatory parameters, plus `channel` when the channel
    /// filter runs, so every missing parameter is named in one answer.
    fn query_rules(&self, pipeline: &Pipeline<PolicyRequest>) -> QueryRules {
        let mut required: BTreeSet<String> =
            self.service.mandatory_client_parameters.iter().cloned().collect();
        if pipeline.stage_names().any(|name| name == filters::channel::NAME) {
            required.insert("channel".to_owned());
        }
        QueryRules {
            required,
            forwarded: self
                .upstream
                .cincinnati
                .forward_parameters
                .iter()
                .cloned()
                .collect(),
        }
    }

    fn limits(&self) -> Limits {
        let upstream = &self.upstream.cincinnati;
        let interval = Duration::from_secs(upstream.interval_secs.max(1));
        Limits {
            interval,
            max_answers: upstream.max_answers,
            max_feeds: upstream.max_feeds,
            idle_feed_after: (interval * 10).max(Duration::from_secs(600)),
            identity_cache_bytes: self.service.identity_cache_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(toml_text: &str) -> Settings {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn no_policy_means_channel_then_arch() {
        let resolved = Settings::default().resolve().unwrap();
        assert_eq!(
            resolved.pipeline.stage_names().collect::<Vec<_>>(),
            ["channel-filter", "arch-filter"]
        );
        assert_eq!(resolved.upstream_url, "http://localhost:8080/graph");
    }

    #[test]
    fn graph_fetch_configures_the_upstream_not_a_filter() {
        let resolved = settings(
            "[[policy]]\nname = \"cincinnati-graph-fetch\"\nupstream = \"http://gb:8080/g\"\ntimeout = 7\n\
             [[policy]]\nname = \"arch-filter\"\ndefault_arch = \"arm64\"\n",
        )
        .resolve()
        .unwrap();
        assert_eq!(
            resolved.pipeline.stage_names().collect::<Vec<_>>(),
            ["arch-filter"]
        );
        assert_eq!(resolved.upstream_url, "http://gb:8080/g");
        assert_eq!(resolved.upstream_timeout, Duration::from_secs(7));
    }

    #[test]
    fn policy_errors_name_the_filter_and_key() {
        let error = settings("[[policy]]\nname = \"channel-filter\"\nkey_prefx = \"x\"\n")
            .resolve()
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("channel-filter") && error.contains("key_prefx"),
            "{error}"
        );
        let error = settings("[[policy]]\nname = \"arch-filter\"\ndefault_arch = \"x86-64\"\n")
            .resolve()
            .unwrap_err()
            .to_string();
        assert!(error.contains("default_arch"), "{error}");
    }

    #[test]
    fn service_and_status_must_not_share_a_port() {
        let error = settings("[service]\nport = 9000\n[status]\nport = 9000\n")
            .resolve()
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "service and status both listen on 127.0.0.1:9000"
        );
    }
}
