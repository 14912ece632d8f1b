//! Channel names as OpenShift forms them: `<tier>-<major>.<minor>`.
//!
//! A channel `stable-4.16` offers updates *into* 4.16 (and within it) to
//! clusters on 4.15 and 4.16 — often on 4.14 too, for EUS-to-EUS updates.
//! Each minor has the tiers `candidate` ⊇ `fast` ⊇ `stable`; even minors
//! also have `eus`, whose channel covers the odd minor before it.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// How early a channel receives releases: the tiers a cluster chooses from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    Stable,
    Fast,
    Candidate,
    /// Extended Update Support: even minors only.
    Eus,
}

impl Tier {
    pub const ALL: [Tier; 4] = [Tier::Stable, Tier::Fast, Tier::Candidate, Tier::Eus];

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Stable => "stable",
            Tier::Fast => "fast",
            Tier::Candidate => "candidate",
            Tier::Eus => "eus",
        }
    }

    /// The channel a cluster must be on to be offered an update into
    /// `major.minor` on this tier: the channel of that minor, except that
    /// EUS channels exist for even minors only, so an odd minor is reached
    /// on the next even minor's channel (4.15 on `eus-4.16`).
    pub fn channel_into(self, major: u64, minor: u64) -> String {
        let minor = match self {
            Tier::Eus if minor % 2 == 1 => minor + 1,
            _ => minor,
        };
        format!("{}-{major}.{minor}", self.as_str())
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tier {0:?} (known: stable, fast, candidate, eus)")]
pub struct UnknownTier(pub String);

impl FromStr for Tier {
    type Err = UnknownTier;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Tier::ALL
            .into_iter()
            .find(|tier| tier.as_str() == text)
            .ok_or_else(|| UnknownTier(text.to_owned()))
    }
}

/// A channel name taken apart, when it has the usual `<tier>-<major>.<minor>`
/// shape; the tier is any prefix (`hotfix-acme-4.18` has tier `hotfix-acme`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelName<'a> {
    pub tier: &'a str,
    pub major: u64,
    pub minor: u64,
}

impl<'a> ChannelName<'a> {
    pub fn parse(name: &'a str) -> Option<Self> {
        let (tier, version) = name.rsplit_once('-')?;
        let (major, minor) = version.split_once('.')?;
        Some(Self {
            tier,
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }
}

/// The order people read channels in: by version, then by tier name;
/// names of another shape after all others, by name.
pub fn reading_order(a: &str, b: &str) -> Ordering {
    let key = |name| ChannelName::parse(name).map(|parsed| (parsed.major, parsed.minor, parsed.tier));
    match (key(a), key(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eus_channels_cover_the_odd_minor_before_them() {
        assert_eq!(Tier::Eus.channel_into(4, 15), "eus-4.16");
        assert_eq!(Tier::Eus.channel_into(4, 16), "eus-4.16");
        assert_eq!(Tier::Stable.channel_into(4, 15), "stable-4.15");
    }

    #[test]
    fn names_are_taken_apart_at_the_last_dash() {
        let parsed = ChannelName::parse("hotfix-acme-4.18").unwrap();
        assert_eq!((parsed.tier, parsed.major, parsed.minor), ("hotfix-acme", 4, 18));
        assert_eq!(ChannelName::parse("stable"), None);
        assert_eq!(ChannelName::parse("stable-4.x"), None);
    }

    #[test]
    fn channels_read_in_version_order() {
        let mut names = ["stable-4.10", "odd", "candidate-4.9", "stable-4.9", "eus-4.10"];
        names.sort_by(|a, b| reading_order(a, b));
        assert_eq!(
            names,
            ["candidate-4.9", "stable-4.9", "eus-4.10", "stable-4.10", "odd"]
        );
    }

    #[test]
    fn tiers_parse_from_their_names() {
        assert_eq!("eus".parse::<Tier>(), Ok(Tier::Eus));
        assert!("beta".parse::<Tier>().is_err());
    }
}
