//! `{prefix}/v1/rollouts` on the status port (with `rollouts.token_file`):
//! the policy file's rollouts under run-time control ([`crate::control`]),
//! every request with a bearer token (401 without, 403 with one the token
//! file does not hold). Answers are `cincinnati_client::rollout_control`'s
//! documents. What a change says is in its query (so a change is a
//! one-line `curl`, and `cincinnati rollout` needs no body):
//!
//! - `GET {prefix}/v1/rollouts`: each rollout as control leaves it, and
//!   the last changes.
//! - `POST {prefix}/v1/rollouts/{target}/pause?reason=`, `.../resume?reason=`.
//! - `PUT {prefix}/v1/rollouts/{target}/progress?reason=&percent=` holds the
//!   progress at `percent`; without `percent` it follows the schedule again.
//!
//! A change answers the rollouts as they are after it.

use std::sync::Arc;
use std::time::SystemTime;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use cincinnati_core::{ApiError, ErrorKind};
use fleet_store::rollouts::Change;
use http_answers::query::QueryParameters;
use http_answers::routes::get_or_head;
use http_answers::{HttpError, PathPrefix};

use crate::control::Control;

pub const PATH: &str = "/v1/rollouts";

/// The routes, for the status server (with rollout control only).
pub fn configure(
    prefix: &PathPrefix,
    control: Arc<Control>,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static + use<> {
    let base = prefix.join(PATH);
    let control = web::Data::from(control);
    move |config| {
        config.service(get_or_head(&base, list).app_data(control.clone()));
        for (action, route) in [
            ("pause", web::post().to(pause)),
            ("resume", web::post().to(resume)),
            ("progress", web::put().to(progress)),
        ] {
            let allowed = if action == "progress" { "PUT" } else { "POST" };
            config.service(
                web::resource(format!("{base}/{{target}}/{action}"))
                    .app_data(control.clone())
                    .route(route)
                    .default_service(web::to(move || async move { wrong_method(allowed) })),
            );
        }
    }
}

/// The name of the token the request carries.
fn authorized(request: &HttpRequest, control: &Control) -> Result<String, ApiError> {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    control.authorize(authorization)
}

async fn list(request: HttpRequest, control: web::Data<Control>) -> Result<HttpResponse, HttpError> {
    authorized(&request, &control)?;
    Ok(HttpResponse::Ok().json(control.document(SystemTime::now()).await?))
}

async fn pause(
    request: HttpRequest,
    target: web::Path<String>,
    control: web::Data<Control>,
) -> Result<HttpResponse, HttpError> {
    changed(&request, &target, &control, |_| Ok(Change::Pause)).await
}

async fn resume(
    request: HttpRequest,
    target: web::Path<String>,
    control: web::Data<Control>,
) -> Result<HttpResponse, HttpError> {
    changed(&request, &target, &control, |_| Ok(Change::Resume)).await
}

async fn progress(
    request: HttpRequest,
    target: web::Path<String>,
    control: web::Data<Control>,
) -> Result<HttpResponse, HttpError> {
    changed(&request, &target, &control, |query| match query.get("percent") {
        None => Ok(Change::Release),
        Some(raw) => raw
            .parse::<f64>()
            .ok()
            .filter(|percent| percent.is_finite())
            .map(Change::Hold)
            .ok_or_else(|| ApiError::invalid_param("percent", raw, "a number from 0 to 100")),
    })
    .await
}

/// Authorizes the request, makes the change `change_of` gives for its
/// query, by the token's name for the query's `reason`, and answers the
/// rollouts after it.
async fn changed(
    request: &HttpRequest,
    target: &str,
    control: &Control,
    change_of: impl FnOnce(&QueryParameters) -> Result<Change, ApiError>,
) -> Result<HttpResponse, HttpError> {
    let actor = authorized(request, control)?;
    let query = QueryParameters::parse(request.query_string());
    let reason = query.get("reason").unwrap_or_default().to_owned();
    let change = change_of(&query)?;
    let now = SystemTime::now();
    control.change(target, change, (&actor, &reason), now).await?;
    Ok(HttpResponse::Ok().json(control.document(now).await?))
}

/// A JSON 405 naming the method the route takes.
pub(super) fn wrong_method(allowed: &'static str) -> HttpResponse {
    let error = ApiError::new(
        ErrorKind::MethodNotAllowed,
        format_args!("this route takes {allowed}"),
    );
    HttpResponse::MethodNotAllowed()
        .insert_header((header::ALLOW, allowed))
        .content_type(http_answers::accept::APPLICATION_JSON)
        .body(error.to_json())
}
