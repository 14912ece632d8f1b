//! Cross-origin requests, for the services browsers read: any origin, GET
//! and HEAD, answered by actix-cors, except for `Vary`. actix-cors rebuilds
//! that field (a copy, checked byte by byte) on every response; nearly
//! every answer carries the same `Vary` ([`http_answers::VARY`]), so its
//! extended value is made once and the rest extended as actix-cors would.

use actix_cors::Cors;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use bytes::Bytes;

/// The request fields a CORS answer depends on, as actix-cors adds them.
const CORS_VARY: &str = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers";

/// [`http_answers::VARY`], extended with [`CORS_VARY`] (a test holds it to them).
static ANSWER_VARY_EXTENDED: HeaderValue = HeaderValue::from_static(
    "Accept, Accept-Encoding, Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
);

/// actix-cors as the services use it, without its `Vary`: wrap it in
/// [`extend_vary`].
pub fn cors() -> Cors {
    Cors::default()
        .allow_any_origin()
        .allowed_methods(["GET", "HEAD"])
        .disable_vary_header()
}

/// Middleware, just outside [`cors`]: extends `Vary` on every response
/// actix-cors's own `Vary` would extend, which is all of them but its
/// refusals of a preflight request.
pub async fn extend_vary(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let preflight = is_preflight(&request);
    match next.call(request).await {
        Ok(mut response) => {
            // A preflight is answered 200 when allowed, 400 when refused.
            if !preflight || response.status() == StatusCode::OK {
                extend(response.headers_mut());
            }
            Ok(response)
        }
        Err(mut error) => {
            error.add_response_mapper(|mut response| {
                extend(response.headers_mut());
                response
            });
            Err(error)
        }
    }
}

/// A request actix-cors answers as a preflight: `OPTIONS` naming a method
/// in `Access-Control-Request-Method`.
fn is_preflight(request: &ServiceRequest) -> bool {
    request.method() == Method::OPTIONS
        && request
            .headers()
            .get(header::ACCESS_CONTROL_REQUEST_METHOD)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|method| Method::try_from(method).is_ok())
}

/// `Vary` as actix-cors extends it: its first line (the only one kept)
/// with [`CORS_VARY`] after it, or [`CORS_VARY`] alone.
fn extend(headers: &mut HeaderMap) {
    let extended = extended(headers.get(header::VARY));
    headers.insert(header::VARY, extended);
}

/// The `Vary` (its first line) as actix-cors extends it.
pub(crate) fn extended(vary: Option<&HeaderValue>) -> HeaderValue {
    match vary {
        Some(vary) if vary.as_bytes() == http_answers::VARY.as_bytes() => ANSWER_VARY_EXTENDED.clone(),
        Some(vary) => {
            let joined = [vary.as_bytes(), b", ", CORS_VARY.as_bytes()].concat();
            HeaderValue::from_maybe_shared(Bytes::from(joined))
                .expect("two field values joined by a comma are a field value")
        }
        None => HeaderValue::from_static(CORS_VARY),
    }
}

#[cfg(test)]
mod tests {
    use actix_web::middleware::from_fn;
    use actix_web::test::{TestRequest, init_service, try_call_service};
    use actix_web::{App, HttpResponse, web};
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_answers_vary_is_extended_ahead() {
        assert_eq!(
            ANSWER_VARY_EXTENDED,
            format!("{}, {CORS_VARY}", http_answers::VARY)
        );
    }

    /// What the app behind CORS answers: a status and `Vary` lines, or an
    /// error from a middleware (which becomes a response only at the end).
    #[derive(Debug, Clone)]
    enum Inner {
        Answer(u16, Vec<&'static str>),
        Error,
    }

    #[derive(Debug, Clone)]
    struct Case {
        method: Method,
        headers: Vec<(&'static str, &'static str)>,
        inner: Inner,
    }

    fn cases() -> impl Strategy<Value = Case> {
        let method = prop::sample::select(vec![Method::GET, Method::HEAD, Method::OPTIONS, Method::DELETE]);
        let header = prop::sample::select(vec![
            ("origin", "https://example.com"),
            ("origin", "null"),
            ("access-control-request-method", "GET"),
            ("access-control-request-method", "DELETE"),
            ("access-control-request-method", "not a method"),
            ("access-control-request-headers", "x-custom"),
            ("access-control-request-headers", "x-a, x-b"),
        ]);
        let vary = prop::sample::select(vec![http_answers::VARY, "Accept", "Origin, X-Other", ""]);
        let inner = prop_oneof![
            (
                prop::sample::select(vec![200u16, 304, 404, 500]),
                prop::collection::vec(vary, 0..3)
            )
                .prop_map(|(status, vary)| Inner::Answer(status, vary)),
            Just(Inner::Error),
        ];
        (method, prop::collection::vec(header, 0..4), inner).prop_map(|(method, headers, inner)| Case {
            method,
            headers,
            inner,
        })
    }

    /// The status and the header lines, sorted (a header map's order is
    /// its hasher's, and so is the order of the methods actix-cors lists:
    /// a set's, in each instance its own).
    async fn answer(case: &Case, ours: bool) -> (u16, Vec<(String, Vec<u8>)>) {
        let inner = case.inner.clone();
        let failing = matches!(inner, Inner::Error);
        let app = App::new()
            .wrap(from_fn(
                move |request: ServiceRequest, next: Next<_>| async move {
                    if failing {
                        return Err(actix_web::error::ErrorBadRequest("refused by a middleware"));
                    }
                    next.call(request).await
                },
            ))
            .default_service(web::to(move || {
                let inner = inner.clone();
                async move {
                    let Inner::Answer(status, vary) = inner else {
                        unreachable!("the middleware refused it")
                    };
                    let mut response = HttpResponse::build(StatusCode::from_u16(status).unwrap());
                    for line in vary {
                        response.append_header((header::VARY, line));
                    }
                    response.finish()
                }
            }));
        let mut request = TestRequest::default().method(case.method.clone());
        for header in &case.headers {
            request = request.insert_header(*header);
        }
        let response = if ours {
            let app = init_service(app.wrap(cors()).wrap(from_fn(extend_vary))).await;
            try_call_service(&app, request.to_request())
                .await
                .map(|response| response.map_into_boxed_body())
        } else {
            let maintained = Cors::default()
                .allow_any_origin()
                .allowed_methods(["GET", "HEAD"]);
            let app = init_service(app.wrap(maintained)).await;
            try_call_service(&app, request.to_request())
                .await
                .map(|response| response.map_into_boxed_body())
        };
        let response = match response {
            Ok(response) => response.into_parts().1,
            Err(error) => error.error_response(),
        };
        let mut headers: Vec<_> = response
            .headers()
            .iter()
            .map(|(name, value)| {
                let value = if name == header::ACCESS_CONTROL_ALLOW_METHODS {
                    let mut methods: Vec<_> = value.to_str().unwrap().split(", ").collect();
                    methods.sort_unstable();
                    methods.join(", ").into_bytes()
                } else {
                    value.as_bytes().to_vec()
                };
                (name.to_string(), value)
            })
            .collect();
        headers.sort();
        (response.status().as_u16(), headers)
    }

    proptest! {
        /// Held to actix-cors with its own `Vary`: the same status and
        /// header lines for every request and inner answer.
        #[test]
        fn answers_as_actix_cors_with_its_own_vary(case in cases()) {
            let (ours, maintained) = actix_web::rt::System::new()
                .block_on(async { (answer(&case, true).await, answer(&case, false).await) });
            prop_assert_eq!(ours, maintained);
        }
    }
}
