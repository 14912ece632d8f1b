//! Who a cluster is to a rollout: its id as the cluster-version operator
//! sends it, its public [`Place`] (the order clusters are let in by a
//! rollout's schedule), and its secret [`Lot`] (the order gates choose
//! canaries and admit clusters in, which nobody outside can compute).
//!
//! The place is a stable hash of the id, the same across restarts and
//! replicas, so an operator can compute it:
//!
//! ```text
//! place = (first 8 bytes of SHA-256(lowercase hyphenated UUID), big-endian) / 2^64
//! ```
//!
//! a fraction in [0, 1), shown as a percentage. In a shell:
//! `python3 -c 'import hashlib,sys; print(int(hashlib.sha256(sys.argv[1].lower().encode()).hexdigest()[:16], 16) / 2**64 * 100)' "$ID"`.
//!
//! Anyone can mint an id with a low place (a few million hashes), so a
//! place must never decide who steers a rollout: gates order clusters by
//! their lot instead, HMAC-SHA-256 of the cluster's stored name under a
//! secret the fleet store keeps, rotated per rollout.

use std::fmt;
use std::sync::Arc;

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::{Digest as _, Sha256};

/// A cluster's UUID, lowercased: the canonical 8-4-4-4-12 hex form only.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClusterId([u8; 36]);

impl ClusterId {
    /// `None` for anything but a hyphenated UUID (any case).
    pub fn parse(raw: &str) -> Option<Self> {
        let bytes: &[u8; 36] = raw.as_bytes().try_into().ok()?;
        let mut lowercase = [0; 36];
        for (position, (&byte, out)) in bytes.iter().zip(&mut lowercase).enumerate() {
            let hyphen_here = matches!(position, 8 | 13 | 18 | 23);
            *out = match byte {
                b'-' if hyphen_here => b'-',
                _ if !hyphen_here && byte.is_ascii_hexdigit() => byte.to_ascii_lowercase(),
                _ => return None,
            };
        }
        Some(Self(lowercase))
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("only ASCII is kept")
    }

    /// The cluster's place in every rollout (see the module).
    pub fn place(&self) -> Place {
        let digest = Sha256::digest(self.0);
        let leading: [u8; 8] = digest[..8].try_into().expect("SHA-256 has 32 bytes");
        Place(u64::from_be_bytes(leading) as f64 / 2f64.powi(64))
    }

    /// The id with its place, for a request that asks both more than once.
    pub fn placed(self) -> Placed {
        Placed {
            id: self,
            place: self.place(),
        }
    }
}

/// A cluster's id and its place, hashed once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    pub id: ClusterId,
    pub place: Place,
}

impl fmt::Debug for ClusterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ClusterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A place in rollouts: a fraction in [0, 1]. A cluster is inside a
/// rollout's schedule once the rollout's progress (percent) is above its
/// place in percent, or the rollout is complete.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Place(f64);

impl Place {
    pub fn percent(self) -> f64 {
        self.0 * 100.0
    }

    /// The place as a fraction in [0, 1]: how far into a rollout's window
    /// the cluster's moment is (graph-data's phased rollouts).
    pub fn fraction(self) -> f64 {
        self.0
    }

    /// The place at `percent` (as [`Place::percent`] gives it, and the
    /// fleet store keeps it).
    pub fn from_percent(percent: f64) -> Self {
        Self((percent / 100.0).clamp(0.0, 1.0))
    }

    /// Whether a threshold of `progress` percent lets this place in.
    pub fn is_below(self, progress: f64) -> bool {
        progress >= 100.0 || self.percent() < progress
    }
}

/// A cluster's secret draw in gated rollouts (see the module): the first 8
/// bytes of HMAC-SHA-256(store secret, the cluster's stored name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lot(u64);

impl Lot {
    /// The lot of the cluster stored as `cluster` (its id or the keyed
    /// hash of it), under the store's `secret`.
    pub fn draw(secret: &[u8], cluster: &str) -> Self {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
        mac.update(cluster.as_bytes());
        let digest = mac.finalize().into_bytes();
        Self(u64::from_be_bytes(
            digest[..8].try_into().expect("HMAC-SHA-256 has 32 bytes"),
        ))
    }

    /// Its rank in a rollout whose rotation is `offset`: lots from the
    /// offset up come first, so each rollout draws its own first clusters.
    pub fn rank(self, offset: u64) -> u64 {
        self.0.wrapping_sub(offset)
    }

