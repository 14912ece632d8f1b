//! The service skeleton. A service declares its settings, its metrics, how
//! its settings resolve into a plan, and what it starts (API servers with
//! their routes, supervised tasks, readiness, a status document); the
//! skeleton does the rest, the same way for every service:
//!
//! - the command line and the settings layers (defaults < TOML < environment
//!   < flags, unknown keys refused), `--check-config [-o json]`;
//! - logging and tracing;
//! - the metrics registry (`build_info`, error answers, task restarts, open
//!   connections where bounded, then the service's own);
//! - the API servers with one middleware stack ([`crate::server`]);
//! - the status server: probes at the service's paths (liveness from the
//!   supervised periodic tasks' rounds, readiness from the service), `/metrics`,
//!   `/status`;
//! - graceful shutdown on SIGTERM, SIGINT or a [`StopHandle`].
//!
//! See `metadata-helper` (or the graph-builder's and policy-engine's
//! `service.rs`) for what a declaration looks like.

use std::net::SocketAddr;
use std::time::Duration;

use actix_web::dev::RequestHead;
use actix_web::web;
use anyhow::Context as _;
use serde::Serialize;

use crate::cli::{self, Invocation, Output};
use crate::declaration::{Declaration, Ignored};
use http1_server::{Server, ServerHandle};

use crate::metrics::{MetricRegistry, ServiceMetrics};
use crate::periodic::Every;
use crate::schema::Schema;
use crate::server::{ApiServer, api_connection_limit};
use crate::settings::{ConnectionSettings, SkeletonSettings, distinct_addresses};
use crate::shutdown::StopHandle;
use crate::status::{Admission, StatusHosts, StatusServer};
use crate::supervisor::{Backoff, Supervisor, TaskStatus};
use http_answers::errors::ResponseErrors;

/// Every service ignores upstream's Jaeger endpoint: spans go over OTLP.
const TRACING_ENDPOINT: Ignored = Ignored {
    key: "service.tracing_endpoint",
    warning: "is ignored; set OTEL_EXPORTER_OTLP_ENDPOINT",
};

/// A service, as it declares itself to the skeleton.
pub trait Service: Sized + Send + Sync + 'static {
    const DECLARATION: Declaration;
    type Settings: SkeletonSettings;
    type Metrics: ServiceMetrics;
    /// What the settings resolve to once checked: everything start-up needs
    /// that can be built without binding a port or contacting anything.
    type Plan: Send;

    /// Checks the settings and resolves them (what `--check-config` runs).
    fn plan(settings: &Self::Settings) -> anyhow::Result<Self::Plan>;

    /// What `--check-config` prints about the plan besides the settings.
    fn describe(plan: &Self::Plan) -> serde_json::Value;

    /// Starts the service on `kit`: its servers, tasks, readiness, status.
    fn start(
        plan: Self::Plan,
        settings: &Self::Settings,
        kit: &mut Kit<Self::Metrics>,
    ) -> anyhow::Result<Self>;

    /// Flags of the service's own that are not settings.
    fn extra_arguments() -> Vec<clap::Arg> {
        Vec::new()
    }
}

type Check = Box<dyn Fn() -> bool + Send + Sync>;
type Document = Box<dyn Fn(Vec<TaskStatus>) -> serde_json::Value + Send + Sync>;
type StatusRoutes = Box<dyn Fn(&mut web::ServiceConfig) + Send + Sync>;
type AdmitBody = Box<dyn Fn(&RequestHead) -> Admission + Send + Sync>;

