//! Waiting for a change: a GET that the server holds while its answer is
//! the one the client has, so that a follower (a policy-engine fed by a
//! graph-builder or another engine) learns of a new revision as soon as
//! its upstream has it, without polling every few seconds.
//!
//! The client names the entity tag it holds in the query parameter
//! [`PARAMETER`] (as the `ETag` field gave it, quotes included) and, as
//! usual, sends it in `If-None-Match`. A server that knows the parameter
//! answers as soon as its answer's tag differs, or after [`WAIT`] with the
//! answer it has (a 304, given the `If-None-Match`); either way its answer
//! carries [`HEADER`]. A server that does not know the parameter ignores
//! it, as upstream's services and older ones ignore unknown parameters, and
//! answers at once without the field: the client then knows to fall back
//! to polling on its interval.

use std::future::Future;
use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::http::header::{HeaderName, HeaderValue};
use tokio::sync::watch;

use crate::conditional::if_none_match_matches;
use crate::query::QueryParameters;

/// The query parameter naming the entity tag the client has.
pub const PARAMETER: &str = "wait_for_change";

/// The response field of a server that waited (or would have): its value is
/// [`WAIT`] in seconds.
pub const HEADER: &str = "cincinnati-wait-for-change";

/// The longest a request is held: under the 30 s a proxy commonly allows
/// an answer (the OpenShift router's default `timeout server`), so a
/// follower behind a route does not see its waits cut as errors. An idle
/// follower asks once per this.
pub const WAIT: Duration = Duration::from_secs(25);

/// The entity tag a request of `query` asks to wait on, if it names one.
pub fn requested(query: &QueryParameters<'_>) -> Option<String> {
    query
        .get(PARAMETER)
        .filter(|tag| !tag.is_empty())
        .map(str::to_owned)
}

/// Marks `response` as the answer of a server that waits.
pub fn mark(mut response: HttpResponse) -> HttpResponse {
    response
        .headers_mut()
        .insert(HeaderName::from_static(HEADER), HeaderValue::from(WAIT.as_secs()));
    response
}

/// Whether a response with these fields came from a server that waits.
pub fn is_marked(headers: &actix_web::http::header::HeaderMap) -> bool {
    headers.contains_key(HEADER)
}

/// Answers once the answer's tag differs from `named`, or after `wait`, or
/// once `stopping` resolves (a server shutting down does not wait for held
/// requests): `answer` gives the answer and its tag, and is asked again
/// each time `changes` says something changed. Answers are never held
/// longer than `wait`, and the answer given is the current one.
pub async fn hold<T, E, F, Fut>(
    named: &str,
    wait: Duration,
    mut changes: watch::Receiver<u64>,
    stopping: impl Future<Output = ()>,
    mut answer: F,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(T, String), E>>,
{
    let deadline = tokio::time::Instant::now() + wait;
    let mut stopping = std::pin::pin!(stopping);
    loop {
        // Seen before the answer is made: a change after it wakes the wait.
        changes.borrow_and_update();
        let (value, tag) = answer().await?;
        if !if_none_match_matches(&[named], &tag) {
            return Ok(value);
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return Ok(value) },
            () = tokio::time::sleep_until(deadline) => return Ok(value),
            () = &mut stopping => return Ok(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn the_named_tag_is_read_from_the_query_and_an_empty_one_is_none() {
        let requested = |query| requested(&QueryParameters::parse(query));
        assert_eq!(
            requested("channel=a&wait_for_change=%22abc-gzip%22").as_deref(),
            Some("\"abc-gzip\"")
        );
        assert_eq!(requested("channel=a&wait_for_change="), None);
        assert_eq!(requested("channel=a"), None);
    }

    /// An answer whose tag is `"v{n}"`, n the changes so far.
    fn versioned(
        version: Arc<AtomicUsize>,
    ) -> impl FnMut() -> std::future::Ready<Result<(usize, String), ()>> {
        move || {
            let now = version.load(Ordering::SeqCst);
            std::future::ready(Ok((now, format!("\"v{now}\""))))
        }
    }

    #[tokio::test]
    async fn a_different_tag_is_answered_at_once() {
        let (_changes, receiver) = watch::channel(0);
        let version = Arc::new(AtomicUsize::new(1));
        // A wait that would outlast the test: only an answer at once passes.
        let answer = hold(
            "\"v0\"",
            Duration::from_secs(3600),
            receiver,
            std::future::pending(),
            versioned(version.clone()),
        );
        assert_eq!(answer.await, Ok(1));
    }

    #[tokio::test]
    async fn the_same_tag_is_held_until_a_change_makes_another() {
        let (changes, receiver) = watch::channel(0);
        let version = Arc::new(AtomicUsize::new(0));
        let held = tokio::spawn(hold(
            "\"v0\"",
            Duration::from_secs(3600),
            receiver,
            std::future::pending(),
            versioned(version.clone()),
        ));
        // A change that leaves the answer as it was keeps it held.
        changes.send_modify(|count| *count += 1);
        tokio::task::yield_now().await;
        assert!(!held.is_finished());
        version.store(2, Ordering::SeqCst);
        changes.send_modify(|count| *count += 1);
        assert_eq!(held.await.unwrap(), Ok(2));
    }

    #[tokio::test(start_paused = true)]
    async fn after_the_wait_the_unchanged_answer_is_given() {
        let (_changes, receiver) = watch::channel(0);
        let version = Arc::new(AtomicUsize::new(0));
        let answer = hold(
            "W/\"v0\"",
            WAIT,
            receiver,
            std::future::pending(),
            versioned(version.clone()),
        );
        assert_eq!(answer.await, Ok(0));
    }

    #[tokio::test]
    async fn a_stopping_server_answers_at_once() {
        let (_changes, receiver) = watch::channel(0);
        let version = Arc::new(AtomicUsize::new(0));
        let answer = hold(
            "\"v0\"",
            Duration::from_secs(3600),
            receiver,
            std::future::ready(()),
            versioned(version.clone()),
        );
        assert_eq!(answer.await, Ok(0));
    }
}
