//! `GET {prefix}/v1/fleet/...` on the status port (operators only: cluster
//! ids are not public; with rollout control, a bearer token of the scope
//! `read` or wider), with a fleet store: the documents of
//! [`crate::operator::fleet::answers`].
//!
//! - `versions?channel=&arch=&active_hours=`: clusters per version.
//! - `adoption?version=&hours=168`: arrivals at a version per hour.
//! - `rollouts`: how the policy file's rollouts move the fleet.
//! - `stuck?channel=&arch=&active_hours=`: nowhere to go, or not moving.
//! - `clusters/{id}`: one cluster's history.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use actix_web::{HttpRequest, HttpResponse, web};
use cincinnati_client::tokens::Scope;
use cincinnati_core::ApiError;
use http_answers::query::QueryParameters;
use http_answers::routes::get_or_head;
use http_answers::{HttpError, PathPrefix};

use crate::operator::Fleet;
use crate::operator::Operator;
use crate::operator::fleet::count::Asked;
use crate::operator::fleet::graphs::upstream_graphs;

pub const PATH: &str = "/v1/fleet";

/// Hours an adoption answer looks back by default: a week.
const ADOPTION_HOURS: u64 = 168;

/// The routes, for the status server (with a fleet store only).
pub fn configure(
    prefix: &PathPrefix,
    operator: Arc<Operator>,
) -> impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static + use<> {
    let base = prefix.join(PATH);
    let fleet = web::Data::from(operator.fleet().cloned().expect("routed with a fleet store only"));
    let operator = web::Data::from(operator);
    move |config| {
        for route in [
            get_or_head(&format!("{base}/versions"), versions),
            get_or_head(&format!("{base}/adoption"), adoption),
            get_or_head(&format!("{base}/rollouts"), rollouts),
            get_or_head(&format!("{base}/stuck"), stuck),
            get_or_head(&format!("{base}/clusters/{{id}}"), cluster),
        ] {
            config.service(route.app_data(operator.clone()).app_data(fleet.clone()));
        }
    }
}

/// A whole number of hours from parameter `name`, at least 1.
fn hours(query: &QueryParameters, name: &str) -> Result<Option<u64>, ApiError> {
    query
        .get(name)
        .map(|raw| {
            raw.parse::<u64>()
                .ok()
                .filter(|hours| (1..=24 * 366 * 10).contains(hours))
                .ok_or_else(|| ApiError::invalid_param(name, raw, "^[1-9][0-9]*$ (hours, up to ten years)"))
        })
        .transpose()
}

fn asked(request: &HttpRequest) -> Result<Asked, ApiError> {
    let query = QueryParameters::parse(request.query_string());
    Ok(Asked {
        channel: query.get("channel").map(str::to_owned),
        arch: query.get("arch").map(str::to_owned),
        active: hours(&query, "active_hours")?.map(|hours| Duration::from_secs(hours * 3600)),
    })
}

async fn versions(
    request: HttpRequest,
    operator: web::Data<Operator>,
    fleet: web::Data<Fleet>,
) -> Result<HttpResponse, HttpError> {
    operator.authorize(&request, Scope::Read)?;
    let now = SystemTime::now();
    let asked = asked(&request)?;
    let counted = fleet.counted(&asked, &operator.engine().rollouts(), now).await?;
    Ok(HttpResponse::Ok().json(fleet.versions(&asked, &counted, now)))
}

async fn adoption(
    request: HttpRequest,
    operator: web::Data<Operator>,
    fleet: web::Data<Fleet>,
) -> Result<HttpResponse, HttpError> {
    operator.authorize(&request, Scope::Read)?;
    let query = QueryParameters::parse(request.query_string());
    let version = query
        .get("version")
        .ok_or_else(|| ApiError::missing_params(&["version"]))?;
    let within = hours(&query, "hours")?.unwrap_or(ADOPTION_HOURS);
    let answer = fleet
        .adoption(version, Duration::from_secs(within * 3600), SystemTime::now())
        .await?;
    Ok(HttpResponse::Ok().json(answer))
}

async fn rollouts(
    request: HttpRequest,
    operator: web::Data<Operator>,
    fleet: web::Data<Fleet>,
) -> Result<HttpResponse, HttpError> {
    operator.authorize(&request, Scope::Read)?;
    let now = SystemTime::now();
    let rollouts = operator.engine().rollouts();
    let counted = fleet.counted(&Asked::default(), &rollouts, now).await?;
    let graphs = upstream_graphs(operator.engine().feeds(), &counted.pairs()).await?;
    Ok(HttpResponse::Ok().json(fleet.rollouts(operator.rollout_views(now), &counted, &graphs, now)))
}

async fn stuck(
    request: HttpRequest,
    operator: web::Data<Operator>,
    fleet: web::Data<Fleet>,
) -> Result<HttpResponse, HttpError> {
    operator.authorize(&request, Scope::Read)?;
    let now = SystemTime::now();
    let asked = asked(&request)?;
    let counted = fleet.counted(&asked, &operator.engine().rollouts(), now).await?;
    let graphs = upstream_graphs(operator.engine().feeds(), &counted.pairs()).await?;
    Ok(HttpResponse::Ok().json(fleet.stuck(&asked, &counted, &graphs, now).await?))
}

async fn cluster(
    request: HttpRequest,
    id: web::Path<String>,
    operator: web::Data<Operator>,
    fleet: web::Data<Fleet>,
) -> Result<HttpResponse, HttpError> {
    operator.authorize(&request, Scope::Read)?;
    Ok(HttpResponse::Ok().json(fleet.cluster(&id, SystemTime::now()).await?))
}
