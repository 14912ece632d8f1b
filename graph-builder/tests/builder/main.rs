//! The graph-builder through its public API: scraping a real registry,
//! serving (in the test process and as a process), graph-data from a URL,
//! supervised refreshes, and docs/operations.md and the operations kit held
//! to the settings and metrics it has. One test binary, so the suite links
//! once.

mod graph_data_url;
mod operations_doc;
mod ops_kit;
mod registry_service;
mod scrape;
mod service;
mod supervision;
mod support;