/// What a starting service builds on.
pub struct Kit<M> {
    metrics: M,
    registry: MetricRegistry,
    errors: ResponseErrors,
    supervisor: Supervisor,
    servers: Vec<(&'static str, SocketAddr, Server)>,
    readiness: Option<Check>,
    before_scrape: Option<Box<dyn Fn() + Send + Sync>>,
    status: Option<Document>,
    status_routes: Option<StatusRoutes>,
    status_bodies: Option<AdmitBody>,
    stop: StopHandle,
}

impl<M: ServiceMetrics> Kit<M> {
    fn new(prefix: &str) -> anyhow::Result<Self> {
        let registry = MetricRegistry::new(prefix).context("creating the metrics registry")?;
        let register = || -> prometheus::Result<_> {
            registry.add_build_info(crate::build_info::git_commit())?;
            let errors = ResponseErrors::new()?;
            registry.add(errors.collector())?;
            Ok((
                errors,
                Supervisor::new(&registry, Backoff::default())?,
                M::register(&registry)?,
            ))
        };
        let (errors, supervisor, metrics) = register().context("registering metrics")?;
        Ok(Self {
            metrics,
            registry,
            errors,
            supervisor,
            servers: Vec::new(),
            readiness: None,
            before_scrape: None,
            status: None,
            status_routes: None,
            status_bodies: None,
            stop: StopHandle::default(),
        })
    }

    /// The service's stop: what a handler holding a request (waiting for a
    /// change) watches, so that shutdown does not wait for it.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    pub fn metrics(&self) -> &M {
        &self.metrics
    }

    pub fn registry(&self) -> &MetricRegistry {
        &self.registry
    }

    /// Binds an API server named `name` (`api`; named in the listening
    /// log line) on `address`, as `configure` describes it.
    pub fn api_server(
        &mut self,
        name: &'static str,
        address: SocketAddr,
        configure: impl FnOnce(ApiServer) -> ApiServer,
    ) -> anyhow::Result<SocketAddr> {
        let server = configure(ApiServer::new(address, self.errors.clone()));
        self.bind(name, address, server)
    }

    /// [`Kit::api_server`] with upstream's connection knobs and a bound on
    /// open connections (`open_connections`, `connections_refused_total`).
    pub fn bounded_api_server(
        &mut self,
        name: &'static str,
        address: SocketAddr,
        connections: &ConnectionSettings,
        configure: impl FnOnce(ApiServer) -> ApiServer,
    ) -> anyhow::Result<SocketAddr> {
        let limit = api_connection_limit(connections.max_open_connections, &self.registry, &self.errors)
            .context("registering metrics")?;
        let server = configure(ApiServer::new(address, self.errors.clone())).connections(connections, limit);
        self.bind(name, address, server)
    }

    fn bind(
        &mut self,
        name: &'static str,
        address: SocketAddr,
        server: ApiServer,
    ) -> anyhow::Result<SocketAddr> {
        let (server, bound) = server.bind().with_context(|| format!("binding {address}"))?;
        self.servers.push((name, bound, server));
        Ok(bound)
    }

    /// Runs `round` on the schedule of `every`, supervised (see
    /// [`crate::periodic`] and [`Supervisor::spawn_every`]): liveness fails
    /// when a watched task completes no round for [`Every::stalls_after`].
    pub fn spawn_every<F, Fut>(&mut self, every: Every, round: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.supervisor.spawn_every(every, round);
    }

    /// The supervisor of the service's tasks, for code that spawns several.
    pub fn supervisor(&mut self) -> &mut Supervisor {
        &mut self.supervisor
    }

    /// The readiness probe answers 200 while `check` holds.
    pub fn ready_when(&mut self, check: impl Fn() -> bool + Send + Sync + 'static) {
        self.readiness = Some(Box::new(check));
    }

    /// Runs before each `/metrics` answer, to update gauges computed from
    /// state (ages, ratios) rather than events.
    pub fn before_scrape(&mut self, refresh: impl Fn() + Send + Sync + 'static) {
        self.before_scrape = Some(Box::new(refresh));
    }

    /// Routes the status server answers besides probes, `/metrics` and
    /// `/status`: operator endpoints that must not be public.
    pub fn status_routes(&mut self, configure: impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static) {
        self.status_routes = Some(Box::new(configure));
    }

