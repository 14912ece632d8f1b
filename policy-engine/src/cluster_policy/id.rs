//! Cluster ids, as the CVO sends them (`id=<UUID>`), and a cluster's place
//! in every rollout.
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
//! A cluster is inside a rollout once the rollout's progress (a percentage)
//! is above its place times 100.

use std::fmt;

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

    /// The cluster's place in every rollout, in [0, 1) (see the module).
    pub fn place(&self) -> Place {
        let digest = Sha256::digest(self.0);
        let leading: [u8; 8] = digest[..8].try_into().expect("SHA-256 has 32 bytes");
        Place(u64::from_be_bytes(leading) as f64 / 2f64.powi(64))
    }
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

/// A place in rollouts: a fraction in [0, 1]. A request without a valid id
/// is [`Place::LAST`]: inside a rollout only once it is complete.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Place(f64);

impl Place {
    pub const LAST: Place = Place(1.0);

    pub fn percent(self) -> f64 {
        self.0 * 100.0
    }

    /// The place at `percent` (as [`Place::percent`] gives it, and the
    /// fleet store keeps it).
    pub fn from_percent(percent: f64) -> Self {
        Self((percent / 100.0).clamp(0.0, 1.0))
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
}
