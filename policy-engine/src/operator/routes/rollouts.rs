//! `{prefix}/v1/rollouts` on the status port (with `rollouts.token_file`):
//! the policy file's rollouts under run-time control ([`crate::operator::control`]),
//! every request with a bearer token of the scope it needs (401 without,
//! 403 with one the token file does not hold or whose scope is too
//! narrow). Answers are `cincinnati_client::rollout`'s documents. What a
//! change says is in its query (so a change is a one-line `curl`, and
//! `cincinnati rollout` needs no body):
//!
//! - `GET {prefix}/v1/rollouts` (`read`): each rollout as control leaves
//!   it, and the last changes.
//! - `POST {prefix}/v1/rollouts/{target}/pause?reason=` (`pause`).
//! - `POST {prefix}/v1/rollouts/{target}/resume?reason=` (`operate`).
//! - `PUT {prefix}/v1/rollouts/{target}/progress?reason=&percent=`
//!   (`operate`) holds the progress at `percent`; without `percent` it
//!   follows the schedule again.
//!
//! A change answers the rollouts as they are after it: 200 once the store
//! took it, 202 for a pause the store could not take yet (in force on this
//! engine, written when the store takes it).

use std::sync::Arc;
use std::time::SystemTime;

use actix_web::{HttpRequest, HttpResponse, web};
use cincinnati_client::tokens::Scope;
use cincinnati_core::ApiError;
use http_answers::query::QueryParameters;
use http_answers::routes::{get_or_head, only};
use http_answers::{HttpError, PathPrefix};
use rollout_model::change::Request;
use rollout_model::control::Actor;

use crate::operator::Operator;
use crate::operator::control::Changed;

pub const PATH: &str = "/v1/rollouts";

/// The routes, for the status server (with rollout control only).
pub fn configure(
    prefix: &PathPrefix,
    operator: Arc<Operator>,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static + use<> {
    let base = prefix.join(PATH);
    let operator = web::Data::from(operator);
    move |config| {
        config.service(get_or_head(&base, list).app_data(operator.clone()));
        config.service(only(&format!("{base}/{{target}}/pause"), "POST", pause).app_data(operator.clone()));
        config.service(only(&format!("{base}/{{target}}/resume"), "POST", resume).app_data(operator.clone()));
        config.service(
            only(&format!("{base}/{{target}}/progress"), "PUT", progress).app_data(operator.clone()),
        );
    }
}

async fn list(request: HttpRequest, operator: web::Data<Operator>) -> Result<HttpResponse, HttpError> {
    operator.authorize(&request, Scope::Read)?;
    let control = operator.control().expect("routed with control only");
    Ok(HttpResponse::Ok().json(control.document(SystemTime::now()).await))
}

async fn pause(
    request: HttpRequest,
    target: web::Path<String>,
    operator: web::Data<Operator>,
) -> Result<HttpResponse, HttpError> {
    changed(
        &request,
        &target,
        &operator,
        (Scope::Pause, |_| Ok(Request::Pause)),
    )
    .await
}

async fn resume(
    request: HttpRequest,
    target: web::Path<String>,
    operator: web::Data<Operator>,
) -> Result<HttpResponse, HttpError> {
    changed(
        &request,
        &target,
        &operator,
        (Scope::Operate, |_| Ok(Request::Resume)),
    )
    .await
}

async fn progress(
    request: HttpRequest,
    target: web::Path<String>,
    operator: web::Data<Operator>,
) -> Result<HttpResponse, HttpError> {
    let held = |query: &QueryParameters| match query.get("percent") {
        None => Ok(Request::Release),
        Some(raw) => raw
            .parse::<f64>()
            .ok()
            .and_then(Request::hold)
            .ok_or_else(|| ApiError::invalid_param("percent", raw, "a number from 0 to 100")),
    };
    changed(&request, &target, &operator, (Scope::Operate, held)).await
}

/// Authorizes the request for `needed`, asks the request `asked` gives
/// for its query of the rollout of `target`, by the token's name for the
/// query's `reason`, and answers the rollouts after it.
async fn changed(
    request: &HttpRequest,
    target: &str,
    operator: &Operator,
    (needed, asked): (Scope, impl FnOnce(&QueryParameters) -> Result<Request, ApiError>),
) -> Result<HttpResponse, HttpError> {
    let bearer = operator
        .authorize(request, needed)?
        .expect("routed with control only");
    let control = operator.control().expect("routed with control only");
    let query = QueryParameters::parse(request.query_string());
    let reason = query.get("reason").unwrap_or_default();
    if reason.trim().is_empty() {
        return Err(ApiError::missing_params(&["reason"]).into());
    }
    let change = asked(&query)?;
    let by = Actor::operator(&bearer.name);
    let changed = control.change(target, change, (&by, reason)).await?;
    let document = control.document(SystemTime::now()).await;
    Ok(match changed {
        Changed::Made(_) => HttpResponse::Ok().json(document),
        Changed::Pending => HttpResponse::Accepted().json(document),
    })
}
