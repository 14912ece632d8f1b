//! An HTTPS upstream whose certificate can turn untrusted: `openssl
//! s_server -WWW` (Debian's openssl) serving one graph file, restarted with
//! the certificate asked for. The certificates come from
//! `scripts/reliability/bad-upstreams.sh`, which makes a CA and trusts it
//! for the whole run (`SSL_CERT_FILE`).

use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::Context as _;

/// Which certificate the server presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Certificate {
    /// `good.pem`, signed by the CA the engine trusts.
    Trusted,
    /// `rogue.pem`, self-signed: every handshake fails verification.
    Untrusted,
}

pub struct TlsUpstream {
    certificates: PathBuf,
    root: tempfile::TempDir,
    port: u16,
    server: Option<Child>,
}

impl TlsUpstream {
    /// Serves `graph` at `https://127.0.0.1:<port>/graph` with the trusted
    /// certificate from `certificates`.
    pub fn start(certificates: &Path, graph: &[u8]) -> anyhow::Result<Self> {
        let root = tempfile::tempdir()?;
        std::fs::write(root.path().join("graph"), graph)?;
        // A free port: bound by the kernel's choice, then handed to s_server.
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?.port();
        let mut upstream = Self {
            certificates: certificates.to_owned(),
            root,
            port,
            server: None,
        };
        upstream.present(Certificate::Trusted)?;
        Ok(upstream)
    }

    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}/graph", self.port)
    }

    /// Restarts the server with `certificate` and waits until it accepts.
    pub fn present(&mut self, certificate: Certificate) -> anyhow::Result<()> {
        self.stop();
        let name = match certificate {
            Certificate::Trusted => "good",
            Certificate::Untrusted => "rogue",
        };
        let server = Command::new("openssl")
            .args(["s_server", "-quiet", "-WWW", "-accept"])
            .arg(format!("127.0.0.1:{}", self.port))
            .arg("-cert")
            .arg(self.certificates.join(format!("{name}.pem")))
            .arg("-key")
            .arg(self.certificates.join(format!("{name}.key")))
            .current_dir(self.root.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting openssl s_server")?;
        self.server = Some(server);
        for _ in 0..100 {
            if std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, self.port)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        anyhow::bail!("openssl s_server did not listen on port {}", self.port)
    }

    fn stop(&mut self) {
        if let Some(mut server) = self.server.take() {
            // Already gone is as good as stopped.
            let _ = server.kill().and_then(|()| server.wait());
        }
    }
}

impl Drop for TlsUpstream {
    fn drop(&mut self) {
        self.stop();
    }
}
