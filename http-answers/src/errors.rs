//! `ApiError` as an HTTP answer: the `{"kind", "value"}` JSON body with the
//! status of its kind, for handler errors, unknown paths and wrong methods,
//! each counted in `graph_response_errors_total{code,kind}`.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use cincinnati_core::{ApiError, ErrorKind};
use prometheus::{IntCounterVec, Opts};

/// An [`ApiError`] answered over HTTP (a type of this crate because
/// neither the error nor actix's `ResponseError` trait is), with the
/// methods a 405 allows.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct HttpError {
    #[source]
    pub error: ApiError,
    allow: &'static str,
}

impl From<ApiError> for HttpError {
    fn from(error: ApiError) -> Self {
        Self {
            error,
            allow: "GET, HEAD",
        }
    }
}

impl HttpError {
    /// 405 for `request`, whose resource takes only `allow`.
    pub fn method_not_allowed(request: &HttpRequest, allow: &'static str) -> Self {
        Self {
            error: ApiError::new(
                ErrorKind::MethodNotAllowed,
                format_args!("{} {}: this takes {allow}", request.method(), request.path()),
            ),
            allow,
        }
    }
}

impl ResponseError for HttpError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.error.status_code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        response
            .content_type(crate::accept::APPLICATION_JSON)
            // An error must not be cached in place of the graph it stands for.
            .insert_header((header::CACHE_CONTROL, "no-store"));
        match self.error.kind {
            ErrorKind::MethodNotAllowed => {
                response.insert_header((header::ALLOW, self.allow));
            }
            ErrorKind::Unauthorized => {
                response.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
            }
            _ => {}
        }
        response.body(self.error.to_json())
    }
}

/// The default service for paths no route matches: a JSON 404 where upstream
/// answered an empty body.
pub async fn not_found(request: HttpRequest) -> Result<HttpResponse, HttpError> {
    Err(ApiError::new(ErrorKind::DoesNotExist, format_args!("path {}", request.path())).into())
}

/// The default service of a GET-and-HEAD resource whose routes do not take
/// the request's method: a JSON 405 with `Allow`.
pub async fn method_not_allowed(request: HttpRequest) -> Result<HttpResponse, HttpError> {
    Err(HttpError::method_not_allowed(&request, "GET, HEAD"))
}

/// Every error answer, by status and kind (`graph_response_errors_total`,
/// upstream's name, whatever the service serves). Made once per service,
/// registered by the skeleton; handed to [`count_errors`] as app data.
#[derive(Clone)]
pub struct ResponseErrors(IntCounterVec);

impl ResponseErrors {
    /// The counter, for the service's registry to take.
    pub fn new() -> prometheus::Result<Self> {
        let counter = IntCounterVec::new(
            Opts::new(
                "graph_response_errors_total",
                "Error responses by HTTP status and kind",
            ),
            &["code", "kind"],
        )?;
        Ok(Self(counter))
    }

    /// What a registry takes to expose the counter.
    pub fn collector(&self) -> IntCounterVec {
        self.0.clone()
    }

    /// Counts `response` if it carries an [`HttpError`].
    fn observe<B>(&self, response: &ServiceResponse<B>) {
        let Some(error) = response
            .response()
            .error()
            .and_then(|error| error.as_error::<HttpError>())
        else {
            return;
        };
        self.0
            .with_label_values(&[response.status().as_str(), error.error.kind.as_str()])
            .inc();
    }

    /// How many errors of `kind` were answered (for tests and status pages).
    pub fn count(&self, kind: ErrorKind) -> u64 {
        self.counter(kind).get()
    }

    /// The counter of error answers of `kind`, for answers given outside
    /// the app (a connection refused at the limit).
    pub fn counter(&self, kind: ErrorKind) -> prometheus::IntCounter {
        let code = kind.status_code().to_string();
        self.0.with_label_values(&[code.as_str(), kind.as_str()])
    }
}

/// Middleware (`actix_web::middleware::from_fn(count_errors)`) counting every
/// error answer in the app's [`ResponseErrors`] (app data
/// `web::Data<ResponseErrors>`).
pub async fn count_errors(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let errors = request.app_data::<web::Data<ResponseErrors>>().cloned();
    let response = next.call(request).await?;
    if let Some(errors) = errors {
        errors.observe(&response);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use actix_web::middleware::from_fn;
    use actix_web::{App, test};

    use super::*;
    use crate::routes::get_or_head;

    async fn refuse() -> Result<HttpResponse, HttpError> {
        Err(ApiError::missing_params(&["channel"]).into())
    }

    #[actix_web::test]
    async fn errors_answer_json_with_their_status_and_are_counted() {
        let errors = ResponseErrors::new().unwrap();
        let app = test::init_service(
            App::new()
                .app_data(web::Data::new(errors.clone()))
                .wrap(from_fn(count_errors))
                .service(get_or_head("/graph", refuse))
                .default_service(web::to(not_found)),
        )
        .await;

        let cases = [
            (test::TestRequest::get().uri("/graph"), 400, "missing_params"),
            (test::TestRequest::get().uri("/elsewhere"), 404, "does_not_exist"),
            (test::TestRequest::post().uri("/graph"), 405, "method_not_allowed"),
        ];
        for (request, status, kind) in cases {
            let response = test::call_service(&app, request.to_request()).await;
            assert_eq!(response.status().as_u16(), status);
            assert_eq!(
                response.headers().get(header::CONTENT_TYPE).unwrap(),
                "application/json"
            );
            assert_eq!(response.headers().get(header::CACHE_CONTROL).unwrap(), "no-store");
            let body: serde_json::Value = test::read_body_json(response).await;
            assert_eq!(body["kind"], kind);
        }
        assert_eq!(errors.count(ErrorKind::MissingParams), 1);
        assert_eq!(errors.count(ErrorKind::DoesNotExist), 1);
        assert_eq!(errors.count(ErrorKind::MethodNotAllowed), 1);
    }
}
