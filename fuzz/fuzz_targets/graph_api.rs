//! The Graph API document, as an engine reads it from its upstream: parsing
//! never panics, and whatever parses serialises to bytes that parse to the
//! same graph and serialise to the same bytes again (serialisation is
//! deterministic, so ETags are stable).
#![no_main]

use cincinnati_core::wire;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|json: &[u8]| {
    let Ok(document) = wire::parse(json) else {
        return;
    };
    let bytes = wire::serialize(&document.graph, document.api_version);
    let again = wire::parse(&bytes).expect("our own output parses");
    assert_eq!(again.api_version, document.api_version);
    assert_eq!(
        wire::serialize(&again.graph, again.api_version),
        bytes,
        "serialisation is deterministic"
    );
});
