use std::path::PathBuf;

/// Why a [`crate::LocalRegistry`] could not be started, probed or stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("could not create {path} for the registry")]
    Filesystem {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("could not reserve a free loopback port")]
    NoFreePort(#[source] std::io::Error),

    #[error("could not start `{binary}` (run scripts/install-test-deps.sh to install it)")]
    Spawn {
        binary: String,
        #[source]
        source: std::io::Error,
    },

    #[error("the registry exited during start-up ({status}); its last log lines:\n{log_tail}")]
    ExitedEarly { status: String, log_tail: String },

    #[error(
        "the registry did not answer GET /v2/ at {url} within {seconds}s; its last log lines:\n{log_tail}"
    )]
    NotReady {
        url: String,
        seconds: u64,
        log_tail: String,
    },

    #[error("could not stop the registry process")]
    Stop(#[source] std::io::Error),

    #[error("the registry is not running")]
    NotRunning,

    #[error("could not hash the htpasswd password")]
    Htpasswd(#[from] bcrypt::BcryptError),

    #[error("could not generate a certificate")]
    Certificate(#[from] openssl::error::ErrorStack),

    #[error("could not start the token server")]
    TokenServer(#[source] Box<dyn std::error::Error + Send + Sync>),

    #[error("could not start the file server")]
    FileServer(#[source] Box<dyn std::error::Error + Send + Sync>),

    #[error("could not build the HTTP client that probes the registry")]
    ProbeClient(#[source] reqwest::Error),

    #[error("the registry did not log the sync request {marker} within {seconds}s")]
    LogNotSynced { marker: String, seconds: u64 },
}
