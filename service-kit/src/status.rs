//! The status server, on its own port so probes and scrapes never queue
//! behind clients: liveness and readiness probes under configurable paths
//! (`/livez` `/readyz` in the policy-engine, `/liveness` `/readiness` in the
//! graph-builder), `/metrics` and a JSON `/status`, and a service's own
//! operator routes.
//!
//! The port is open to every pod of the cluster, so it is guarded as the
//! public one is, and more:
//!
//! - at most [`MAX_CONNECTIONS`] connections are open at once (probes,
//!   scrapes and a few operators); one beyond is answered 503 at once and
//!   closed (`status_open_connections`, `status_connections_refused_total`);
//! - a request must name a host of this server ([`StatusHosts`]: DNS
//!   rebinding through a port-forward), else 421, before its body is read;
//! - the service decides from a request's head whether its body is read
//!   ([`StatusServer::body_admission`]), so that an operator route can
//!   check a token before it reads what the request sends; the bodies taken
//!   hold at most the server's body budget at once;
//! - two workers, so that probes on new connections are answered while a
//!   handler holds the other's thread (which no handler should: heavy work
//!   belongs on `tokio::task::spawn_blocking`, which keeps its worker
//!   answering; the acceptor passes over a worker whose loop has stopped
//!   turning).

use std::net::SocketAddr;
use std::sync::Arc;

use actix_web::dev::RequestHead;
use actix_web::http::header;
use actix_web::{App, HttpResponse, ResponseError as _, web};
use cincinnati_core::{ApiError, ErrorKind};
use http1_server::{BodyBudget, ConnectionLimit, Gate, LimitMetrics, Options, Server};
use prometheus::{IntCounter, IntGauge};

pub use crate::hosts::StatusHosts;
use crate::metrics::{MetricRegistry, TEXT_FORMAT};
use crate::server::{body_budget, connection_limit};
use crate::supervisor::{Liveness, TaskStatus};
use http_answers::HttpError;
use http_answers::errors::not_found;
use http_answers::routes::get_or_head;
pub use http1_server::Admission;

/// Bytes a request body to the status server may take unless the service
/// says otherwise ([`StatusServer::body_admission`]).
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;

/// Connections the status server keeps open at once: probes (a few a
/// minute, each on a new connection), scrapes (one kept alive per
/// Prometheus) and a few operators, with room to spare.
pub const MAX_CONNECTIONS: usize = 256;

/// Worker threads: see the module documentation.
const WORKERS: usize = 2;

type Check = Arc<dyn Fn() -> bool + Send + Sync>;
type Refresh = Arc<dyn Fn() + Send + Sync>;
type Document = Arc<dyn Fn(Vec<TaskStatus>) -> serde_json::Value + Send + Sync>;
type Routes = Arc<dyn Fn(&mut web::ServiceConfig) + Send + Sync>;
type AdmitBody = Arc<dyn Fn(&RequestHead) -> Admission + Send + Sync>;

/// What the status server answers; see the module documentation.
#[derive(Clone)]
pub struct StatusServer {
    probes: Vec<(String, Check)>,
    registry: MetricRegistry,
    before_scrape: Refresh,
    status: Document,
    tasks: Liveness,
    /// A service's own operator routes (an explain endpoint, say).
    routes: Routes,
    hosts: StatusHosts,
    admit_body: AdmitBody,
    max_connections: usize,
    budget: BodyBudget,
}

/// A server bound to its port, not yet running: await (or spawn) `server`.
pub struct BoundServer {
    pub server: Server,
    pub address: SocketAddr,
}

impl StatusServer {
    /// A status server answering for the hosts of rules 1 to 3 of
    /// [`crate::hosts`] and no other (see [`StatusServer::hosts`]).
    pub fn new(registry: MetricRegistry) -> Self {
        Self {
            probes: Vec::new(),
            registry,
            before_scrape: Arc::new(|| {}),
            status: Arc::new(|tasks| serde_json::json!({ "tasks": tasks })),
            tasks: Liveness::default(),
            routes: Arc::new(|_| {}),
            hosts: StatusHosts::new(&[]).expect("no configured name to refuse"),
            admit_body: Arc::new(|_| Admission::Take(DEFAULT_MAX_BODY_BYTES)),
            max_connections: MAX_CONNECTIONS,
            budget: body_budget(),
        }
    }

