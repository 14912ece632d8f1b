//! Answers at hand (`service.answers_at_hand`, on by default): a graph
//! request whose answer is made already is answered from its head, beside
//! actix-web. The promise is that nothing a client or an operator sees
//! changes: the same requests, sent to an engine with them and to one
//! without, get the same status, header fields (but `Date`) and bytes, and
//! leave the same counts in `/metrics`. Requests are drawn (seeded) from
//! paths, spellings of them, parameters (cluster ids of policy groups and
//! of places before and past a rollout's), media types, encodings, entity
//! tags, origins and methods, each sent twice: the second finds its answer
//! made. Engines filter as by default, prune to a cluster's updates, or
//! classify clusters by a policy with a rollout under way and record their
//! checks.

use std::time::Duration;

use cincinnati_client::fleet::FleetCluster;
use policy_engine::settings::Settings;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore as _, SeedableRng as _};
use reqwest::Method;

use crate::support::app::{Answer, TestApp, settings, spawn_ready};
use crate::support::upstream::{Behaviour, FakeUpstream};
use crate::support::{fixture, hours_ago};
use crate::version_prune::pruning;

/// Requests drawn per pair of engines.
const REQUESTS: usize = 300;

const PATHS: &[&str] = &["/graph", "/v1/graph", "/gr%61ph", "/v1/graph/", "/openapi"];
/// Each parameter's values; a request has one of them or none.
const PARAMETERS: &[&[&str]] = &[
    &[
        "channel=stable-4.6",
        "channel=stable-4.6",
        "channel=fast-4.6",
        "channel=no-such-channel",
        "channel=a%20b",
    ],
    &["arch=amd64", "arch=s390x", "arch=not-an-arch"],
    &[
        "version=4.6.1",
        "version=4.5.4",
        "version=4.6.1+amd64",
        "version=not-a-version",
    ],
    &[
        "id=01234567-89ab-cdef-0123-456789abcdef",
        "id=11111111-2222-4333-8444-555555555555",
        "id=AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE",
        "id=00000003-7a1e-4c0d-9e55-0123456789ab",
        "id=00000009-7a1e-4c0d-9e55-0123456789ab",
        "id=not-an-id",
    ],
    &["unknown=1", "channel=fast-4.6"],
];
const ACCEPT: &[Option<&str>] = &[
    None,
    Some("application/json"),
    Some("application/vnd.redhat.cincinnati.v1+json"),
    Some("text/html"),
    Some("text/html, */*;q=0.1"),
];
const ACCEPT_ENCODING: &[Option<&str>] = &[None, Some("gzip"), Some("gzip;q=0"), Some("br, gzip")];
const ORIGIN: &[Option<&str>] = &[None, None, Some("https://console.example.com")];
const QUESTION: &[Option<&str>] = &[None, None, Some("why")];

#[tokio::test]
async fn an_answer_at_hand_is_the_answer_the_app_gives() {
    answers_match(|_, _| {}, 1).await;
}

#[tokio::test]
async fn an_answer_at_hand_is_the_answer_the_app_gives_when_version_prune_keys_answers() {
    answers_match(
        |settings, _| settings.policy = pruning(&["channel-filter", "arch-filter"], "updates"),
        2,
    )
    .await;
}

/// Two groups (one deferred and capped, one not), a cluster in each, and
/// a rollout of stable-4.6's newest release half way through.
const POLICY: &str = "\
groups:
  production:
    deferral_days: 1
    max_version: 4.6.40
  canary: {}
clusters:
  11111111-2222-4333-8444-555555555555: [production]
  AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE: [canary]
";

#[tokio::test]
async fn an_answer_at_hand_is_the_answer_the_app_gives_under_a_cluster_policy() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let rollout = format!(
        "rollouts:\n  - {{target: 4.6.48, start: \"{}\", duration_hours: 10000}}\n",
        hours_ago(5000.0)
    );
    for dir in &dirs {
        std::fs::write(dir.path().join("policy.yaml"), format!("{POLICY}{rollout}")).unwrap();
    }
    answers_match(
        |settings, engine| {
            let dir = dirs[engine].path();
            settings.cluster_policy.file = Some(dir.join("policy.yaml"));
            settings.fleet.store = Some(
                format!("sqlite://{}", dir.join("fleet.db").display())
                    .parse()
                    .unwrap(),
            );
        },
        3,
    )
    .await;
}

/// Sends the same drawn requests (seed `seed`) to an engine with answers
/// at hand and to one without, both set up by `configure` (told which
/// engine it sets up, 0 or 1), and compares.
async fn answers_match(configure: impl Fn(&mut Settings, usize), seed: u64) {
    let upstream = FakeUpstream::start(Behaviour::Graph(fixture())).await;
    let engine = |at_hand: bool| {
        let mut settings = settings(&upstream.url());
        configure(&mut settings, usize::from(at_hand));
        settings.service.answers_at_hand = at_hand;
        spawn_ready(settings)
    };
    let (with, without) = (engine(true).await, engine(false).await);
    let tags = entity_tags(&without).await;
    assert_eq!(entity_tags(&with).await, tags);
    let mut random = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..REQUESTS {
        let request = Drawn::draw(&mut random, &tags);
        for _ in 0..2 {
            let (at_hand, app) = (request.send(&with).await, request.send(&without).await);
            assert_eq!(at_hand.status, app.status, "{request:?}");
            assert_eq!(fields(&at_hand), fields(&app), "{request:?}");
            assert_eq!(at_hand.body, app.body, "{request:?}");
        }
    }
    const AT_HAND: &str = "cincinnati_pe_graph_answers_at_hand_total";
    assert!(
        with.metric(AT_HAND).await > (REQUESTS / 10) as f64,
        "answers made were answered at hand"
    );
    assert_eq!(without.metric(AT_HAND).await, 0.0);
    let counted = counts(&with).await;
    assert_eq!(counted, counts(&without).await);
    let records = recorded(&with).await;
    assert_eq!(records, recorded(&without).await);
    assert!(
        records.is_empty() || records.iter().any(Option::is_some),
        "a fleet records checks answered at hand"
    );
    // Every spelling of a route's path counted as the route's.
    let paths = counted
        .iter()
        .filter_map(|line| line.strip_prefix("cincinnati_pe_graph_incoming_requests_total{uri_path=\""))
        .map(|line| line.split('"').next().unwrap())
        .collect::<Vec<_>>();
    assert_eq!(paths, ["/graph", "/v1/graph"]);
}

