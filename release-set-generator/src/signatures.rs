//! Release signatures for a generated release set, laid out as `oc adm
//! release mirror` leaves them in graph-data: `<algo>/<hex>/signature-<N>`
//! under `signatures/`. Deterministic like the set itself: the key comes
//! from a seed, every signature says it was made at the same instant, so
//! the same releases give the same bytes.
//!
//! The demo data (`testdata/demo/signatures`, `testdata/demo/signing-key.asc`)
//! signs the releases from [`DEMO_SIGNED_FROM`] on, once or twice each:
//! what a disconnected cluster updating today verifies, in about a megabyte
//! of repository, while older releases have none (a CVO gets 404 for their
//! `signature-1`). Benchmarks sign every release, one to three times.

use std::io;
use std::path::Path;

use graph_builder::found::FoundRelease;
use image_signature::Document;
use image_signature::layout::{Algorithm, SignatureName};
use release_images::signature::SigningKey;

use crate::REPOSITORY;

/// The demo key is `SigningKey::from_seed(DEMO_KEY_SEED)`: its private half
/// is derived, never stored; its public half is committed.
pub const DEMO_KEY_SEED: u64 = 2026;

/// The first minor whose releases the demo data signs.
pub const DEMO_SIGNED_FROM: (u64, u64) = (4, 18);

/// One signature file of the tree.
pub type SignatureFile = (SignatureName, Vec<u8>);

pub fn demo_key() -> SigningKey {
    SigningKey::from_seed(DEMO_KEY_SEED)
}

/// The most signatures the demo data has for one release.
pub const DEMO_MOST_SIGNATURES: u32 = 2;

/// The demo signatures of `releases`: from [`DEMO_SIGNED_FROM`] on, one to
/// [`DEMO_MOST_SIGNATURES`] each.
pub fn demo_signatures(releases: &[FoundRelease], key: &SigningKey) -> Vec<SignatureFile> {
    releases
        .iter()
        .filter(|release| demo_signs(release))
        .flat_map(|release| sign_release(release, key, DEMO_MOST_SIGNATURES))
        .collect()
}

/// Whether the demo data signs `release`.
pub fn demo_signs(release: &FoundRelease) -> bool {
    let version = &release.document.version;
    (version.major, version.minor) >= DEMO_SIGNED_FROM
}

/// Signatures of `release`, `signature-1` first: one to `most` of them (as
/// many as its digest says), each the same claim with its own creator.
pub fn sign_release(release: &FoundRelease, key: &SigningKey, most: u32) -> Vec<SignatureFile> {
    let digest = release.payload.digest();
    let (_, hex) = digest
        .split_once(':')
        .expect("a generated digest is <algorithm>:<hex>");
    let reference = docker_reference(release);
    (1..=signature_count(hex, most))
        .map(|index| {
            let name =
                SignatureName::new(Algorithm::Sha256, hex, index).expect("a generated digest is SHA-256");
            let document = Document::new(&reference, digest)
                .with_creator(&format!("release-set-generator, signature {index}"));
            (name, key.sign_document(&document))
        })
        .collect()
}

/// Where release tooling published the release: `<repository>:<version>-<arch>`,
/// with the architecture as release tags spell it.
pub fn docker_reference(release: &FoundRelease) -> String {
    let arch = match release.arch.as_str() {
        "amd64" => "x86_64",
        "arm64" => "aarch64",
        other => other,
    };
    format!("{REPOSITORY}:{}-{arch}", release.document.version)
}

/// 1 to `most`, from the digest: how many times release tooling signed it.
fn signature_count(hex: &str, most: u32) -> u32 {
    let byte = u32::from_str_radix(&hex[..2], 16).expect("a digest is hexadecimal");
    1 + byte % most
}

/// Writes `signatures` as a tree at `root`, replacing any tree there.
pub fn write_tree(root: &Path, signatures: &[SignatureFile]) -> io::Result<()> {
    for algorithm in Algorithm::ALL {
        let dir = root.join(algorithm.as_str());
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
    }
    for (name, content) in signatures {
        let path = root.join(name.path());
        std::fs::create_dir_all(path.parent().expect("a signature path has a directory"))?;
        std::fs::write(path, content)?;
    }
    Ok(())
}
