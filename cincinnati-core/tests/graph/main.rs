//! The update graph and its Graph API wire format, through the crate's
//! public API: documents the parser refuses, the real fixture graphs, and
//! the graph's invariants under random changes. One test binary, so the
//! suite links once.

mod bad_documents;
mod fixtures;
mod graph_properties;
