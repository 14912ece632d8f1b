//! Route helpers every service uses the same way.

use actix_web::http::Method;
use actix_web::{FromRequest, Handler, HttpRequest, Resource, Responder, guard, web};

use crate::errors::{HttpError, method_not_allowed};

/// `path` answered by `handler` for GET and HEAD (actix drops the body of a
/// HEAD answer), and a JSON 405 naming the method for anything else.
pub fn get_or_head<F, Args>(path: &str, handler: F) -> Resource
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    web::resource(path)
        .route(
            web::route()
                // Not `guard::Get()` and `guard::Head()`: each notes its
                // method in every request's extensions, for a 405 that
                // `method_not_allowed` answers here instead.
                .guard(guard::fn_guard(|context| {
                    let method = &context.head().method;
                    method == Method::GET || method == Method::HEAD
                }))
                .to(handler),
        )
        .default_service(web::to(method_not_allowed))
}

/// `path` answered by `handler` for `method` only (`POST`, `PUT`), and a
/// JSON 405 with `Allow: <method>` for anything else.
pub fn only<F, Args>(path: &str, method: &'static str, handler: F) -> Resource
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    let guarded = Method::from_bytes(method.as_bytes()).expect("a method's name");
    web::resource(path)
        .route(web::route().method(guarded).to(handler))
        .default_service(web::to(move |request: HttpRequest| async move {
            Err::<actix_web::HttpResponse, _>(HttpError::method_not_allowed(&request, method))
        }))
}
