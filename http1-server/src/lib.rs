//! The HTTP/1.1 servers of every service: actix-web apps (routes,
//! middleware, extractors, error answers) served over connections of our
//! own, which hold no buffer while they idle and write bodies without
//! copying them.
//!
//! Why not actix-web's own server: it keeps an 8 KiB read buffer and a write
//! buffer per connection for the connection's whole life, the write buffer
//! grown to the size of the last answer it copied in; 10,000 idle
//! keep-alive connections (a cluster fleet reconnecting after a network
//! blip) cost about 280 MiB and took an engine near its pod's memory limit.
//! Here an idle connection is a task waiting for its socket to become
//! readable (see [`connection`]), and a prepared answer goes from its shared
//! bytes to the kernel in one vectored write (see [`response`]).
//!
//! Each worker is a thread with a single-threaded runtime and its own
//! instance of the app (actix-web apps are not `Send`); a thread of its own
//! accepts connections, admits them (see [`ConnectionLimit`]) and hands each
//! to the worker with the fewest open (see [`accept`]). Every thread stamps
//! the turns of its event loop (see [`ServerHandle::stalled_for`]).
//!
//! `request` holds the checks of RFC 9112 a request head must pass before
//! the app sees it. Then the server's [`Gate`] decides from the head alone
//! whether the request is taken, with a body of up to how many bytes (none
//! unless the server says so: 413 before a byte is read), or answered by
//! the gate itself: refused, or answered at hand (see [`admission`]). A body taken is read whole
//! before the app is called, within the client timeout of its head, and
//! within the server's [`BodyBudget`] (see [`body`]). What the layer does
//! not do: HTTP/2, upgrades.

mod accept;
pub mod admission;
pub mod body;
mod budget;
mod connection;
mod limit;
mod linger;
pub mod request;
mod response;
mod turns;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_service::IntoServiceFactory;
use actix_web::body::MessageBody;
use actix_web::dev::{AppConfig, ServiceFactory, ServiceResponse};
use futures::future::BoxFuture;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use admission::{Admission, Gate};
pub use budget::{BodyBudget, DEFAULT_BODY_BUDGET_BYTES, Reservation};
use connection::Connection;
pub use limit::{ConnectionLimit, LimitMetrics};
pub use response::{Payload, Prepared};
use turns::Turns;

/// How long a graceful stop waits for answers in progress.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a connection may take at each step.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// An idle keep-alive connection is closed after this long.
    pub keep_alive: Duration,
    /// A request head must arrive whole within this long of its first byte
    /// (and a new connection's first byte within this long too).
    pub client_request: Duration,
    /// A write waits at most this long for the client to take bytes.
    pub send: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            keep_alive: Duration::from_secs(75),
            client_request: Duration::from_secs(5),
            send: Duration::from_secs(30),
        }
    }
}

/// How a server is run; see [`bind`].
#[derive(Clone)]
pub struct Options {
    /// Names the worker threads.
    pub name: &'static str,
    pub workers: usize,
    pub timeouts: Timeouts,
    /// Pending connections the kernel queues.
    pub backlog: u32,
    /// Connections one worker serves at once; it stops accepting beyond.
    pub max_connections_per_worker: usize,
    /// Bounds the connections admitted across workers (503 beyond).
    pub limit: Option<ConnectionLimit>,
    /// Takes or answers each request from its head, before its body is
    /// read; by default takes every request and no body.
    pub gate: Gate,
    /// The bytes the server's bodies hold at once, across workers (503
    /// beyond); [`DEFAULT_BODY_BUDGET_BYTES`] by default.
    pub body_budget: BodyBudget,
}

impl Options {
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            workers: std::thread::available_parallelism().map_or(1, usize::from),
            timeouts: Timeouts::default(),
            backlog: 2048,
            max_connections_per_worker: 25_000,
            limit: None,
            gate: Gate::default(),
            body_budget: BodyBudget::default(),
        }
    }
}

