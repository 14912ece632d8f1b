use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use rustix::process::Signal;
use tokio::time::{Instant, sleep};

use crate::binaries::{Binaries, ServerUser};
use crate::error::Error;
use crate::process::{self, Postmaster, ServerLog};
use crate::workdir::Workdir;

/// Generous: it bounds a hung start, it does not measure one (a start takes
/// well under a second; crash recovery after [`PostgresServer::kill`] adds
/// little for a test's data).
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// Attempts to find a port: another process may take the one we picked
/// between our probe and the server's bind.
const PORT_ATTEMPTS: usize = 3;
const SUPERUSER: &str = "postgres";
/// The database [`PostgresServer::url`] names.
const DEFAULT_DATABASE: &str = "test";
/// What the kernel sends the server when it is orphaned: PostgreSQL's
/// immediate shutdown, which stops every server process and removes the
/// server's shared memory segment, where `KILL` would leave the segment
/// behind and the other server processes to notice on their own.
const DEATH_SIGNAL: &str = "QUIT";
/// Settings for speed that keep what a test may rely on. Without `fsync` and
/// full-page writes, data survives the death of the server's processes (it is
/// in the kernel's page cache) but not a crash of the machine, which a test
/// never sees. `synchronous_commit` stays on: off, a commit is acknowledged
/// before its WAL is written, so [`PostgresServer::kill`] would lose the last
/// acknowledged transactions; with `fsync` off it costs one `write` a commit.
const SETTINGS: &[(&str, &str)] = &[
    ("fsync", "off"),
    ("full_page_writes", "off"),
    ("synchronous_commit", "on"),
];

/// A real PostgreSQL server on a free `127.0.0.1` port, with its data
/// directory (and its Unix socket) in a temporary directory, and a database
/// ready for [`PostgresServer::url`]. Clients connect as the superuser
/// `postgres`, without a password.
///
/// Dropping it stops the server and removes the directory, also when a test
/// panics; if the test process dies instead, the kernel stops the server and
/// the next start in the same parent directory removes the directory.
#[derive(Debug)]
pub struct PostgresServer {
    binaries: Binaries,
    user: ServerUser,
    port: u16,
    log: Arc<ServerLog>,
    postmaster: Option<Postmaster>,
    /// Declared after `postmaster`: fields drop in order, so the server has
    /// stopped before its data is removed.
    workdir: Workdir,
}

impl PostgresServer {
    /// Creates a data directory (`initdb`), starts the server on a free port,
    /// waits until it accepts connections and creates the database
    /// [`PostgresServer::url`] names.
    ///
    /// Runs commands with tokio's process support: call it in a runtime with
    /// I/O enabled (as `#[tokio::test]` makes).
    pub async fn start() -> Result<Self, Error> {
        Self::start_in(&std::env::temp_dir()).await
    }

    /// [`PostgresServer::start`] with its data directory in `parent` (a
    /// small filesystem, say, to see the server fill it).
    pub async fn start_in(parent: &Path) -> Result<Self, Error> {
        let binaries = Binaries::find()?;
        let user = ServerUser::detect()?;
        let workdir = Workdir::create_in(parent)?;
        user.hand_over(workdir.path())?;
        let mut server = Self {
            binaries,
            user,
            // Set for each start attempt.
            port: 0,
            log: Arc::default(),
            postmaster: None,
            workdir,
        };
        server.create_socket_dir()?;
        server.init_data_dir().await?;
        server.start_on_free_port().await?;
        server.create_database(DEFAULT_DATABASE).await?;
        Ok(server)
    }

    /// `postgres://postgres@127.0.0.1:PORT/test`, the database made at start.
    pub fn url(&self) -> String {
        self.database_url(DEFAULT_DATABASE)
    }

