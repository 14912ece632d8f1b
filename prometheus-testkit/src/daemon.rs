//! One of the stack's servers as a child process: a configuration file
//! and its state in a temporary directory, a free `127.0.0.1` port, ready
//! once its `/-/ready` answers, stopped when dropped.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::Error;

/// Generous: it bounds a hung start, it does not measure one (a start takes
/// well under a second).
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(60);
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// Attempts to find a port: another process may take the one we picked
/// between our probe and the server's bind.
const PORT_ATTEMPTS: usize = 3;

/// What a server is and how it is started.
pub(crate) struct Program {
    /// For messages: `Alertmanager`.
    pub name: &'static str,
    /// The names its binary goes by (Debian's first).
    pub binaries: &'static [&'static str],
    /// Its configuration file's name, and text.
    pub config: (&'static str, String),
    /// Its arguments, given its directory, configuration file and address.
    pub arguments: fn(&Path, &Path, SocketAddr) -> Vec<String>,
}

pub(crate) struct Daemon {
    name: &'static str,
    process: Process,
    address: SocketAddr,
    dir: tempfile::TempDir,
    pub(crate) client: reqwest::Client,
}

impl Daemon {
    /// Starts `program` and waits until it is ready.
    pub(crate) async fn start(program: Program) -> Result<Self, Error> {
        let binary = find_binary(program.binaries).ok_or(Error::NotInstalled {
            name: program.name,
            binaries: program.binaries.join(" or "),
        })?;
        let client = reqwest::Client::new();
        let mut last = None;
        for _ in 0..PORT_ATTEMPTS {
            let dir = tempfile::tempdir().map_err(io("creating a temporary directory"))?;
            let config = dir.path().join(program.config.0);
            std::fs::write(&config, &program.config.1).map_err(io("writing the configuration"))?;
            let address = free_address().map_err(io("finding a free port"))?;
            let arguments = (program.arguments)(dir.path(), &config, address);
            let process = Process::spawn(command(&binary, dir.path(), &arguments)?)?;
            let daemon = Self {
                name: program.name,
                process,
                address,
                dir,
                client: client.clone(),
            };
            // One that did not start (its port taken meanwhile) is stopped
            // when dropped.
            match daemon.wait_until_ready().await {
                Ok(()) => return Ok(daemon),
                Err(error) => last = Some(error),
            }
        }
        Err(last.expect("at least one attempt"))
    }

    /// `http://127.0.0.1:<port>`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// What it logged so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    async fn wait_until_ready(&self) -> Result<(), Error> {
        let started = Instant::now();
        let ready = format!("{}/-/ready", self.url());
        while started.elapsed() < READY_TIMEOUT && !self.process.exited() {
            if let Ok(response) = self.client.get(&ready).send().await
                && response.status().is_success()
            {
                return Ok(());
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
        Err(Error::NotReady {
            name: self.name,
            log: self.log(),
        })
    }
}

/// The child process, started and watched by a thread of its own that
/// lives as long as it: the kernel sends a child's death signal when the
/// *thread* that started it ends, and a runtime's worker may end before the
/// test does.
struct Process {
    stop: mpsc::Sender<()>,
    exited: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Process {
    fn spawn(mut command: Command) -> Result<Self, Error> {
        let (stop, stopped) = mpsc::channel();
        let (started, spawned) = mpsc::channel();
        let exited = Arc::new(AtomicBool::new(false));
        let exited_too = exited.clone();
        let thread = std::thread::Builder::new()
            .name("prometheus-testkit".to_owned())
            .spawn(move || {
                let mut child = match command.spawn() {
                    Ok(child) => child,
                    Err(error) => {
                        let _ = started.send(Err(error));
                        return;
                    }
                };
                let _ = started.send(Ok(()));
                watch(&mut child, &stopped, &exited_too);
            })
            .map_err(io("starting a thread"))?;
        match spawned.recv() {
            Ok(Ok(())) => Ok(Self {
                stop,
                exited,
                thread: Some(thread),
            }),
            Ok(Err(error)) => Err(io("starting the server (with util-linux's setpriv)")(error)),
            Err(_) => Err(io("starting the server")(std::io::Error::other(
                "its thread ended",
            ))),
        }
    }

    fn exited(&self) -> bool {
        self.exited.load(Ordering::Relaxed)
    }
}

/// Until told to stop (or dropped), notes when `child` exits; then kills it.
fn watch(child: &mut Child, stopped: &mpsc::Receiver<()>, exited: &AtomicBool) {
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(POLL_INTERVAL) {
        if let Ok(Some(_)) = child.try_wait() {
            exited.store(true, Ordering::Relaxed);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.stop.send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn find_binary(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

fn free_address() -> std::io::Result<SocketAddr> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()
}

/// `binary` under `setpriv --pdeathsig=KILL` (which then execs it, so the
/// child is the server itself), logging to `log` in `dir`.
fn command(binary: &Path, dir: &Path, arguments: &[String]) -> Result<Command, Error> {
    let log = File::create(dir.join("log")).map_err(io("creating the log"))?;
    let log_too = log.try_clone().map_err(io("creating the log"))?;
    let mut command = Command::new("setpriv");
    command
        .arg("--pdeathsig=KILL")
        .arg(binary)
        .args(arguments)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_too);
    Ok(command)
}

pub(crate) fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io {
        what: what.to_owned(),
        source,
    }
}

/// `text` as a YAML (JSON) string.
pub(crate) fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}
