//! The client API's routes: `{prefix}/graph` and `{prefix}/v1/graph`
//! (negotiate, validate, answer prepared bytes; with `wait_for_change`,
//! once the answer differs from the one named, `http_answers::wait`), and
//! `{prefix}/openapi`, `{prefix}/v1/openapi`.
//!
//! A graph request whose answer is at hand (see [`Engine::answer_at_hand`])
//! is answered from its head, beside actix-web (see [`at_hand`]): the same
//! answer, a third of the work.

use std::sync::Arc;
use std::time::Instant;

use actix_web::dev::RequestHead;
use actix_web::http::Method;
use actix_web::http::header::HeaderName;
use actix_web::{HttpRequest, HttpResponse, web};
use cincinnati_client::fetch::QUESTION_HEADER;
use http_answers::query::QueryParameters;
use http_answers::routes::get_or_head;
use http_answers::{CachePolicy, HttpError, MediaTypes, PathPrefix, RequestFields, wait};
use service_kit::server::Prepared;
use tracing::Instrument as _;

use crate::openapi::{self, OpenApiDocument};

use crate::client::engine::{Answered, Asker, Engine};
use crate::client::query::{Arch, Channel, ClientQuery};

/// The header naming a question (not a cluster's check), its name parsed
/// once rather than on every request.
static QUESTION: HeaderName = HeaderName::from_static(QUESTION_HEADER);

pub async fn graph(
    request: HttpRequest,
    engine: web::Data<Engine>,
    caching: web::Data<CachePolicy>,
) -> Result<HttpResponse, HttpError> {
    let arrived = Instant::now();
    let metrics = engine.metrics();
    // The route's path, which any other spelling of it (`gr%61ph`) that
    // actix-web routes here is decoded to: strangers choose paths, and
    // every label kept is memory.
    metrics
        .incoming_requests
        .with_label_values(&[request.match_info().as_str()])
        .inc();
    let parameters = QueryParameters::parse(request.query_string());
    let waiting_on = wait::requested(&parameters);
    // A held request takes as long as the upstream stays the same.
    let _timer = waiting_on.is_none().then(|| metrics.serve_duration.start_timer());
    let content_type = MediaTypes::POLICY_ENGINE.negotiate_request(&request)?;
    let query = ClientQuery::from_parameters(&parameters, engine.rules())?;
    let asker = asker(&request);
    let engine: Arc<Engine> = engine.into_inner();
    // Validated values only: a made-up parameter never reaches a trace.
    let span = tracing::info_span!(
        "graph answer",
        channel = query.channel.as_ref().map(Channel::as_str),
        arch = query.arch.as_ref().map(Arch::as_str),
    );
    let answered = match &waiting_on {
        None => engine.answer(query, asker, arrived).instrument(span).await?,
        Some(named) => {
            let changes = engine.feeds().changes();
            let answer = || async {
                let answered = engine
                    .answer(query.clone(), asker, arrived)
                    .instrument(span.clone())
                    .await?;
                let tag = answered.body.entity_tag_for(&request, content_type);
                Ok::<_, HttpError>((answered, tag))
            };
            // Boxed: held requests are few, and every request's future
            // would otherwise carry a held one's state.
            Box::pin(wait::hold(named, wait::WAIT, changes, engine.stopping(), answer)).await?
        }
    };
    let response = respond(&answered, &request, content_type, &caching, &engine);
    Ok(match waiting_on {
        Some(_) => wait::mark(response),
        None => response,
    })
}

/// [`graph`]'s answer to a request whose answer is at hand, from its head
/// alone; `None` for any other (another path or spelling of it, another
/// method, a request held for a change, an error to answer), which goes
/// to [`graph`]. Equal to [`graph`]'s answer, field for field (an API test
/// holds it to it, over many requests), and counted as it counts.
fn graph_at_hand(
    head: &RequestHead,
    paths: &[String; 2],
    engine: &Engine,
    caching: &CachePolicy,
) -> Option<Prepared> {
    let started = Instant::now();
    let path = head.uri.path();
    if !matches!(head.method, Method::GET | Method::HEAD) || !paths.iter().any(|graph| graph == path) {
        return None;
    }
    let parameters = QueryParameters::parse(head.uri.query().unwrap_or_default());
    if wait::requested(&parameters).is_some() {
        return None;
    }
    let content_type = MediaTypes::POLICY_ENGINE.negotiate_request(head).ok()?;
    let query = ClientQuery::from_parameters(&parameters, engine.rules()).ok()?;
    let prepared = engine.answer_at_hand(query, asker(head), |answered| {
        caching_of(answered, caching, |caching| {
            answered
                .body
                .prepared(head, content_type, caching, engine.identities())
        })
    })?;
    let metrics = engine.metrics();
    metrics.incoming_requests.with_label_values(&[path]).inc();
    metrics.answers_at_hand.inc();
    metrics.serve_duration.observe(started.elapsed().as_secs_f64());
    Some(prepared)
}

/// Who asks `request`: a person or tool when it names a question.
fn asker(request: &impl RequestFields) -> Asker {
    if request.headers().contains_key(&QUESTION) {
        Asker::Question
    } else {
        Asker::Cluster
    }
}

/// `answered` as `request` takes it.
fn respond(
    answered: &Answered,
    request: &impl RequestFields,
    content_type: &'static str,
    caching: &CachePolicy,
    engine: &Engine,
) -> HttpResponse {
    caching_of(answered, caching, |caching| {
        answered
            .body
            .respond_cached(request, content_type, caching, engine.identities())
    })
}

/// What `respond` makes with the cache policy of `answered`, `caching`
/// unless its policy class changes sooner: it is not cached beyond that.
fn caching_of<T>(answered: &Answered, caching: &CachePolicy, respond: impl FnOnce(&CachePolicy) -> T) -> T {
    let sooner = answered.expires_sooner.map(CachePolicy::revalidate_after);
    respond(sooner.as_ref().unwrap_or(caching))
}

/// The graph requests of the routes under `prefix` whose answers are at
/// hand, answered beside the app (see
/// `service_kit::server::ApiServer::answers_at_hand`).
pub fn at_hand(
    prefix: &PathPrefix,
    engine: Arc<Engine>,
    caching: CachePolicy,
) -> impl Fn(&RequestHead) -> Option<Prepared> + Send + Sync + 'static {
    let paths = GRAPH_PATHS.map(|path| prefix.join(path));
    move |head| graph_at_hand(head, &paths, &engine, &caching)
}

/// The graph routes' paths under a prefix.
const GRAPH_PATHS: [&str; 2] = ["/graph", "/v1/graph"];

/// The API routes under `prefix`, as [`openapi`] documents them, with what
/// their handlers read.
pub fn configure(
    prefix: PathPrefix,
    engine: Arc<Engine>,
    openapi: OpenApiDocument,
    caching: CachePolicy,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static {
    let engine = web::Data::from(engine);
    let openapi = web::Data::new(openapi);
    let caching = web::Data::new(caching);
    move |config| {
        config
            .app_data(engine.clone())
            .app_data(openapi.clone())
            .app_data(caching.clone());
        for path in GRAPH_PATHS {
            config.service(get_or_head(&prefix.join(path), graph));
        }
        for path in ["/openapi", "/v1/openapi"] {
            config.service(get_or_head(&prefix.join(path), openapi::openapi));
        }
    }
}