    /// `postgres://postgres@127.0.0.1:PORT/{database}`.
    pub fn database_url(&self, database: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{database}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary directory holding the data directory (`data/`) and the
    /// Unix socket (`sockets/`); removed when the server is dropped.
    pub fn directory(&self) -> &Path {
        self.workdir.path()
    }

    /// The server's last log lines, across restarts.
    pub fn log_tail(&self) -> String {
        self.log.tail()
    }

    /// Creates another, empty database on this server (tests sharing a
    /// server each take their own) and returns its URL. `name`: 1 to 63
    /// ASCII letters, digits and underscores.
    pub async fn create_database(&self, name: &str) -> Result<String, Error> {
        validate_database_name(name)?;
        if self.postmaster.is_none() {
            return Err(Error::NotRunning);
        }
        let mut command = process::clean_command(self.binaries.path("createdb"));
        self.client_options(&mut command);
        command.arg(name);
        process::run(command).await?;
        Ok(self.database_url(name))
    }

    /// Whether the server is still running (false after `stop`, `kill` or a
    /// crash).
    pub fn is_running(&mut self) -> bool {
        self.postmaster
            .as_mut()
            .is_some_and(|postmaster| postmaster.exit_status().is_none())
    }

    /// Stops the server cleanly (PostgreSQL's fast shutdown: sessions are
    /// ended, data is checkpointed) and waits until it has exited. The port
    /// and the data are kept for [`PostgresServer::restart`].
    pub fn stop(&mut self) -> Result<(), Error> {
        self.shut_down(Signal::INT)
    }

    /// Crashes the server: PostgreSQL's immediate shutdown, every server
    /// process exits at once without a checkpoint, and waits until they
    /// have. [`PostgresServer::restart`] recovers from the WAL, keeping every
    /// committed transaction, as after a crash of a production server.
    pub fn kill(&mut self) -> Result<(), Error> {
        self.shut_down(Signal::QUIT)
    }

    /// Starts the server again on the same port and data (stopping it first,
    /// cleanly, if it runs), and waits until it accepts connections.
    pub async fn restart(&mut self) -> Result<(), Error> {
        self.stop()?;
        self.launch().await
    }

    fn shut_down(&mut self, signal: Signal) -> Result<(), Error> {
        match self.postmaster.take() {
            Some(mut postmaster) => postmaster.shut_down(signal).map_err(Error::Stop),
            None => Ok(()),
        }
    }

    fn data_dir(&self) -> PathBuf {
        self.workdir.path().join("data")
    }

    fn socket_dir(&self) -> PathBuf {
        self.workdir.path().join("sockets")
    }

    fn create_socket_dir(&self) -> Result<(), Error> {
        let dir = self.socket_dir();
        std::fs::create_dir(&dir).map_err(|source| Error::Filesystem {
            path: dir.clone(),
            source,
        })?;
        self.user.hand_over(&dir)
    }

    async fn init_data_dir(&self) -> Result<(), Error> {
        let mut command = self.server_command("initdb");
        command.arg("--pgdata").arg(self.data_dir()).args([
            "--username",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            // Byte-order collation, and no dependence on which locales
            // the machine has.
            "--locale=C",
            "--no-sync",
        ]);
        process::run(command).await.map(drop)
    }

    async fn start_on_free_port(&mut self) -> Result<(), Error> {
        let mut last_error = None;
        for _ in 0..PORT_ATTEMPTS {
            self.port = free_loopback_port()?;
            match self.launch().await {
                Ok(()) => return Ok(()),
                Err(error @ Error::ExitedEarly { .. }) => last_error = Some(error),
                Err(error) => return Err(error),
            }
        }
        Err(last_error.unwrap_or(Error::NotRunning))
    }

    async fn launch(&mut self) -> Result<(), Error> {
        let mut command = self.server_command("postgres");
        command
            .arg("-D")
            .arg(self.data_dir())
            .args([
                "-p",
                &self.port.to_string(),
                "-c",
                "listen_addresses=127.0.0.1",
                "-k",
            ])
            .arg(self.socket_dir());
        for (name, value) in SETTINGS {
            command.arg("-c").arg(format!("{name}={value}"));
        }
        self.postmaster = Some(Postmaster::spawn(command, &self.log)?);
        self.wait_until_ready().await
    }

    async fn wait_until_ready(&mut self) -> Result<(), Error> {
        let started = Instant::now();
        loop {
            let postmaster = self.postmaster.as_mut().ok_or(Error::NotRunning)?;
            if let Some(status) = postmaster.exit_status() {
                self.postmaster = None;
                return Err(Error::ExitedEarly {
                    status,
                    log_tail: self.log.tail(),
                });
            }
            let mut probe = process::clean_command(self.binaries.path("pg_isready"));
            self.client_options(&mut probe);
            probe.args(["--dbname", "postgres", "--timeout", "5"]);
            let last_probe = match process::run(probe).await {
                Ok(_) => return Ok(()),
                Err(Error::CommandFailed {
                    status, output_tail, ..
                }) => format!("{output_tail} ({status})"),
                Err(error) => return Err(error),
            };
            if started.elapsed() >= READY_TIMEOUT {
                return Err(Error::NotReady {
                    port: self.port,
                    seconds: READY_TIMEOUT.as_secs(),
                    last_probe,
                    log_tail: self.log.tail(),
                });
            }
            sleep(POLL_INTERVAL).await;
        }
    }

    /// A server program, run as the server user from the work directory (a
    /// test's current directory may be closed to that user).
    fn server_command(&self, program: &str) -> Command {
        let mut command = self.user.command(&self.binaries.path(program), DEATH_SIGNAL);
        command.current_dir(self.workdir.path());
        command
    }

    /// How the client programs reach the server: over TCP, as clients do.
    fn client_options(&self, command: &mut Command) {
        command.args([
            "--host",
            "127.0.0.1",
            "--port",
            &self.port.to_string(),
            "--username",
            SUPERUSER,
        ]);
    }
}

fn validate_database_name(name: &str) -> Result<(), Error> {
    let valid = (1..=63).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_');
    if valid {
        Ok(())
    } else {
        Err(Error::InvalidDatabaseName {
            name: name.to_owned(),
        })
    }
}

fn free_loopback_port() -> Result<u16, Error> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(Error::NoFreePort)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_are_plain_identifiers() {
        for name in ["test", "fleet_2", "A", &"x".repeat(63)] {
            assert!(validate_database_name(name).is_ok(), "{name}");
        }
        for name in ["", "with space", "semi;colon", "dash-ed", "ü", &"x".repeat(64)] {
            assert!(
                matches!(
                    validate_database_name(name),
                    Err(Error::InvalidDatabaseName { .. })
                ),
                "{name}"
            );
        }
    }
}
