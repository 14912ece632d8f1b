//! Where releases and graph-data come from.

pub mod graph_data;
pub mod releases;
