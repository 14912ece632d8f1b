//! Signature verification of a graph-data image digest.
//!
//! Release signatures are OpenPGP signed messages whose content is a JSON
//! document ("atomic container signature"); the one that counts names the
//! image in `critical.image.docker-manifest-digest`. A digest is verified
//! when one of its signatures is signed by a trusted key and names it.
//!
//! [`store`] fetches signatures over HTTP(S) from a signature store laid out
//! as `<base>/<algo>=<hex>/signature-<i>`, each at most
//! [`store::MAX_SIGNATURE_BYTES`].

pub mod store;

use std::path::Path;

use pgp::composed::{Deserializable, Message, SignedPublicKey};
use serde_json::Value;

pub use store::{FetchError, SignatureStore, StoreError};

/// The public keys signatures are checked against (`public_keys_path`).
#[derive(Debug, Clone)]
pub struct TrustedKeys(Vec<SignedPublicKey>);

/// Why a digest could not be verified.
#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    #[error("cannot read public keys from {path}: {reason}")]
    Keys { path: String, reason: String },
    #[error("no public key found in {0}")]
    NoKeys(String),
    #[error("{digest} is not a digest of the form <algorithm>:<hex>")]
    InvalidDigest { digest: String },
    #[error("no valid signature for {digest}: {}", describe(.rejected))]
    NotVerified {
        digest: String,
        /// Why each signature found was rejected; empty when none was found.
        rejected: Vec<String>,
    },
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

impl TrustedKeys {
    /// Keys from ASCII-armored text; one text may hold several keys.
    pub fn from_armored(text: &str) -> Result<Self, SignatureError> {
        Self::parse(text, "armored text")
    }

    /// Every key in every file of `dir`.
    pub fn from_dir(dir: &Path) -> Result<Self, SignatureError> {
        let error = |reason: String| SignatureError::Keys {
            path: dir.display().to_string(),
            reason,
        };
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| error(e.to_string()))?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.is_file())
            .collect();
        paths.sort();
        let mut keys = Vec::new();
        for path in paths {
            let text =
                std::fs::read_to_string(&path).map_err(|e| error(format!("{}: {e}", path.display())))?;
            keys.extend(Self::parse(&text, &path.display().to_string())?.0);
        }
        if keys.is_empty() {
            return Err(SignatureError::NoKeys(dir.display().to_string()));
        }
        Ok(Self(keys))
    }

    fn parse(text: &str, source: &str) -> Result<Self, SignatureError> {
        let error = |reason: String| SignatureError::Keys {
            path: source.to_owned(),
            reason,
        };
        let (keys, _headers) = SignedPublicKey::from_string_many(text).map_err(|e| error(e.to_string()))?;
        let keys = keys
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| error(e.to_string()))?;
        if keys.is_empty() {
            return Err(SignatureError::NoKeys(source.to_owned()));
        }
        Ok(Self(keys))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The first of `signatures` that verifies `digest`, by position.
pub fn verify_digest(
    digest: &str,
    signatures: &[Vec<u8>],
    keys: &TrustedKeys,
) -> Result<usize, SignatureError> {
    split_digest(digest)?;
    let mut rejected = Vec::new();
    for (position, signature) in signatures.iter().enumerate() {
        match verify_one(digest, signature, keys) {
            Ok(()) => return Ok(position),
            Err(why) => rejected.push(format!("signature-{}: {why}", position + 1)),
        }
    }
    Err(SignatureError::NotVerified {
        digest: digest.to_owned(),
        rejected,
    })
}

/// Checks one signature (binary or armored): signed by a trusted key, and
/// naming `digest`. The error says which check failed.
pub fn verify_one(digest: &str, signature: &[u8], keys: &TrustedKeys) -> Result<(), String> {
    let mut message = parse_message(signature)
        .and_then(|message| message.decompress())
        .map_err(|e| format!("not an OpenPGP message: {e}"))?;
    let content = message
        .as_data_vec()
        .map_err(|e| format!("unreadable content: {e}"))?;
    let trusted = keys.0.iter().any(|key| {
        message.verify(key).is_ok()
            || key
                .public_subkeys
                .iter()
                .any(|subkey| message.verify(subkey).is_ok())
    });
    if !trusted {
        return Err("not signed by a trusted key".to_owned());
    }
    let document: Value =
        serde_json::from_slice(&content).map_err(|e| format!("signed content is not JSON: {e}"))?;
    match document
        .pointer("/critical/image/docker-manifest-digest")
        .and_then(Value::as_str)
    {
        Some(signed) if signed == digest => Ok(()),
        Some(signed) => Err(format!("signs {signed}, not {digest}")),
        None => Err("signed content has no critical.image.docker-manifest-digest".to_owned()),
    }
}

fn parse_message(bytes: &[u8]) -> pgp::errors::Result<Message<'_>> {
    if bytes.trim_ascii_start().starts_with(b"-----BEGIN PGP") {
        Message::from_armor(bytes).map(|(message, _headers)| message)
    } else {
        Message::from_bytes(bytes)
    }
}

/// `sha256:abc…` as (`sha256`, `abc…`).
pub(crate) fn split_digest(digest: &str) -> Result<(&str, &str), SignatureError> {
    digest
        .split_once(':')
        .filter(|(algorithm, hex)| {
            !algorithm.is_empty() && !hex.is_empty() && hex.bytes().all(|byte| byte.is_ascii_hexdigit())
        })
        .ok_or_else(|| SignatureError::InvalidDigest {
            digest: digest.to_owned(),
        })
}