/// A running server: await it (or spawn it) to learn when it has stopped;
/// stop it with its [`ServerHandle`]. Dropping it stops it at once.
pub struct Server {
    stopped: BoxFuture<'static, io::Result<()>>,
    handle: ServerHandle,
}

/// Stops a [`Server`]; cheap to clone.
#[derive(Clone)]
pub struct ServerHandle {
    graceful: CancellationToken,
    immediate: CancellationToken,
    workers: watch::Receiver<Workers>,
    turns: Turns,
}

/// The threads of a server still running, and whether one panicked.
#[derive(Debug, Clone, Copy, Default)]
struct Workers {
    running: usize,
    panicked: bool,
}

impl Server {
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }
}

impl Future for Server {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        self.stopped.as_mut().poll(context)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.handle.immediate.cancel();
        self.handle.graceful.cancel();
    }
}

impl ServerHandle {
    /// Stops accepting connections. Gracefully, idle connections close and
    /// answers in progress finish (for up to [`SHUTDOWN_TIMEOUT`]);
    /// otherwise every connection is dropped. Returns once every worker has
    /// ended.
    pub async fn stop(&self, graceful: bool) {
        if !graceful {
            self.immediate.cancel();
        }
        self.graceful.cancel();
        let mut workers = self.workers.clone();
        let _ = workers.wait_for(|workers| workers.running == 0).await;
    }

    /// How long the server's least recently turning thread (the acceptor or
    /// a worker) has not turned its event loop: near zero while every
    /// thread can take and answer connections, growing while one is stuck.
    pub fn stalled_for(&self) -> Duration {
        self.turns.stalled_for()
    }
}

/// Binds `address` (port 0 picks a free one) and starts `options.workers`
/// workers, each serving the app `factory` makes.
pub fn bind<F, I, S, B>(address: SocketAddr, factory: F, options: Options) -> io::Result<(Server, SocketAddr)>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, actix_http::Request>,
    S: ServiceFactory<
            actix_http::Request,
            Config = AppConfig,
            Response = ServiceResponse<B>,
            Error = actix_web::Error,
        > + 'static,
    S::InitError: std::fmt::Debug,
    B: MessageBody + 'static,
{
    let listener = listen(address, options.backlog)?;
    let bound = listener.local_addr()?;
    let workers = options.workers.max(1);
    // The workers, then the acceptor.
    let threads = workers + 1;
    let (report, watch_workers) = watch::channel(Workers {
        running: threads,
        panicked: false,
    });
    let report = Arc::new(report);
    let handle = ServerHandle {
        graceful: CancellationToken::new(),
        immediate: CancellationToken::new(),
        workers: watch_workers,
        turns: Turns::new(threads),
    };
    let (inboxes, receivers): (Vec<_>, Vec<_>) = (0..workers).map(|_| mpsc::unbounded_channel()).unzip();
    for (index, inbox) in receivers.into_iter().enumerate() {
        let worker = Worker {
            inbox,
            options: options.clone(),
            graceful: handle.graceful.clone(),
            immediate: handle.immediate.clone(),
        };
        let (factory, exit, turns) = (factory.clone(), WorkerExit(report.clone()), handle.turns.clone());
        std::thread::Builder::new()
            .name(format!("{}-http-{index}", options.name))
            .spawn(move || {
                let _exit = exit;
                worker.run(factory, turns.stamp_forever(index));
            })?;
    }
    let acceptor = accept::Acceptor {
        server: options.name,
        listener,
        inboxes,
        loads: accept::Loads::new(workers),
        max_per_worker: options.max_connections_per_worker,
        limit: options.limit.clone(),
        turns: handle.turns.clone(),
        stopping: handle.graceful.clone(),
    };
    let (exit, turns) = (WorkerExit(report.clone()), handle.turns.clone());
    std::thread::Builder::new()
        .name(format!("{}-accept", options.name))
        .spawn(move || {
            let _exit = exit;
            let runtime = thread_runtime();
            runtime.spawn(turns.stamp_forever(workers));
            runtime.block_on(acceptor.run());
        })?;
    let mut workers = handle.workers.clone();
    let stopped = Box::pin(async move {
        let ended = *workers
            .wait_for(|workers| workers.running == 0)
            .await
            .map_err(|_| io::Error::other("the server's threads vanished"))?;
        if ended.panicked {
            return Err(io::Error::other("a server thread panicked"));
        }
        Ok(())
    });
    Ok((Server { stopped, handle }, bound))
}

