//! The metadata-helper as the service skeleton runs it: its declaration,
//! and what it starts (the signature route, the source's refresh task,
//! readiness, metrics and status from the signature set).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use service_kit::metrics::{MetricRegistry, ServiceMetrics};
use service_kit::periodic::Every;
use service_kit::{Declaration, Flags, Kit, Service};
use tempfile::TempDir;

use crate::directory::DirectorySource;
use crate::metrics::{ServeMetrics, SourceMetrics};
use crate::serve::SignatureRoute;
use crate::settings::{Plan, Settings, SourcePlan};
use crate::status::{Signatures, Status};
use crate::tarball::TarballSource;

/// What the helper's requests (tarball fetches) say they are.
const USER_AGENT: &str = concat!("metadata-helper/", env!("CARGO_PKG_VERSION"));

/// The running metadata-helper.
pub struct MetadataHelper {
    signatures: Signatures,
    /// The private work directory, when none is configured: removed when
    /// the service is dropped.
    _work_dir: Option<TempDir>,
}

/// The helper's metrics: the route's, and the signature set's.
#[derive(Clone)]
pub struct HelperMetrics {
    pub serve: ServeMetrics,
    pub source: SourceMetrics,
}

impl ServiceMetrics for HelperMetrics {
    fn register(registry: &MetricRegistry) -> prometheus::Result<Self> {
        Ok(Self {
            serve: ServeMetrics::register(registry)?,
            source: SourceMetrics::register(registry)?,
        })
    }
}

impl Service for MetadataHelper {
    const DECLARATION: Declaration = Declaration {
        name: "metadata-helper",
        crate_name: env!("CARGO_CRATE_NAME"),
        version: env!("CARGO_PKG_VERSION"),
        about: "Serves release signatures, so disconnected clusters verify updates from the update service alone",
        env_prefix: "CINCINNATI_MH_",
        metric_prefix: "cincinnati_mh",
        liveness_path: "/livez",
        readiness_path: "/readyz",
        flags: Flags::NONE,
        ignored: &[],
    };
    type Settings = Settings;
    type Metrics = HelperMetrics;
    type Plan = Plan;

    fn plan(settings: &Settings) -> anyhow::Result<Plan> {
        Ok(settings.signatures.resolve(USER_AGENT)?)
    }

    fn describe(plan: &Plan) -> serde_json::Value {
        match &plan.source {
            SourcePlan::Directory(dir) => serde_json::json!({"source": "directory", "dir": dir}),
            SourcePlan::Tarball { settings, .. } => serde_json::json!({
                "source": "graph-data tarball",
                "graph_data_url": settings.url.as_str(),
                "interval_secs": plan.interval.as_secs(),
            }),
        }
    }

    fn start(plan: Plan, settings: &Settings, kit: &mut Kit<HelperMetrics>) -> anyhow::Result<Self> {
        // A round may take a download's timeout.
        let every = Every::new("signature refresh", plan.interval)
            .allowing(Duration::from_secs(settings.signatures.timeout_secs));
        let (signatures, work_dir) = match plan.source {
            SourcePlan::Directory(dir) => {
                let source = DirectorySource::new(dir);
                let signatures = source.signatures().clone();
                kit.spawn_every(every, move || {
                    let source = source.clone();
                    async move { source.round().await }
                });
                (signatures, None)
            }
            SourcePlan::Tarball {
                mut settings,
                work_dir,
            } => {
                let private = match work_dir {
                    Some(dir) => {
                        settings.work_dir = dir;
                        None
                    }
                    None => {
                        let dir = tempfile::Builder::new()
                            .prefix("metadata-helper-")
                            .tempdir()
                            .context("creating a work directory")?;
                        settings.work_dir = dir.path().to_path_buf();
                        Some(dir)
                    }
                };
                let source = TarballSource::new(settings)?;
                let signatures = source.signatures().clone();
                let source = Arc::new(tokio::sync::Mutex::new(source));
                kit.spawn_every(every, move || {
                    let source = source.clone();
                    async move { source.lock().await.round().await }
                });
                (signatures, private)
            }
        };
        let prefix = settings.service.api.path_prefix.clone();
        let route = SignatureRoute::new(signatures.clone(), kit.metrics().serve.clone(), &prefix);
        kit.bounded_api_server(
            "api",
            settings.service.api.socket_address(),
            &settings.service.connections,
            |server| {
                server.cors().routes(move |config| {
                    config.service(route.clone().scope(&prefix));
                })
            },
        )?;
        let (ready, gauges, status) = (signatures.clone(), signatures.clone(), signatures.clone());
        let source_metrics = kit.metrics().source.clone();
        kit.ready_when(move || ready.is_ready());
        kit.before_scrape(move || source_metrics.update(&gauges));
        kit.status(move |tasks| Status {
            ready: status.is_ready(),
            signatures: status.status(),
            tasks,
        });
        Ok(Self {
            signatures,
            _work_dir: work_dir,
        })
    }
}

impl MetadataHelper {
    pub fn signatures(&self) -> &Signatures {
        &self.signatures
    }
}
