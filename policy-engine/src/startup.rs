//! Builds and runs the service: the API server, the status server and the
//! background refresher, stopped together.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use actix_cors::Cors;
use actix_web::dev::{Server, ServerHandle};
use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};
use anyhow::Context as _;
use service_kit::connections::{ConnectionLimit, refuse_beyond_limit};
use service_kit::errors::{count_errors, not_found};
use service_kit::shutdown::StopHandle;
use service_kit::supervisor::{Backoff, Liveness, Supervisor};
use service_kit::telemetry::trace_requests;
use service_kit::{BoundServer, CachePolicy, StatusServer};

use crate::engine::Engine;
use crate::metrics::EngineMetrics;
use crate::routes::{self, openapi::OpenApiDocument};
use crate::settings::Settings;
use crate::upstream::client::UpstreamClient;

/// Refresh rounds (each an interval and an upstream timeout) that may pass
/// without one completing before the engine is not live.
const STALLED_ROUNDS: u32 = 3;

/// A bound, not yet running policy-engine.
pub struct Application {
    address: SocketAddr,
    status_address: SocketAddr,
    engine: Arc<Engine>,
    servers: Vec<(ServerHandle, Server)>,
    supervisor: Supervisor,
    /// A refresh round may take one upstream timeout beyond its interval.
    refresh_stalls_after: Duration,
    stop: StopHandle,
}

impl Application {
    /// Binds both ports (0 picks free ones) and prepares the engine. Must be
    /// called inside a tokio runtime, where the refresher will run.
    pub fn build(settings: &Settings) -> anyhow::Result<Self> {
        warn_about_ignored_settings(settings);
        let resolved = settings.resolve()?;
        let refresh_stalls_after = STALLED_ROUNDS * (resolved.limits.interval + resolved.upstream_timeout);
        let metrics =
            EngineMetrics::new(service_kit::build_info::git_commit()).context("registering metrics")?;
        let openapi = OpenApiDocument::served(&settings.service.path_prefix, &resolved.rules.required);
        let client = UpstreamClient::new(
            &resolved.upstream_url,
            resolved.upstream_timeout,
            settings.upstream.cincinnati.max_body_bytes,
            &settings.upstream.cincinnati.root_certificate_dir,
        )?;
        let engine = Arc::new(Engine::new(
            client,
            resolved.pipeline,
            resolved.rules,
            settings.upstream.cincinnati.kind.fixed(),
            resolved.limits,
            metrics.clone(),
        ));
        let supervisor =
            Supervisor::new(&engine.metrics().registry, Backoff::default()).context("registering metrics")?;
        let (api, address) = api_server(settings, &engine, openapi)?;
        let status = status_server(settings, &engine, supervisor.liveness())?;
        Ok(Self {
            address,
            status_address: status.address,
            servers: vec![(api.handle(), api), (status.server.handle(), status.server)],
            supervisor,
            refresh_stalls_after,
            engine,
            stop: StopHandle::default(),
        })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    pub fn status_address(&self) -> SocketAddr {
        self.status_address
    }

    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Serves until SIGTERM/SIGINT or [`StopHandle::stop`], then lets
    /// in-flight requests finish.
    pub async fn run_until_stopped(mut self) -> anyhow::Result<()> {
        let engine = self.engine.clone();
        self.supervisor.spawn(
            "upstream refresh",
            Some(self.refresh_stalls_after),
            move |heartbeat| engine.clone().run_refresher(heartbeat),
        );
        let (handles, servers): (Vec<_>, Vec<_>) = self.servers.into_iter().unzip();
        let servers = futures::future::try_join_all(servers.into_iter().map(tokio::spawn));
        self.stop.until_stopped().await.context("listening for signals")?;
        for handle in &handles {
            handle.stop(true).await;
        }
        self.supervisor.shutdown().await;
        for result in servers.await.context("a server task panicked")? {
            result.context("a server failed")?;
        }
        Ok(())
    }
}

fn warn_about_ignored_settings(settings: &Settings) {
    if let Some(method) = &settings.upstream.method {
        tracing::warn!("the 'upstream.method' setting ({method}) is deprecated and ignored");
    }
    if let Some(endpoint) = &settings.service.tracing_endpoint {
        tracing::warn!("service.tracing_endpoint ({endpoint}) is ignored; set OTEL_EXPORTER_OTLP_ENDPOINT");
    }
}

/// The client API server: routes under the prefix, CORS, error counting,
/// and connection settings that queue load rather than refuse it, up to
/// `max_open_connections`.
fn api_server(
    settings: &Settings,
    engine: &Arc<Engine>,
    openapi: OpenApiDocument,
) -> anyhow::Result<(Server, SocketAddr)> {
    let service = &settings.service;
    let connections = ConnectionLimit::new(service.max_open_connections, &engine.metrics().registry)
        .context("registering metrics")?;
    let on_connect = connections.on_connect();
    let connections = web::Data::new(connections);
    let engine = web::Data::from(engine.clone());
    let openapi = web::Data::new(openapi);
    let caching = web::Data::new(CachePolicy::revalidate_after(Duration::from_secs(
        service.cache_max_age_secs,
    )));
    let response_errors = web::Data::new(engine.metrics().response_errors.clone());
    let prefix = service.path_prefix.clone();
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(engine.clone())
            .app_data(caching.clone())
            .app_data(openapi.clone())
            .app_data(response_errors.clone())
            .app_data(connections.clone())
            .wrap(from_fn(refuse_beyond_limit))
            .wrap(from_fn(count_errors))
            .wrap(
                Cors::default()
                    .allow_any_origin()
                    .allowed_methods(["GET", "HEAD"]),
            )
            .wrap(from_fn(trace_requests))
            .configure(routes::configure(&prefix))
            .default_service(web::to(not_found))
    })
    .on_connect(on_connect)
    .keep_alive(Duration::from_secs(service.keep_alive))
    .client_request_timeout(Duration::from_secs(service.client_timeout))
    .backlog(service.backlog)
    .max_connections(service.max_connections)
    .max_connection_rate(service.max_connection_rate)
    .disable_signals();
    if service.workers > 0 {
        server = server.workers(service.workers);
    }
    let server = server
        .bind(settings.service_address())
        .with_context(|| format!("binding {}", settings.service_address()))?;
    let address = server.addrs()[0];
    Ok((server.run(), address))
}

/// Probes, metrics and `/status` on their own port.
fn status_server(
    settings: &Settings,
    engine: &Arc<Engine>,
    liveness: Liveness,
) -> anyhow::Result<BoundServer> {
    let (ready, gauges, status) = (engine.clone(), engine.clone(), engine.clone());
    StatusServer::new(engine.metrics().registry.clone())
        .liveness("/livez", liveness)
        .probe("/readyz", move || ready.is_ready())
        .before_scrape(move || gauges.update_gauges())
        .status_document(move || status.status())
        .bind(settings.status_address())
        .with_context(|| format!("binding {}", settings.status_address()))
}
