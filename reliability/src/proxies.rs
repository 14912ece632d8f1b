//! Real reverse proxies in front of a service, as sites deploy them:
//! Debian's HAProxy and nginx on 127.0.0.1, keeping connections to the
//! backend alive (so a desynchronised backend connection would carry one
//! client's bytes into another's request).

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, bail};

/// The proxies a scenario puts in front of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Haproxy,
    Nginx,
}

impl Kind {
    pub const ALL: [Kind; 2] = [Kind::Haproxy, Kind::Nginx];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Haproxy => "HAProxy",
            Kind::Nginx => "nginx",
        }
    }
}

/// A proxy process; stopped when dropped.
pub struct Proxy {
    pub kind: Kind,
    pub address: SocketAddr,
    child: Child,
}

/// Connections each proxy holds open at most: HAProxy takes two descriptors
/// a connection, and a process here may have 20,000 (the hard limit of
/// this machine's sandbox, which the scripts cannot raise). Beyond it, a
/// proxy leaves connections in its backlog.
const MAX_CONNECTIONS: u32 = 9_000;

impl Proxy {
    /// Starts a `kind` proxy in `workdir` forwarding every request to
    /// `backend`, and waits until it accepts connections.
    pub fn start(kind: Kind, backend: SocketAddr, workdir: &Path) -> anyhow::Result<Self> {
        let port = free_port()?;
        let directory = workdir.join(kind.name().to_lowercase());
        std::fs::create_dir_all(&directory)?;
        let mut command = match kind {
            Kind::Haproxy => haproxy(&directory, port, backend)?,
            Kind::Nginx => nginx(&directory, port, backend)?,
        };
        let log = std::fs::File::create(directory.join("output.log"))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {} (scripts/reliability/ install it)", kind.name()))?;
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let proxy = Self { kind, address, child };
        for _ in 0..200 {
            if TcpStream::connect(address).is_ok() {
                return Ok(proxy);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        bail!(
            "{} did not listen on {address}; see {}",
            kind.name(),
            directory.join("output.log").display()
        )
    }
}

impl Drop for Proxy {
    /// Asks the proxy to stop (nginx's master then stops its workers, which
    /// a kill would leave running), and kills it if it has not after a while.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        for _ in 0..100 {
            if matches!(self.child.try_wait(), Ok(Some(_)) | Err(_)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Already gone is as good as stopped.
        let _ = self.child.kill().and_then(|()| self.child.wait());
    }
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?.port())
}

fn haproxy(directory: &Path, port: u16, backend: SocketAddr) -> anyhow::Result<Command> {
    let config = format!(
        "global\n    maxconn {MAX_CONNECTIONS}\n\
         defaults\n    mode http\n    option http-keep-alive\n    timeout connect 5s\n    timeout client 30s\n    \
         timeout server 30s\n    timeout http-request 5s\n    timeout http-keep-alive 75s\n\
         frontend clients\n    bind 127.0.0.1:{port}\n    maxconn {MAX_CONNECTIONS}\n    default_backend service\n\
         backend service\n    http-reuse always\n    server service {backend} maxconn 1000\n"
    );
    let path = write(directory, "haproxy.cfg", &config)?;
    let mut command = Command::new("haproxy");
    // -db: in the foreground, so that the scenario owns the process.
    command.arg("-db").arg("-f").arg(path);
    Ok(command)
}

fn nginx(directory: &Path, port: u16, backend: SocketAddr) -> anyhow::Result<Command> {
    let dir = directory.display();
    let config = format!(
        "worker_processes 2;\n\
         pid {dir}/nginx.pid;\n\
         error_log {dir}/error.log warn;\n\
         worker_rlimit_nofile {MAX_CONNECTIONS};\n\
         events {{ worker_connections {MAX_CONNECTIONS}; }}\n\
         http {{\n    access_log off;\n\
         \x20   client_body_temp_path {dir}/client-body;\n    proxy_temp_path {dir}/proxy;\n\
         \x20   fastcgi_temp_path {dir}/fastcgi;\n    uwsgi_temp_path {dir}/uwsgi;\n    scgi_temp_path {dir}/scgi;\n\
         \x20   upstream service {{ server {backend}; keepalive 64; }}\n\
         \x20   server {{\n        listen 127.0.0.1:{port};\n\
         \x20       location / {{\n            proxy_pass http://service;\n\
         \x20           proxy_http_version 1.1;\n            proxy_set_header Connection \"\";\n\
         \x20           proxy_set_header Host $host;\n        }}\n    }}\n}}\n"
    );
    let path = write(directory, "nginx.conf", &config)?;
    let mut command = Command::new("nginx");
    command
        .arg("-p")
        .arg(directory)
        .arg("-c")
        .arg(path)
        .arg("-g")
        .arg("daemon off;");
    Ok(command)
}

fn write(directory: &Path, name: &str, text: &str) -> anyhow::Result<PathBuf> {
    let path = directory.join(name);
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
