//! Retries with exponential backoff for requests that may succeed later.

use std::future::Future;
use std::time::Duration;

/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// Wait before the second attempt; doubled before each further one.
    pub first_backoff: Duration,
    /// How long one attempt may take before it is abandoned.
    pub attempt_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 3,
            first_backoff: Duration::from_millis(200),
            attempt_timeout: Duration::from_secs(30),
        }
    }
}

/// The outcome of one failed attempt.
pub trait Transient {
    /// Whether trying again may help (network trouble, 5xx, 429, timeouts).
    fn is_transient(&self) -> bool;
    /// The error for an attempt that ran out of time.
    fn timed_out(after: Duration) -> Self;
}

impl RetryPolicy {
    /// Runs `attempt` until it succeeds, fails permanently, or attempts run out.
    pub async fn run<T, E, F, Fut>(&self, mut attempt: F) -> Result<T, E>
    where
        E: Transient,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut backoff = self.first_backoff;
        let mut tries = 1;
        loop {
            let result = match tokio::time::timeout(self.attempt_timeout, attempt()).await {
                Ok(result) => result,
                Err(_) => Err(E::timed_out(self.attempt_timeout)),
            };
            match result {
                Err(error) if error.is_transient() && tries < self.attempts => {
                    tokio::time::sleep(backoff).await;
                    backoff *= 2;
                    tries += 1;
                }
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    #[derive(Debug, PartialEq)]
    enum Failure {
        Flaky,
        Fatal,
        TimedOut,
    }

    impl Transient for Failure {
        fn is_transient(&self) -> bool {
            matches!(self, Failure::Flaky | Failure::TimedOut)
        }
        fn timed_out(_: Duration) -> Self {
            Failure::TimedOut
        }
    }

    fn quick() -> RetryPolicy {
        RetryPolicy {
            attempts: 3,
            first_backoff: Duration::from_millis(1),
            attempt_timeout: Duration::from_millis(50),
        }
    }

    #[tokio::test]
    async fn transient_failures_are_retried_until_success() {
        let calls = AtomicU32::new(0);
        let result = quick()
            .run(|| async {
                let call = calls.fetch_add(1, Ordering::SeqCst);
                if call < 2 { Err(Failure::Flaky) } else { Ok(call) }
            })
            .await;
        assert_eq!(result, Ok(2));
    }

    #[tokio::test]
    async fn permanent_failures_are_not_retried() {
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = quick()
            .run(|| async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(Failure::Fatal)
            })
            .await;
        assert_eq!((result, calls.load(Ordering::SeqCst)), (Err(Failure::Fatal), 1));
    }

    #[tokio::test]
    async fn slow_attempts_time_out_and_give_up_after_the_last_attempt() {
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = quick()
            .run(|| async {
                calls.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(())
            })
            .await;
        assert_eq!(
            (result, calls.load(Ordering::SeqCst)),
            (Err(Failure::TimedOut), 3)
        );
    }
}
