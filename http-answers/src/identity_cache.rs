//! Identity bytes of compressed-only bodies, for the few that clients
//! without gzip keep asking for.
//!
//! Cluster-version operators always send `Accept-Encoding: gzip`, so keeping
//! every answer's identity bytes costs about ten times the memory of the
//! answers themselves for the rare client without gzip. Inflating for every
//! such request costs CPU instead. This keeps the identity bytes of the
//! answers most recently asked for without gzip, up to a byte budget: a hot
//! answer is served from memory as fast as a kept one, a cold one is
//! inflated as it is sent, and memory stays bounded whatever clients ask.
//! The identity bytes of a body no longer served (an answer of a graph since
//! replaced) go at the next insertion rather than when the budget runs out:
//! an engine whose graph changes every minute would otherwise fill its whole
//! budget with answers no one can ask for any more.

use parking_lot::Mutex;
use std::collections::HashMap;

use bytes::Bytes;

use crate::PreparedBody;

/// Identity bytes by content digest, least recently used evicted first.
#[derive(Debug)]
pub struct IdentityCache {
    budget: usize,
    state: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    by_digest: HashMap<String, Entry>,
    held: usize,
    /// Incremented on every use: the entry with the smallest is evicted.
    clock: u64,
}

#[derive(Debug)]
struct Entry {
    identity: Bytes,
    last_used: u64,
    /// A share of the body's gzip bytes: once it is the only one left, the
    /// body itself is gone and nobody can ask for its identity bytes again.
    gzip: Bytes,
}

impl Entry {
    fn body_is_gone(&self) -> bool {
        self.gzip.is_unique()
    }
}

impl IdentityCache {
    /// Keeps at most `budget` bytes of identity bodies; 0 keeps none.
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            state: Mutex::default(),
        }
    }

    /// The identity bytes of `body`, inflated into the cache on first use;
    /// `None` when they are larger than the whole budget (inflate them as
    /// they are sent).
    pub fn get_or_inflate(&self, body: &PreparedBody) -> Option<Bytes> {
        let len = usize::try_from(body.identity_len()).ok()?;
        if len > self.budget {
            return None;
        }
        if let Some(identity) = self.lock().touch(body) {
            return Some(identity);
        }
        // Inflated outside the lock: two first requests may both inflate.
        let identity = body.inflate().ok()?;
        let mut entries = self.lock();
        if entries.touch(body).is_none() {
            let entry = Entry {
                identity: identity.clone(),
                last_used: 0,
                gzip: body.gzip_bytes(),
            };
            entries.insert(body.digest().to_owned(), entry, self.budget);
        }
        Some(identity)
    }

    /// Bytes held now.
    pub fn held_bytes(&self) -> usize {
        self.lock().held
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, Entries> {
        self.state.lock()
    }
}

impl Entries {
    /// The identity bytes of `body`'s content, if kept, marked as just used
    /// and tied to `body` (another body of the same content may be the one
    /// still served).
    fn touch(&mut self, body: &PreparedBody) -> Option<Bytes> {
        self.clock += 1;
        let clock = self.clock;
        self.by_digest.get_mut(body.digest()).map(|entry| {
            entry.last_used = clock;
            entry.gzip = body.gzip_bytes();
            entry.identity.clone()
        })
    }

    fn insert(&mut self, digest: String, mut entry: Entry, budget: usize) {
        self.forget_gone_bodies();
        while self.held + entry.identity.len() > budget {
            let Some(oldest) = self
                .by_digest
                .iter()
                .min_by_key(|(_, entry)| entry.last_used)
                .map(|(digest, _)| digest.clone())
            else {
                break;
            };
            if let Some(evicted) = self.by_digest.remove(&oldest) {
                self.held -= evicted.identity.len();
            }
        }
        self.held += entry.identity.len();
        entry.last_used = self.clock;
        self.by_digest.insert(digest, entry);
    }

    fn forget_gone_bodies(&mut self) {
        let held = &mut self.held;
        self.by_digest.retain(|_, entry| {
            let gone = entry.body_is_gone();
            if gone {
                *held -= entry.identity.len();
            }
            !gone
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(seed: usize, len: usize) -> PreparedBody {
        let text: String = (0..len).map(|n| format!("{seed}:{n},")).collect::<String>()[..len].to_owned();
        PreparedBody::compressed(|out| out.write_all(text.as_bytes())).unwrap()
    }

    fn identity(body: &PreparedBody) -> Vec<u8> {
        let mut written = Vec::new();
        body.write_identity(&mut written).unwrap();
        written
    }

    #[test]
    fn identity_bytes_are_inflated_once_and_kept() {
        let cache = IdentityCache::new(10_000);
        let answer = body(1, 4_000);
        let first = cache.get_or_inflate(&answer).unwrap();
        assert_eq!(first, identity(&answer));
        assert_eq!(cache.held_bytes(), 4_000);
        let second = cache.get_or_inflate(&answer).unwrap();
        assert_eq!(
            second.as_ptr(),
            first.as_ptr(),
            "the same bytes, not inflated again"
        );
    }

    #[test]
    fn the_least_recently_used_are_evicted_to_stay_within_the_budget() {
        let cache = IdentityCache::new(7_000);
        let (a, b, c) = (body(1, 4_000), body(2, 3_000), body(3, 2_500));
        cache.get_or_inflate(&a);
        cache.get_or_inflate(&b);
        cache.get_or_inflate(&a);
        cache.get_or_inflate(&c);
        assert_eq!(cache.held_bytes(), 6_500, "b made room for c, a was used since");
        assert_eq!(cache.get_or_inflate(&a).unwrap(), identity(&a));
        cache.get_or_inflate(&b);
        assert_eq!(cache.held_bytes(), 7_000, "c made room for b");
    }

    #[test]
    fn the_identity_bytes_of_a_body_no_longer_served_go_at_the_next_insertion() {
        let cache = IdentityCache::new(100_000);
        let (replaced, kept) = (body(1, 4_000), body(2, 3_000));
        cache.get_or_inflate(&replaced);
        cache.get_or_inflate(&kept);
        drop(replaced);
        assert_eq!(cache.held_bytes(), 7_000, "nothing is swept between insertions");
        let newer = body(3, 2_000);
        cache.get_or_inflate(&newer);
        assert_eq!(
            cache.held_bytes(),
            5_000,
            "the dropped body's bytes went, the others stay"
        );
        assert_eq!(cache.get_or_inflate(&kept).unwrap(), identity(&kept));
    }

    #[test]
    fn a_body_larger_than_the_budget_is_not_kept() {
        let cache = IdentityCache::new(1_000);
        assert_eq!(cache.get_or_inflate(&body(1, 4_000)), None);
        assert_eq!(cache.held_bytes(), 0);
    }
}
