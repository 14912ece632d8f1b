//! Command-line flags, named as upstream's (`--service.address`, with its
//! short aliases), merged over the configuration file and the environment.

use std::path::PathBuf;

use clap::Parser;
use service_kit::config::{ConfigError, Layers};

use crate::settings::Settings;

/// Environment variables override the file: `CINCINNATI_GB_SERVICE__PORT`.
pub const ENV_PREFIX: &str = "CINCINNATI_GB_";

/// Builds the Cincinnati update graph from release images and graph-data,
/// and serves it.
///
/// Settings come from (later wins): defaults, the TOML file (-c), environment
/// variables CINCINNATI_GB_<SECTION>__<KEY> (e.g. CINCINNATI_GB_SERVICE__PORT),
/// and these flags.
#[derive(Debug, Parser)]
#[command(name = "graph-builder", version)]
pub struct Cli {
    /// TOML configuration file.
    #[arg(short = 'c', long = "config")]
    pub config: Option<PathBuf>,
    /// Build the graph once, print it as Graph API JSON on stdout, and exit.
    #[arg(long)]
    pub once: bool,
    /// Validate the configuration, print the effective settings, and exit.
    #[arg(long = "check-config")]
    pub check_config: bool,
    /// More logging: -v info, -vv debug, -vvv trace (RUST_LOG wins).
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    verbosity: u8,
    /// Log lines as text or json.
    #[arg(long = "log_format")]
    log_format: Option<String>,
    #[arg(long = "service.address", alias = "address")]
    service_address: Option<String>,
    #[arg(long = "service.port", alias = "port")]
    service_port: Option<u16>,
    #[arg(long = "service.public_port", alias = "public_port")]
    service_public_port: Option<u16>,
    #[arg(long = "service.path_prefix")]
    service_path_prefix: Option<String>,
    /// Comma-separated parameters every graph request must carry.
    #[arg(long = "service.mandatory_client_parameters")]
    service_mandatory_client_parameters: Option<String>,
    #[arg(long = "service.pause_secs")]
    service_pause_secs: Option<u64>,
    #[arg(long = "service.graph_data_pause_secs")]
    service_graph_data_pause_secs: Option<u64>,
    #[arg(long = "service.scrape_timeout")]
    service_scrape_timeout: Option<u64>,
    #[arg(long = "service.cache_max_age_secs")]
    service_cache_max_age_secs: Option<u64>,
    #[arg(long = "service.tracing_endpoint")]
    service_tracing_endpoint: Option<String>,
    #[arg(long = "status.address")]
    status_address: Option<String>,
    #[arg(long = "status.port")]
    status_port: Option<u16>,
    /// Parsed and ignored, as upstream does.
    #[arg(long = "upstream.method")]
    upstream_method: Option<String>,
    #[arg(long = "upstream.registry.url", alias = "registry")]
    upstream_registry_url: Option<String>,
    #[arg(long = "upstream.registry.repository", alias = "repository")]
    upstream_registry_repository: Option<String>,
    #[arg(long = "upstream.registry.credentials_path", alias = "credentials-file")]
    upstream_registry_credentials_path: Option<String>,
    #[arg(long = "upstream.registry.manifestref_key")]
    upstream_registry_manifestref_key: Option<String>,
    #[arg(long = "upstream.registry.fetch_concurrency")]
    upstream_registry_fetch_concurrency: Option<usize>,
}

impl Cli {
    /// The settings from every layer.
    pub fn settings(&self) -> Result<Settings, ConfigError> {
        Layers::for_service(
            self.config.as_deref(),
            ENV_PREFIX,
            self.verbosity,
            self.log_format.as_deref(),
        )?
        .set_some("service.address", self.service_address.as_deref())
        .set_some("service.port", self.service_port)
        .set_some("service.public_port", self.service_public_port)
        .set_some("service.path_prefix", self.service_path_prefix.as_deref())
        .set_some(
            "service.mandatory_client_parameters",
            self.service_mandatory_client_parameters.as_deref(),
        )
        .set_some("service.pause_secs", self.service_pause_secs)
        .set_some(
            "service.graph_data_pause_secs",
            self.service_graph_data_pause_secs,
        )
        .set_some("service.scrape_timeout_secs", self.service_scrape_timeout)
        .set_some("service.cache_max_age_secs", self.service_cache_max_age_secs)
        .set_some(
            "service.tracing_endpoint",
            self.service_tracing_endpoint.as_deref(),
        )
        .set_some("status.address", self.status_address.as_deref())
        .set_some("status.port", self.status_port)
        .set_some("upstream.method", self.upstream_method.as_deref())
        .set_some("upstream.registry.url", self.upstream_registry_url.as_deref())
        .set_some(
            "upstream.registry.repository",
            self.upstream_registry_repository.as_deref(),
        )
        .set_some(
            "upstream.registry.credentials_path",
            self.upstream_registry_credentials_path.as_deref(),
        )
        .set_some(
            "upstream.registry.manifestref_key",
            self.upstream_registry_manifestref_key.as_deref(),
        )
        .set_some(
            "upstream.registry.fetch_concurrency",
            self.upstream_registry_fetch_concurrency,
        )
        .extract()
    }
}
