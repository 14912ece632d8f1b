//! A signature as it is served: a file's bytes and their strong entity tag.

use std::sync::Arc;

use bytes::Bytes;
use sha2::{Digest as _, Sha256};

/// A signature file's bytes and its strong entity tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub bytes: Bytes,
    /// `"<sha256 of the bytes>"`, quoted: a signature for a digest never
    /// changes, so neither does its tag. Shared, since hits clone it.
    pub etag: Arc<str>,
}

impl Signature {
    /// `bytes` and their entity tag.
    pub fn of(bytes: Bytes) -> Self {
        let etag = format!("\"{}\"", hex::encode(Sha256::digest(&bytes))).into();
        Self { bytes, etag }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entity_tag_is_the_quoted_sha256_of_the_bytes() {
        let signature = Signature::of(Bytes::from_static(b"abc"));
        assert_eq!(
            &*signature.etag,
            "\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\""
        );
        assert_eq!(signature.bytes, Bytes::from_static(b"abc"));
    }

    #[test]
    fn equal_bytes_have_equal_tags_and_other_bytes_another() {
        let tag = |bytes: &'static [u8]| Signature::of(Bytes::from_static(bytes)).etag;
        assert_eq!(tag(b"one"), tag(b"one"));
        assert_ne!(tag(b"one"), tag(b"two"));
    }
}
