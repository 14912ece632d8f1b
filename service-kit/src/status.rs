//! The status server, on its own port so probes and scrapes never queue
//! behind clients: liveness and readiness probes under configurable paths
//! (`/livez` `/readyz` in the policy-engine, `/liveness` `/readiness` in the
//! graph-builder), `/metrics` and a JSON `/status`.

use std::net::SocketAddr;
use std::sync::Arc;

use actix_web::http::header;
use actix_web::{App, HttpResponse, web};
use http1_server::{Gate, Options, Server};

use crate::metrics::{MetricRegistry, TEXT_FORMAT};
use crate::server::body_budget;
use crate::supervisor::{Liveness, TaskStatus};
use http_answers::errors::not_found;
use http_answers::routes::get_or_head;

/// Bytes a request body to the status server may take unless the service
/// says otherwise ([`StatusServer::max_body_bytes`]).
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;

type Check = Arc<dyn Fn() -> bool + Send + Sync>;
type Refresh = Arc<dyn Fn() + Send + Sync>;
type Document = Arc<dyn Fn(Vec<TaskStatus>) -> serde_json::Value + Send + Sync>;
type Routes = Arc<dyn Fn(&mut web::ServiceConfig) + Send + Sync>;

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
    max_body_bytes: usize,
}

/// A server bound to its port, not yet running: await (or spawn) `server`.
pub struct BoundServer {
    pub server: Server,
    pub address: SocketAddr,
}

impl StatusServer {
    pub fn new(registry: MetricRegistry) -> Self {
        Self {
            probes: Vec::new(),
            registry,
            before_scrape: Arc::new(|| {}),
            status: Arc::new(|tasks| serde_json::json!({ "tasks": tasks })),
            tasks: Liveness::default(),
            routes: Arc::new(|_| {}),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }

    /// Bytes a request body may take (413 beyond), for operator routes that
    /// take one.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
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

    /// Binds `address` (port 0 picks a free port) with one worker: status
    /// traffic is a few requests a minute. Signals are left to the caller,
    /// which stops every server of the process together.
    pub fn bind(self, address: SocketAddr) -> std::io::Result<BoundServer> {
        let max_body_bytes = self.max_body_bytes;
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
            workers: 1,
            gate: Gate::taking(max_body_bytes),
            body_budget: body_budget(),
            ..Options::new("status")
        };
        let (server, address) = http1_server::bind(address, factory, options)?;
        Ok(BoundServer { server, address })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

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
}
