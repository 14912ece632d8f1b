//! A server of the connection layer on loopback, serving a small app, for
//! raw-socket clients.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use actix_web::body::{MessageBody, SizedStream};
use actix_web::{App, HttpResponse, web};
use bytes::Bytes;
use http1_server::{ConnectionLimit, LimitMetrics, Options, Server, Timeouts};
use prometheus::{IntCounter, IntGauge};
use registry_testkit::poll;

pub const SMALL: &str = "a small answer";
pub const LARGE_LEN: usize = 4 << 20;
/// The app's own error answer for an unknown path names the path, as the
/// services' does: a smuggled request would show in a body.
pub const PATH_PREFIX_OF_404: &str = "no route for ";

pub fn large_body() -> Bytes {
    (0..LARGE_LEN)
        .map(|n| (n % 251) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// A body whose size is unknown in advance: sent chunked in HTTP/1.1.
fn chunks() -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> {
    futures::stream::iter(["one,", "two,", "three"].map(|chunk| Ok(Bytes::from(chunk))))
}

fn get_or_head<F, Args>(path: &str, handler: F) -> actix_web::Resource
where
    F: actix_web::Handler<Args> + Clone,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    web::resource(path)
        .route(web::get().to(handler.clone()))
        .route(web::head().to(handler))
}

async fn not_found(request: actix_web::HttpRequest) -> HttpResponse {
    HttpResponse::NotFound().body(format!("{PATH_PREFIX_OF_404}{}", request.path()))
}

/// Holds the handler of `/hold` on its thread until the test releases it.
#[derive(Default)]
pub struct Hold {
    state: Mutex<(bool, bool)>,
    changed: Condvar,
}

impl Hold {
    /// Blocks the calling thread until [`Hold::release`], saying it holds.
    fn hold(&self) {
        let mut state = self.state.lock().unwrap();
        state.0 = true;
        self.changed.notify_all();
        while !state.1 {
            state = self.changed.wait(state).unwrap();
        }
    }

    pub fn holding(&self) -> bool {
        self.state.lock().unwrap().0
    }

    pub fn release(&self) {
        self.state.lock().unwrap().1 = true;
        self.changed.notify_all();
    }
}

/// The app; `slow_started` counts the answers of `/slow` begun.
pub fn app(
    slow_started: Arc<AtomicUsize>,
    hold: Arc<Hold>,
) -> App<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    App::new()
        .service(get_or_head("/small", || async { HttpResponse::Ok().body(SMALL) }))
        .service(get_or_head("/large", || async {
            HttpResponse::Ok().body(large_body())
        }))
        .service(get_or_head("/chunked", || async {
            HttpResponse::Ok().streaming(chunks())
        }))
        .service(get_or_head("/sized", || async {
            HttpResponse::Ok().body(SizedStream::new(13, chunks()))
        }))
        .service(get_or_head("/slow", move || {
            slow_started.fetch_add(1, Ordering::SeqCst);
            async {
                tokio::time::sleep(Duration::from_millis(500)).await;
                HttpResponse::Ok().body(SMALL)
            }
        }))
        // Blocks its worker's thread until the test releases it.
        .service(get_or_head("/hold", move || {
            hold.hold();
            async { HttpResponse::Ok().body(SMALL) }
        }))
        // Blocks its worker's thread, as a handler must never do.
        .service(get_or_head("/block", || async {
            std::thread::sleep(Duration::from_secs(3));
            HttpResponse::Ok().body(SMALL)
        }))
        // A route that takes a body, read by the layer before it is called.
        .service(
            web::resource("/upload").route(
                web::post().to(|body: Bytes| async move {
                    HttpResponse::Ok().body(format!("{} bytes", body.len()))
                }),
            ),
        )
        .default_service(web::to(not_found))
}

pub struct TestServer {
    pub address: SocketAddr,
    pub server: Option<Server>,
    pub limit: ConnectionLimit,
    pub refused: IntCounter,
    pub hold: Arc<Hold>,
    slow_started: Arc<AtomicUsize>,
}

impl TestServer {
    /// One worker, short timeouts, a limit of 1,000 connections; changed by
    /// `configure`.
    pub fn start(configure: impl FnOnce(&mut Options)) -> Self {
        Self::start_with_limit(1000, configure)
    }

    pub fn start_with_limit(limit: usize, configure: impl FnOnce(&mut Options)) -> Self {
        let refused = IntCounter::new("refused", "refused").unwrap();
        let metrics = LimitMetrics {
            open: IntGauge::new("open", "open").unwrap(),
            refused: vec![refused.clone()],
        };
        let limit = ConnectionLimit::new(limit, metrics, "text/plain", b"too many connections");
        let mut options = Options::new("test");
        options.workers = 1;
        options.timeouts = Timeouts {
            keep_alive: Duration::from_secs(2),
            client_request: Duration::from_secs(1),
            send: Duration::from_secs(1),
        };
        options.limit = Some(limit.clone());
        configure(&mut options);
        let slow_started = Arc::new(AtomicUsize::new(0));
        let hold = Arc::new(Hold::default());
        let factory = {
            let (slow_started, hold) = (slow_started.clone(), hold.clone());
            move || app(slow_started.clone(), hold.clone())
        };
        let (server, address) = http1_server::bind("127.0.0.1:0".parse().unwrap(), factory, options).unwrap();
        Self {
            address,
            server: Some(server),
            limit,
            refused,
            hold,
            slow_started,
        }
    }

    pub fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        stream
    }

    /// Waits until the server counts `open` connections.
    pub async fn wait_for_open(&self, open: usize) {
        let limit = self.limit.clone();
        poll::eventually(
            &format!("{open} open connections"),
            Duration::from_secs(10),
            move || {
                let seen = limit.open();
                async move { seen == open }
            },
        )
        .await;
    }

    /// Waits until `count` answers of `/slow` have begun.
    pub async fn wait_for_slow_answers(&self, count: usize) {
        let started = self.slow_started.clone();
        poll::eventually("a slow answer begun", Duration::from_secs(10), move || {
            let seen = started.load(Ordering::SeqCst);
            async move { seen >= count }
        })
        .await;
    }

    pub fn handle(&self) -> http1_server::ServerHandle {
        self.server.as_ref().expect("running").handle()
    }
}
