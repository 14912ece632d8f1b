//! Command-line flags, named as upstream's (`--service.address`, ...), merged
//! over the configuration file and the environment.

use std::path::PathBuf;

use clap::Parser;
use http_fetch::Url;
use service_kit::config::{ConfigError, Layers};

use crate::settings::Settings;
use crate::upstream::client::UpstreamClient;

/// Environment variables override the file: `CINCINNATI_PE_SERVICE__PORT`.
pub const ENV_PREFIX: &str = "CINCINNATI_PE_";

/// Serves every cluster its view of the Cincinnati update graph.
///
/// Settings come from (later wins): defaults, the TOML file (-c), environment
/// variables CINCINNATI_PE_<SECTION>__<KEY> (e.g. CINCINNATI_PE_SERVICE__PORT),
/// and these flags.
#[derive(Debug, Parser)]
#[command(name = "policy-engine", version)]
pub struct Cli {
    /// TOML configuration file.
    #[arg(short = 'c', long = "config")]
    config: Option<PathBuf>,
    /// Validate the configuration, build the filter pipeline, print the
    /// effective settings (secrets redacted), and exit.
    #[arg(long = "check-config")]
    pub check_config: bool,
    /// More logging: -v info, -vv debug, -vvv trace (RUST_LOG wins).
    #[arg(short = 'v', action = clap::ArgAction::Count)]
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
    #[arg(long = "service.workers")]
    service_workers: Option<usize>,
    #[arg(long = "service.keep_alive")]
    service_keep_alive: Option<u64>,
    #[arg(long = "service.client_timeout")]
    service_client_timeout: Option<u64>,
    #[arg(long = "service.backlog")]
    service_backlog: Option<u32>,
    #[arg(long = "service.max_connections")]
    service_max_connections: Option<usize>,
    #[arg(long = "service.max_open_connections")]
    service_max_open_connections: Option<usize>,
    #[arg(long = "service.max_connection_rate")]
    service_max_connection_rate: Option<usize>,
    #[arg(long = "service.cache_max_age_secs")]
    service_cache_max_age_secs: Option<u64>,
    #[arg(long = "service.identity_cache_bytes")]
    service_identity_cache_bytes: Option<usize>,
    #[arg(long = "service.tracing_endpoint")]
    service_tracing_endpoint: Option<String>,
    #[arg(long = "status.address")]
    status_address: Option<String>,
    #[arg(long = "status.port")]
    status_port: Option<u16>,
    /// Deprecated upstream flag; ignored.
    #[arg(long = "upstream.method")]
    upstream_method: Option<String>,
    /// The upstream graph URL: a graph-builder's or another engine's /graph.
    #[arg(long = "upstream.cincinnati.url")]
    upstream_url: Option<String>,
    /// auto (detect from what the upstream serves), graph-builder or policy-engine.
    #[arg(long = "upstream.cincinnati.kind")]
    upstream_kind: Option<String>,
    #[arg(long = "upstream.cincinnati.interval_secs")]
    upstream_interval_secs: Option<u64>,
    #[arg(long = "upstream.cincinnati.timeout_secs")]
    upstream_timeout_secs: Option<u64>,
    #[arg(long = "upstream.cincinnati.max_body_bytes")]
    upstream_max_body_bytes: Option<usize>,
    /// Comma-separated parameters forwarded to an engine upstream besides channel and arch.
    #[arg(long = "upstream.cincinnati.forward_parameters")]
    upstream_forward_parameters: Option<String>,
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
        .set_some("service.path_prefix", self.service_path_prefix.as_deref())
        .set_some(
            "service.mandatory_client_parameters",
            self.service_mandatory_client_parameters.as_deref(),
        )
        .set_some("service.workers", self.service_workers)
        .set_some("service.keep_alive", self.service_keep_alive)
        .set_some("service.client_timeout", self.service_client_timeout)
        .set_some("service.backlog", self.service_backlog)
        .set_some("service.max_connections", self.service_max_connections)
        .set_some("service.max_open_connections", self.service_max_open_connections)
        .set_some("service.max_connection_rate", self.service_max_connection_rate)
        .set_some("service.cache_max_age_secs", self.service_cache_max_age_secs)
        .set_some("service.identity_cache_bytes", self.service_identity_cache_bytes)
        .set_some(
            "service.tracing_endpoint",
            self.service_tracing_endpoint.as_deref(),
        )
        .set_some("status.address", self.status_address.as_deref())
        .set_some("status.port", self.status_port)
        .set_some("upstream.method", self.upstream_method.as_deref())
        .set_some("upstream.cincinnati.url", self.upstream_url.as_deref())
        .set_some("upstream.cincinnati.kind", self.upstream_kind.as_deref())
        .set_some("upstream.cincinnati.interval_secs", self.upstream_interval_secs)
        .set_some("upstream.cincinnati.timeout_secs", self.upstream_timeout_secs)
        .set_some("upstream.cincinnati.max_body_bytes", self.upstream_max_body_bytes)
        .set_some(
            "upstream.cincinnati.forward_parameters",
            self.upstream_forward_parameters.as_deref(),
        )
        .extract()
    }
}