    /// As a signed 64-bit column keeps it, in the same order.
    pub fn to_stored(self) -> i64 {
        i64::from_be_bytes((self.0 ^ (1 << 63)).to_be_bytes())
    }

    pub fn from_stored(stored: i64) -> Self {
        Self(u64::from_be_bytes(stored.to_be_bytes()) ^ (1 << 63))
    }

    pub fn from_bits(bits: u64) -> Self {
        Self(bits)
    }

    pub fn bits(self) -> u64 {
        self.0
    }
}

/// Clusters named by their lots (canaries, those a rate admitted), sorted:
/// asked once per request, shared between engines' copies of a state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lots(Arc<[Lot]>);

impl Lots {
    pub fn new(mut lots: Vec<Lot>) -> Self {
        lots.sort_unstable();
        lots.dedup();
        Self(lots.into())
    }

    pub fn contains(&self, lot: Lot) -> bool {
        self.0.binary_search(&lot).is_ok()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = Lot> + '_ {
        self.0.iter().copied()
    }

    /// These and `more`, sorted.
    pub fn with(&self, more: impl IntoIterator<Item = Lot>) -> Self {
        Self::new(self.0.iter().copied().chain(more).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hyphenated_uuids_are_ids_and_case_does_not_matter() {
        let upper = ClusterId::parse("0F2A9C4E-5B1D-4C3E-8F7A-1B2C3D4E5F60").unwrap();
        assert_eq!(upper.as_str(), "0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60");
        assert_eq!(
            ClusterId::parse("0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60"),
            Some(upper)
        );
        for bad in [
            "",
            "not-a-uuid",
            "0f2a9c4e5b1d4c3e8f7a1b2c3d4e5f60",
            "0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f6g",
            "0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f6",
            "0f2a9c4e-5b1d-4c3e-8f7a1-b2c3d4e5f60",
            "é0f2a9c4-5b1d-4c3e-8f7a-1b2c3d4e5f6",
        ] {
            assert_eq!(ClusterId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_place_is_the_documented_formula() {
        // printf %s 00000000-0000-0000-0000-000000000000 | sha256sum
        //   → 12b9377cbe7e5c94e8a70d9d23929523d14afa954793130f8a3959c7b849aca8
        let id = ClusterId::parse("00000000-0000-0000-0000-000000000000").unwrap();
        let expected = 0x12b9377cbe7e5c94_u64 as f64 / 2f64.powi(64);
        assert_eq!(id.place(), Place(expected));
        assert!((id.place().percent() - 7.314).abs() < 0.001);
    }

    #[test]
    fn places_are_uniform() {
        let mut buckets = [0_u32; 10];
        for n in 0..10_000_u32 {
            let id = ClusterId::parse(&format!("{n:08x}-0000-4000-8000-000000000000")).unwrap();
            buckets[(id.place().percent() / 10.0) as usize] += 1;
        }
        for count in buckets {
            assert!((900..=1100).contains(&count), "{buckets:?}");
        }
    }

    #[test]
    fn a_lot_is_the_documented_hmac_and_stored_in_order() {
        // python3 -c 'import hmac,hashlib;print(hmac.new(b"secret",b"cluster",hashlib.sha256).hexdigest()[:16])'
        assert_eq!(Lot::draw(b"secret", "cluster").bits(), 0x0fd5_900d_4e54_ccac);
        let lots = [0, 1, 1 << 63, u64::MAX - 1, u64::MAX].map(Lot::from_bits);
        for pair in lots.windows(2) {
            assert!(pair[0].to_stored() < pair[1].to_stored(), "{pair:?}");
            assert_eq!(Lot::from_stored(pair[0].to_stored()), pair[0]);
        }
        assert_eq!(Lot::from_bits(5).rank(5), 0);
        assert_eq!(Lot::from_bits(4).rank(5), u64::MAX, "below the offset: last");
    }

    #[test]
    fn lots_are_a_sorted_set() {
        let lots = Lots::new([3, 1, 2, 1].map(Lot::from_bits).to_vec());
        assert_eq!(lots.len(), 3);
        assert!(lots.contains(Lot::from_bits(2)) && !lots.contains(Lot::from_bits(4)));
        assert!(lots.with([Lot::from_bits(4)]).contains(Lot::from_bits(4)));
    }
}
