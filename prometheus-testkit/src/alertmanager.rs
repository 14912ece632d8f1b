//! Alertmanager routing every alert to one webhook.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::daemon::{Daemon, Program, quoted};

/// Where Alertmanager sends every alert.
#[derive(Debug, Clone)]
pub struct Webhook {
    pub url: String,
    /// A file holding the bearer token Alertmanager sends.
    pub credentials_file: PathBuf,
}

/// A running Alertmanager; see the crate documentation.
pub struct Alertmanager(Daemon);

impl Alertmanager {
    /// Starts Alertmanager routing every alert to `webhook` and waits until
    /// it is ready. Call it within a tokio runtime.
    pub async fn start(webhook: &Webhook) -> Result<Self, Error> {
        Daemon::start(Program {
            name: "Alertmanager",
            binaries: &["prometheus-alertmanager", "alertmanager"],
            config: ("alertmanager.yml", configuration(webhook)),
            arguments,
        })
        .await
        .map(Self)
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        self.0.url()
    }

    /// Posts `alerts` (a JSON array of alerts: `labels`, `annotations`,
    /// optional `startsAt`, `endsAt`, `generatorURL`) to Alertmanager's
    /// `/api/v2/alerts`, as Prometheus does.
    pub async fn post_alerts(&self, alerts: &serde_json::Value) -> Result<(), Error> {
        let response = self
            .0
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
        self.0.log()
    }
}

/// Every alert to the webhook, grouped by alert name and rollout, sent at
/// once (`group_wait: 0s`) and again on change within a second.
fn configuration(webhook: &Webhook) -> String {
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

fn arguments(dir: &Path, config: &Path, address: SocketAddr) -> Vec<String> {
    vec![
        format!("--config.file={}", config.display()),
        format!("--storage.path={}", dir.join("data").display()),
        format!("--web.listen-address={address}"),
        // Empty: no cluster, so no gossip port on 0.0.0.0.
        "--cluster.listen-address=".to_owned(),
        "--log.level=debug".to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use std::time::Duration;

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
