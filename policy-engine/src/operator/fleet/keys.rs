//! How a cluster is named in the fleet store: its id, or with
//! `fleet.hash_ids` a keyed hash of it (HMAC-SHA-256 of the lowercase id,
//! hex), so that the store holds no cluster id and nobody without the key
//! can tell whether a known id is in it. Engines sharing a store share the
//! key.

use hmac::{Hmac, KeyInit as _, Mac as _};
use secrecy::{ExposeSecret as _, SecretSlice};
use sha2::Sha256;

use rollout_model::ClusterId;

/// Bytes a hash key has at least.
pub const MIN_KEY_BYTES: usize = 16;

#[derive(Clone)]
pub enum ClusterKeys {
    /// The id itself.
    Ids,
    /// A keyed hash of the id.
    Hashed(SecretSlice<u8>),
}

impl ClusterKeys {
    /// Keys hashed with `key` (a secret file's content, surrounding
    /// whitespace left out): an error when it is shorter than
    /// [`MIN_KEY_BYTES`].
    pub fn hashed(key: &[u8]) -> Result<Self, String> {
        let key = key.trim_ascii();
        if key.len() < MIN_KEY_BYTES {
            return Err(format!(
                "the hash key has {} bytes; it needs at least {MIN_KEY_BYTES}",
                key.len()
            ));
        }
        Ok(Self::Hashed(SecretSlice::from(key.to_vec())))
    }

    /// The name `id` is stored under.
    pub fn key(&self, id: &ClusterId) -> String {
        match self {
            Self::Ids => id.as_str().to_owned(),
            Self::Hashed(key) => {
                let mut mac = Hmac::<Sha256>::new_from_slice(key.expose_secret())
                    .expect("HMAC takes keys of any length");
                mac.update(id.as_str().as_bytes());
                hex::encode(mac.finalize().into_bytes())
            }
        }
    }

    /// The name asked for by `raw`: a cluster id (stored as its key), or,
    /// when ids are hashed, a key itself (as the answers show them).
    pub fn lookup(&self, raw: &str) -> Option<String> {
        if let Some(id) = ClusterId::parse(raw) {
            return Some(self.key(&id));
        }
        let is_hash = raw.len() == 64 && raw.bytes().all(|byte| byte.is_ascii_hexdigit());
        (matches!(self, Self::Hashed(_)) && is_hash).then(|| raw.to_ascii_lowercase())
    }
}

impl std::fmt::Debug for ClusterKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Ids => "ClusterKeys::Ids",
            Self::Hashed(_) => "ClusterKeys::Hashed(<redacted>)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60";

    #[test]
    fn ids_are_kept_or_hashed_with_the_key() {
        let id = ClusterId::parse(&ID.to_uppercase()).unwrap();
        assert_eq!(ClusterKeys::Ids.key(&id), ID);
        let hashed = ClusterKeys::hashed(b"  sixteen bytes!!!\n").unwrap();
        let key = hashed.key(&id);
        // The key trimmed; as Python's hmac computes it:
        // python3 -c 'import hmac,hashlib;print(hmac.new(b"sixteen bytes!!!",b"<ID>",hashlib.sha256).hexdigest())'
        assert_eq!(
            key,
            "c1f8ea47cceb9e496e1de899959334417c277dcab1668f3382ce4919f015df40"
        );
        assert_ne!(key, ClusterKeys::hashed(b"another key of 16").unwrap().key(&id));
        assert_eq!(hashed.lookup(ID), Some(key.clone()));
        assert_eq!(hashed.lookup(&key.to_uppercase()), Some(key.clone()));
        assert_eq!(
            ClusterKeys::Ids.lookup(&key),
            None,
            "without hashing, a hash names nobody"
        );
        assert_eq!(hashed.lookup("not-an-id"), None);
    }

    #[test]
    fn a_short_key_is_refused() {
        let error = ClusterKeys::hashed(b"short\n").unwrap_err();
        assert_eq!(error, "the hash key has 5 bytes; it needs at least 16");
        assert!(!format!("{:?}", ClusterKeys::hashed(b"sixteen bytes!!!").unwrap()).contains("sixteen"));
    }
}
