//! Image signatures as OpenShift release tooling makes them: an OpenPGP
//! signed, compressed message whose JSON content ("atomic container
//! signature") names the image's manifest digest, kept in a signature store
//! under `<base>/sha256=<hex>/signature-<n>`.

use pgp::composed::{
    ArmorOptions, EncryptionCaps, KeyType, MessageBuilder, SecretKeyParamsBuilder, SignedPublicKey,
    SignedSecretKey,
};
use pgp::crypto::hash::HashAlgorithm;
use pgp::types::{CompressionAlgorithm, Password};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// A signing key, generated from a seed: the same seed, the same key, so
/// tests are repeatable. Not for signing anything real.
#[derive(Clone)]
pub struct SigningKey(SignedSecretKey);

impl SigningKey {
    pub fn from_seed(seed: u64) -> Self {
        let mut params = SecretKeyParamsBuilder::default();
        params
            .key_type(KeyType::Ed25519Legacy)
            .can_certify(true)
            .can_sign(true)
            .can_encrypt(EncryptionCaps::None)
            .primary_user_id("Release signing <release@example.com>".into());
        let key = params
            .build()
            .expect("the key parameters are complete")
            .generate(ChaCha8Rng::seed_from_u64(seed))
            .expect("generating an Ed25519 key cannot fail");
        Self(key)
    }

    /// The public key, ASCII-armored, as a verifier's key file holds it.
    pub fn public_key_armored(&self) -> String {
        SignedPublicKey::from(self.0.clone())
            .to_armored_string(ArmorOptions::default())
            .expect("armoring into memory cannot fail")
    }

    /// A signature of `digest` (`sha256:<hex>`) for the image `reference`.
    pub fn sign(&self, reference: &str, digest: &str) -> Vec<u8> {
        let document = serde_json::json!({
            "critical": {
                "identity": {"docker-reference": reference},
                "image": {"docker-manifest-digest": digest},
                "type": "atomic container signature",
            },
            "optional": {"creator": "release-images"},
        });
        let mut builder = MessageBuilder::from_bytes("", document.to_string().into_bytes());
        builder.compression(CompressionAlgorithm::ZLIB);
        builder.sign(&self.0.primary_key, Password::empty(), HashAlgorithm::Sha256);
        builder
            .to_vec(ChaCha8Rng::seed_from_u64(7))
            .expect("signing into memory cannot fail")
    }
}

/// Where the `index`-th signature (from 1) of `digest` sits in a store,
/// relative to its base URL.
pub fn store_path(digest: &str, index: usize) -> String {
    let (algorithm, hex) = digest.split_once(':').unwrap_or(("sha256", digest));
    format!("{algorithm}={hex}/signature-{index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_repeatable_and_signatures_name_the_digest() {
        let key = SigningKey::from_seed(1);
        assert_eq!(
            key.public_key_armored(),
            SigningKey::from_seed(1).public_key_armored()
        );
        assert_ne!(
            key.public_key_armored(),
            SigningKey::from_seed(2).public_key_armored()
        );
        assert!(
            key.public_key_armored()
                .starts_with("-----BEGIN PGP PUBLIC KEY BLOCK-----")
        );
        assert!(!key.sign("quay.io/a/b:latest", "sha256:00").is_empty());
        assert_eq!(store_path("sha256:abc", 2), "sha256=abc/signature-2");
    }
}