    /// Decides, from a request's head alone, whether the status server
    /// reads the request's body: so that a route can check what it must
    /// (a bearer token, that the path is its own) before the server holds
    /// what the client sends. The contract:
    ///
    /// - `admit` is asked about every request to the status server that
    ///   announces a body (Content-Length above 0, or chunked), once its
    ///   head has passed RFC 9112's checks and the host check (421 before),
    ///   and before a byte of its body is read. A request without a body is
    ///   never asked about: it goes to the routes as always.
    /// - It sees the head as the routes would (`method`, `uri` with the
    ///   service's path prefix and the query, `version`, `headers`,
    ///   `peer_addr`). It is called on the server's worker thread: it must
    ///   answer at once (no I/O, no lock held for long, nothing that
    ///   blocks), and must not panic.
    /// - [`Admission::Take`]`(n)`: the body is read, whole, before the
    ///   routes are called: at most `n` bytes (413 beyond, before a byte is
    ///   read when Content-Length says so, at the first chunk past `n` when
    ///   chunked), within the client timeout of the head (408), and within
    ///   the status server's budget for bodies at once
    ///   ([`http1_server::DEFAULT_BODY_BUDGET_BYTES`], across workers: 503
    ///   with `Retry-After: 1`, unread, beyond). Then the request goes to
    ///   the routes as any other (an extractor's own limit, actix's
    ///   `PayloadConfig`, still applies). `Take(0)` refuses every body with
    ///   413 and lets an empty chunked one pass.
    /// - [`Admission::Answer`]`(response)`: `response` is written as it is
    ///   (no route, middleware or metric sees the request), the body is
    ///   never read, and the connection is closed after the answer (what
    ///   the client still sends is read and discarded for a while, so that
    ///   it reads the answer).
    ///
    /// Without it, every body of up to
    /// [`crate::status::DEFAULT_MAX_BODY_BYTES`] is read.
    /// [`Kit::status_max_body_bytes`] is this with `|_| Admission::Take(n)`;
    /// the later call of the two wins. A route that takes a body with a
    /// token, say:
    ///
    /// ```ignore
    /// kit.status_body_admission(move |head| {
    ///     if head.method != Method::POST || head.uri.path() != webhook {
    ///         return Admission::Take(0);
    ///     }
    ///     match tokens.authorize(head.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok())) {
    ///         Ok(_) => Admission::Take(max_alert_bytes),
    ///         Err(error) => Admission::Answer(HttpError::from(error).error_response()),
    ///     }
    /// });
    /// ```
    pub fn status_body_admission(
        &mut self,
        admit: impl Fn(&RequestHead) -> Admission + Send + Sync + 'static,
    ) {
        self.status_bodies = Some(Box::new(admit));
    }

    /// Reads every body sent to the status server of up to `bytes` (413
    /// beyond): [`Kit::status_body_admission`] with
    /// `|_| Admission::Take(bytes)`.
    pub fn status_max_body_bytes(&mut self, bytes: usize) {
        self.status_body_admission(move |_| Admission::Take(bytes));
    }

    /// The `/status` document, given the supervised tasks' state.
    pub fn status<T: Serialize>(&mut self, document: impl Fn(Vec<TaskStatus>) -> T + Send + Sync + 'static) {
        self.status = Some(Box::new(move |tasks| {
            serde_json::to_value(document(tasks)).expect("a status document serialises")
        }));
    }

    /// The status server: probes at the declared paths, `/metrics`, `/status`,
    /// answering for `hosts`. Neither probe stays green while an API
    /// server's thread is stuck: the status server runs on threads of its
    /// own and would answer anyway.
    fn status_server(&mut self, declaration: &Declaration, hosts: StatusHosts) -> StatusServer {
        let readiness = self.readiness.take().unwrap_or_else(|| Box::new(|| true));
        let servers = ServersTurning(
            self.servers
                .iter()
                .map(|(name, _, server)| (*name, server.handle()))
                .collect::<Vec<_>>()
                .into(),
        );
        let liveness = {
            let (tasks, servers) = (self.supervisor.liveness(), servers.clone());
            move || servers.all_turning() && tasks.is_live()
        };
        let mut status = StatusServer::new(self.registry.clone())
            .hosts(hosts)
            .liveness(declaration.liveness_path, self.supervisor.liveness(), liveness)
            .probe(declaration.readiness_path, move || {
                servers.all_turning() && readiness()
            });
        if let Some(refresh) = self.before_scrape.take() {
            status = status.before_scrape(refresh);
        }
        if let Some(document) = self.status.take() {
            status = status.status_document(document);
        }
        if let Some(routes) = self.status_routes.take() {
            status = status.routes(routes);
        }
        if let Some(admit) = self.status_bodies.take() {
            status = status.body_admission(admit);
        }
        status
    }
}

