//! Image signatures as OpenShift release tooling makes them: an OpenPGP
//! signed, compressed message whose content is an `image_signature`
//! document naming the image's manifest digest.
//!
//! Keys come from a seed and everything made here says it was made at
//! [`SIGNED_AT`], so the same seed gives the same key (the same fingerprint)
//! and the same signature bytes on every run: test and demo data can be
//! regenerated and compared. Not for signing anything real.

use image_signature::Document;
use pgp::composed::{
    ArmorOptions, EncryptionCaps, KeyType, MessageBuilder, SecretKeyParamsBuilder, SignedPublicKey,
    SignedSecretKey, SubpacketConfig,
};
use pgp::crypto::hash::HashAlgorithm;
use pgp::packet::{Subpacket, SubpacketData};
use pgp::types::{CompressionAlgorithm, Duration, KeyDetails as _, Password, Timestamp};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// 2026-01-01T00:00:00Z, in seconds since the Unix epoch.
pub const SIGNED_AT: u32 = 1_767_225_600;

/// What release tooling writes as `optional.creator`.
const CREATOR: &str = "release-images";

/// A signing key, generated from a seed.
#[derive(Clone)]
pub struct SigningKey(SignedSecretKey);

impl SigningKey {
    /// An Ed25519 key: small signatures, quick to make.
    pub fn from_seed(seed: u64) -> Self {
        Self::generate(KeyType::Ed25519Legacy, seed)
    }

    fn generate(key_type: KeyType, seed: u64) -> Self {
        let mut params = SecretKeyParamsBuilder::default();
        params
            .key_type(key_type)
            .can_certify(true)
            .can_sign(true)
            .can_encrypt(EncryptionCaps::None)
            .created_at(Timestamp::from_secs(SIGNED_AT))
            .primary_user_id("Release signing <release@example.com>".into());
        let key = params
            .build()
            .expect("the key parameters are complete")
            .generate(ChaCha8Rng::seed_from_u64(seed))
            .expect("generating a key from valid parameters cannot fail");
        Self(key)
    }

    /// The public key, ASCII-armored, as a verifier's key file holds it.
    /// Its self-signature carries the time it was armored, so only the key
    /// itself (its [`fingerprint`](Self::fingerprint)) is the same on every run.
    pub fn public_key_armored(&self) -> String {
        SignedPublicKey::from(self.0.clone())
            .to_armored_string(ArmorOptions::default())
            .expect("armoring into memory cannot fail")
    }

    /// Upper-case hexadecimal, as GnuPG prints it.
    pub fn fingerprint(&self) -> String {
        format!("{:X}", self.0.primary_key.fingerprint())
    }

    /// A signature of `digest` (`sha256:<hex>`) for the image `reference`.
    pub fn sign(&self, reference: &str, digest: &str) -> Vec<u8> {
        self.sign_document(&Document::new(reference, digest).with_creator(CREATOR))
    }

    pub fn sign_document(&self, document: &Document) -> Vec<u8> {
        self.sign_content(&document.to_json(), None)
    }

    /// A signature that stops counting `lifetime_secs` after [`SIGNED_AT`].
    pub fn sign_expiring(&self, document: &Document, lifetime_secs: u32) -> Vec<u8> {
        self.sign_content(&document.to_json(), Some(lifetime_secs))
    }

    /// Any content, signed: for tests of what verifiers refuse.
    pub fn sign_content(&self, content: &[u8], lifetime_secs: Option<u32>) -> Vec<u8> {
        let key = &self.0.primary_key;
        let mut hashed = vec![
            SubpacketData::IssuerFingerprint(key.fingerprint()),
            SubpacketData::SignatureCreationTime(Timestamp::from_secs(SIGNED_AT)),
        ];
        if let Some(lifetime) = lifetime_secs {
            hashed.push(SubpacketData::SignatureExpirationTime(Duration::from_secs(
                lifetime,
            )));
        }
        let subpackets = SubpacketConfig::UserDefined {
            hashed: hashed.into_iter().map(subpacket).collect(),
            unhashed: vec![subpacket(SubpacketData::IssuerKeyId(key.legacy_key_id()))],
        };
        let mut builder = MessageBuilder::from_bytes("", content.to_vec());
        builder.compression(CompressionAlgorithm::ZLIB);
        builder.sign_with_subpackets(key, Password::empty(), HashAlgorithm::Sha256, subpackets);
        builder
            .to_vec(ChaCha8Rng::seed_from_u64(7))
            .expect("signing into memory cannot fail")
    }
}

fn subpacket(data: SubpacketData) -> Subpacket {
    Subpacket::regular(data).expect("a signature subpacket of a known kind")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_signatures_are_repeatable() {
        let key = SigningKey::from_seed(1);
        assert_eq!(key.fingerprint(), SigningKey::from_seed(1).fingerprint());
        assert_ne!(key.fingerprint(), SigningKey::from_seed(2).fingerprint());
        assert!(
            key.public_key_armored()
                .starts_with("-----BEGIN PGP PUBLIC KEY BLOCK-----")
        );
        let signature = key.sign("quay.io/a/b:latest", "sha256:00");
        assert_eq!(
            signature,
            SigningKey::from_seed(1).sign("quay.io/a/b:latest", "sha256:00")
        );
        assert_ne!(signature, key.sign("quay.io/a/b:latest", "sha256:01"));
    }
}
