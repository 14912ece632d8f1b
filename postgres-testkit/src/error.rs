use std::path::PathBuf;

/// Why a [`crate::PostgresServer`] could not be started, used or stopped.
/// Each names the command or path involved and, where there is one, the tail
/// of what the server or the command wrote.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no PostgreSQL server binaries: no initdb in /usr/lib/postgresql/*/bin nor in `pg_config --bindir` \
         (run scripts/install-test-deps.sh to install Debian's postgresql)"
    )]
    BinariesNotFound,

    #[error(
        "running as root, the server must run as the `postgres` user, and {detail} \
         (run scripts/install-test-deps.sh to install Debian's postgresql, which creates it)"
    )]
    NoServerUser { detail: String },

    #[error("could not prepare {path} for the server")]
    Filesystem {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("could not reserve a free loopback port")]
    NoFreePort(#[source] std::io::Error),

    #[error("could not start `{command}` (run scripts/install-test-deps.sh to install it)")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },

    #[error("`{command}` failed ({status}); its last output lines:\n{output_tail}")]
    CommandFailed {
        command: String,
        status: String,
        output_tail: String,
    },

    #[error("the server exited during start-up ({status}); its last log lines:\n{log_tail}")]
    ExitedEarly { status: String, log_tail: String },

    #[error(
        "the server did not accept connections on 127.0.0.1:{port} within {seconds}s \
         (pg_isready said: {last_probe}); its last log lines:\n{log_tail}"
    )]
    NotReady {
        port: u16,
        seconds: u64,
        last_probe: String,
        log_tail: String,
    },

    #[error("could not stop the server process")]
    Stop(#[source] std::io::Error),

    #[error("the server is not running")]
    NotRunning,

    #[error(
        "{name:?} is not a database name the testkit creates: use 1 to 63 ASCII letters, digits and underscores"
    )]
    InvalidDatabaseName { name: String },
}
