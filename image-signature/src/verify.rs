//! Checking one signature: an OpenPGP message signed by a trusted key, whose
//! content is a [`Document`] about the image in question.

use std::io::Read as _;
use std::time::{Duration, SystemTime};

use pgp::composed::Message;
use pgp::packet::Signature;
use pgp::types::KeyDetails as _;

use crate::digest::Digest;
use crate::document::{ATOMIC_CONTAINER_SIGNATURE, Document};
use crate::keys::TrustedKeys;

/// The CVO reads at most this much of a signature (and fails to verify the
/// rest); so a larger one is rejected, whatever it holds.
pub const CVO_READ_LIMIT: usize = 50 * 1024;

/// The signed content read at most: a document is a few hundred bytes, and
/// a small compressed message must not inflate into memory without bound.
pub const MAX_CONTENT_BYTES: usize = 64 * 1024;

/// A signature that passed: who signed it, when, and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The fingerprint of the (sub)key that made the signature, upper-case hex.
    pub signer: String,
    pub signed_at: Option<SystemTime>,
    pub document: Document,
}

/// Why a signature does not count. The message names the check that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("larger than the {limit} bytes the cluster-version operator reads")]
    TooLarge { limit: usize },
    #[error("not an OpenPGP message: {0}")]
    NotOpenPgp(String),
    #[error("unreadable content: {0}")]
    Unreadable(String),
    #[error("signed content larger than {limit} bytes")]
    ContentTooLarge { limit: usize },
    #[error("not signed by a trusted key")]
    Untrusted,
    #[error("the signature expired {0} seconds after the Unix epoch")]
    Expired(u64),
    #[error("signed content is not JSON: {0}")]
    NotJson(String),
    #[error("signed content is not an atomic container signature: {0}")]
    NotADocument(String),
    #[error("the signature's type is {0:?}, not {ATOMIC_CONTAINER_SIGNATURE:?}")]
    WrongType(String),
    #[error("the signature names no identity (critical.identity.docker-reference)")]
    NoIdentity,
    #[error("signed content has no critical.image.docker-manifest-digest")]
    NoDigest,
    #[error("signs {signed}, not {expected}")]
    OtherDigest { signed: String, expected: String },
}

/// Checks a release signature by the cluster-version operator's rules: at
/// most [`CVO_READ_LIMIT`] bytes, signed by a trusted key, not expired, a
/// [`Document`] with no unknown key, of type [`ATOMIC_CONTAINER_SIGNATURE`],
/// with an identity, naming `digest`.
pub fn verify_release(signature: &[u8], digest: &Digest, keys: &TrustedKeys) -> Result<Verified, Rejection> {
    if signature.len() > CVO_READ_LIMIT {
        return Err(Rejection::TooLarge {
            limit: CVO_READ_LIMIT,
        });
    }
    let opened = open(signature, keys)?;
    let document =
        Document::parse(&opened.content).map_err(|error| Rejection::NotADocument(error.to_string()))?;
    if document.critical.kind != ATOMIC_CONTAINER_SIGNATURE {
        return Err(Rejection::WrongType(document.critical.kind));
    }
    if document.docker_reference().is_empty() {
        return Err(Rejection::NoIdentity);
    }
    if document.manifest_digest() != digest.as_str() {
        return Err(Rejection::OtherDigest {
            signed: document.manifest_digest().to_owned(),
            expected: digest.to_string(),
        });
    }
    Ok(Verified {
        signer: opened.signer,
        signed_at: opened.signed_at,
        document,
    })
}

/// Checks only that a trusted key signed content naming `digest` in
/// `critical.image.docker-manifest-digest`: the rule upstream's
/// graph-builder applies to the signatures of graph-data images.
pub fn verify_digest_claim(signature: &[u8], digest: &Digest, keys: &TrustedKeys) -> Result<(), Rejection> {
    let opened = open(signature, keys)?;
    let document: serde_json::Value =
        serde_json::from_slice(&opened.content).map_err(|error| Rejection::NotJson(error.to_string()))?;
    match document
        .pointer("/critical/image/docker-manifest-digest")
        .and_then(serde_json::Value::as_str)
    {
        Some(signed) if signed == digest.as_str() => Ok(()),
        Some(signed) => Err(Rejection::OtherDigest {
            signed: signed.to_owned(),
            expected: digest.to_string(),
        }),
        None => Err(Rejection::NoDigest),
    }
}

/// An OpenPGP message's content, once a trusted key's signature over it
/// checked out.
struct Opened {
    content: Vec<u8>,
    signer: String,
    signed_at: Option<SystemTime>,
}

/// Reads a signed message (binary, as stores hold them, or armored), its
/// content bounded, and finds the trusted key (primary or subkey) that signed it.
fn open(signature: &[u8], keys: &TrustedKeys) -> Result<Opened, Rejection> {
    let mut message = parse_message(signature)
        .and_then(Message::decompress)
        .map_err(|error| Rejection::NotOpenPgp(error.to_string()))?;
    let mut content = Vec::new();
    (&mut message)
        .take(MAX_CONTENT_BYTES as u64 + 1)
        .read_to_end(&mut content)
        .map_err(|error| Rejection::Unreadable(error.to_string()))?;
    if content.len() > MAX_CONTENT_BYTES {
        return Err(Rejection::ContentTooLarge {
            limit: MAX_CONTENT_BYTES,
        });
    }
    let (signature, signer) = keys
        .0
        .iter()
        .find_map(|key| {
            let by_primary = message
                .verify(&key.primary_key)
                .map(|signature| (signature, key.primary_key.fingerprint()));
            by_primary.ok().or_else(|| {
                key.public_subkeys.iter().find_map(|subkey| {
                    message
                        .verify(&subkey.key)
                        .ok()
                        .map(|signature| (signature, subkey.key.fingerprint()))
                })
            })
        })
        .ok_or(Rejection::Untrusted)?;
    let signed_at = signature.created().map(SystemTime::from);
    if let Some(expired) = expiry(signature).filter(|expiry| *expiry < SystemTime::now()) {
        return Err(Rejection::Expired(unix_seconds(expired)));
    }
    Ok(Opened {
        content,
        signer: format!("{signer:X}"),
        signed_at,
    })
}

/// When a signature with a lifetime stops counting (the CVO checks this).
fn expiry(signature: &Signature) -> Option<SystemTime> {
    let lifetime = signature.signature_expiration_time()?.as_secs();
    let created = SystemTime::from(signature.created()?);
    (lifetime > 0).then(|| created + Duration::from_secs(lifetime.into()))
}

fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

fn parse_message(bytes: &[u8]) -> pgp::errors::Result<Message<'_>> {
    if bytes.trim_ascii_start().starts_with(b"-----BEGIN PGP") {
        Message::from_armor(bytes).map(|(message, _headers)| message)
    } else {
        Message::from_bytes(bytes)
    }
}
