//! The graph-builder: discovers releases, assembles them into the update
//! graph, applies graph-data, and serves the result.

pub mod assemble;
pub mod registry;
pub mod scrape;
pub mod scraped;
