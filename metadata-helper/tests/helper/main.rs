//! The metadata-helper through its public API: signatures from a directory
//! and from a followed graph-data tarball, the signature route on a real
//! server, and docs/operations.md and the operations kit held to the
//! metrics and settings it has. One test binary, so the suite links once.

mod directory;
mod operations_doc;
mod ops_kit;
mod serve;
mod support;
mod tarball;
