//! The real parts of a Prometheus monitoring stack, for tests.
//!
//! [`Alertmanager`] runs Debian's `prometheus-alertmanager` (upstream's
//! `alertmanager` too, whichever is on `PATH`; `scripts/install-test-deps.sh`
//! installs it) with a configuration of its own: every alert routed to one
//! webhook, resolved ones too, with `http_config.authorization` reading the
//! bearer token from a file, as operators configure it. It listens on a free
//! `127.0.0.1` port only, with clustering off (no gossip port), keeps its
//! state in a temporary directory, and stops when dropped; started under
//! util-linux's `setpriv --pdeathsig=KILL`, it also stops when the test
//! process dies without dropping it.
//!
//! A test posts alerts to Alertmanager's own API (`/api/v2/alerts`, as
//! Prometheus does) with [`Alertmanager::post_alerts`] and waits, with a
//! generous deadline, for what the webhook's receiver does with them.

mod alertmanager;

pub use alertmanager::{Alertmanager, Error, Webhook};
