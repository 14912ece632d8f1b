//! The graph-builder process, configured the way an operator would for a
//! disconnected site: scrape the release repository of a mirror registry,
//! read graph-data from an image in the same registry, apply it.

use std::path::Path;

use anyhow::Context as _;

use crate::binaries::service_binary;
use crate::graph_data::{GRAPH_DATA_REPOSITORY, GRAPH_DATA_TAG};
use crate::process::{Listener, ServiceCommand, ServiceProcess};
use crate::releases::RELEASE_REPOSITORY;

/// The path prefix every service serves under, as production does.
pub const PATH_PREFIX: &str = "/api/upgrades_info";

/// Seconds between two scrapes (and two graph-data reads), and between two
/// fetches of each policy-engine: one refresh interval of every hop.
pub const REFRESH_INTERVAL_SECS: u64 = 1;

/// What differs between the tests' graph-builders.
#[derive(Debug, Clone)]
pub struct GraphBuilderOptions {
    /// Keep the scrape cache in a file (`cache_path`), so a restart need not
    /// download known releases again.
    pub scrape_cache: bool,
    /// Images read at the same time (`fetch_concurrency`).
    pub fetch_concurrency: usize,
    /// Full refreshes (scrapes, graph-data reads, the engines' rounds) every
    /// hour instead of every [`REFRESH_INTERVAL_SECS`], the change checks
    /// and the engines' held fetches at their defaults: within a test, only
    /// those bring a change.
    pub changes_by_checks_only: bool,
}

impl Default for GraphBuilderOptions {
    fn default() -> Self {
        Self {
            scrape_cache: false,
            fetch_concurrency: 4,
            changes_by_checks_only: false,
        }
    }
}

/// An hour: longer than any test.
const LONGER_THAN_A_TEST_SECS: u64 = 3600;

impl GraphBuilderOptions {
    /// Seconds between full refreshes, the graph-builder's and the engines'.
    pub fn pause_secs(&self) -> u64 {
        if self.changes_by_checks_only {
            LONGER_THAN_A_TEST_SECS
        } else {
            REFRESH_INTERVAL_SECS
        }
    }
}

/// Writes `graph-builder.toml` in `workdir`, starts the graph-builder and
/// waits until it serves its first complete graph.
pub async fn start(
    workdir: &Path,
    registry_url: &str,
    options: &GraphBuilderOptions,
) -> anyhow::Result<ServiceProcess> {
    let config = workdir.join("graph-builder.toml");
    std::fs::write(&config, config_toml(workdir, registry_url, options))
        .with_context(|| format!("writing {}", config.display()))?;
    start_with_config(workdir, &config).await
}

/// Starts a graph-builder reading its releases from `releases` (a Graph API
/// document) and its graph-data from the directory `graph_data`, as the
/// bundled demo does: nothing to scrape, nothing to push.
pub async fn start_offline(
    workdir: &Path,
    releases: &Path,
    graph_data: &Path,
) -> anyhow::Result<ServiceProcess> {
    let config = format!(
        r#"{listeners}
[[plugin_settings]]
name = "release-graph-file"
path = {releases:?}

[[plugin_settings]]
name = "openshift-secondary-metadata-parse"
data_directory = {graph_data:?}

[[plugin_settings]]
name = "edge-add-remove"
"#,
        listeners = loopback_settings(REFRESH_INTERVAL_SECS),
        releases = releases.display().to_string(),
        graph_data = graph_data.display().to_string(),
    );
    let path = workdir.join("graph-builder.toml");
    std::fs::write(&path, config).with_context(|| format!("writing {}", path.display()))?;
    start_with_config(workdir, &path).await
}

/// Starts a graph-builder with the configuration file `config` (its ports
/// set by flags), logging to `workdir`, and waits until it is ready.
pub async fn start_with_config(workdir: &Path, config: &Path) -> anyhow::Result<ServiceProcess> {
    ServiceProcess::start(ServiceCommand {
        name: "graph-builder".to_owned(),
        program: service_binary("graph-builder")?,
        arguments: vec!["-c".into(), config.into(), "--log_format".into(), "json".into()],
        port_flags: vec![
            ("--service.port", Listener::Api),
            ("--service.public_port", Listener::Public),
            ("--status.port", Listener::Status),
        ],
        log: workdir.join("graph-builder.log"),
        readiness_probe: "/readiness",
    })
    .await
}

/// The start of a harness's graph-builder configuration: verbose logs, and
/// every listener on loopback, refreshing every `pause_secs`. Ports are 0
/// here and set by flags, so the same file serves the first start (free
/// ports) and restarts (the same ports).
fn loopback_settings(pause_secs: u64) -> String {
    format!(
        r#"verbosity = "v"

[service]
address = "127.0.0.1"
port = 0
public_port = 0
path_prefix = "{PATH_PREFIX}"
pause_secs = {pause_secs}

[status]
address = "127.0.0.1"
port = 0
"#
    )
}

/// The configuration file: [`loopback_settings`] and the e2e registry's sources.
fn config_toml(workdir: &Path, registry_url: &str, options: &GraphBuilderOptions) -> String {
    let cache = if options.scrape_cache {
        format!(
            "cache_path = {:?}\n",
            workdir.join("scrape-cache.json").display().to_string()
        )
    } else {
        String::new()
    };
    format!(
        r#"{listeners}
[[plugin_settings]]
name = "release-scrape-dockerv2"
registry = "{registry_url}"
repository = "{RELEASE_REPOSITORY}"
fetch_concurrency = {concurrency}
request_timeout_secs = 2
{cache}
[[plugin_settings]]
name = "dkrv2-secondary-metadata-scrape"
registry = "{registry_url}"
repository = "{GRAPH_DATA_REPOSITORY}"
tag = "{GRAPH_DATA_TAG}"
output_directory = {output:?}

[[plugin_settings]]
name = "openshift-secondary-metadata-parse"
data_directory = {output:?}

[[plugin_settings]]
name = "edge-add-remove"
"#,
        listeners = loopback_settings(options.pause_secs()),
        concurrency = options.fetch_concurrency,
        output = workdir.join("graph-data-unpacked").display().to_string(),
    )
}
