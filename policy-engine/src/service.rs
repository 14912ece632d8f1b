//! The policy-engine as the service skeleton runs it: its declaration, and
//! what it starts (the client API, the upstream refresher, readiness and
//! status from the engine).

use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use service_kit::{Declaration, Flags, Ignored, Kit, Service};

use crate::client::Feeds;
use crate::client::{CheckSink, Engine, Parts, configure_routes, graph_answers_at_hand};
use crate::cluster_policy::ClusterPolicy;
use crate::explorer;
use crate::metrics::EngineMetrics;
use crate::openapi::OpenApiDocument;
use crate::operator::Fleet;
use crate::operator::FleetMetrics;
use crate::operator::Operator;
use crate::operator::{Control, ControlMetrics};
use crate::operator::{FLEET_PATH, configure_status};
use crate::settings::{Resolved, Settings};
use crate::status::EngineStatus;

/// The running policy-engine.
pub struct PolicyEngine {
    engine: Arc<Engine>,
    operator: Arc<Operator>,
}

impl Service for PolicyEngine {
    const DECLARATION: Declaration = Declaration {
        name: "policy-engine",
        crate_name: env!("CARGO_CRATE_NAME"),
        version: env!("CARGO_PKG_VERSION"),
        about: "Serves every cluster its view of the Cincinnati update graph",
        env_prefix: "CINCINNATI_PE_",
        metric_prefix: "cincinnati_pe",
        liveness_path: "/livez",
        readiness_path: "/readyz",
        flags: Flags {
            aliases: &[],
            without: &["policy"],
        },
        ignored: &[Ignored {
            key: "upstream.method",
            warning: "is deprecated and ignored",
        }],
    };
    type Settings = Settings;
    type Metrics = EngineMetrics;
    type Plan = Resolved;

    fn plan(settings: &Settings) -> anyhow::Result<Resolved> {
        Ok(settings.resolve()?)
    }

    fn describe(plan: &Resolved) -> serde_json::Value {
        serde_json::json!({
            "upstream": plan.upstream_url,
            "upstream_timeout_secs": plan.upstream_timeout.as_secs(),
            "filters": plan.pipeline.stage_names().collect::<Vec<_>>(),
            "cluster_policy": plan.cluster_policy.as_ref().map(|policy| policy.status(std::time::SystemTime::now())),
        })
    }

