//! Builds and runs the graph-builder: the Graph API, public and status
//! servers and the refresh tasks, stopped together; or one build (`--once`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::{Server, ServerHandle};
use anyhow::Context as _;
use service_kit::errors::ResponseErrors;
pub use service_kit::shutdown::StopHandle;
use service_kit::supervisor::{Backoff, Liveness, Supervisor};
use service_kit::{CachePolicy, StatusServer};

use crate::build::build;
use crate::metrics::Metrics;
use crate::plan::Plan;
use crate::refresh::{self, Schedule, Shared};
use crate::server::{self, ApiContext};
use crate::settings::Settings;
use crate::state::{Health, SourceHealth, State};

/// A bound, not yet running graph-builder.
pub struct Application {
    pub api_address: SocketAddr,
    pub public_address: SocketAddr,
    pub status_address: SocketAddr,
    state: Arc<State>,
    servers: Vec<(ServerHandle, Server)>,
    tasks: Supervisor,
    stop: StopHandle,
}

impl Application {
    /// Binds the three ports (0 picks free ones) and starts the refresh
    /// tasks. Must be called inside a tokio runtime.
    pub fn build(settings: &Settings) -> anyhow::Result<Self> {
        settings.validate()?;
        warn_about_ignored(settings);
        let plan = Plan::from_settings(settings)?;
        let metrics = Metrics::new(service_kit::build_info::git_commit()).context("registering metrics")?;
        let state = State::new(Health {
            releases: SourceHealth::new(plan.releases.describe()),
            graph_data: plan
                .graph_data
                .as_ref()
                .map(|source| SourceHealth::new(source.describe())),
            build: SourceHealth::new("graph build".to_owned()),
            ..Health::default()
        });
        let context = Arc::new(ApiContext {
            state: state.clone(),
            metrics: metrics.clone(),
            mandatory_parameters: settings.service.mandatory_client_parameters.clone(),
            caching: CachePolicy::revalidate_after(Duration::from_secs(settings.service.cache_max_age_secs)),
        });
        let errors = ResponseErrors::register(&metrics.registry).context("registering metrics")?;
        let prefix = &settings.service.path_prefix;
        let (api, api_address) =
            server::bind_api(settings.api_address(), prefix, context.clone(), errors.clone())
                .with_context(|| format!("binding {}", settings.api_address()))?;
        let (public, public_address) =
            server::bind_public(settings.public_address(), prefix, context, errors)
                .with_context(|| format!("binding {}", settings.public_address()))?;
        let mut tasks =
            Supervisor::new(&metrics.registry, Backoff::default()).context("registering metrics")?;
        let status = status_server(&state, &metrics, tasks.liveness())
            .bind(settings.status_address())
            .with_context(|| format!("binding {}", settings.status_address()))?;

        let shared = Shared {
            state: state.clone(),
            metrics,
        };
        let schedule = Schedule {
            releases: settings.scrape_pause(),
            graph_data: settings.graph_data_pause(),
            scrape_timeout: settings.scrape_timeout(),
        };
        refresh::spawn(
            plan.releases,
            plan.graph_data,
            plan.strictness,
            plan.pipeline,
            schedule,
            shared,
            &mut tasks,
        );
        Ok(Self {
            api_address,
            public_address,
            status_address: status.address,
            state,
            servers: vec![
                (api.handle(), api),
                (public.handle(), public),
                (status.server.handle(), status.server),
            ],
            tasks,
            stop: StopHandle::default(),
        })
    }

    pub fn is_ready(&self) -> bool {
        self.state.is_ready()
    }

    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Serves until SIGTERM/SIGINT or [`StopHandle::stop`], then lets
    /// in-flight requests finish.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let (handles, servers): (Vec<_>, Vec<_>) = self.servers.into_iter().unzip();
        let servers = futures::future::try_join_all(servers.into_iter().map(tokio::spawn));
        self.stop.until_stopped().await.context("listening for signals")?;
        self.tasks.shutdown().await;
        for handle in &handles {
            handle.stop(true).await;
        }
        for result in servers.await.context("a server task panicked")? {
            result.context("a server failed")?;
        }
        Ok(())
    }
}

fn status_server(state: &Arc<State>, metrics: &Metrics, liveness: Liveness) -> StatusServer {
    let (ready, status, ages) = (state.clone(), state.clone(), state.clone());
    let graph_age = metrics.graph_age.clone();
    StatusServer::new(metrics.registry.clone())
        .liveness("/liveness", liveness)
        .probe("/readiness", move || ready.is_ready())
        .before_scrape(move || {
            if let Some(served) = ages.graph.load().as_ref() {
                graph_age.set(crate::state::age_seconds(served.built_at));
            }
        })
        .status_document(move || status.status_document())
}

fn warn_about_ignored(settings: &Settings) {
    if settings.upstream.pause_secs.is_some() {
        tracing::warn!("upstream.pause_secs is deprecated and ignored; use service.pause_secs");
    }
    if let Some(method) = &settings.upstream.method {
        tracing::warn!("upstream.method ({method}) is ignored");
    }
    if let Some(endpoint) = &settings.service.tracing_endpoint {
        tracing::warn!("service.tracing_endpoint ({endpoint}) is ignored; set OTEL_EXPORTER_OTLP_ENDPOINT");
    }
}

/// Builds the graph once and returns it, prepared as served, or the reason it
/// could not be built (`--once`).
pub async fn build_once(settings: &Settings) -> anyhow::Result<service_kit::PreparedBody> {
    settings.validate()?;
    let mut plan = Plan::from_settings(settings)?;
    let shared = Shared {
        state: State::new(Health::default()),
        metrics: Metrics::new(service_kit::build_info::git_commit())?,
    };
    let releases = refresh::fetch_releases(&mut plan.releases, settings.scrape_timeout(), &shared)
        .await
        .with_context(|| {
            let health = shared.state.health();
            format!(
                "reading releases: {}",
                health.releases.last_error.clone().unwrap_or_default()
            )
        })?;
    let graph_data = match plan.graph_data.as_mut() {
        Some(source) => {
            let strictness = Arc::new(plan.strictness);
            let shared_for_errors = Shared {
                state: State::new(Health {
                    graph_data: Some(SourceHealth::new(source.describe())),
                    ..Health::default()
                }),
                metrics: shared.metrics.clone(),
            };
            let loaded =
                refresh::fetch_graph_data(source, &strictness, None, &mut None, &shared_for_errors).await;
            let error = shared_for_errors
                .state
                .health()
                .graph_data
                .as_ref()
                .and_then(|h| h.last_error.clone());
            Some(loaded.with_context(|| format!("reading graph-data: {}", error.unwrap_or_default()))?)
        }
        None => None,
    };
    for dropped in &releases.dropped {
        tracing::warn!(subject = %dropped.subject, reason = %dropped.reason, "left out of the graph");
    }
    let built = build(&releases, graph_data, &plan.pipeline).context("building the graph")?;
    Ok(built.served.body)
}
