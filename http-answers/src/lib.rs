//! How the services answer over HTTP, on actix-web: what every route of
//! every service shares between its handler and the wire.
//!
//! - [`accept`]: `Accept` and `Accept-Encoding` negotiation.
//! - [`fields`]: what answers read of a request, from actix's request or
//!   from a head alone.
//! - [`conditional`]: ETag, `If-None-Match` and 304, `Cache-Control`: the
//!   one way every route answers conditional requests.
//! - [`prepared`]: bodies computed once, served with ETag, 304, gzip and
//!   `Cache-Control`.
//! - [`identity_cache`]: identity bytes of compressed-only bodies, for the
//!   answers most recently asked for without gzip.
//! - [`errors`]: `ApiError` as a JSON answer, JSON 404 and 405, and their
//!   counting.
//! - [`query`]: query strings and mandatory parameters.
//! - [`prefix`]: the `--service.path_prefix` normalisation.
//! - [`routes`]: GET-and-HEAD resources.
//! - [`wait`]: a GET held until its answer changes (`wait_for_change`).
//!
//! The servers these answers go out through are `http1-server`'s; the
//! skeleton that composes them into a service is `service-kit`.

pub mod accept;
pub mod conditional;
pub mod errors;
pub mod fields;
pub mod identity_cache;
pub mod prefix;
pub mod prepared;
pub mod query;
pub mod routes;
pub mod wait;

pub use accept::MediaTypes;
pub use conditional::CachePolicy;
pub use errors::HttpError;
pub use fields::RequestFields;
pub use identity_cache::IdentityCache;
pub use prefix::PathPrefix;
pub use prepared::{PreparedBody, VARY};
