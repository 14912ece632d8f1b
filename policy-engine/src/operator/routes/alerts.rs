//! `POST {prefix}/v1/alerts/alertmanager` on the status port (with rollout
//! control): Alertmanager's webhook, with a bearer token of the scope
//! `pause` or wider (Alertmanager's `http_config.authorization`). The
//! token is checked from the request's head, before its body is read (see
//! `crate::service`), and again here. What it does with each alert is
//! [`crate::operator::control::alerts`]'s; it answers
//! `cincinnati_client::rollout::AlertsTaken`.

use std::sync::Arc;
use std::time::SystemTime;

use actix_web::{HttpRequest, HttpResponse, web};
use cincinnati_client::tokens::Scope;
use http_answers::routes::only;
use http_answers::{HttpError, PathPrefix};

use crate::operator::Operator;
use crate::operator::control::Control;
use crate::operator::control::alerts::Notification;

pub const PATH: &str = "/v1/alerts/alertmanager";

/// The route, for the status server (with rollout control only).
pub fn configure(
    prefix: &PathPrefix,
    operator: Arc<Operator>,
    control: Arc<Control>,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static + use<> {
    let path = prefix.join(PATH);
    let (operator, control) = (web::Data::from(operator), web::Data::from(control));
    move |config| {
        config.service(
            only(&path, "POST", alertmanager)
                .app_data(operator.clone())
                .app_data(control.clone()),
        );
    }
}

async fn alertmanager(
    request: HttpRequest,
    body: web::Bytes,
    operator: web::Data<Operator>,
    control: web::Data<Control>,
) -> Result<HttpResponse, HttpError> {
    let bearer = operator
        .authorize(&request, Scope::Pause)?
        .expect("routed with control only");
    let notification = Notification::parse(&body)?;
    let taken = control
        .take_alerts(&notification, &bearer.name, SystemTime::now())
        .await?;
    Ok(HttpResponse::Ok().json(taken))
}
