//! Graphs from Graph API JSON, for unit tests.

use cincinnati_core::{Graph, wire};

pub fn graph(json: &str) -> Graph {
    wire::parse(json.as_bytes()).unwrap().graph
}

pub fn serialized(graph: &Graph) -> serde_json::Value {
    serde_json::from_slice(&wire::serialize(graph, None)).unwrap()
}
