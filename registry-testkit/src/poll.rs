//! Waiting for a system to reach a state: ask again and again until the
//! answer is right or the deadline passes. Tests never sleep to synchronise,
//! and never assert how long something took: deadlines here are generous,
//! bounding a hung test, not measuring one.

use std::time::Duration;

use anyhow::anyhow;
use tokio::time::Instant;

/// Time between two probes: short next to the services' one-second refresh,
/// long enough not to load a two-core machine.
pub const PROBE_INTERVAL: Duration = Duration::from_millis(20);

/// Calls `probe` until it returns `Ok`, and returns that value with the time
/// it took. `Err` means "not yet" and says what was seen instead; the last one
/// is in the error after `timeout`.
pub async fn until<T>(
    what: &str,
    timeout: Duration,
    mut probe: impl AsyncFnMut() -> anyhow::Result<T>,
) -> anyhow::Result<(T, Duration)> {
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

/// [`until`] for a yes-or-no `check`, failing the test after `timeout`.
pub async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let waited = until(what, timeout, || {
        let done = check();
        async move {
            if done.await {
                Ok(())
            } else {
                Err(anyhow!("not yet"))
            }
        }
    })
    .await;
    if let Err(error) = waited {
        panic!("{error}");
    }
}

/// Calls `probe` again and again for `window`, failing at its first `Err`:
/// checks that something holds throughout, not just once.
pub async fn throughout(
    what: &str,
    window: Duration,
    mut probe: impl AsyncFnMut() -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    while started.elapsed() < window {
        probe().await.map_err(|broken| {
            broken.context(format!("{what} stopped holding after {:?}", started.elapsed()))
        })?;
        tokio::time::sleep(PROBE_INTERVAL).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn until_returns_the_first_ok_and_names_the_last_miss_on_timeout() {
        let calls = AtomicUsize::new(0);
        let (value, _) = until("the third call", Duration::from_secs(60), || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                2 => Ok("done"),
                seen => Err(anyhow!("call {seen}")),
            }
        })
        .await
        .unwrap();
        assert_eq!(value, "done");

        let error = until("never", Duration::ZERO, || async {
            Err::<(), _>(anyhow!("still no"))
        })
        .await
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("waiting for never") && error.contains("still no"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn throughout_fails_at_the_first_break() {
        let calls = AtomicUsize::new(0);
        let error = throughout("a rule", Duration::from_secs(60), || async {
            if calls.fetch_add(1, Ordering::SeqCst) < 2 {
                Ok(())
            } else {
                Err(anyhow!("broken"))
            }
        })
        .await
        .unwrap_err();
        assert!(
            format!("{error:#}").contains("a rule stopped holding"),
            "{error:#}"
        );
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }
}
