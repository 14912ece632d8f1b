//! The real parts of a Prometheus monitoring stack, for tests.
//!
//! [`Alertmanager`] runs Debian's `prometheus-alertmanager` (upstream's
//! `alertmanager` too, whichever is on `PATH`) with a configuration of its
//! own: every alert routed to one webhook, resolved ones too, with
//! `http_config.authorization` reading the bearer token from a file, as
//! operators configure it; clustering off (no gossip port). A test posts
//! alerts to Alertmanager's own API (`/api/v2/alerts`, as Prometheus does)
//! with [`Alertmanager::post_alerts`] and waits, with a generous deadline,
//! for what the webhook's receiver does with them.
//!
//! [`Prometheus`] runs Debian's `prometheus` scraping the test's targets
//! every second.
//!
//! `scripts/install-test-deps.sh` installs both. Each listens on a free
//! `127.0.0.1` port only, keeps its state in a temporary directory, and
//! stops when dropped; started as a `process_testkit::TestChild` (under
//! util-linux's `setpriv --pdeathsig=KILL`), it also stops when the test
//! process dies without dropping it.

mod alertmanager;
mod daemon;
mod prometheus;

pub use alertmanager::{Alertmanager, Webhook};
pub use prometheus::Prometheus;

/// Why a server could not be started or asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no {name} binary ({binaries}) on PATH: run scripts/install-test-deps.sh")]
    NotInstalled { name: &'static str, binaries: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{name} did not become ready within {:?}; its log:\n{log}",
        daemon::READY_TIMEOUT
    )]
    NotReady { name: &'static str, log: String },
    #[error("refused ({status}): {body}")]
    Refused { status: u16, body: String },
    #[error("asking the server: {0}")]
    Request(#[from] reqwest::Error),
}
