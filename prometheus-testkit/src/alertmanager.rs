use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Names the Alertmanager binary goes by: Debian's, then upstream's.
const BINARIES: &[&str] = &["prometheus-alertmanager", "alertmanager"];
/// Generous: it bounds a hung start, it does not measure one (a start takes
/// well under a second).
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// Attempts to find a port: another process may take the one we picked
/// between our probe and Alertmanager's bind.
const PORT_ATTEMPTS: usize = 3;

/// Where Alertmanager sends every alert.
#[derive(Debug, Clone)]
pub struct Webhook {
    pub url: String,
    /// A file holding the bearer token Alertmanager sends.
    pub credentials_file: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no Alertmanager binary ({}) on PATH: run scripts/install-test-deps.sh", BINARIES.join(" or "))]
    NotInstalled,
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("Alertmanager did not become ready within {READY_TIMEOUT:?}; its log ends:\n{log}")]
    NotReady { log: String },
    #[error("Alertmanager refused the alerts ({status}): {body}")]
    Refused { status: u16, body: String },
    #[error("asking Alertmanager: {0}")]
    Request(#[from] reqwest::Error),
}

/// A running Alertmanager; see the crate documentation.
pub struct Alertmanager {
    process: Process,
    address: SocketAddr,
    dir: tempfile::TempDir,
    client: reqwest::Client,
}

