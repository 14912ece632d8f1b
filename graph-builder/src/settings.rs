//! The graph-builder's settings: upstream's TOML layout and flag names, so an
//! existing `gb.toml` works unchanged.
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

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde::Deserialize;
use service_kit::PathPrefix;
use service_kit::config::string_list;
use service_kit::logging::{LogFormat, Verbosity};

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub verbosity: Verbosity,
    pub log_format: LogFormat,
    pub service: ServiceSettings,
    pub status: StatusSettings,
    pub upstream: UpstreamSettings,
    /// Sources and stages, in order. None means: scrape the registry of
    /// `[upstream.registry]` and apply edge instructions.
    pub plugin_settings: Vec<toml::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServiceSettings {
    pub address: IpAddr,
    pub port: u16,
    /// The port of `{prefix}/graph-data`.
    pub public_port: u16,
    pub path_prefix: PathPrefix,
    /// Seconds between registry scrapes.
    pub pause_secs: u64,
    /// Seconds between graph-data refreshes; defaults to `pause_secs`. Kept
    /// apart so a graph-data change can reach clients without a re-scrape.
    pub graph_data_pause_secs: Option<u64>,
    /// A scrape that takes longer is abandoned (and its work cancelled).
    pub scrape_timeout_secs: Option<u64>,
    /// Parameters every graph request must carry (presence only).
    #[serde(deserialize_with = "string_list")]
    pub mandatory_client_parameters: Vec<String>,
    /// `Cache-Control: max-age` of graph answers; 0 means revalidate always.
    pub cache_max_age_secs: u64,
    /// Upstream's Jaeger endpoint; accepted so existing configurations load.
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
    /// Parsed and ignored, as upstream does.
    pub method: Option<String>,
    /// Deprecated upstream key; ignored with a warning.
    pub pause_secs: Option<u64>,
    pub registry: RegistryDefaults,
}

/// The registry scraped when `plugin_settings` is empty.
#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
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
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 8080,
            public_port: 8090,
            path_prefix: PathPrefix::parse(""),
            pause_secs: 300,
            graph_data_pause_secs: None,
            scrape_timeout_secs: None,
            mandatory_client_parameters: Vec::new(),
            cache_max_age_secs: 0,
            tracing_endpoint: None,
        }
    }
}

impl Default for StatusSettings {
    fn default() -> Self {
        Self {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 9080,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_settings_hide_stage_secrets() {
        let settings: Settings = toml::from_str(
            "[[plugin_settings]]\nname = \"release-scrape-dockerv2\"\nusername = \"u\"\npassword = \"hunter2\"\n",
        )
        .unwrap();
        let printed = settings.printable();
        assert!(!printed.contains("hunter2"), "{printed}");
        assert!(
            printed.contains("<redacted>") && printed.contains("\"u\""),
            "{printed}"
        );
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("service.pause_secs must be positive")]
    ZeroPause,
    #[error("service.graph_data_pause_secs must be positive")]
    ZeroGraphDataPause,
    #[error("the main, public and status servers need three different addresses ({0} is used twice)")]
    SharedAddress(SocketAddr),
}

/// Keys of stage tables whose values must never be printed.
const SECRET_KEYS: [&str; 2] = ["password", "token"];

impl Settings {
    /// These settings as `--check-config` prints them: secrets redacted.
    pub fn printable(mut self) -> String {
        for table in &mut self.plugin_settings {
            for (key, value) in table.iter_mut() {
                if SECRET_KEYS.contains(&key.as_str()) {
                    *value = toml::Value::String("<redacted>".to_owned());
                }
            }
        }
        format!("{self:#?}")
    }

    /// Checks what the types cannot express.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if self.service.pause_secs == 0 {
            return Err(SettingsError::ZeroPause);
        }
        if self.service.graph_data_pause_secs == Some(0) {
            return Err(SettingsError::ZeroGraphDataPause);
        }
        let addresses = [self.api_address(), self.public_address(), self.status_address()];
        for (position, address) in addresses.iter().enumerate() {
            if address.port() != 0 && addresses[position + 1..].contains(address) {
                return Err(SettingsError::SharedAddress(*address));
            }
        }
        Ok(())
    }

    pub fn api_address(&self) -> SocketAddr {
        SocketAddr::new(self.service.address, self.service.port)
    }

    pub fn public_address(&self) -> SocketAddr {
        SocketAddr::new(self.service.address, self.service.public_port)
    }

    pub fn status_address(&self) -> SocketAddr {
        SocketAddr::new(self.status.address, self.status.port)
    }

    pub fn scrape_pause(&self) -> Duration {
        Duration::from_secs(self.service.pause_secs)
    }

    pub fn graph_data_pause(&self) -> Duration {
        Duration::from_secs(
            self.service
                .graph_data_pause_secs
                .unwrap_or(self.service.pause_secs),
        )
    }

    pub fn scrape_timeout(&self) -> Option<Duration> {
        self.service.scrape_timeout_secs.map(Duration::from_secs)
    }
}
