//! Route helpers every service uses the same way.

use actix_web::{FromRequest, Handler, Resource, Responder, guard, web};

use crate::errors::method_not_allowed;

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
                .guard(guard::Any(guard::Get()).or(guard::Head()))
                .to(handler),
        )
        .default_service(web::to(method_not_allowed))
}
