//! The client API's routes: `{prefix}/graph` and `{prefix}/v1/graph`
//! (negotiate, validate, answer prepared bytes; with `wait_for_change`,
//! once the answer differs from the one named, `http_answers::wait`), and
//! `{prefix}/openapi`, `{prefix}/v1/openapi`.

use std::sync::Arc;
use std::time::Instant;

use actix_web::http::header::HeaderName;
use actix_web::{HttpRequest, HttpResponse, web};
use cincinnati_client::fetch::QUESTION_HEADER;
use http_answers::query::QueryParameters;
use http_answers::routes::get_or_head;
use http_answers::{CachePolicy, HttpError, MediaTypes, PathPrefix, wait};
use tracing::Instrument as _;

use crate::openapi::{self, OpenApiDocument};

use crate::client::engine::{Asker, Engine};
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
    metrics
        .incoming_requests
        .with_label_values(&[request.path()])
        .inc();
    let parameters = QueryParameters::parse(request.query_string());
    let waiting_on = wait::requested(&parameters);
    // A held request takes as long as the upstream stays the same.
    let _timer = waiting_on.is_none().then(|| metrics.serve_duration.start_timer());
    let content_type = MediaTypes::POLICY_ENGINE.negotiate_request(&request)?;
    let query = ClientQuery::from_parameters(&parameters, engine.rules())?;
    let asker = if request.headers().contains_key(&QUESTION) {
        Asker::Question
    } else {
        Asker::Cluster
    };
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
    // An answer whose policy class changes soon must not be cached beyond that.
    let sooner = answered.expires_sooner.map(CachePolicy::revalidate_after);
    let caching = sooner.as_ref().unwrap_or(&caching);
    let response = answered
        .body
        .respond_cached(&request, content_type, caching, engine.identities());
    Ok(match waiting_on {
        Some(_) => wait::mark(response),
        None => response,
    })
}

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
        for path in ["/graph", "/v1/graph"] {
            config.service(get_or_head(&prefix.join(path), graph));
        }
        for path in ["/openapi", "/v1/openapi"] {
            config.service(get_or_head(&prefix.join(path), openapi::openapi));
        }
    }
}