/// How long an API server's thread may go without turning its event loop
/// before the service is neither live nor ready: far beyond what any answer
/// takes (answers are computed off the servers' threads), so only a thread
/// that is stuck gets there.
const SERVER_STALLED_AFTER: Duration = Duration::from_secs(5);

/// The API servers whose threads the probes watch.
#[derive(Clone)]
struct ServersTurning(std::sync::Arc<[(&'static str, ServerHandle)]>);

impl ServersTurning {
    fn all_turning(&self) -> bool {
        let mut all = true;
        for (name, server) in self.0.iter() {
            let stalled_for = server.stalled_for();
            if stalled_for >= SERVER_STALLED_AFTER {
                tracing::warn!(
                    server = name,
                    "a thread of the server has not turned its event loop for {stalled_for:?}"
                );
                all = false;
            }
        }
        all
    }
}

/// A service bound to its ports, its tasks running, not yet serving.
pub struct Application<S: Service> {
    service: S,
    registry: MetricRegistry,
    servers: Vec<(&'static str, SocketAddr, Server)>,
    supervisor: Supervisor,
    stop: StopHandle,
}

impl<S: Service> Application<S> {
    /// Checks the settings, binds every port (0 picks free ones) and starts
    /// the tasks. Must be called inside a tokio runtime.
    pub fn build(settings: &S::Settings) -> anyhow::Result<Self> {
        distinct_addresses(settings)?;
        let hosts = status_hosts(settings)?;
        warn_about_ignored::<S>(settings);
        let plan = S::plan(settings)?;
        let declaration = S::DECLARATION;
        let mut kit = Kit::<S::Metrics>::new(declaration.metric_prefix)?;
        let service = S::start(plan, settings, &mut kit)?;
        let status = kit
            .status_server(&declaration, hosts)
            .bind(settings.status_address())
            .with_context(|| format!("binding {}", settings.status_address()))?;
        kit.servers.push(("status", status.address, status.server));
        Ok(Self {
            service,
            registry: kit.registry,
            servers: kit.servers,
            supervisor: kit.supervisor,
            stop: kit.stop,
        })
    }

    pub fn service(&self) -> &S {
        &self.service
    }

    /// Where the server named `name` (`api`, `status`, ...) listens.
    pub fn address(&self, name: &str) -> SocketAddr {
        self.servers
            .iter()
            .find(|(server, ..)| *server == name)
            .map(|(_, address, _)| *address)
            .unwrap_or_else(|| panic!("{} has no server named {name}", S::DECLARATION.name))
    }

    pub fn metrics(&self) -> &MetricRegistry {
        &self.registry
    }

    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Serves until SIGTERM/SIGINT or [`StopHandle::stop`], then lets
    /// in-flight requests finish and stops the tasks. Signals are handled
    /// before the listening line is logged: whoever reads it may send one.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let stopped = self.stop.until_stopped().context("listening for signals")?;
        self.log_listening();
        let (handles, servers): (Vec<ServerHandle>, Vec<Server>) = self
            .servers
            .into_iter()
            .map(|(_, _, server)| (server.handle(), server))
            .unzip();
        let servers = futures::future::try_join_all(servers.into_iter().map(tokio::spawn));
        stopped.await;
        for handle in &handles {
            handle.stop(true).await;
        }
        self.supervisor.shutdown().await;
        for result in servers.await.context("a server task panicked")? {
            result.context("a server failed")?;
        }
        Ok(())
    }

    /// The `"{name} listening"` log line, naming every server's address.
    fn log_listening(&self) {
        let addresses: Vec<String> = self
            .servers
            .iter()
            .map(|(name, address, _)| format!("{name}={address}"))
            .collect();
        tracing::info!(
            api = %self.address("api"),
            status = %self.address("status"),
            servers = %addresses.join(" "),
            "{} listening",
            S::DECLARATION.name
        );
    }
}

/// The hosts of `status.hosts`. Every service's `[status]` is
/// [`crate::settings::StatusSettings`], which the skeleton reads off the
/// serialised settings, as it reads the ignored keys, so that no service
/// has to hand the setting over.
fn status_hosts(settings: &impl SkeletonSettings) -> anyhow::Result<StatusHosts> {
    let set = serde_json::to_value(settings).expect("settings serialise");
    let configured: Vec<String> = match Schema::from_value(&set).default_at("status.hosts") {
        Some(value) => serde_json::from_value(value.clone()).context("status.hosts")?,
        None => Vec::new(),
    };
    Ok(StatusHosts::new(&configured)?)
}

fn warn_about_ignored<S: Service>(settings: &S::Settings) {
    let set = serde_json::to_value(settings).expect("settings serialise");
    let schema = Schema::from_value(&set);
    for ignored in S::DECLARATION.ignored.iter().chain([&TRACING_ENDPOINT]) {
        if let Some(value) = schema.default_at(ignored.key).filter(|value| !value.is_null()) {
            tracing::warn!("{} ({value}) {}", ignored.key, ignored.warning);
        }
    }
}

/// The command line of service `S`.
pub fn command<S: Service>() -> clap::Command {
    cli::command(
        &S::DECLARATION,
        &Schema::of::<S::Settings>(),
        S::extra_arguments(),
    )
}

/// The settings of `S` from every layer of `invocation`.
pub fn settings<S: Service>(invocation: &Invocation) -> anyhow::Result<S::Settings> {
    let schema = Schema::of::<S::Settings>();
    let settings = invocation.layers(&schema)?.extract_known(&schema)?;
    Ok(settings)
}

/// `--check-config`: what start-up checks before it binds a port, and on
/// success the effective settings and plan, for people or (`-o json`) for
/// scripts. Secrets are redacted by their types.
pub fn check_config<S: Service>(settings: &S::Settings, output: Output) -> anyhow::Result<String> {
    distinct_addresses(settings)?;
    status_hosts(settings)?;
    let plan = S::plan(settings)?;
    let described = S::describe(&plan);
    Ok(match output {
        Output::Json => serde_json::to_string_pretty(&serde_json::json!({
            "settings": settings,
            "plan": described,
        }))?,
        Output::Text => {
            let mut text = toml::to_string_pretty(settings).context("printing the settings")?;
            for (key, value) in described.as_object().into_iter().flatten() {
                text.push_str(&format!("# {key}: {value}\n"));
            }
            text
        }
    })
}

/// A whole service process: parses the command line, then checks the
/// configuration or runs the service until it is stopped. `commit` is
/// [`crate::source_commit!`] as the binary's `main` expands it.
pub async fn main<S: Service>(commit: &'static str) -> anyhow::Result<()> {
    crate::build_info::record_git_commit(commit);
    let invocation = Invocation::parse(command::<S>(), S::DECLARATION.env_prefix);
    run::<S>(&invocation).await
}

/// [`main`] once the command line is parsed (for a binary that handles
/// flags of its own first).
pub async fn run<S: Service>(invocation: &Invocation) -> anyhow::Result<()> {
    let settings = settings::<S>(invocation)?;
    let logging = settings.logging();
    let _telemetry = crate::logging::init(&S::DECLARATION, logging.verbosity, logging.log_format)?;
    if invocation.check_config() {
        println!("{}", check_config::<S>(&settings, invocation.output())?);
        return Ok(());
    }
    let application = Application::<S>::build(&settings)
        .with_context(|| format!("starting the {}", S::DECLARATION.name))?;
    application.run_until_stopped().await
}

#[cfg(test)]
mod tests {
    use actix_web::{App, HttpResponse};
    use registry_testkit::poll;

    use super::*;

    /// A handler that blocks its thread (as none may) makes the probes fail
    /// until the thread turns again.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_stuck_server_thread_fails_the_probes_until_it_turns_again() {
        let factory = || {
            App::new().route(
                "/block",
                web::get().to(|| async {
                    std::thread::sleep(SERVER_STALLED_AFTER + Duration::from_secs(1));
                    HttpResponse::Ok().finish()
                }),
            )
        };
        let options = http1_server::Options {
            workers: 1,
            ..http1_server::Options::new("test")
        };
        let (server, address) = http1_server::bind("127.0.0.1:0".parse().unwrap(), factory, options).unwrap();
        let servers = ServersTurning(vec![("api", server.handle())].into());
        poll::eventually("the server turning", Duration::from_secs(10), || {
            let turning = servers.all_turning();
            async move { turning }
        })
        .await;

        let blocked = tokio::spawn(reqwest::get(format!("http://{address}/block")));
        poll::eventually("the probes failing", Duration::from_secs(30), || {
            let turning = servers.all_turning();
            async move { !turning }
        })
        .await;
        assert_eq!(blocked.await.unwrap().unwrap().status(), 200);
        poll::eventually("the probes passing again", Duration::from_secs(10), || {
            let turning = servers.all_turning();
            async move { turning }
        })
        .await;
    }

    #[derive(Clone)]
    struct NoMetrics;

    impl ServiceMetrics for NoMetrics {
        fn register(_: &MetricRegistry) -> prometheus::Result<Self> {
            Ok(Self)
        }
    }

    const DECLARATION: Declaration = Declaration {
        name: "test",
        crate_name: "service_kit",
        version: "0",
        about: "a test",
        env_prefix: "TEST_",
        metric_prefix: "test",
        liveness_path: "/livez",
        readiness_path: "/readyz",
        flags: crate::Flags::NONE,
        ignored: &[],
    };

    /// Sends `request` to a fresh connection and reads the answer's status.
    fn status_of(address: SocketAddr, request: &str) -> u16 {
        use std::io::Write as _;
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        http1_probes::wire::read_response(&mut stream, &mut Vec::new(), false)
            .unwrap()
            .status
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_service_s_body_admission_and_the_settings_hosts_reach_the_status_server() {
        let mut kit = Kit::<NoMetrics>::new("test").unwrap();
        kit.status_max_body_bytes(1 << 20);
        kit.status_body_admission(|head| {
            if head.headers.contains_key("authorization") {
                Admission::Take(10)
            } else {
                Admission::Answer(HttpResponse::Unauthorized().finish())
            }
        });
        let hosts = StatusHosts::new(&["ops.example.com".to_owned()]).unwrap();
        let bound = kit
            .status_server(&DECLARATION, hosts)
            .bind("127.0.0.1:0".parse().unwrap())
            .unwrap();
        let address = bound.address;
        tokio::spawn(bound.server);
        let statuses = tokio::task::spawn_blocking(move || {
            [
                "POST /livez HTTP/1.1\r\nHost: ops.example.com\r\nContent-Length: 5\r\n\r\n",
                "POST /livez HTTP/1.1\r\nHost: ops.example.com\r\nAuthorization: x\r\nContent-Length: 11\r\n\r\n",
                "GET /livez HTTP/1.1\r\nHost: ops.example.com\r\n\r\n",
                "GET /livez HTTP/1.1\r\nHost: rebound.example\r\n\r\n",
            ]
            .map(|request| status_of(address, request))
        })
        .await
        .unwrap();
        assert_eq!(
            statuses,
            [401, 413, 200, 421],
            "the later call wins; hosts from the settings"
        );
    }

    #[test]
    fn status_hosts_come_from_the_settings_and_a_bad_one_stops_the_start() {
        #[derive(Debug, Default, Serialize, serde::Deserialize)]
        #[serde(default)]
        struct Settings {
            #[serde(flatten)]
            logging: crate::settings::Logging,
            status: crate::settings::StatusSettings<Ports>,
        }
        #[derive(Debug, Clone)]
        enum Ports {}
        impl crate::settings::Defaults for Ports {
            const API_PORT: u16 = 0;
            const STATUS_PORT: u16 = 0;
        }
        impl SkeletonSettings for Settings {
            fn logging(&self) -> &crate::settings::Logging {
                &self.logging
            }
            fn status_address(&self) -> SocketAddr {
                self.status.socket_address()
            }
            fn api_addresses(&self) -> Vec<SocketAddr> {
                Vec::new()
            }
        }
        let mut settings = Settings::default();
        settings.status.hosts = vec!["ops.example.com".to_owned()];
        assert!(status_hosts(&settings).is_ok());
        settings.status.hosts = vec!["ops.example.com:9081".to_owned()];
        let error = status_hosts(&settings).unwrap_err();
        assert!(format!("{error:#}").contains("status.hosts"), "{error:#}");
    }
}
