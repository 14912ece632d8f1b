//! `GET {prefix}/graph`: negotiate, validate, answer prepared bytes; with
//! `wait_for_change`, once the answer differs from the one named
//! (`http_answers::wait`).

use std::sync::Arc;
use std::time::Instant;

use actix_web::{HttpRequest, HttpResponse, web};
use http_answers::{CachePolicy, HttpError, MediaTypes, wait};
use tracing::Instrument as _;

use crate::engine::Engine;
use crate::query::{Arch, Channel, ClientQuery};

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
    let waiting_on = wait::requested(request.query_string());
    // A held request takes as long as the upstream stays the same.
    let _timer = waiting_on.is_none().then(|| metrics.serve_duration.start_timer());
    let content_type = MediaTypes::POLICY_ENGINE.negotiate_request(&request)?;
    let query = ClientQuery::parse(request.query_string(), engine.rules())?;
    let engine: Arc<Engine> = engine.into_inner();
    // Validated values only: a made-up parameter never reaches a trace.
    let span = tracing::info_span!(
        "graph answer",
        channel = query.channel.as_ref().map(Channel::as_str),
        arch = query.arch.as_ref().map(Arch::as_str),
    );
    let answered = match &waiting_on {
        None => engine.answer(query, arrived).instrument(span).await?,
        Some(named) => {
            let changes = engine.feeds().changes();
            let answer = || async {
                let answered = engine
                    .answer(query.clone(), arrived)
                    .instrument(span.clone())
                    .await?;
                let tag = answered.body.entity_tag_for(&request, content_type);
                Ok::<_, HttpError>((answered, tag))
            };
            wait::hold(named, wait::WAIT, changes, engine.stopping(), answer).await?
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
