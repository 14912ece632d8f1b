//! The `cincinnati-metadata-v0` document in a release image, as the
//! graph-builder reads it from any image in a scraped repository.
#![no_main]

use cincinnati_core::metadata_document::ReleaseMetadataDocument;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|json: &[u8]| {
    let _ = ReleaseMetadataDocument::parse(json);
});
