//! The signatures asked for most recently, in memory, bounded in bytes.
//!
//! A signature for a digest never changes, and clusters ask the same few
//! (the releases they update to) over and over: a hit answers without the
//! four system calls and the path walk of opening and reading the file, and
//! without hashing it again for its entity tag. A cache belongs to one open
//! root of one set (see [`crate::set`]): a root swapped in place, or the next
//! scan or tarball revision, starts with an empty one, so a signature removed
//! from a directory is served at most until the next scan.

use parking_lot::Mutex;

use image_signature::layout::SignatureName;
use lru::LruCache;

use crate::signature::Signature;

/// Bytes of signatures kept per set: the whole 2026 OpenShift mirror (about
/// 12,000 signatures of under a kilobyte) fits twice over, and the helper
/// stays within its manifests' 32 MiB memory request.
pub const CACHE_BYTES: usize = 12 << 20;

/// What an entry costs besides the signature's bytes: its name, entity tag
/// and the map's node, roughly.
const ENTRY_OVERHEAD: usize = 256;

#[derive(Debug)]
pub struct SignatureCache {
    capacity: usize,
    entries: Mutex<Entries>,
}

#[derive(Debug)]
struct Entries {
    lru: LruCache<SignatureName, Signature>,
    bytes: usize,
}

impl SignatureCache {
    /// A cache of at most `capacity` bytes (entries included).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: Mutex::new(Entries {
                lru: LruCache::unbounded(),
                bytes: 0,
            }),
        }
    }

    pub fn get(&self, name: &SignatureName) -> Option<Signature> {
        self.lock().lru.get(name).cloned()
    }

    /// Keeps `signature` as `name`, forgetting the least recently asked
    /// ones as needed; a signature larger than the whole cache is not kept.
    pub fn insert(&self, name: SignatureName, signature: Signature) {
        let cost = cost(&signature);
        if cost > self.capacity {
            return;
        }
        let mut entries = self.lock();
        if let Some(replaced) = entries.lru.put(name, signature) {
            entries.bytes -= self::cost(&replaced);
        }
        entries.bytes += cost;
        while entries.bytes > self.capacity {
            let Some((_, forgotten)) = entries.lru.pop_lru() else {
                break;
            };
            entries.bytes -= self::cost(&forgotten);
        }
    }

    /// Bytes held, entries included.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Entries> {
        // An entry is whole or absent: a panic elsewhere cannot leave one torn.
        self.entries.lock()
    }
}

fn cost(signature: &Signature) -> usize {
    signature.bytes.len() + ENTRY_OVERHEAD
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn name(index: u32) -> SignatureName {
        SignatureName::parse("sha256", &"a".repeat(64), &format!("signature-{index}")).unwrap()
    }

    fn signature(len: usize) -> Signature {
        Signature::of(Bytes::from(vec![b'x'; len]))
    }

    #[test]
    fn the_least_recently_asked_signatures_are_forgotten_first_and_the_bound_holds() {
        let cache = SignatureCache::new(3 * (100 + ENTRY_OVERHEAD));
        for index in 1..=3 {
            cache.insert(name(index), signature(100));
        }
        assert!(cache.get(&name(1)).is_some(), "1 is now the most recent");
        cache.insert(name(4), signature(100));
        assert!(cache.get(&name(2)).is_none(), "2 was the least recent");
        for kept in [1, 3, 4] {
            assert!(cache.get(&name(kept)).is_some(), "{kept}");
        }
        assert_eq!(cache.bytes(), 3 * (100 + ENTRY_OVERHEAD));

        cache.insert(name(5), signature(250));
        assert!(cache.bytes() <= 3 * (100 + ENTRY_OVERHEAD), "{}", cache.bytes());
        assert_eq!(cache.get(&name(5)).unwrap().bytes.len(), 250);
    }

    #[test]
    fn a_signature_larger_than_the_cache_is_not_kept_and_a_replaced_one_is_counted_once() {
        let cache = SignatureCache::new(1000);
        cache.insert(name(1), signature(2000));
        assert!(cache.get(&name(1)).is_none());
        cache.insert(name(1), signature(10));
        cache.insert(name(1), signature(20));
        assert_eq!(cache.bytes(), 20 + ENTRY_OVERHEAD);
    }
}
