use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::header::USER_AGENT;
use tempfile::TempDir;
use tokio::time::{Instant, sleep};

use crate::access_log::LoggedRequest;
use crate::config::RegistryConfig;
use crate::error::Error;
use crate::options::{Credentials, RegistryOptions};
use crate::process::{ProcessOutput, RegistryProcess};
use crate::setup::{self, Prepared};
use crate::token_server::TokenServer;

const READY_TIMEOUT: Duration = Duration::from_secs(20);
const LOG_SYNC_TIMEOUT: Duration = Duration::from_secs(10);
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// Attempts to find a port: another process may grab the one we picked
/// between our probe and the registry's bind.
const PORT_ATTEMPTS: usize = 3;
/// User agents of the testkit's own requests, left out of `request_log`.
const TESTKIT_AGENT: &str = "registry-testkit";

/// A real distribution registry (`docker-registry`) on a free `127.0.0.1` port,
/// with its storage in a temporary directory. Dropping it kills the process and
/// removes the storage, also when a test panics.
#[derive(Debug)]
pub struct LocalRegistry {
    config: RegistryConfig,
    listen: SocketAddr,
    config_path: PathBuf,
    ca_pem: Option<String>,
    credentials: Option<Credentials>,
    output: Arc<ProcessOutput>,
    probe: reqwest::Client,
    sync_counter: AtomicU64,
    token_server: Option<TokenServer>,
    process: Option<RegistryProcess>,
    /// Declared after `process`: fields drop in order, so the process is
    /// killed before its storage is removed.
    workdir: TempDir,
}

impl LocalRegistry {
    /// Starts an anonymous plain-HTTP registry.
    pub async fn start() -> Result<Self, Error> {
        Self::start_with(RegistryOptions::default()).await
    }

    pub async fn start_with(options: RegistryOptions) -> Result<Self, Error> {
        let Prepared {
            workdir,
            config,
            ca_pem,
            credentials,
            token_server,
        } = setup::prepare(options)?;
        let mut registry = Self {
            config,
            // Both are set for each start attempt.
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            config_path: PathBuf::new(),
            ca_pem,
            credentials,
            output: Arc::default(),
            probe: probe_client()?,
            sync_counter: AtomicU64::new(0),
            token_server,
            process: None,
            workdir,
        };
        registry.start_on_free_port().await?;
        Ok(registry)
    }

    async fn start_on_free_port(&mut self) -> Result<(), Error> {
        let mut last_error = None;
        for _ in 0..PORT_ATTEMPTS {
            self.listen = free_loopback_address()?;
            self.config_path = setup::write_file(
                self.workdir.path(),
                &format!("config-{}.yml", self.listen.port()),
                &self.config.render(self.listen),
            )?;
            match self.launch().await {
                Ok(()) => return Ok(()),
                Err(error @ Error::ExitedEarly { .. }) => last_error = Some(error),
                Err(error) => return Err(error),
            }
        }
        Err(last_error.expect("PORT_ATTEMPTS is not zero"))
    }

    /// `127.0.0.1:PORT`, the registry part of an image reference.
    pub fn host_port(&self) -> String {
        self.listen.to_string()
    }

    /// `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        let scheme = if self.config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.listen)
    }

    /// The PEM certificate a client must trust, for TLS registries.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The credentials the registry (basic auth) or its token server accepts, if any.
    pub fn credentials(&self) -> Option<&Credentials> {
        self.credentials.as_ref()
    }

    /// The token server's URL, for registries with token auth: clients get
    /// `GET {realm}?service=...&scope=repository:NAME:ACTIONS` tokens there.
    pub fn token_realm(&self) -> Option<&str> {
        self.token_server.as_ref().map(TokenServer::realm)
    }

    /// Whether the process is still running (false after `stop` or a crash).
    pub fn is_running(&mut self) -> bool {
        self.process
            .as_mut()
            .is_some_and(|process| process.exit_status().is_none())
    }

    /// Kills the registry process; the port and the storage are kept for `restart`.
    pub fn stop(&mut self) -> Result<(), Error> {
        match self.process.take() {
            Some(process) => process.terminate().map_err(Error::Stop),
            None => Ok(()),
        }
    }

    /// Starts the registry again on the same port and storage (stopping it first
    /// if it runs), and waits until it answers.
    pub async fn restart(&mut self) -> Result<(), Error> {
        self.stop()?;
        self.launch().await
    }

    /// Every request served since start (or since `clear_request_log`), across
    /// restarts. It first waits until the registry has logged all requests that
    /// completed before this call, so counts taken right after a client finishes
    /// are exact.
    pub async fn request_log(&self) -> Result<Vec<LoggedRequest>, Error> {
        self.sync_request_log().await?;
        Ok(self
            .output
            .requests()
            .into_iter()
            .filter(|request| !request.user_agent.starts_with(TESTKIT_AGENT))
            .collect())
    }

    pub fn clear_request_log(&self) {
        self.output.clear_requests();
    }

    async fn launch(&mut self) -> Result<(), Error> {
        self.process = Some(RegistryProcess::spawn(&self.config_path, &self.output)?);
        self.wait_until_ready().await
    }

    async fn wait_until_ready(&mut self) -> Result<(), Error> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let url = format!("{}/v2/", self.url());
        loop {
            let process = self.process.as_mut().ok_or(Error::NotRunning)?;
            if let Some(status) = process.exit_status() {
                self.process = None;
                return Err(Error::ExitedEarly {
                    status,
                    log_tail: self.output.diagnostics_tail(),
                });
            }
            // Any HTTP answer, 401 included, means the API is up.
            let probe = self.probe.get(&url).header(USER_AGENT, TESTKIT_AGENT);
            if probe.send().await.is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::NotReady {
                    url,
                    seconds: READY_TIMEOUT.as_secs(),
                    log_tail: self.output.diagnostics_tail(),
                });
            }
            sleep(POLL_INTERVAL).await;
        }
    }

    /// distribution writes an access-log line after the response, so a client
    /// can finish before its requests are logged. A marker request sent now is
    /// logged after everything that completed earlier.
    async fn sync_request_log(&self) -> Result<(), Error> {
        if self.process.is_none() {
            return Err(Error::NotRunning);
        }
        let marker = format!(
            "{TESTKIT_AGENT}-sync-{}",
            self.sync_counter.fetch_add(1, Ordering::Relaxed)
        );
        let url = format!("{}/v2/", self.url());
        let deadline = Instant::now() + LOG_SYNC_TIMEOUT;
        let mut sent = false;
        while Instant::now() < deadline {
            if !sent {
                sent = self
                    .probe
                    .get(&url)
                    .header(USER_AGENT, &marker)
                    .send()
                    .await
                    .is_ok();
            } else if self.output.has_request_from(&marker) {
                return Ok(());
            }
            sleep(POLL_INTERVAL).await;
        }
        Err(Error::LogNotSynced {
            marker,
            seconds: LOG_SYNC_TIMEOUT.as_secs(),
        })
    }
}

/// The readiness and log-sync probe only needs "is it answering", not a trusted
/// identity, so it accepts any certificate (including the self-signed CA shape
/// rustls refuses).
fn probe_client() -> Result<reqwest::Client, Error> {
    reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .connect_timeout(Duration::from_secs(1))
        .timeout(Duration::from_secs(2))
        .build()
        .map_err(Error::ProbeClient)
}

fn free_loopback_address() -> Result<SocketAddr, Error> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map_err(Error::NoFreePort)
}
