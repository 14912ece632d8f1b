//! A release signature from a signature store (binary or armored OpenPGP),
//! checked against a trusted key: reading and checking never panic.
#![no_main]

use std::sync::LazyLock;

use image_signature::{Digest, TrustedKeys, verify_release};
use libfuzzer_sys::fuzz_target;
use release_images::signature::SigningKey;

/// The digest the seed corpus's signatures name, signed with the
/// release-images test key of seed 1 (see reliability/src/bin/reliability-fuzz-seeds.rs).
const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static DIGEST_PARSED: LazyLock<Digest> = LazyLock::new(|| Digest::parse(DIGEST).expect("a valid digest"));

static KEYS: LazyLock<TrustedKeys> = LazyLock::new(|| {
    TrustedKeys::from_armored(&SigningKey::from_seed(1).public_key_armored()).expect("the test key parses")
});

fuzz_target!(|signature: &[u8]| {
    let _ = verify_release(signature, &DIGEST_PARSED, &KEYS);
});
