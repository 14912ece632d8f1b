//! `Accept` and `Accept-Encoding` as clients send them (one header value a
//! line): negotiation never panics and only ever chooses an offered type.
#![no_main]

use http_answers::MediaTypes;
use http_answers::accept::accepts_gzip;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let values: Vec<&str> = text.split('\n').collect();
    for media_types in [MediaTypes::POLICY_ENGINE, MediaTypes::JSON_ONLY] {
        if let Ok(chosen) = media_types.negotiate(&values) {
            assert!(media_types.offered.contains(&chosen), "{chosen} was not offered");
        }
    }
    let _ = accepts_gzip(&values);
});