/// `--check-config`: what start-up would check before binding any port (the
/// settings, the filter pipeline, the upstream URL), and on success the
/// effective settings to print. Passwords in URLs are redacted, since this
/// output ends up in CI and deployment logs.
pub fn check_config(mut settings: Settings) -> anyhow::Result<String> {
    let resolved = settings.resolve()?;
    UpstreamClient::new(
        &resolved.upstream_url,
        resolved.upstream_timeout,
        settings.upstream.cincinnati.max_body_bytes,
        &settings.upstream.cincinnati.root_certificate_dir,
    )?;
    settings.upstream.cincinnati.url = redact_url(&settings.upstream.cincinnati.url);
    for table in &mut settings.policy {
        if let Some(toml::Value::String(url)) = table.get_mut("upstream") {
            *url = redact_url(url);
        }
    }
    let filters: Vec<&str> = resolved.pipeline.stage_names().collect();
    Ok(format!(
        "{settings:#?}\neffective upstream: {} (timeout {:?})\nfilters: {}",
        redact_url(&resolved.upstream_url),
        resolved.upstream_timeout,
        filters.join(", ")
    ))
}

fn redact_url(text: &str) -> String {
    match Url::parse(text) {
        Ok(mut url) if url.password().is_some() => {
            // Cannot fail: the URL has a host, since it has a password.
            let _ = url.set_password(Some("redacted"));
            url.to_string()
        }
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn flags_override_the_file_and_keep_upstream_names() {
        let mut file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
        file.write_all(
            b"[service]\nport = 1\npath_prefix = \"a/b/\"\n[upstream.cincinnati]\nurl = \"http://x/graph\"\n",
        )
        .unwrap();
        let cli = Cli::parse_from([
            "policy-engine".as_ref(),
            "-vv".as_ref(),
            "-c".as_ref(),
            file.path().as_os_str(),
            "--service.port".as_ref(),
            "2".as_ref(),
            "--service.mandatory_client_parameters".as_ref(),
            "channel,version".as_ref(),
        ]);
        let settings = cli.settings().unwrap();
        assert_eq!(settings.service.port, 2);
        assert_eq!(settings.service.path_prefix.as_str(), "/a/b");
        assert_eq!(
            settings.service.mandatory_client_parameters,
            ["channel", "version"]
        );
        assert_eq!(settings.upstream.cincinnati.url, "http://x/graph");
        assert_eq!(settings.verbosity.0, 2);
    }

    #[test]
    fn check_config_builds_the_pipeline_and_redacts_passwords() {
        let settings: Settings = toml::from_str(
            "[upstream.cincinnati]\nurl = \"https://user:hunter2@gb.example/graph\"\n\
             [[policy]]\nname = \"cincinnati-graph-fetch\"\nupstream = \"http://u:hunter3@pe.example/graph\"\n\
             [[policy]]\nname = \"arch-filter\"\n",
        )
        .unwrap();
        let printed = check_config(settings).unwrap();
        assert!(!printed.contains("hunter"), "{printed}");
        assert!(
            printed.contains("https://user:redacted@gb.example/graph"),
            "{printed}"
        );
        assert!(
            printed.contains("effective upstream: http://u:redacted@pe.example/graph"),
            "{printed}"
        );
        assert!(printed.contains("filters: arch-filter"), "{printed}");
    }

    #[test]
    fn check_config_refuses_what_start_up_would_refuse() {
        let settings: Settings = toml::from_str("[upstream.cincinnati]\nurl = \"not a url\"\n").unwrap();
        assert!(check_config(settings).is_err());
        let settings: Settings =
            toml::from_str("[[policy]]\nname = \"channel-filter\"\nkey_prefx = \"x\"\n").unwrap();
        let error = check_config(settings).unwrap_err().to_string();
        assert!(error.contains("key_prefx"), "{error}");
    }
}