    /// The hosts the server answers for (`status.hosts`); any other is
    /// answered 421.
    pub fn hosts(mut self, hosts: StatusHosts) -> Self {
        self.hosts = hosts;
        self
    }

    /// Decides, from the head of a request that announces a body, whether
    /// the body is read: see [`crate::Kit::status_body_admission`] for the
    /// contract. By default every body of up to [`DEFAULT_MAX_BODY_BYTES`]
    /// is read.
    pub fn body_admission(
        mut self,
        admit: impl Fn(&RequestHead) -> Admission + Send + Sync + 'static,
    ) -> Self {
        self.admit_body = Arc::new(admit);
        self
    }

    /// Reads every body of up to `bytes` (413 beyond): the body admission
    /// `|_| Admission::Take(bytes)`.
    pub fn max_body_bytes(self, bytes: usize) -> Self {
        self.body_admission(move |_| Admission::Take(bytes))
    }

    /// Adds a service's own routes, for operators only (this port is not
    /// the public one).
    pub fn routes(mut self, configure: impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static) -> Self {
        self.routes = Arc::new(configure);
        self
    }

    /// Answers `path` with 200 while `check` holds, 503 otherwise.
    pub fn probe(mut self, path: &str, check: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.probes.push((path.to_owned(), Arc::new(check)));
        self
    }

