//! The graph-builder's settings: upstream's TOML layout and flag names, so an
//! existing `gb.toml` works unchanged. The sections every service shares
//! (logging, the API and status listeners, the rules of graph requests)
//! come from service-kit.
//!
//! ```toml
//! verbosity = "vvv"
//! [service]
//! address = "0.0.0.0"
//! port = 8080
//! public_port = 8090
//! path_prefix = "/api/upgrades_info"
//! pause_secs = 300
//! scrape_timeout_secs = 300
//! [status]
//! address = "0.0.0.0"
//! port = 9080
//! [[plugin_settings]]
//! name = "release-scrape-dockerv2"
//! registry = "quay.io"
//! repository = "openshift-release-dev/ocp-release"
//! ```

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};
use service_kit::settings::{
    ApiSettings, Defaults, Logging, RequestSettings, SkeletonSettings, StatusSettings,
};

use crate::plugins::PluginTable;

/// The graph-builder's ports and caching default.
#[derive(Debug, Clone)]
pub enum GraphBuilderDefaults {}

impl Defaults for GraphBuilderDefaults {
    const API_PORT: u16 = 8080;
    const STATUS_PORT: u16 = 9080;
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    #[serde(flatten)]
    pub logging: Logging,
    pub service: ServiceSettings,
    pub status: StatusSettings<GraphBuilderDefaults>,
    pub upstream: UpstreamSettings,
    /// Sources and stages, in order. None means: scrape the registry of
    /// `[upstream.registry]` and apply edge instructions.
    pub plugin_settings: Vec<PluginTable>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct ServiceSettings {
    #[serde(flatten)]
    pub api: ApiSettings<GraphBuilderDefaults>,
    #[serde(flatten)]
    pub requests: RequestSettings<GraphBuilderDefaults>,
    /// The port of `{prefix}/graph-data`.
    pub public_port: u16,
    /// Seconds between registry scrapes.
    pub pause_secs: u64,
    /// Seconds between graph-data refreshes; defaults to `pause_secs`. Kept
    /// apart so a graph-data change can reach clients without a re-scrape.
    pub graph_data_pause_secs: Option<u64>,
    /// A scrape that takes longer is abandoned (and its work cancelled).
    pub scrape_timeout_secs: Option<u64>,
    /// Seconds between looks at the registry's tag list; a tag list that
    /// differs from the last scrape's starts a scrape at once (only new tags
    /// are read). 0: only the scrape every `pause_secs`.
    pub release_check_secs: u64,
    /// Seconds between cheap looks at the graph-data source (a directory's
    /// or file's metadata, an image's manifest digest by HEAD, a URL by
    /// conditional GET); a change is loaded at once. 0: only the refresh
    /// every `graph_data_pause_secs`.
    pub graph_data_check_secs: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct UpstreamSettings {
    /// Parsed and ignored, as upstream does.
    pub method: Option<String>,
    /// Deprecated upstream key; ignored with a warning.
    pub pause_secs: Option<u64>,
    pub registry: RegistryDefaults,
}

/// The registry scraped when `plugin_settings` is empty.
#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct RegistryDefaults {
    pub url: String,
    pub repository: String,
    pub credentials_path: Option<String>,
    pub manifestref_key: Option<String>,
    pub fetch_concurrency: usize,
}

impl Default for ServiceSettings {
    fn default() -> Self {
        Self {
            api: ApiSettings::default(),
            requests: RequestSettings::default(),
            public_port: 8090,
            pause_secs: 300,
            graph_data_pause_secs: None,
            scrape_timeout_secs: None,
            release_check_secs: 15,
            graph_data_check_secs: 5,
        }
    }
}

impl Default for RegistryDefaults {
    fn default() -> Self {
        Self {
            url: "quay.io".to_owned(),
            repository: "openshift-release-dev/ocp-release".to_owned(),
            credentials_path: None,
            manifestref_key: None,
            fetch_concurrency: 16,
        }
    }
}

impl SkeletonSettings for Settings {
    fn logging(&self) -> &Logging {
        &self.logging
    }

    fn status_address(&self) -> SocketAddr {
        self.status.socket_address()
    }

    fn api_addresses(&self) -> Vec<SocketAddr> {
        vec![self.api_address(), self.public_address()]
    }
}

impl Settings {
    pub fn api_address(&self) -> SocketAddr {
        self.service.api.socket_address()
    }

    pub fn public_address(&self) -> SocketAddr {
        self.service.api.on_port(self.service.public_port)
    }
}
