//! The graph-builder as the service skeleton runs it: its declaration, and
//! what it starts (the Graph API and public servers, the refresh tasks,
//! readiness and status from the shared state); or one build (`--once`).

use std::sync::Arc;

use anyhow::Context as _;
use clap::{Arg, ArgAction};
use http_answers::PreparedBody;
use jiff::Timestamp;
use service_kit::{Declaration, Flags, Ignored, Kit, Service};

use crate::metrics::Metrics;
use crate::pipeline::build;
use crate::plan::Plan;
use crate::refresh::{self, GraphDataUpdate, Shared};
use crate::server::{self, ApiContext};
use crate::settings::Settings;
use crate::state::{Health, SourceHealth, State, age_seconds};

/// The running graph-builder.
pub struct GraphBuilder {
    state: Arc<State>,
}

/// `--once`: build the graph once, print it, exit.
pub const ONCE: &str = "once";

impl Service for GraphBuilder {
    const DECLARATION: Declaration = Declaration {
        name: "graph-builder",
        crate_name: env!("CARGO_CRATE_NAME"),
        version: env!("CARGO_PKG_VERSION"),
        about: "Builds the Cincinnati update graph from release images and graph-data, and serves it",
        env_prefix: "CINCINNATI_GB_",
        metric_prefix: "cincinnati_gb",
        liveness_path: "/liveness",
        readiness_path: "/readiness",
        flags: Flags {
            aliases: &[
                ("service.address", "address"),
                ("service.port", "port"),
                ("service.public_port", "public_port"),
                ("service.scrape_timeout_secs", "service.scrape_timeout"),
                ("upstream.registry.url", "registry"),
                ("upstream.registry.repository", "repository"),
                ("upstream.registry.credentials_path", "credentials-file"),
            ],
            without: &["plugin_settings", "upstream.pause_secs"],
        },
        ignored: &[
            Ignored {
                key: "upstream.pause_secs",
                warning: "is deprecated and ignored; use service.pause_secs",
            },
            Ignored {
                key: "upstream.method",
                warning: "is ignored",
            },
        ],
    };
    type Settings = Settings;
    type Metrics = Metrics;
    type Plan = Plan;

    fn plan(settings: &Settings) -> anyhow::Result<Plan> {
        Ok(Plan::from_settings(settings)?)
    }

    fn describe(plan: &Plan) -> serde_json::Value {
        plan.describe()
    }

    fn start(plan: Plan, settings: &Settings, kit: &mut Kit<Metrics>) -> anyhow::Result<Self> {
        let state = State::new(Health {
            releases: SourceHealth::new(plan.releases.describe())
                .checked_every(plan.schedule.release_check.filter(|_| plan.releases.can_check())),
            graph_data: plan.graph_data.as_ref().map(|source| {
                SourceHealth::new(source.describe()).checked_every(plan.schedule.graph_data_check)
            }),
            build: SourceHealth::new("graph build".to_owned()),
            ..Health::default()
        });
        let metrics = kit.metrics().clone();
        let context = Arc::new(ApiContext {
            state: state.clone(),
            metrics: metrics.clone(),
            required: settings.service.requests.required(),
            caching: settings.service.requests.caching(),
            stopping: kit.stop_handle(),
        });
        let prefix = &settings.service.api.path_prefix;
        let durations = metrics.request_duration.clone();
        let api = server::api_routes(prefix, context.clone());
        kit.api_server("api", settings.api_address(), |server| {
            server.request_durations(durations.clone()).routes(api)
        })?;
        // One worker is plenty for a file fetched by a few downstream services.
        let public = server::public_routes(prefix, context);
        kit.api_server("public", settings.public_address(), |server| {
            server.workers(1).request_durations(durations).routes(public)
        })?;
        let shared = Shared {
            state: state.clone(),
            metrics: metrics.clone(),
        };
        refresh::spawn(plan, shared, kit.supervisor());
        let (ready, status, ages) = (state.clone(), state.clone(), state.clone());
        kit.ready_when(move || ready.is_ready());
        kit.before_scrape(move || {
            if let Some(served) = ages.graph() {
                metrics.graph_age.set(age_seconds(served.built_at));
            }
        });
        kit.status(move |tasks| status.status(tasks));
        Ok(Self { state })
    }

    fn extra_arguments() -> Vec<Arg> {
        vec![
            Arg::new(ONCE)
                .long(ONCE)
                .action(ArgAction::SetTrue)
                .help("Build the graph once, print it as Graph API JSON on stdout, and exit"),
        ]
    }
}

impl GraphBuilder {
    pub fn is_ready(&self) -> bool {
        self.state.is_ready()
    }
}

/// Builds the graph once and returns it, prepared as served, or the reason it
/// could not be built (`--once`).
pub async fn build_once(settings: &Settings) -> anyhow::Result<PreparedBody> {
    let mut plan = Plan::from_settings(settings)?;
    let releases = refresh::fetch_releases(&mut plan.releases, plan.schedule.scrape_timeout)
        .await
        .context("reading releases")?
        .into_new()
        .context("reading releases: no releases")?;
    let graph_data = match plan.graph_data.as_mut() {
        Some(source) => match refresh::fetch_graph_data(source, &Arc::new(plan.strictness), None)
            .await
            .context("reading graph-data")?
        {
            GraphDataUpdate::New(update) => Some(Arc::new(update.graph_data)),
            GraphDataUpdate::Unchanged | GraphDataUpdate::InUse => {
                anyhow::bail!("reading graph-data: the source sent nothing")
            }
        },
        None => None,
    };
    for dropped in &releases.dropped {
        tracing::warn!(subject = %dropped.subject, reason = %dropped.reason, "left out of the graph");
    }
    let built =
        build(&releases, graph_data, &plan.pipeline, Timestamp::now()).context("building the graph")?;
    Ok(built.served.body)
}
