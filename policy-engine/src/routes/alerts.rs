//! `POST {prefix}/v1/alerts/alertmanager` on the status port (with rollout
//! control): Alertmanager's webhook, with the bearer tokens of
//! `{prefix}/v1/rollouts` (Alertmanager's `http_config.authorization`).
//! What it does with each alert is [`crate::control::alerts`]'s; it
//! answers `cincinnati_client::rollout_control::AlertsTaken`.

use std::sync::Arc;
use std::time::SystemTime;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use http_answers::{HttpError, PathPrefix};

use crate::control::Control;
use crate::control::alerts::Notification;

pub const PATH: &str = "/v1/alerts/alertmanager";

/// The route, for the status server (with rollout control only), taking
/// bodies of up to `max_bytes`.
pub fn configure(
    prefix: &PathPrefix,
    control: Arc<Control>,
    max_bytes: usize,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static + use<> {
    let path = prefix.join(PATH);
    let control = web::Data::from(control);
    move |config| {
        config.service(
            web::resource(path.as_str())
                .app_data(control.clone())
                .app_data(web::PayloadConfig::new(max_bytes))
                .route(web::post().to(alertmanager))
                .default_service(web::to(|| async { super::rollouts::wrong_method("POST") })),
        );
    }
}

async fn alertmanager(
    request: HttpRequest,
    body: web::Bytes,
    control: web::Data<Control>,
) -> Result<HttpResponse, HttpError> {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    let token = control.authorize(authorization)?;
    let notification = Notification::parse(&body)?;
    let taken = control
        .take_alerts(&notification, &token, SystemTime::now())
        .await?;
    Ok(HttpResponse::Ok().json(taken))
}
