//! What the store and verification tests share: the release digest they sign and ask for.

use image_signature::Digest;

pub const DIGEST: &str = "sha256:4ab6f4a3e18df3e7c0b2be6cda44b6e1f6e8a0dba1b8a35b1b3a2bb0f5b6c7d8";

pub fn digest() -> Digest {
    Digest::parse(DIGEST).unwrap()
}