    /// Answers `path` with 200 while `live` holds; the supervised tasks
    /// (whose progress it should include) are handed to the status document.
    pub fn liveness(
        mut self,
        path: &str,
        tasks: Liveness,
        live: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Self {
        self.tasks = tasks;
        self.probe(path, live)
    }

    /// Runs before each `/metrics` answer, to update gauges computed from
    /// state (ages, ratios) rather than events.
    pub fn before_scrape(mut self, refresh: impl Fn() + Send + Sync + 'static) -> Self {
        self.before_scrape = Arc::new(refresh);
        self
    }

    /// The JSON document answered on `/status`, given the supervised tasks.
    pub fn status_document(
        mut self,
        document: impl Fn(Vec<TaskStatus>) -> serde_json::Value + Send + Sync + 'static,
    ) -> Self {
        self.status = Arc::new(document);
        self
    }

    /// Binds `address` (port 0 picks a free port), registering the
    /// connection bound's metrics. Signals are left to the caller, which
    /// stops every server of the process together.
    pub fn bind(self, address: SocketAddr) -> std::io::Result<BoundServer> {
        let limit = self.connection_limit().map_err(std::io::Error::other)?;
        let gate = self.gate();
        let budget = self.budget.clone();
        let factory = move || {
            let routes = self.routes.clone();
            let mut app = App::new()
                .default_service(web::to(not_found))
                .configure(move |config| routes(config));
            for (path, check) in &self.probes {
                let check = check.clone();
                app = app.service(get_or_head(path, move || {
                    let ready = check();
                    async move {
                        if ready {
                            HttpResponse::Ok().finish()
                        } else {
                            HttpResponse::ServiceUnavailable().finish()
                        }
                    }
                }));
            }
            let (registry, before_scrape) = (self.registry.clone(), self.before_scrape.clone());
            let (status, tasks) = (self.status.clone(), self.tasks.clone());
            app.service(get_or_head("/metrics", move || {
                before_scrape();
                let text = registry.encode();
                async move {
                    HttpResponse::Ok()
                        .insert_header((header::CONTENT_TYPE, TEXT_FORMAT))
                        .body(text)
                }
            }))
            .service(get_or_head("/status", move || {
                let document = status(tasks.tasks());
                async move { HttpResponse::Ok().json(document) }
            }))
        };
        let options = Options {
            workers: WORKERS,
            limit: Some(limit),
            gate,
            body_budget: budget,
            ..Options::new("status")
        };
        let (server, address) = http1_server::bind(address, factory, options)?;
        Ok(BoundServer { server, address })
    }

    /// A smaller connection bound and body budget, for tests to reach.
    #[cfg(test)]
    fn bounded(mut self, max_connections: usize, budget: BodyBudget) -> Self {
        self.max_connections = max_connections;
        self.budget = budget;
        self
    }

    /// The bound on open connections, its metrics registered.
    fn connection_limit(&self) -> prometheus::Result<ConnectionLimit> {
        let metrics = LimitMetrics {
            open: self.registry.add(IntGauge::new(
                "status_open_connections",
                "Connections to the status server open now",
            )?)?,
            refused: vec![self.registry.add(IntCounter::new(
                "status_connections_refused_total",
                "Connections to the status server answered 503 and closed on arrival because its limit of open connections was reached",
            )?)?],
        };
        Ok(connection_limit(self.max_connections, metrics))
    }

    /// The host check, then the service's body admission for a request
    /// that announces a body.
    fn gate(&self) -> Gate {
        let (hosts, admit_body) = (self.hosts.clone(), self.admit_body.clone());
        Gate::new(move |head, body| {
            if !hosts.admits(head) {
                let error = ApiError::new(
                    ErrorKind::MisdirectedRequest,
                    "this server does not answer for the host the request names",
                );
                return Admission::Answer(HttpError::from(error).error_response());
            }
            if body.is_present() {
                admit_body(head)
            } else {
                Admission::Take(0)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::net::TcpStream;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    use http1_probes::cases::{self, Server};
    use http1_probes::run::{self, Target};
    use http1_probes::wire::{self, Response};
    use registry_testkit::poll;

    use super::*;

    #[actix_web::test]
    async fn probes_metrics_and_status_answer_on_their_own_port() {
        let registry = MetricRegistry::new("cincinnati_test").unwrap();
        registry.add_build_info("abc").unwrap();
        let ready = Arc::new(AtomicBool::new(false));
        let bound = StatusServer::new(registry)
            .probe("/livez", || true)
            .probe("/readyz", {
                let ready = ready.clone();
                move || ready.load(Ordering::SeqCst)
            })
            .status_document(|tasks| serde_json::json!({"graph": "none", "tasks": tasks}))
            .bind("127.0.0.1:0".parse().unwrap())
            .unwrap();
        let handle = bound.server.handle();
        actix_web::rt::spawn(bound.server);
        let base = format!("http://{}", bound.address);
        let get = |path: &str| reqwest::get(format!("{base}{path}"));

        assert_eq!(get("/livez").await.unwrap().status(), 200);
        assert_eq!(get("/readyz").await.unwrap().status(), 503);
        ready.store(true, Ordering::SeqCst);
        assert_eq!(get("/readyz").await.unwrap().status(), 200);

        let metrics = get("/metrics").await.unwrap().text().await.unwrap();
        assert!(
            metrics.contains("cincinnati_test_build_info{git_commit=\"abc\"} 1"),
            "{metrics}"
        );
        let status: serde_json::Value =
            serde_json::from_str(&get("/status").await.unwrap().text().await.unwrap()).unwrap();
        assert_eq!(status["graph"], "none");
        assert_eq!(status["tasks"], serde_json::json!([]));

        let missing = get("/nope").await.unwrap();
        assert_eq!(missing.status(), 404);
        let body: serde_json::Value = serde_json::from_str(&missing.text().await.unwrap()).unwrap();
        assert_eq!(body["kind"], "does_not_exist");

        let post = reqwest::Client::new()
            .post(format!("{base}/livez"))
            .send()
            .await
            .unwrap();
        assert_eq!(post.status(), 405);
        assert_eq!(post.headers()["allow"], "GET, HEAD");
        handle.stop(false).await;
    }

    /// A status server on loopback with `/livez`, `/readyz` and the given
    /// routes, running until the test ends.
    fn start(status: StatusServer) -> (SocketAddr, http1_server::ServerHandle) {
        let bound = status
            .probe("/livez", || true)
            .probe("/readyz", || true)
            .bind("127.0.0.1:0".parse().unwrap())
            .unwrap();
        let handle = bound.server.handle();
        tokio::spawn(bound.server);
        (bound.address, handle)
    }

    fn registry() -> MetricRegistry {
        MetricRegistry::new("cincinnati_test").unwrap()
    }

    fn connect(address: SocketAddr) -> TcpStream {
        let stream = TcpStream::connect(address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        stream
    }

    /// Sends `request` on `stream` and reads one answer.
    fn exchange(stream: &mut TcpStream, request: &str) -> Response {
        stream.write_all(request.as_bytes()).unwrap();
        wire::read_response(stream, &mut Vec::new(), false).unwrap()
    }

    fn kind(response: &Response) -> String {
        let body: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
        body["kind"].as_str().unwrap().to_owned()
    }

    /// Whether the server closed the connection, with nothing more sent.
    fn closed(stream: &mut TcpStream) -> bool {
        wire::read_until_closed(stream, &mut Vec::new()).is_ok_and(|rest| rest.is_empty())
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn every_conformance_case_is_answered_as_its_rule_says() {
        let (address, _handle) = start(StatusServer::new(registry()));
        let server = Server {
            takes_bodies: true,
            checks_host: true,
        };
        let target = Target::new(address, "/livez").serving(server);
        let failures = tokio::task::spawn_blocking(move || {
            cases::all()
                .iter()
                .map(|case| run::run(case, &target))
                .filter_map(|outcome| {
                    let error = outcome.conforms().err()?;
                    Some(format!("{} ({}): {error}", outcome.case.name, outcome.case.rule))
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_request_naming_another_host_is_misdirected_before_its_body_is_read() {
        let hosts = StatusHosts::new(&["ops.example.com".to_owned()]).unwrap();
        let (address, _handle) = start(StatusServer::new(registry()).hosts(hosts));
        tokio::task::spawn_blocking(move || {
            let mut stream = connect(address);
            let misdirected = exchange(
                &mut stream,
                "GET /livez HTTP/1.1\r\nHost: rebound.example:9081\r\n\r\n",
            );
            assert_eq!(
                (misdirected.status, kind(&misdirected)),
                (421, "misdirected_request".to_owned())
            );
            for host in [
                "ops.example.com",
                "localhost:9081",
                "127.0.0.1",
                "[::1]:9081",
                "engine.ns.svc",
            ] {
                let answer = exchange(
                    &mut stream,
                    &format!("GET /livez HTTP/1.1\r\nHost: {host}\r\n\r\n"),
                );
                assert_eq!(answer.status, 200, "{host}: the connection goes on");
            }

            let mut with_body = connect(address);
            let refused = exchange(
                &mut with_body,
                "POST /livez HTTP/1.1\r\nHost: rebound.example\r\nContent-Length: 1048576\r\n\r\n",
            );
            assert_eq!(refused.status, 421, "without waiting for the body");
            assert!(closed(&mut with_body));
        })
        .await
        .unwrap();
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn the_service_decides_from_the_head_whether_a_body_is_read() {
        let status = StatusServer::new(registry())
            .body_admission(|head| {
                let authorized = head
                    .headers
                    .get(header::AUTHORIZATION)
                    .is_some_and(|value| value == "Bearer good");
                match (head.uri.path(), authorized) {
                    ("/hook", true) => Admission::Take(1 << 20),
                    ("/hook", false) => Admission::Answer(
                        HttpError::from(ApiError::bare(ErrorKind::Unauthorized)).error_response(),
                    ),
                    _ => Admission::Take(0),
                }
            })
            .routes(|config| {
                config.service(
                    web::resource("/hook")
                        .app_data(web::PayloadConfig::new(1 << 20))
                        .route(
                            web::post().to(|body: web::Bytes| async move { format!("{} bytes", body.len()) }),
                        ),
                );
            });
        let (address, _handle) = start(status);
        tokio::task::spawn_blocking(move || {
            let head = |token: &str| {
                format!("POST /hook HTTP/1.1\r\nHost: localhost\r\n{token}Content-Length: 1048576\r\n\r\n")
            };
            // The head alone: a server that read the body first would wait
            // for it, and answer 408 after the client timeout.
            let mut without_token = connect(address);
            let refused = exchange(&mut without_token, &head(""));
            assert_eq!((refused.status, kind(&refused)), (401, "unauthorized".to_owned()));
            assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
            assert!(closed(&mut without_token));

            let mut with_token = connect(address);
            with_token
                .write_all(head("Authorization: Bearer good\r\n").as_bytes())
                .unwrap();
            with_token.write_all(&vec![b'a'; 1 << 20]).unwrap();
            let taken = wire::read_response(&mut with_token, &mut Vec::new(), false).unwrap();
            assert_eq!((taken.status, &taken.body[..]), (200, &b"1048576 bytes"[..]));

            let elsewhere = exchange(
                &mut connect(address),
                "POST /livez HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\n",
            );
            assert_eq!(elsewhere.status, 413);
        })
        .await
        .unwrap();
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn bodies_beyond_the_budget_are_refused_unread_until_it_has_room() {
        let budget = BodyBudget::new(
            http1_server::body::READING_BYTES + 150,
            http_answers::accept::APPLICATION_JSON,
            br#"{"kind":"service_unavailable"}"#,
        );
        let (address, _handle) = start(StatusServer::new(registry()).bounded(16, budget.clone()));
        let post = "POST /hook HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n";
        let mut holding = connect(address);
        holding.write_all(post.as_bytes()).unwrap();
        holding.write_all(b"0123456789").unwrap();
        let held = budget.clone();
        poll::eventually("the first body held", Duration::from_secs(10), || {
            let held = held.held();
            async move { held > 0 }
        })
        .await;
        tokio::task::spawn_blocking(move || {
            let refused = exchange(&mut connect(address), post);
            assert_eq!(
                (refused.status, kind(&refused)),
                (503, "service_unavailable".to_owned())
            );
            assert_eq!(refused.header("retry-after"), Some("1"));
            holding.write_all(&[b'a'; 90]).unwrap();
            let finished = wire::read_response(&mut holding, &mut Vec::new(), false).unwrap();
            assert_eq!(finished.status, 404, "read whole, then routed");
            let after = exchange(&mut connect(address), &format!("{post}{}", "b".repeat(100)));
            assert_eq!(after.status, 404, "the budget given back");
        })
        .await
        .unwrap();
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn connections_beyond_the_bound_are_refused_at_once_and_counted() {
        let registry = registry();
        let (address, _handle) = start(StatusServer::new(registry.clone()).bounded(2, body_budget()));
        let open: Vec<TcpStream> = (0..2).map(|_| connect(address)).collect();
        poll::eventually("two connections open", Duration::from_secs(10), || {
            let page = String::from_utf8(registry.encode()).unwrap();
            async move { page.contains("cincinnati_test_status_open_connections 2") }
        })
        .await;
        let refused = tokio::task::spawn_blocking(move || {
            exchange(
                &mut connect(address),
                "GET /livez HTTP/1.1\r\nHost: localhost\r\n\r\n",
            )
        })
        .await
        .unwrap();
        assert_eq!(
            (refused.status, kind(&refused)),
            (503, "service_unavailable".to_owned())
        );
        assert_eq!(refused.header("connection"), Some("close"));
        let page = String::from_utf8(registry.encode()).unwrap();
        assert!(
            page.contains("cincinnati_test_status_connections_refused_total 1"),
            "{page}"
        );
        drop(open);
    }

    /// Holds a handler until the test releases it.
    #[derive(Default)]
    struct Hold {
        state: Mutex<(bool, bool)>,
        changed: Condvar,
    }

    impl Hold {
        fn hold(&self) {
            let mut state = self.state.lock().unwrap();
            state.0 = true;
            self.changed.notify_all();
            while !state.1 {
                state = self.changed.wait(state).unwrap();
            }
        }

        fn holding(&self) -> bool {
            self.state.lock().unwrap().0
        }

        fn release(&self) {
            self.state.lock().unwrap().1 = true;
            self.changed.notify_all();
        }
    }

    /// Starts `/heavy` and keeps one idle connection, so that by load the
    /// next connection goes to the worker of `/heavy`; asks both probes on
    /// new connections while the handler holds; releases it and returns
    /// the probes' statuses and `/heavy`'s.
    async fn probes_while_heavy(
        hold: Arc<Hold>,
        heavy: impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static,
        wait_until_stuck: bool,
    ) -> (Vec<u16>, u16) {
        let (address, handle) = start(StatusServer::new(registry()).routes(heavy));
        let mut heavy = connect(address);
        heavy
            .write_all(b"GET /heavy HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .unwrap();
        poll::eventually("the heavy question running", Duration::from_secs(10), || {
            let holding = hold.holding();
            async move { holding }
        })
        .await;
        let idle = tokio::task::spawn_blocking(move || {
            let mut idle = connect(address);
            assert_eq!(
                exchange(&mut idle, "GET /livez HTTP/1.1\r\nHost: localhost\r\n\r\n").status,
                200
            );
            idle
        })
        .await
        .unwrap();
        if wait_until_stuck {
            poll::eventually("the worker stuck", Duration::from_secs(10), || {
                let stalled_for = handle.stalled_for();
                async move { stalled_for >= Duration::from_secs(1) }
            })
            .await;
        }
        let probes = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let mut statuses = Vec::new();
        for probe in ["/livez", "/readyz", "/livez", "/readyz"] {
            let answer = probes.get(format!("http://{address}{probe}")).send().await;
            statuses.push(answer.map_or(0, |answer| answer.status().as_u16()));
        }
        assert!(hold.holding(), "still running while the probes were answered");
        hold.release();
        let heavy = tokio::task::spawn_blocking(move || {
            wire::read_response(&mut heavy, &mut Vec::new(), false)
                .unwrap()
                .status
        })
        .await
        .unwrap();
        drop(idle);
        (statuses, heavy)
    }

    /// A heavy question computed on `spawn_blocking` leaves its worker
    /// turning: probes are answered on that very worker meanwhile.
    #[tokio::test(flavor = "multi_thread")]
    async fn probes_answer_while_a_heavy_question_runs_on_spawn_blocking() {
        let hold = Arc::new(Hold::default());
        let heavy = {
            let hold = hold.clone();
            move |config: &mut web::ServiceConfig| {
                let hold = hold.clone();
                config.route(
                    "/heavy",
                    web::get().to(move || {
                        let hold = hold.clone();
                        async move {
                            tokio::task::spawn_blocking(move || hold.hold()).await.unwrap();
                            HttpResponse::Ok().finish()
                        }
                    }),
                );
            }
        };
        assert_eq!(probes_while_heavy(hold, heavy, false).await, (vec![200; 4], 200));
    }

    /// A handler that holds its worker's thread (as none should) holds up
    /// that worker's connections only: new ones go to the other worker.
    #[tokio::test(flavor = "multi_thread")]
    async fn probes_answer_while_a_handler_holds_its_thread() {
        let hold = Arc::new(Hold::default());
        let heavy = {
            let hold = hold.clone();
            move |config: &mut web::ServiceConfig| {
                let hold = hold.clone();
                config.route(
                    "/heavy",
                    web::get().to(move || {
                        hold.hold();
                        async { HttpResponse::Ok().finish() }
                    }),
                );
            }
        };
        assert_eq!(probes_while_heavy(hold, heavy, true).await, (vec![200; 4], 200));
    }
}
