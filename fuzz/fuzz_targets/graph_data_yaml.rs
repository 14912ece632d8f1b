//! One graph-data YAML file, loaded both as a channel and as a blocked edge
//! (with a valid `version` beside it): loading reports problems, never
//! panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openshift_graph_data::{GraphData, GraphDataFiles, SUPPORTED_SCHEMA, Strictness};

fuzz_target!(|yaml: &[u8]| {
    for path in ["channels/fuzz-4.1.yaml", "blocked-edges/4.1.0-Fuzz.yaml"] {
        let mut files = GraphDataFiles::default();
        files.insert("version", format!("{SUPPORTED_SCHEMA}\n").into_bytes());
        files.insert(path, yaml.to_vec());
        let _ = GraphData::load(&files, &Strictness::default());
    }
});
