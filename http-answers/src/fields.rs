//! What an answer reads of a request: its method and header fields, the
//! same whether the app's handler answers it (an `HttpRequest`) or a
//! server's gate answers it from its head alone (a `RequestHead`, see
//! `http1_server::Admission`).

use actix_web::HttpRequest;
use actix_web::dev::RequestHead;
use actix_web::http::Method;
use actix_web::http::header::HeaderMap;

pub trait RequestFields {
    fn method(&self) -> &Method;
    fn headers(&self) -> &HeaderMap;
}

impl RequestFields for HttpRequest {
    fn method(&self) -> &Method {
        HttpRequest::method(self)
    }

    fn headers(&self) -> &HeaderMap {
        HttpRequest::headers(self)
    }
}

impl RequestFields for RequestHead {
    fn method(&self) -> &Method {
        &self.method
    }

    fn headers(&self) -> &HeaderMap {
        &self.headers
    }
}
