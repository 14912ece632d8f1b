//! Command-line flags, named as upstream's (`--service.address`, with its
//! short aliases), merged over the configuration file and the environment.

use clap::Parser;
use service_kit::config::ConfigError;
use service_kit::flags::ServiceFlags;

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
#[command(
    name = "graph-builder",
    version,
    // Upstream's graph-builder's short names.
    mut_arg("service_address", |flag| flag.alias("address")),
    mut_arg("service_port", |flag| flag.alias("port"))
)]
pub struct Cli {
    #[command(flatten)]
    pub common: ServiceFlags,
    /// Build the graph once, print it as Graph API JSON on stdout, and exit.
    #[arg(long)]
    pub once: bool,
    #[arg(long = "service.public_port", alias = "public_port")]
    service_public_port: Option<u16>,
    #[arg(long = "service.pause_secs")]
    service_pause_secs: Option<u64>,
    #[arg(long = "service.graph_data_pause_secs")]
    service_graph_data_pause_secs: Option<u64>,
    #[arg(long = "service.scrape_timeout")]
    service_scrape_timeout: Option<u64>,
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
        self.common
            .layers(ENV_PREFIX)?
            .set_some("service.public_port", self.service_public_port)
            .set_some("service.pause_secs", self.service_pause_secs)
            .set_some(
                "service.graph_data_pause_secs",
                self.service_graph_data_pause_secs,
            )
            .set_some("service.scrape_timeout_secs", self.service_scrape_timeout)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_short_names_and_the_shared_flags_set_the_settings() {
        let cli = Cli::parse_from([
            "graph-builder",
            "--address",
            "0.0.0.0",
            "--port",
            "1",
            "--public_port",
            "2",
            "--status.port",
            "3",
            "--registry",
            "registry.example",
            "-vv",
        ]);
        let settings = cli.settings().unwrap();
        assert_eq!(settings.api_address().to_string(), "0.0.0.0:1");
        assert_eq!(settings.public_address().to_string(), "0.0.0.0:2");
        assert_eq!(settings.status_address().to_string(), "127.0.0.1:3");
        assert_eq!(settings.upstream.registry.url, "registry.example");
        assert_eq!(settings.verbosity.0, 2);
    }
}
