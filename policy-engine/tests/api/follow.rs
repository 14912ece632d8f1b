//! Following the upstream: an engine asks its upstream to hold a fetch until
//! the graph changes (`wait_for_change`), so a chained engine learns of a new
//! revision without waiting for its interval; an upstream that answers
//! without holding (upstream's services, the fake here) is polled instead.

use std::time::Duration;

use crate::support::app::{TestApp, settings, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{eventually, fixture, other_fixture};

/// Answered differently from [`fixture`] and [`other_fixture`].
const ANSWERED: &str = "/graph?channel=stable-4.3";
const INCOMING: &str = "cincinnati_pe_graph_incoming_requests_total{uri_path=\"/graph\"}";

/// An engine on `upstream` that follows it, and whose rounds would not run
/// again within a test.
async fn following(upstream: &str) -> TestApp {
    let mut settings = settings(upstream);
    settings.upstream.cincinnati.interval_secs = 3600;
    settings.upstream.cincinnati.wait_for_change = true;
    spawn_ready(settings).await
}

#[tokio::test]
async fn a_chained_engine_learns_a_new_upstream_revision_without_waiting_for_its_interval() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let a = spawn_ready(settings(&upstream.url())).await;
    let b = following(&a.url("/graph")).await;
    let old = b.get(ANSWERED).await;
    assert_eq!(old.status, 200);

    upstream.set(Behaviour::Graph(other_fixture()));
    eventually("a's new revision at b", Duration::from_secs(60), || async {
        let new = a.get(ANSWERED).await;
        new.body != old.body && b.get(ANSWERED).await.body == new.body
    })
    .await;
}

#[tokio::test]
async fn a_request_waiting_for_a_change_is_answered_with_the_new_answer() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let a = spawn_ready(settings(&upstream.url())).await;
    let old = a.get(ANSWERED).await;
    let etag = old.header("etag").unwrap().to_owned();

    let before = a.metric(INCOMING).await;
    let waiting = {
        let request = a
            .client()
            .get(a.url(ANSWERED))
            .query(&[("wait_for_change", etag.as_str())])
            .header("if-none-match", etag.as_str());
        tokio::spawn(request.send())
    };
    // Only once the engine holds the request does the upstream change: an
    // answer at once would be a 304.
    eventually("the request arrived", Duration::from_secs(60), || async {
        a.metric(INCOMING).await > before
    })
    .await;
    upstream.set(Behaviour::Graph(other_fixture()));
    let answer = waiting.await.unwrap().unwrap();
    assert_eq!(answer.status(), 200);
    assert_ne!(answer.headers()["etag"], etag.as_str());
    assert_eq!(answer.headers()["cincinnati-wait-for-change"], "25");
}

#[tokio::test]
async fn an_upstream_that_does_not_wait_is_polled_every_interval() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let mut settings = settings(&upstream.url());
    settings.upstream.cincinnati.wait_for_change = true;
    let app = spawn_ready(settings).await;
    let old = app.get(ANSWERED).await;
    let asked_to_wait = || {
        upstream
            .requests()
            .iter()
            .filter(|request| request.query.contains("wait_for_change="))
            .count()
    };
    eventually("the engine asked to wait", Duration::from_secs(60), || async {
        asked_to_wait() == 1
    })
    .await;

    upstream.set(Behaviour::Graph(other_fixture()));
    eventually("the change, by polling", Duration::from_secs(60), || async {
        app.get(ANSWERED).await.body != old.body
    })
    .await;
    // Rounds went on every interval; the engine did not ask to wait again.
    let polled = upstream.requests().len();
    eventually("more rounds", Duration::from_secs(60), || async {
        upstream.requests().len() >= polled + 2
    })
    .await;
    assert_eq!(asked_to_wait(), 1);
    let status = app.status_document().await;
    assert!(
        status.client.feeds.iter().all(|feed| !feed.followed),
        "{status:?}"
    );
}

/// The last round of `app`'s background upstream task, as `/status` says.
async fn last_round(app: &TestApp) -> Option<String> {
    let status = app.status_document().await;
    let task = status
        .tasks
        .into_iter()
        .find(|task| task.name == "upstream refresh");
    task.and_then(|task| task.last_round)
}

#[tokio::test]
async fn a_feed_its_upstream_holds_is_left_alone_by_the_rounds() {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let a = spawn_ready(settings(&upstream.url())).await;
    // Rounds every second.
    let mut settings = settings(&a.url("/graph"));
    settings.upstream.cincinnati.wait_for_change = true;
    let b = spawn_ready(settings).await;
    assert_eq!(b.get(ANSWERED).await.status, 200);
    let requests = "cincinnati_pe_http_upstream_requests_total";
    // Once a held fetch came back (after up to one hold), three rounds send
    // nothing: at most the next hold's end falls among them.
    eventually(
        "three rounds without fetches",
        Duration::from_secs(120),
        || async {
            let before = b.metric(requests).await;
            let mut rounds = vec![last_round(&b).await];
            while rounds.len() < 4 {
                let round = last_round(&b).await;
                if !rounds.contains(&round) {
                    rounds.push(round);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            b.metric(requests).await - before <= 1.0
        },
    )
    .await;
    let status = b.status_document().await;
    assert!(status.client.feeds.iter().all(|feed| feed.followed), "{status:?}");
}