impl Alertmanager {
    /// Starts Alertmanager routing every alert to `webhook` and waits until
    /// it is ready. Call it within a tokio runtime.
    pub async fn start(webhook: &Webhook) -> Result<Self, Error> {
        let binary = find_binary().ok_or(Error::NotInstalled)?;
        let client = reqwest::Client::new();
        let mut last = None;
        for _ in 0..PORT_ATTEMPTS {
            let dir = tempfile::tempdir().map_err(io("creating Alertmanager's directory"))?;
            let config = dir.path().join("alertmanager.yml");
            std::fs::write(&config, configuration(webhook)).map_err(io("writing alertmanager.yml"))?;
            let address = free_address().map_err(io("finding a free port"))?;
            let process = Process::spawn(command(&binary, dir.path(), &config, address)?)?;
            let mut alertmanager = Self {
                process,
                address,
                dir,
                client: client.clone(),
            };
            // One that did not start (its port taken meanwhile) is stopped
            // when dropped.
            match alertmanager.wait_until_ready().await {
                Ok(()) => return Ok(alertmanager),
                Err(error) => last = Some(error),
            }
        }
        Err(last.expect("at least one attempt"))
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Posts `alerts` (a JSON array of alerts: `labels`, `annotations`,
    /// optional `startsAt`, `endsAt`, `generatorURL`) to Alertmanager's
    /// `/api/v2/alerts`, as Prometheus does.
    pub async fn post_alerts(&self, alerts: &serde_json::Value) -> Result<(), Error> {
        let response = self
            .client
            .post(format!("{}/api/v2/alerts", self.url()))
            .json(alerts)
            .send()
            .await?;
        let status = response.status().as_u16();
        if status == 200 {
            Ok(())
        } else {
            let body = response.text().await.unwrap_or_default();
            Err(Error::Refused { status, body })
        }
    }

    /// What Alertmanager logged so far (notification errors among it), for a
    /// failing test's message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("alertmanager.log")).unwrap_or_default()
    }

    async fn wait_until_ready(&mut self) -> Result<(), Error> {
        let started = Instant::now();
        let ready = format!("{}/-/ready", self.url());
        while started.elapsed() < READY_TIMEOUT {
            if self.process.exited() {
                break;
            }
            if let Ok(response) = self.client.get(&ready).send().await
                && response.status().is_success()
            {
                return Ok(());
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
        Err(Error::NotReady { log: self.log() })
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
            .name("alertmanager".to_owned())
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
            .map_err(io("starting Alertmanager's thread"))?;
        match spawned.recv() {
            Ok(Ok(())) => Ok(Self {
                stop,
                exited,
                thread: Some(thread),
            }),
            Ok(Err(error)) => Err(io("starting Alertmanager (with util-linux's setpriv)")(error)),
            Err(_) => Err(io("starting Alertmanager")(std::io::Error::other(
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

fn find_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    BINARIES.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

fn free_address() -> std::io::Result<SocketAddr> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()
}

/// Every alert to the webhook, grouped by alert name and rollout, sent at
/// once (`group_wait: 0s`) and again on change within a second.
fn configuration(webhook: &Webhook) -> String {
    let quoted = |text: &str| serde_json::Value::from(text).to_string();
    format!(
        "route:
  receiver: webhook
  group_by: [alertname, rollout_target, to_version]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: webhook
    webhook_configs:
      - url: {url}
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials_file: {credentials}
",
        url = quoted(&webhook.url),
        credentials = quoted(&webhook.credentials_file.to_string_lossy()),
    )
}

/// Alertmanager under `setpriv --pdeathsig=KILL` (which then execs it, so
/// the child is Alertmanager itself), logging to a file in `dir`.
fn command(binary: &Path, dir: &Path, config: &Path, address: SocketAddr) -> Result<Command, Error> {
    let log = File::create(dir.join("alertmanager.log")).map_err(io("creating alertmanager.log"))?;
    let log_too = log.try_clone().map_err(io("creating alertmanager.log"))?;
    let mut command = Command::new("setpriv");
    command
        .arg("--pdeathsig=KILL")
        .arg(binary)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address={address}"))
        // Empty: no cluster, so no gossip port on 0.0.0.0.
        .arg("--cluster.listen-address=")
        .arg("--log.level=debug")
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_too);
    Ok(command)
}

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io {
        what: what.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// A webhook receiver of the test's own: the first request, whole.
    async fn first_request(listener: tokio::net::TcpListener) -> String {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buffer = [0; 4096];
        loop {
            let read = stream.read(&mut buffer).await.unwrap();
            request.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&request);
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text[..end]
                    .lines()
                    .find_map(|line| {
                        line.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(str::to_owned)
                    })
                    .map_or(0, |length| length.trim().parse().unwrap());
                if request.len() >= end + 4 + length {
                    break;
                }
            }
            assert!(read > 0, "closed early: {text}");
        }
        stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        String::from_utf8(request).unwrap()
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn an_alert_posted_reaches_the_webhook_with_the_token_of_the_file() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let credentials_file = dir.path().join("token");
        std::fs::write(&credentials_file, "t0ken\n").unwrap();
        let webhook = Webhook {
            url: format!("http://{}/hook", listener.local_addr().unwrap()),
            credentials_file,
        };
        let received = tokio::spawn(first_request(listener));
        let alertmanager = Alertmanager::start(&webhook).await.unwrap();
        assert!(alertmanager.url().starts_with("http://127.0.0.1:"));
        alertmanager
            .post_alerts(&serde_json::json!([{"labels": {"alertname": "Test", "rollout_target": "4.18.4"}}]))
            .await
            .unwrap();
        let request = tokio::time::timeout(Duration::from_secs(60), received)
            .await
            .unwrap_or_else(|_| panic!("no notification; Alertmanager's log:\n{}", alertmanager.log()))
            .unwrap();
        assert!(request.starts_with("POST /hook HTTP/1.1\r\n"), "{request}");
        assert!(
            request
                .to_ascii_lowercase()
                .contains("authorization: bearer t0ken\r\n"),
            "{request}"
        );
        assert!(request.contains(r#""rollout_target":"4.18.4""#), "{request}");
        let refused = alertmanager
            .post_alerts(&serde_json::json!({"not": "a list"}))
            .await;
        assert!(
            matches!(refused, Err(Error::Refused { status: 400, .. })),
            "{refused:?}"
        );
    }
}
