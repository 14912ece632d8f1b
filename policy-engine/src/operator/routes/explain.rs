//! `GET {prefix}/v1/explain-cluster` on the status port (operators only): why a
//! cluster sees what it sees, for a graph request's parameters. The answer
//! is documented in [`crate::cluster_policy::explain`].

use std::sync::Arc;
use std::time::Instant;

use actix_web::{HttpRequest, HttpResponse, web};
use http_answers::routes::get_or_head;
use http_answers::{HttpError, PathPrefix};

use crate::client::Engine;
use crate::client::query::ClientQuery;

pub const PATH: &str = "/v1/explain-cluster";

/// The route, for the status server.
pub fn configure(
    prefix: &PathPrefix,
    engine: Arc<Engine>,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static + use<> {
    let path = prefix.join(PATH);
    let engine = web::Data::from(engine);
    move |config| {
        config.service(get_or_head(&path, explain).app_data(engine.clone()));
    }
}

async fn explain(request: HttpRequest, engine: web::Data<Engine>) -> Result<HttpResponse, HttpError> {
    let arrived = Instant::now();
    let query = ClientQuery::parse(request.query_string(), engine.rules())?;
    let engine: Arc<Engine> = engine.into_inner();
    let explanation = engine.explain(query, arrived).await?;
    Ok(HttpResponse::Ok().json(explanation))
}
