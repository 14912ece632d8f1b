//! Release signatures through the crate's public API: verification by the
//! CVO's rules and upstream's, and the store client against a real server.
//! One test binary, so the suite links once.

mod store;
mod support;
mod verify;