/// A request drawn from the lists above.
#[derive(Debug)]
struct Drawn {
    method: Method,
    path_and_query: String,
    headers: Vec<(&'static str, String)>,
}

impl Drawn {
    fn draw(random: &mut ChaCha8Rng, tags: &[String]) -> Self {
        let mut pick = |len: usize| random.next_u32() as usize % len;
        let path = PATHS[pick(PATHS.len())];
        let parameters: Vec<&str> = PARAMETERS
            .iter()
            .filter_map(|values| values.get(pick(values.len() * 3 / 2)).copied())
            .collect();
        let mut headers = Vec::new();
        let mut optional = |name, values: &[Option<&str>], pick: usize| {
            if let Some(value) = values[pick] {
                headers.push((name, value.to_owned()));
            }
        };
        optional("accept", ACCEPT, pick(ACCEPT.len()));
        optional("accept-encoding", ACCEPT_ENCODING, pick(ACCEPT_ENCODING.len()));
        optional("origin", ORIGIN, pick(ORIGIN.len()));
        optional("cincinnati-question", QUESTION, pick(QUESTION.len()));
        // An entity tag of an answer, `*`, or none.
        match pick(tags.len() + 3) {
            index if index < tags.len() => headers.push(("if-none-match", tags[index].clone())),
            index if index == tags.len() => headers.push(("if-none-match", "*".to_owned())),
            _ => {}
        }
        let method = if pick(4) == 0 { Method::HEAD } else { Method::GET };
        Self {
            method,
            path_and_query: format!("{path}?{}", parameters.join("&")),
            headers,
        }
    }

    async fn send(&self, app: &TestApp) -> Answer {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .collect();
        let request = app
            .client()
            .request(self.method.clone(), app.url(&self.path_and_query));
        app.send(request, &headers).await
    }
}

/// The entity tags of a few answers, identity and gzip, for
/// `If-None-Match`.
async fn entity_tags(app: &TestApp) -> Vec<String> {
    let mut tags = Vec::new();
    for query in ["channel=stable-4.6", "channel=fast-4.6&arch=amd64"] {
        for encoding in ["identity", "gzip"] {
            let answer = app
                .get_with(
                    &format!("/graph?{query}"),
                    &[("accept", "application/json"), ("accept-encoding", encoding)],
                )
                .await;
            tags.push(answer.header("etag").expect("an answer has an ETag").to_owned());
        }
    }
    tags
}

/// The header fields of `answer`, but `Date`, sorted: actix-web's header
/// map keeps no order (nor does HTTP between fields of other names).
fn fields(answer: &Answer) -> Vec<(String, String)> {
    let mut fields: Vec<_> = answer
        .headers
        .iter()
        .filter(|(name, _)| *name != "date")
        .map(|(name, value)| {
            (
                name.to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    fields.sort();
    fields
}

/// What an engine's fleet holds of each cluster asked about (the channel,
/// arch and version of its last check), once its recorder holds no check
/// waiting; nothing without a fleet. (How many checks it wrote depends on
/// how they fell into batches, which coalesce a cluster's checks.)
async fn recorded(app: &TestApp) -> Vec<Option<(String, String, String)>> {
    loop {
        let Some(fleet) = app.status_document().await.fleet else {
            return Vec::new();
        };
        if fleet.recorder.queued == 0 && fleet.recorder.retrying == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut records = Vec::new();
    let ids = PARAMETERS
        .iter()
        .flat_map(|values| values.iter())
        .filter_map(|parameter| parameter.strip_prefix("id="));
    for id in ids {
        let answer = app.status_get(&format!("/v1/fleet/clusters/{id}")).await;
        records.push((answer.status == 200).then(|| {
            let cluster: FleetCluster = answer.parse();
            (cluster.channel, cluster.arch, cluster.version)
        }));
    }
    records
}

/// The counts an engine keeps of graph requests and its answers, as
/// `/metrics` says them, waited for until two reads agree (a request's
/// counts are taken as it is answered).
async fn counts(app: &TestApp) -> Vec<String> {
    const COUNTED: &[&str] = &[
        "cincinnati_pe_graph_incoming_requests_total",
        "cincinnati_pe_graph_cache_hits_total",
        "cincinnati_pe_graph_cache_misses_total",
        "cincinnati_pe_graph_serve_duration_seconds_count",
        "cincinnati_pe_graph_response_errors_total",
        "cincinnati_pe_fleet_checks_total",
    ];
    let read = || async {
        app.metrics()
            .await
            .lines()
            .filter(|line| COUNTED.iter().any(|counted| line.starts_with(counted)))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let mut last = read().await;
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = read().await;
        if now == last {
            return now;
        }
        last = now;
    }
}
