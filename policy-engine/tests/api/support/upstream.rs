//! A real HTTP upstream on 127.0.0.1 whose behaviour a test switches.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::dev::ServerHandle;
use actix_web::http::{KeepAlive, header};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use tokio::sync::watch;

/// What the upstream answers to the next requests.
#[derive(Debug, Clone)]
pub enum Behaviour {
    /// The graph, with an ETag; 304 to a matching If-None-Match.
    Graph(Vec<u8>),
    /// The graph without an ETag, in full every time.
    Untagged(Vec<u8>),
    Status(u16),
    Garbage,
    /// Waits this long before answering the graph.
    Slow(Duration, Vec<u8>),
    /// A body of this many bytes, streamed without Content-Length.
    Huge(usize),
}

#[derive(Debug, Default)]
struct Log {
    requests: Vec<Request>,
}

/// One request the upstream saw.
#[derive(Debug, Clone)]
pub struct Request {
    pub query: String,
    pub if_none_match: Option<String>,
    /// `None` while the answer is pending.
    pub status: Option<u16>,
}

struct State {
    behaviour: Mutex<Behaviour>,
    log: Mutex<Log>,
    /// True while answers wait for [`FakeUpstream::release`].
    held: watch::Sender<bool>,
}

pub struct FakeUpstream {
    state: Arc<State>,
    address: SocketAddr,
    server: Option<ServerHandle>,
}

impl FakeUpstream {
    pub async fn start(behaviour: Behaviour) -> Self {
        let state = Arc::new(State {
            behaviour: Mutex::new(behaviour),
            log: Mutex::default(),
            held: watch::Sender::new(false),
        });
        let (server, address) = serve(state.clone(), "127.0.0.1:0".parse().unwrap());
        Self {
            state,
            address,
            server: Some(server),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/graph", self.address)
    }

    pub fn set(&self, behaviour: Behaviour) {
        *self.state.behaviour.lock().unwrap() = behaviour;
    }

    /// Answers wait (logged as pending) until [`FakeUpstream::release`].
    pub fn hold(&self) {
        self.state.held.send_replace(true);
    }

    pub fn release(&self) {
        self.state.held.send_replace(false);
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.log.lock().unwrap().requests.clone()
    }

    /// Stops listening: connections are refused until [`FakeUpstream::restart`].
    pub async fn stop(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop(false).await;
        }
    }

    /// Listens again on the same port.
    pub async fn restart(&mut self) {
        let (server, _) = serve(self.state.clone(), self.address);
        self.server = Some(server);
    }
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            drop(server.stop(false));
        }
    }
}

fn serve(state: Arc<State>, address: SocketAddr) -> (ServerHandle, SocketAddr) {
    let data = web::Data::from(state);
    let server = HttpServer::new(move || App::new().app_data(data.clone()).default_service(web::to(answer)))
        .workers(1)
        // A connection per request: once `stop` returns, every request is
        // refused. A kept-alive connection could still be answered by a
        // worker not yet stopped (on a busy machine), and a test that
        // stopped the upstream would see it answer.
        .keep_alive(KeepAlive::Disabled)
        .disable_signals()
        .bind(address)
        .expect("binding the fake upstream");
    let address = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    tokio::spawn(server);
    (handle, address)
}

async fn answer(request: HttpRequest, state: web::Data<State>) -> HttpResponse {
    let behaviour = state.behaviour.lock().unwrap().clone();
    let if_none_match = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .map(|value| value.to_str().unwrap().to_owned());
    // Logged on arrival, so a test sees a request that is still being answered.
    let position = {
        let mut log = state.log.lock().unwrap();
        log.requests.push(Request {
            query: request.query_string().to_owned(),
            if_none_match: if_none_match.clone(),
            status: None,
        });
        log.requests.len() - 1
    };
    state
        .held
        .subscribe()
        .wait_for(|held| !held)
        .await
        .expect("the state keeps the sender");
    let response = match behaviour {
        Behaviour::Graph(body) => graph(body, if_none_match.as_deref()),
        Behaviour::Untagged(body) => HttpResponse::Ok().content_type("application/json").body(body),
        Behaviour::Slow(delay, body) => {
            tokio::time::sleep(delay).await;
            graph(body, None)
        }
        Behaviour::Status(code) => HttpResponse::build(actix_web::http::StatusCode::from_u16(code).unwrap())
            .content_type("application/json")
            .body(r#"{"kind":"failed_upstream_fetch","value":"test"}"#),
        Behaviour::Garbage => HttpResponse::Ok()
            .content_type("application/json")
            .body("{\"nodes\": [tru"),
        Behaviour::Huge(size) => HttpResponse::Ok().streaming(futures::stream::iter(
            std::iter::repeat_n(bytes::Bytes::from(vec![b' '; 64 * 1024]), size / (64 * 1024) + 1)
                .map(Ok::<_, actix_web::Error>),
        )),
    };
    state.log.lock().unwrap().requests[position].status = Some(response.status().as_u16());
    response
}

fn graph(body: Vec<u8>, if_none_match: Option<&str>) -> HttpResponse {
    let etag = format!(
        "\"{:x}-{}\"",
        body.iter().map(|&b| u64::from(b)).sum::<u64>(),
        body.len()
    );
    if if_none_match == Some(etag.as_str()) {
        return HttpResponse::NotModified()
            .insert_header((header::ETAG, etag))
            .finish();
    }
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header((header::ETAG, etag))
        .body(body)
}
