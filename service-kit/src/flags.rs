//! The command-line flags every service takes, named as upstream's
//! (`--service.address`, ...): declared once, flattened into each service's
//! `Cli`, which adds its own flags on top of [`ServiceFlags::layers`].

use std::path::PathBuf;

use clap::{ArgAction, Args};

use crate::config::{ConfigError, Layers};

#[derive(Debug, Args)]
pub struct ServiceFlags {
    /// TOML configuration file.
    #[arg(short = 'c', long = "config")]
    pub config: Option<PathBuf>,
    /// Check the configuration as start-up would, print the effective
    /// settings (secrets redacted), and exit.
    #[arg(long = "check-config")]
    pub check_config: bool,
    /// More logging: -v info, -vv debug, -vvv trace (RUST_LOG wins).
    #[arg(short = 'v', action = ArgAction::Count)]
    verbosity: u8,
    /// Log lines as text or json.
    #[arg(long = "log_format")]
    log_format: Option<String>,
    #[arg(long = "service.address")]
    service_address: Option<String>,
    #[arg(long = "service.port")]
    service_port: Option<u16>,
    #[arg(long = "service.path_prefix")]
    service_path_prefix: Option<String>,
    /// Comma-separated parameters every graph request must carry.
    #[arg(long = "service.mandatory_client_parameters")]
    service_mandatory_client_parameters: Option<String>,
    #[arg(long = "service.cache_max_age_secs")]
    service_cache_max_age_secs: Option<u64>,
    #[arg(long = "service.tracing_endpoint")]
    service_tracing_endpoint: Option<String>,
    #[arg(long = "status.address")]
    status_address: Option<String>,
    #[arg(long = "status.port")]
    status_port: Option<u16>,
    /// Upstream's deprecated flag: parsed and ignored, as upstream does.
    #[arg(long = "upstream.method")]
    upstream_method: Option<String>,
}

impl ServiceFlags {
    /// Defaults < the TOML file (-c) < environment variables
    /// `{env_prefix}{SECTION}__{KEY}` < these flags.
    pub fn layers(&self, env_prefix: &str) -> Result<Layers, ConfigError> {
        Ok(Layers::for_service(
            self.config.as_deref(),
            env_prefix,
            self.verbosity,
            self.log_format.as_deref(),
        )?
        .set_some("service.address", self.service_address.as_deref())
        .set_some("service.port", self.service_port)
        .set_some("service.path_prefix", self.service_path_prefix.as_deref())
        .set_some(
            "service.mandatory_client_parameters",
            self.service_mandatory_client_parameters.as_deref(),
        )
        .set_some("service.cache_max_age_secs", self.service_cache_max_age_secs)
        .set_some(
            "service.tracing_endpoint",
            self.service_tracing_endpoint.as_deref(),
        )
        .set_some("status.address", self.status_address.as_deref())
        .set_some("status.port", self.status_port)
        .set_some("upstream.method", self.upstream_method.as_deref()))
    }
}
