//! The OpenPGP public keys signatures are checked against (a keyring).

use std::path::Path;

use pgp::composed::{Deserializable, SignedPublicKey};
use pgp::types::KeyDetails as _;

/// Public keys, from ASCII-armored text or a directory of key files
/// (upstream's `public_keys_path`).
#[derive(Debug, Clone)]
pub struct TrustedKeys(pub(crate) Vec<SignedPublicKey>);

#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    #[error("cannot read public keys from {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("no public key found in {0}")]
    NoKeys(String),
}

impl TrustedKeys {
    /// Keys from ASCII-armored text; one text may hold several keys.
    pub fn from_armored(text: &str) -> Result<Self, KeysError> {
        Self::parse(text, "armored text")
    }

    /// Every key in every file of `dir`.
    pub fn from_dir(dir: &Path) -> Result<Self, KeysError> {
        let error = |reason: String| KeysError::Read {
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
            return Err(KeysError::NoKeys(dir.display().to_string()));
        }
        Ok(Self(keys))
    }

    fn parse(text: &str, source: &str) -> Result<Self, KeysError> {
        let error = |reason: String| KeysError::Read {
            path: source.to_owned(),
            reason,
        };
        let (keys, _headers) = SignedPublicKey::from_string_many(text).map_err(|e| error(e.to_string()))?;
        let keys = keys
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| error(e.to_string()))?;
        if keys.is_empty() {
            return Err(KeysError::NoKeys(source.to_owned()));
        }
        Ok(Self(keys))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The primary keys' fingerprints, upper-case hexadecimal as GnuPG and
    /// the CVO print them.
    pub fn fingerprints(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|key| format!("{:X}", key.primary_key.fingerprint()))
            .collect()
    }
}
