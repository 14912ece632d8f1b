//! A request whose answer is not computed yet revalidates the upstream
//! first, so a new answer comes from the upstream's graph as of the request;
//! a computed answer costs no upstream request. Concurrent misses share one
//! upstream request, wait for it only briefly, and a failing upstream never
//! fails them.

use std::time::Duration;

use policy_engine::Settings;

use crate::support::app::{Answer, TestApp, settings, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, fixture, other_fixture};

const ANSWERED: &str = "/graph?channel=stable-4.3";
/// The releases of [`ANSWERED`] under a key not answered yet.
const NEW_KEY: &str = "/graph?channel=stable-4.3&arch=amd64";
const INCOMING: &str = "cincinnati_pe_graph_incoming_requests_total{uri_path=\"/graph\"}";

/// No background refresh during a test: every upstream request after the
/// first is a request's.
fn without_background_refreshes(upstream: &FakeUpstream) -> Settings {
    let mut settings = settings(&upstream.url());
    settings.upstream.cincinnati.interval_secs = 3600;
    settings
}

/// An engine with `settings` that has answered [`ANSWERED`].
async fn engine_with_an_answer(settings: Settings) -> (TestApp, Answer) {
    let app = spawn_ready(settings).await;
    let answer = app.get(ANSWERED).await;
    assert_eq!(answer.status, 200);
    (app, answer)
}

#[tokio::test]
async fn a_new_answer_comes_from_the_graph_the_upstream_has_now() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let (app, old) = engine_with_an_answer(without_background_refreshes(&upstream)).await;
    upstream.set(Behaviour::Graph(other_fixture()));
    let before = upstream.requests().len();

    let cached = app.get(ANSWERED).await;
    assert_eq!(cached.body, old.body);
    assert_eq!(
        upstream.requests().len(),
        before,
        "a computed answer costs no upstream request"
    );

    let new = app.get(NEW_KEY).await;
    let requests = upstream.requests();
    assert_eq!(requests.len(), before + 1, "one revalidation");
    assert!(requests[before].if_none_match.is_some(), "a conditional GET");
    assert_eq!(requests[before].status, Some(200), "the graph changed");
    let reference_upstream = FakeUpstream::start(Behaviour::Graph(other_fixture())).await;
    let reference = spawn_ready(settings(&reference_upstream.url())).await;
    assert_eq!(new.body, reference.get(NEW_KEY).await.body);
    assert_ne!(new.body, old.body);
}

/// A miss while the upstream fails answers from the last good graph, and
/// the failure shows as a failed background refresh does.
async fn a_miss_survives(break_upstream: impl AsyncFnOnce(&mut FakeUpstream), error_mentions: &str) {
    let mut upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let (app, answered) = engine_with_an_answer(without_background_refreshes(&upstream)).await;
    break_upstream(&mut upstream).await;

    let new = app.get(NEW_KEY).await;
    assert_eq!(new.status, 200);
    assert_eq!(
        new.body, answered.body,
        "the same releases, from the last good graph"
    );
    let status = app.status_document().await;
    let feed = &status.client.feeds[0];
    assert!(feed.freshness.is_stale());
    let message = feed.freshness.last_error().unwrap().message.as_str();
    assert!(message.contains(error_mentions), "{message}");
    assert_eq!(app.metric("cincinnati_pe_http_upstream_errors_total").await, 1.0);
    assert_eq!(app.metric("cincinnati_pe_upstream_stale").await, 1.0);
}

#[tokio::test]
async fn a_miss_while_the_upstream_errs_answers_from_the_last_good_graph() {
    a_miss_survives(
        async |upstream| upstream.set(Behaviour::Status(500)),
        "500 Internal Server Error",
    )
    .await;
}

#[tokio::test]
async fn a_miss_while_the_upstream_is_down_answers_from_the_last_good_graph() {
    a_miss_survives(async |upstream| upstream.stop().await, "connect").await;
}

#[tokio::test]
async fn concurrent_misses_share_one_upstream_request() {
    const MISSES: usize = 20;
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut settings = without_background_refreshes(&upstream);
    // Made-up channels are answered but not kept: every request for one misses.
    settings.upstream.cincinnati.max_answers = 1;
    // The held fetch must outlast a slow machine's twenty arrivals.
    settings.upstream.cincinnati.timeout_secs = 60;
    let (app, _) = engine_with_an_answer(settings).await;
    let before = upstream.requests().len();

    upstream.hold();
    let paths: Vec<String> = (0..MISSES)
        .map(|n| format!("/graph?channel=made-up-{n}"))
        .collect();
    let misses = futures::future::join_all(paths.iter().map(|path| app.get(path)));
    let release_once_all_arrived = async {
        eventually("every miss arrived", Duration::from_secs(10), || async {
            app.metric(INCOMING).await == (1 + MISSES) as f64
        })
        .await;
        upstream.release();
    };
    let (answers, ()) = tokio::join!(misses, release_once_all_arrived);

    assert!(answers.iter().all(|answer| answer.status == 200));
    let requests = upstream.requests();
    assert_eq!(
        requests.len() - before,
        1,
        "the misses that arrived while it was in flight share it: {requests:?}"
    );
}

#[tokio::test]
async fn a_miss_waits_for_a_slow_upstream_only_briefly() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut settings = without_background_refreshes(&upstream);
    settings.upstream.cincinnati.timeout_secs = 60;
    let (app, answered) = engine_with_an_answer(settings).await;

    upstream.hold();
    let new = app.get(NEW_KEY).await;
    assert_eq!(new.status, 200);
    assert_eq!(new.body, answered.body);
    let pending = upstream.requests().last().unwrap().status;
    assert_eq!(pending, None, "the revalidation goes on without the request");
    upstream.release();
}
