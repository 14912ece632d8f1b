//! A manifest (Docker schema 2 image or list, OCI manifest or index) and an
//! image config, as any registry the graph-builder scrapes may answer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use registry_client::manifest::{ImageConfig, Manifest};

fuzz_target!(|json: &[u8]| {
    let _ = Manifest::parse(json);
    let _ = serde_json::from_slice::<ImageConfig>(json);
});
