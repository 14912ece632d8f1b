//! Signature verification of a graph-data image digest, by the rule of
//! upstream's graph-builder: the image is used when one of its signatures
//! in a store (`signature-1` … `signature-9`, until the first missing one)
//! is signed by a trusted key and names the digest. The signature format,
//! the keys and the store client are `image_signature`'s.

use image_signature::store::{FetchError, MAX_SIGNATURES, SignatureStore};
use image_signature::{Digest, DigestError, TrustedKeys, verify_digest_claim};

/// Why a digest could not be verified.
#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    #[error(transparent)]
    InvalidDigest(#[from] DigestError),
    #[error("no valid signature for {digest}: {}", describe(.rejected))]
    NotVerified {
        digest: String,
        /// Why each signature found was rejected; empty when none was found.
        rejected: Vec<String>,
    },
    /// The store could not be asked (as opposed to having no valid signature).
    #[error(transparent)]
    Fetch(#[from] FetchError),
}

fn describe(rejected: &[String]) -> String {
    if rejected.is_empty() {
        "the signature store has none".to_owned()
    } else {
        rejected.join("; ")
    }
}

/// The first of `signatures` that verifies `digest`, by position.
pub fn verify_digest(
    digest: &str,
    signatures: &[Vec<u8>],
    keys: &TrustedKeys,
) -> Result<usize, SignatureError> {
    let parsed = Digest::parse(digest)?;
    let mut rejected = Vec::new();
    for (position, signature) in signatures.iter().enumerate() {
        match verify_digest_claim(signature, &parsed, keys) {
            Ok(()) => return Ok(position),
            Err(why) => rejected.push(format!("signature-{}: {why}", position + 1)),
        }
    }
    Err(SignatureError::NotVerified {
        digest: digest.to_owned(),
        rejected,
    })
}

/// Verifies the image `digest` against `store`: fetches its signatures in
/// order until one is valid. Fails with every rejection reason when none
/// is, and with the fetch error when the store cannot be asked.
pub async fn verify_image(
    store: &SignatureStore,
    digest: &str,
    keys: &TrustedKeys,
) -> Result<(), SignatureError> {
    let parsed = Digest::parse(digest)?;
    let mut rejected = Vec::new();
    for index in 1..=MAX_SIGNATURES {
        let Some(signature) = store.fetch(&parsed, index).await? else {
            break;
        };
        match verify_digest_claim(&signature, &parsed, keys) {
            Ok(()) => return Ok(()),
            Err(why) => rejected.push(format!("signature-{index}: {why}")),
        }
    }
    Err(SignatureError::NotVerified {
        digest: digest.to_owned(),
        rejected,
    })
}
