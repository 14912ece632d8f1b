//! One of the stack's servers as a child process: a configuration file
//! and its state in a temporary directory, a free `127.0.0.1` port, ready
//! once its `/-/ready` answers, stopped when dropped.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use process_testkit::TestChild;

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
    process: TestChild,
    address: SocketAddr,
    dir: tempfile::TempDir,
    pub(crate) client: reqwest::Client,
}

impl Daemon {
    /// Starts `program` and waits until it is ready.
    pub(crate) async fn start(program: Program) -> Result<Self, Error> {
        let binary = program
            .binaries
            .iter()
            .find_map(|name| process_testkit::find_program(name))
            .ok_or(Error::NotInstalled {
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
            let process = TestChild::spawn(command(&binary, dir.path(), &arguments)?)
                .map_err(io("starting the server (with util-linux's setpriv)"))?;
            let mut daemon = Self {
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

    async fn wait_until_ready(&mut self) -> Result<(), Error> {
        let started = Instant::now();
        let ready = format!("{}/-/ready", self.url());
        while started.elapsed() < READY_TIMEOUT && matches!(self.process.try_wait(), Ok(None)) {
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

fn free_address() -> std::io::Result<SocketAddr> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()
}

/// `binary` as a `process_testkit` child (under `setpriv --pdeathsig=KILL`,
/// which then execs it, so the child is the server itself), logging to
/// `log` in `dir`.
fn command(binary: &Path, dir: &Path, arguments: &[String]) -> Result<Command, Error> {
    let log = File::create(dir.join("log")).map_err(io("creating the log"))?;
    let log_too = log.try_clone().map_err(io("creating the log"))?;
    let mut command = process_testkit::command(binary);
    command
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
