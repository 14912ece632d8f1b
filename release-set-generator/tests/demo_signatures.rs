//! The demo's signature tree and public key in testdata/demo are what the
//! generator makes, and the signatures in them pass the CVO's checks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use image_signature::layout::{Found, SignatureName, walk};
use image_signature::{Digest, TrustedKeys, verify_release};
use release_set_generator::signatures::{
    DEMO_MOST_SIGNATURES, demo_key, demo_signs, docker_reference, sign_release,
};
use release_set_generator::{Settings, channel_versions, generate, testdata_graph_data};

/// Signing and verifying every demo signature takes half a minute in a
/// debug build; every 40th signed release covers each minor and both counts.
const SAMPLE_EVERY: usize = 40;

fn demo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/demo")
}

fn committed_tree() -> BTreeMap<SignatureName, Vec<u8>> {
    let mut tree = BTreeMap::new();
    walk(&demo_dir().join("signatures"), &mut |found| match found {
        Found::Signature { name, path, .. } => {
            tree.insert(name, std::fs::read(path).expect("a signature file reads"));
        }
        other => panic!("the demo tree holds only signatures, found {other:?}"),
    })
    .expect("testdata/demo/signatures is a directory");
    tree
}

#[test]
fn the_committed_demo_signatures_are_the_generated_ones_and_verify() {
    let versions = channel_versions(&testdata_graph_data()).expect("channel versions");
    let releases = generate(&versions, &Settings::default());
    let committed = committed_tree();
    let stale = "testdata/demo/signatures is stale: regenerate it as testdata/demo/README.md says";

    let signed_digests: BTreeSet<String> = releases
        .iter()
        .filter(|release| demo_signs(release))
        .map(|release| release.payload.digest().to_owned())
        .collect();
    let committed_digests: BTreeSet<String> = committed
        .keys()
        .map(|name| format!("sha256:{}", name.digest()))
        .collect();
    assert!(!signed_digests.is_empty());
    assert!(committed_digests == signed_digests, "{stale}");

    let armored = std::fs::read_to_string(demo_dir().join("signing-key.asc")).expect("the demo public key");
    let keys = TrustedKeys::from_armored(&armored).expect("an OpenPGP public key");
    let key = demo_key();
    assert_eq!(keys.fingerprints(), [key.fingerprint()]);

    let sample = releases
        .iter()
        .filter(|release| demo_signs(release))
        .step_by(SAMPLE_EVERY);
    for release in sample {
        let digest = Digest::parse(release.payload.digest()).expect("a generated digest");
        let generated = sign_release(release, &key, DEMO_MOST_SIGNATURES);
        let next = SignatureName::of(&digest, generated.len() as u32 + 1).expect("a SHA-256 name");
        assert!(!committed.contains_key(&next), "{stale}");
        for (name, bytes) in generated {
            assert!(committed.get(&name) == Some(&bytes), "{stale}");
            let verified = verify_release(&bytes, &digest, &keys).expect("the CVO accepts it");
            assert_eq!(verified.document.docker_reference(), docker_reference(release));
        }
    }
}
