//! The graph-builder's routes: the Graph API (`{prefix}/graph`,
//! `{prefix}/v1/graph`) and, on the public port, the graph-data in use
//! (`{prefix}/graph-data`). The servers around them, and the status server,
//! come from the service skeleton.

use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use cincinnati_core::{ApiError, ErrorKind};
use http_answers::conditional::respond_tagged;
use http_answers::query::{QueryParameters, RequiredParameters};
use http_answers::routes::get_or_head;
use http_answers::wait;
use http_answers::{CachePolicy, HttpError, MediaTypes, PathPrefix};
use service_kit::shutdown::StopHandle;

use crate::metrics::Metrics;
use crate::state::State;

/// What the handlers read.
pub struct ApiContext {
    pub state: Arc<State>,
    pub metrics: Metrics,
    pub required: RequiredParameters,
    pub caching: CachePolicy,
    /// Resolves when the service stops: held requests are answered then.
    pub stopping: StopHandle,
}

/// `{prefix}/graph` and `{prefix}/v1/graph`.
pub fn api_routes(
    prefix: &PathPrefix,
    context: Arc<ApiContext>,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static {
    let (graph, graph_v1) = (prefix.join("/graph"), prefix.join("/v1/graph"));
    let context = web::Data::from(context);
    move |config| {
        config
            .app_data(context.clone())
            .service(get_or_head(&graph, serve_graph))
            .service(get_or_head(&graph_v1, serve_graph));
    }
}

/// `{prefix}/graph-data`.
pub fn public_routes(
    prefix: &PathPrefix,
    context: Arc<ApiContext>,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static {
    let graph_data = prefix.join("/graph-data");
    let context = web::Data::from(context);
    move |config| {
        config
            .app_data(context.clone())
            .service(get_or_head(&graph_data, serve_graph_data));
    }
}

async fn serve_graph(
    request: HttpRequest,
    context: web::Data<ApiContext>,
) -> Result<HttpResponse, HttpError> {
    // The route's path, which any other spelling of it (`gr%61ph`) that
    // actix-web routes here is decoded to: every label kept is memory.
    context
        .metrics
        .incoming_requests
        .with_label_values(&[request.match_info().as_str()])
        .inc();
    let content_type = MediaTypes::JSON_ONLY.negotiate_request(&request)?;
    let query = QueryParameters::parse(request.query_string());
    context.required.check(&query)?;
    let current = || {
        let served = context.state.graph().ok_or_else(|| {
            HttpError::from(ApiError::new(
                ErrorKind::ServiceUnavailable,
                "no graph has been built yet",
            ))
        });
        std::future::ready(served.map(|served| {
            let tag = served.body.entity_tag_for(&request, content_type);
            (served, tag)
        }))
    };
    let Some(named) = wait::requested(&query) else {
        let (served, _) = current().await?;
        return Ok(served.body.respond(&request, content_type, &context.caching));
    };
    let stopping = context.stopping.stopping();
    let served = wait::hold(
        &named,
        wait::WAIT,
        context.state.graph_changes(),
        stopping,
        current,
    )
    .await?;
    Ok(wait::mark(served.body.respond(
        &request,
        content_type,
        &context.caching,
    )))
}

async fn serve_graph_data(
    request: HttpRequest,
    context: web::Data<ApiContext>,
) -> Result<HttpResponse, HttpError> {
    let Some(published) = context.state.graph_data.load_full() else {
        return Err(ApiError::new(ErrorKind::FileOpenError, "no graph-data has been loaded").into());
    };
    let etag = format!("\"{}\"", published.tarball_digest);
    // Followers revalidate on every refresh: a 304 costs them nothing.
    let caching = CachePolicy::revalidate_after(Duration::ZERO);
    Ok(respond_tagged(&request, &etag, &caching, None, |response| {
        response
            .content_type("application/gzip")
            .body(published.tarball.clone())
    }))
}
