//! A client's query string (`channel`, `arch`, `id`, `version`, anything
//! else): parsing never panics, and an accepted channel or arch is one the
//! engine's rules allow (it names a cache entry and an upstream request).
#![no_main]

use std::collections::BTreeSet;

use http_answers::query::RequiredParameters;
use libfuzzer_sys::fuzz_target;
use policy_engine::query::{Arch, Channel, ClientQuery, QueryRules};

fuzz_target!(|query: &str| {
    let rules = QueryRules {
        required: RequiredParameters::new(["channel".to_owned()]),
        forwarded: BTreeSet::from(["version".to_owned()]),
        // Both rule sets (with and without version-prune), as the input picks.
        keyed_by_version: query.len() % 2 == 1,
        ..QueryRules::default()
    };
    let Ok(parsed) = ClientQuery::parse(query, &rules) else {
        return;
    };
    let channel = parsed.channel.expect("channel is required");
    assert!(Channel::parse(channel.as_str()).is_ok());
    if let Some(arch) = parsed.arch {
        assert!(Arch::parse(arch.as_str()).is_ok());
    }
});
