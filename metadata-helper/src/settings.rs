//! The metadata-helper's settings: upstream's `mh.toml` layout and flag
//! names (`verbosity`, `[service]`, `[status]`, `[signatures] dir`), plus
//! the graph-data source of ours. The shared sections (logging, the API and
//! status listeners, connection tuning) come from service-kit.
//!
//! ```toml
//! verbosity = "vv"
//! [service]
//! address = "0.0.0.0"
//! port = 8082
//! path_prefix = "/api/upgrades_info"
//! [status]
//! port = 9082
//! [signatures]
//! dir = "/var/lib/cincinnati/graph-data/signatures"
//! # or, instead of dir: follow the graph-builder's graph-data tarball
//! # graph_data_url = "http://graph-builder:8090/api/upgrades_info/graph-data"
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use http_fetch::{ExtraRoots, Url};
use serde::{Deserialize, Serialize};
use service_kit::secret::RedactedUrl;
use service_kit::settings::{
    ApiSettings, ConnectionSettings, Defaults, Logging, SkeletonSettings, StatusSettings,
};

use crate::tarball::TarballSettings;

/// Upstream's ports.
#[derive(Debug, Clone)]
pub enum MetadataHelperDefaults {}

impl Defaults for MetadataHelperDefaults {
    const API_PORT: u16 = 8082;
    const STATUS_PORT: u16 = 9082;
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    #[serde(flatten)]
    pub logging: Logging,
    pub service: ServiceSettings,
    pub status: StatusSettings<MetadataHelperDefaults>,
    pub signatures: SignatureSettings,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ServiceSettings {
    #[serde(flatten)]
    pub api: ApiSettings<MetadataHelperDefaults>,
    #[serde(flatten)]
    pub connections: ConnectionSettings,
}

/// `[signatures]`: where the signatures come from, one of two sources.
#[derive(Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct SignatureSettings {
    /// Upstream's source: a signature tree on disk
    /// (`<dir>/<algo>/<hex>/signature-<N>`), read on demand.
    pub dir: Option<PathBuf>,
    /// Ours: a graph-builder's `{prefix}/graph-data` tarball, followed with
    /// conditional GETs; its `signatures/` tree is served.
    pub graph_data_url: Option<RedactedUrl>,
    /// Seconds between two refreshes: a tarball fetch, or a scan of `dir`
    /// (for status and metrics only: files are read when asked for).
    pub interval_secs: u64,
    /// Seconds one tarball download may take.
    pub timeout_secs: u64,
    /// Where tarball revisions are unpacked; none means a private
    /// temporary directory, removed at exit.
    pub work_dir: Option<PathBuf>,
}

impl Default for SignatureSettings {
    fn default() -> Self {
        Self {
            dir: None,
            graph_data_url: None,
            interval_secs: 60,
            timeout_secs: 60,
            work_dir: None,
        }
    }
}

/// What the settings resolve to.
#[derive(Debug)]
pub struct Plan {
    pub source: SourcePlan,
    pub interval: Duration,
}

#[derive(Debug)]
pub enum SourcePlan {
    Directory(PathBuf),
    /// The tarball's settings; `work_dir` is the configured one, or a
    /// temporary directory made at start-up.
    Tarball {
        settings: TarballSettings,
        work_dir: Option<PathBuf>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum InvalidSettings {
    #[error("set one of signatures.dir and signatures.graph_data_url, not both")]
    BothSources,
    #[error(
        "set signatures.dir (a signature tree) or signatures.graph_data_url (a graph-builder's graph-data)"
    )]
    NoSource,
    #[error("signatures.graph_data_url {0} is not an http(s) URL")]
    NotHttp(Url),
    #[error("signatures.interval_secs and signatures.timeout_secs must be at least 1")]
    ZeroInterval,
}

impl SignatureSettings {
    pub fn resolve(&self, user_agent: &str) -> Result<Plan, InvalidSettings> {
        if self.interval_secs == 0 || self.timeout_secs == 0 {
            return Err(InvalidSettings::ZeroInterval);
        }
        let source = match (&self.dir, &self.graph_data_url) {
            (Some(_), Some(_)) => return Err(InvalidSettings::BothSources),
            (None, None) => return Err(InvalidSettings::NoSource),
            (Some(dir), None) => SourcePlan::Directory(dir.clone()),
            (None, Some(url)) => {
                let url = url.expose();
                if !matches!(url.scheme(), "http" | "https") {
                    return Err(InvalidSettings::NotHttp(url));
                }
                SourcePlan::Tarball {
                    settings: TarballSettings {
                        url,
                        work_dir: PathBuf::new(),
                        timeout: Duration::from_secs(self.timeout_secs),
                        roots: ExtraRoots::default(),
                        user_agent: user_agent.to_owned(),
                    },
                    work_dir: self.work_dir.clone(),
                }
            }
        };
        Ok(Plan {
            source,
            interval: Duration::from_secs(self.interval_secs),
        })
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
        vec![self.service.api.socket_address()]
    }
}
