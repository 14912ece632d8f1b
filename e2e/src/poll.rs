//! Waiting for the system to reach a state: ask again and again until the
//! answer is right or the deadline passes. Tests never sleep to synchronise.

use std::future::Future;
use std::time::Duration;

use anyhow::anyhow;
use tokio::time::Instant;

/// Time between two probes: short next to the services' one-second refresh,
/// long enough not to load a two-core machine.
const PROBE_INTERVAL: Duration = Duration::from_millis(50);

/// How long a service may take to start and become ready.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a change may take to travel the whole chain. Generous: it bounds
/// a hung test, not propagation (which the freshness tests measure).
pub const CHANGE_TIMEOUT: Duration = Duration::from_secs(60);

/// Calls `probe` until it returns `Ok`, and returns that value with the time
/// it took. `Err` means "not yet" and says what was seen instead; the last one
/// is in the error after `timeout`.
pub async fn until<T, F, Fut>(what: &str, timeout: Duration, mut probe: F) -> anyhow::Result<(T, Duration)>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<T>>,
{
    let started = Instant::now();
    loop {
        let last_seen = match probe().await {
            Ok(value) => return Ok((value, started.elapsed())),
            Err(not_yet) => not_yet,
        };
        if started.elapsed() >= timeout {
            return Err(anyhow!(
                "timed out after {timeout:?} waiting for {what}; last seen: {last_seen:#}"
            ));
        }
        tokio::time::sleep(PROBE_INTERVAL).await;
    }
}

/// Calls `probe` again and again for `window`, failing at its first `Err`:
/// checks that something holds throughout, not just once.
pub async fn throughout<F, Fut>(what: &str, window: Duration, mut probe: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    let started = Instant::now();
    while started.elapsed() < window {
        probe().await.map_err(|broken| {
            broken.context(format!("{what} stopped holding after {:?}", started.elapsed()))
        })?;
        tokio::time::sleep(PROBE_INTERVAL).await;
    }
    Ok(())
}