    fn start(plan: Resolved, settings: &Settings, kit: &mut Kit<EngineMetrics>) -> anyhow::Result<Self> {
        crate::allocator::log_overrides();
        let service = &settings.service;
        let openapi = OpenApiDocument::served(&service.api.path_prefix, plan.rules.required.names());
        let metrics = kit.metrics().clone();
        let feeds = Feeds::new(
            plan.client,
            settings.upstream.cincinnati.kind.fixed(),
            plan.limits.feeds.clone(),
            metrics.clone(),
        );
        let cluster_policy = plan.cluster_policy.map(|source| {
            Arc::new(ClusterPolicy::new(
                source,
                plan.limits.policy_reload_interval,
                metrics.clone(),
            ))
        });
        let fleet = match plan.fleet {
            Some(fleet) => Some(Arc::new(Fleet::new(
                fleet,
                FleetMetrics::register(kit.registry())?,
            ))),
            None => None,
        };
        let engine = Arc::new(Engine::new(
            feeds,
            plan.pipeline,
            plan.rules,
            &plan.limits,
            Parts {
                metrics,
                cluster_policy: cluster_policy.clone(),
                checks: fleet.clone().map(|fleet| fleet as Arc<dyn CheckSink>),
                stopping: kit.stop_handle(),
                phased_rollouts: settings.phased_rollouts.enabled,
            },
        ));
        // (Settings made sure control has a store and a policy.)
        let control = match (plan.control, &fleet, &cluster_policy) {
            (Some(access), Some(fleet), Some(policy)) => {
                let phasing = engine.clone();
                Some(Arc::new(Control::new(
                    fleet.clone(),
                    (policy.clone(), Box::new(move || phasing.graph_data_rollouts())),
                    access,
                    ControlMetrics::register(kit.registry())?,
                )))
            }
            _ => None,
        };
        let operator = Arc::new(Operator::new(engine.clone(), fleet, control));
        let routes = configure_routes(
            service.api.path_prefix.clone(),
            engine.clone(),
            openapi,
            service.requests.caching(),
        );
        let explorer = explorer::Explorer::new(
            service.api.path_prefix.clone(),
            engine.clone(),
            service.requests.caching(),
        );
        let public_explorer = explorer.public_routes(service.explorer);
        let at_hand = service.answers_at_hand.then(|| {
            graph_answers_at_hand(
                &service.api.path_prefix,
                engine.clone(),
                service.requests.caching(),
            )
        });
        kit.bounded_api_server(
            "api",
            service.api.socket_address(),
            &service.connections,
            |server| {
                let server = server.cors().routes(move |config| {
                    routes(config);
                    public_explorer(config);
                });
                match at_hand {
                    Some(at_hand) => server.answers_at_hand(at_hand),
                    None => server,
                }
            },
        )?;
        let feeds = engine.feeds().clone();
        kit.spawn_every(feeds.refresh_schedule(plan.upstream_timeout), move || {
            let feeds = feeds.clone();
            async move { feeds.refresh_round().await }
        });
        let status_routes = configure_status(
            service.api.path_prefix.clone(),
            operator.clone(),
            service.requests.caching(),
        );
        kit.status_body_admission(operator.body_admission(settings.rollouts.max_alert_bytes));
        // The page on the status port too, where its Fleet view finds the
        // fleet answers.
        let status_explorer = service
            .explorer
            .then(|| explorer.status_routes(operator.fleet().is_some().then_some(FLEET_PATH)));
        kit.status_routes(move |config| {
            status_routes(config);
            if let Some(page) = &status_explorer {
                page(config);
            }
        });
        if let Some(policy) = engine.cluster_policy().cloned() {
            kit.spawn_every(policy.reload_schedule(), move || {
                let policy = policy.clone();
                async move { policy.reload().await }
            });
        }
        if let Some(fleet) = operator.fleet().cloned() {
            start_fleet(kit, fleet, engine.clone())?;
        }
        if let Some(control) = operator.control().cloned() {
            let refresher = control.clone();
            kit.spawn_every(control.refresh_schedule(), move || {
                let refresher = refresher.clone();
                async move { refresher.refresh().await }
            });
            if let Some(schedule) = control.query_schedule() {
                let querier = control.clone();
                kit.spawn_every(schedule, move || {
                    let querier = querier.clone();
                    async move { querier.check_queries().await }
                });
            }
            let feeds = engine.feeds().clone();
            kit.spawn_every(control.halt_schedule(), move || {
                let (control, feeds) = (control.clone(), feeds.clone());
                async move {
                    control.check_halts(&feeds, SystemTime::now()).await;
                    control.check_gates(&feeds, SystemTime::now()).await;
                }
            });
        }
        let (ready, ready_operator) = (engine.clone(), operator.clone());
        kit.ready_when(move || ready.is_ready() && ready_operator.is_ready());
        let (gauges, gauges_operator) = (engine.clone(), operator.clone());
        kit.before_scrape(move || {
            gauges.update_gauges();
            gauges_operator.update_gauges();
        });
        let (status, status_operator) = (engine.clone(), operator.clone());
        kit.status(move |tasks| {
            let (fleet, rollout_control) = status_operator.status();
            EngineStatus {
                client: status.status(),
                fleet,
                rollout_control,
                tasks,
            }
        });
        Ok(Self { engine, operator })
    }
}

impl PolicyEngine {
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn operator(&self) -> &Arc<Operator> {
        &self.operator
    }
}

/// The fleet's rounds: writing, pruning, counting; bulk work, run below
/// the answers and the upstream's revisions ([`fleet_rounds`]).
fn start_fleet(kit: &mut Kit<EngineMetrics>, fleet: Arc<Fleet>, engine: Arc<Engine>) -> anyhow::Result<()> {
    let rounds = fleet_rounds()?;
    let writer = fleet.clone();
    kit.spawn_every(fleet.recording_schedule(), move || {
        let writer = writer.clone();
        in_background(rounds, async move { writer.write_queued().await })
    });
    if let Some(schedule) = fleet.prune_schedule() {
        let pruner = fleet.clone();
        kit.spawn_every(schedule, move || {
            let pruner = pruner.clone();
            in_background(rounds, async move { pruner.prune().await })
        });
    }
    kit.spawn_every(fleet.count_schedule(), move || {
        let (fleet, engine) = (fleet.clone(), engine.clone());
        in_background(rounds, async move {
            if let Err(error) = fleet.count(&engine.rollouts(), SystemTime::now()).await {
                tracing::warn!(error = %error, "counting the fleet failed; its answers count when asked");
            }
        })
    });
    Ok(())
}

/// The process's runtime for the fleet's rounds (`service_kit::priority`),
/// made once: engines started in one process (tests) share it, and it
/// lives as long as the process (a runtime cannot be dropped where
/// async code runs).
fn fleet_rounds() -> anyhow::Result<&'static tokio::runtime::Runtime> {
    static ROUNDS: OnceLock<std::io::Result<tokio::runtime::Runtime>> = OnceLock::new();
    ROUNDS
        .get_or_init(|| service_kit::priority::background_runtime("fleet-rounds"))
        .as_ref()
        .map_err(|error| anyhow::anyhow!("starting the fleet's rounds: {error}"))
}

/// Runs `round` on `rounds` and waits for it, so that the supervisor still
/// sees a round that hangs.
async fn in_background(rounds: &tokio::runtime::Runtime, round: impl Future<Output = ()> + Send + 'static) {
    if let Err(error) = rounds.spawn(round).await {
        tracing::error!(%error, "a fleet round ended without finishing");
    }
}