fn listen(address: SocketAddr, backlog: u32) -> io::Result<std::net::TcpListener> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(address),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    // A restarted service binds its port again while the old connections
    // are in TIME_WAIT.
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&address.into())?;
    socket.listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
    Ok(socket.into())
}

/// A single-threaded runtime for one of the server's threads.
fn thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a server thread's runtime starts")
}

/// Reports a thread's end (a panic too) when it ends.
struct WorkerExit(Arc<watch::Sender<Workers>>);

impl Drop for WorkerExit {
    fn drop(&mut self) {
        let panicked = std::thread::panicking();
        self.0.send_modify(|workers| {
            workers.running -= 1;
            workers.panicked |= panicked;
        });
    }
}

struct Worker {
    /// The connections the acceptor hands this worker.
    inbox: mpsc::UnboundedReceiver<accept::Accepted>,
    options: Options,
    graceful: CancellationToken,
    immediate: CancellationToken,
}

impl Worker {
    /// Serves on this thread until the server stops, running `beside` (the
    /// stamping of its turns) on the same loop.
    fn run<F, I, S, B>(self, factory: F, beside: impl Future<Output = ()> + 'static)
    where
        F: Fn() -> I,
        I: IntoServiceFactory<S, actix_http::Request>,
        S: ServiceFactory<
                actix_http::Request,
                Config = AppConfig,
                Response = ServiceResponse<B>,
                Error = actix_web::Error,
            > + 'static,
        S::InitError: std::fmt::Debug,
        B: MessageBody + 'static,
    {
        let runtime = thread_runtime();
        let local = tokio::task::LocalSet::new();
        local.spawn_local(beside);
        local.block_on(&runtime, async move {
            let app = match factory().into_factory().new_service(AppConfig::default()).await {
                Ok(app) => Rc::new(app),
                Err(error) => {
                    tracing::error!(server = self.options.name, "the app did not start: {error:?}");
                    return;
                }
            };
            self.serve(app).await;
        });
    }

    async fn serve<S, B>(mut self, app: Rc<S>)
    where
        S: actix_web::dev::Service<
                actix_http::Request,
                Response = ServiceResponse<B>,
                Error = actix_web::Error,
            > + 'static,
        B: MessageBody + 'static,
    {
        let connections = TaskTracker::new();
        loop {
            let accepted = tokio::select! {
                accepted = self.inbox.recv() => match accepted {
                    Some(accepted) => accepted,
                    None => break,
                },
                () = self.graceful.cancelled() => break,
            };
            let stream = match tokio::net::TcpStream::from_std(accepted.stream) {
                Ok(stream) => stream,
                Err(error) => {
                    tracing::warn!(
                        server = self.options.name,
                        "cannot take an accepted connection: {error}"
                    );
                    continue;
                }
            };
            let connection = Connection::new(
                stream,
                accepted.peer,
                app.clone(),
                &self.options,
                self.graceful.clone(),
                accepted.accepted_at,
                accepted.admitted,
            );
            let seat = accepted.seat;
            connections.spawn_local(async move {
                connection.serve().await;
                drop(seat);
            });
        }
        connections.close();
        tokio::select! {
            () = connections.wait() => {}
            () = self.immediate.cancelled() => {}
            () = tokio::time::sleep(SHUTDOWN_TIMEOUT) => {
                tracing::warn!(server = self.options.name, "answers still in progress after {SHUTDOWN_TIMEOUT:?} are dropped");
            }
        }
    }
}
