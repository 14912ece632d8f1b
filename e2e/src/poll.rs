//! How long the end-to-end tests wait for the system to reach a state;
//! the waiting is `registry_testkit::poll`'s.

use std::time::Duration;

/// How long a service may take to start and become ready.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a change may take to travel the whole chain. Generous: it bounds
/// a hung test, not propagation (which the freshness tests measure).
pub const CHANGE_TIMEOUT: Duration = Duration::from_secs(60);

pub use registry_testkit::poll::{throughout, until};
