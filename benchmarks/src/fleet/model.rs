//! The synthetic fleet: cluster `i` of `n` has a fixed id, channel,
//! architecture, place in rollouts and version history, all derived from
//! `i` alone, so the store benchmark that loads the fleet and the load
//! generator that sends its update checks agree on every cluster without
//! sharing any state.
//!
//! The mix, shaped like an OpenShift fleet between two minors (42 versions
//! in all):
//!
//! | channel | share | versions |
//! |---|---:|---|
//! | stable-4.18 | 35% | 4.18.32 – 4.18.52 |
//! | fast-4.18 | 10% | 4.18.32 – 4.18.53 |
//! | candidate-4.18 | 2% | 4.18.32 – 4.18.54 |
//! | stable-4.19 | 35% | 4.19.26 – 4.19.42 |
//! | fast-4.19 | 13% | 4.19.26 – 4.19.43 |
//! | candidate-4.19 | 5% | 4.19.26 – 4.19.44 |
//!
//! amd64 90%, arm64 7%, multi 3%. Within a channel, the k-th newest version
//! has weight 0.8^k (the newest half that: a rollout of it is under way).
//! Each cluster has three versions, one per [`Stage`]: where it was first
//! seen, after the store benchmark's second pass (5% of clusters not on
//! their channel's newest version moved: 60% of them to the newest, the
//! rest one to three versions on) and during the engine load (2% of those
//! not on the newest move one version on).

use sha2::{Digest as _, Sha256};

/// One channel of the mix.
#[derive(Debug)]
pub struct Channel {
    pub name: &'static str,
    pub minor: u32,
    pub oldest: u32,
    pub newest: u32,
    /// Clusters in it, per mille.
    share: u64,
}

pub const CHANNELS: [Channel; 6] = [
    channel("stable-4.18", 18, 32, 52, 350),
    channel("fast-4.18", 18, 32, 53, 100),
    channel("candidate-4.18", 18, 32, 54, 20),
    channel("stable-4.19", 19, 26, 42, 350),
    channel("fast-4.19", 19, 26, 43, 130),
    channel("candidate-4.19", 19, 26, 44, 50),
];

const fn channel(name: &'static str, minor: u32, oldest: u32, newest: u32, share: u64) -> Channel {
    Channel {
        name,
        minor,
        oldest,
        newest,
        share,
    }
}

/// Architectures and their share, per mille.
pub const ARCHES: [(&str, u64); 3] = [("amd64", 900), ("arm64", 70), ("multi", 30)];

/// The rollouts' targets: the newest version of each minor's stable channel.
pub const ROLLOUT_TARGETS: [&str; 2] = ["4.18.52", "4.19.42"];

/// When a cluster's version is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// As first seen (the store benchmark's first pass).
    First,
    /// After the store benchmark's second pass (5% moved).
    Moved,
    /// During the engine load (2% more moved).
    Engine,
}

/// One cluster of the fleet.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub id: String,
    pub channel: &'static Channel,
    pub arch: &'static str,
    /// Place in rollouts, percent (stand-in for the engine's SHA-256 of the
    /// id: the engine writes its own when it records the cluster).
    pub place: f64,
    patches: [u32; 3],
}

impl Cluster {
    pub fn version(&self, stage: Stage) -> String {
        format!("4.{}.{}", self.channel.minor, self.patch(stage))
    }

    pub fn patch(&self, stage: Stage) -> u32 {
        self.patches[stage as usize]
    }
}

/// A fleet of `clusters` clusters.
#[derive(Debug, Clone, Copy)]
pub struct Model {
    pub clusters: u64,
}

impl Model {
    pub fn new(clusters: u64) -> Self {
        Self { clusters }
    }

    /// Cluster `index` (below [`Model::clusters`]).
    pub fn cluster(&self, index: u64) -> Cluster {
        let word = |salt: u64| mix(index.wrapping_mul(0x9e37_79b9).wrapping_add(salt));
        let (a, b) = (word(1), word(2));
        let id = format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            0x8000 | (b >> 48) & 0x3fff,
            b & 0xffff_ffff_ffff
        );
        let channel = pick(word(3), CHANNELS.iter().map(|channel| channel.share))
            .map_or(&CHANNELS[0], |position| &CHANNELS[position]);
        let arch = pick(word(4), ARCHES.iter().map(|(_, share)| *share))
            .map_or("amd64", |position| ARCHES[position].0);
        let place = place_percent(&id);
        let first = first_patch(channel, word(6));
        let moved = match word(7) % 100 {
            roll if roll < 5 && first < channel.newest => {
                if word(8) % 100 < 60 {
                    channel.newest
                } else {
                    (first + 1 + (word(9) % 3) as u32).min(channel.newest)
                }
            }
            _ => first,
        };
        let engine = if word(10) % 100 < 2 && moved < channel.newest {
            moved + 1
        } else {
            moved
        };
        Cluster {
            id,
            channel,
            arch,
            place,
            patches: [first, moved, engine],
        }
    }
}

/// The patch a cluster of `channel` is first seen on, the k-th newest with
/// weight 0.8^k (the newest half that).
fn first_patch(channel: &Channel, random: u64) -> u32 {
    let span = channel.newest - channel.oldest + 1;
    let weights: Vec<f64> = (0..span)
        .map(|rank| 0.8f64.powi(rank as i32) * if rank == 0 { 0.5 } else { 1.0 })
        .collect();
    let total: f64 = weights.iter().sum();
    let mut target = (random >> 11) as f64 / (1u64 << 53) as f64 * total;
    for (rank, weight) in weights.iter().enumerate() {
        if target < *weight {
            return channel.newest - rank as u32;
        }
        target -= weight;
    }
    channel.oldest
}

/// The position `random` falls in among `shares` (per mille, summing to
/// 1,000).
fn pick(random: u64, shares: impl Iterator<Item = u64>) -> Option<usize> {
    let mut roll = random % 1000;
    for (position, share) in shares.enumerate() {
        if roll < share {
            return Some(position);
        }
        roll -= share;
    }
    None
}

/// SplitMix64's finaliser: a well-mixed 64-bit word from any input.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A small, fast generator for the order of checks and the load's picks.
#[derive(Debug, Clone)]
pub struct Random(u64);

impl Random {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(1);
        mix(self.0)
    }

    /// Uniform in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `0..count` in a random order.
    pub fn permutation(&mut self, count: u64) -> Vec<u32> {
        let mut order: Vec<u32> = (0..count as u32).collect();
        for last in (1..order.len()).rev() {
            let other = self.below(last as u64 + 1) as usize;
            order.swap(last, other);
        }
        order
    }
}

/// A cluster's place in rollouts by the documented formula
/// (docs/policy-engine.md, "Per-cluster policy"): the engine computes the
/// same from the id, so what the store holds and what a check says agree.
fn place_percent(id: &str) -> f64 {
    let digest = Sha256::digest(id.to_lowercase().as_bytes());
    let first = u64::from_be_bytes(digest[..8].try_into().expect("a digest has 8 bytes"));
    first as f64 / 2f64.powi(64) * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_as_documented() {
        let model = Model::new(100_000);
        let clusters: Vec<Cluster> = (0..model.clusters).map(|index| model.cluster(index)).collect();
        let share = |keep: &dyn Fn(&Cluster) -> bool| {
            clusters.iter().filter(|cluster| keep(cluster)).count() as f64 / clusters.len() as f64
        };
        assert!((share(&|c| c.channel.name == "stable-4.18") - 0.35).abs() < 0.01);
        assert!((share(&|c| c.arch == "amd64") - 0.90).abs() < 0.01);
        let moved = share(&|c| c.patch(Stage::Moved) != c.patch(Stage::First));
        assert!((0.03..0.05).contains(&moved), "{moved}");
        let versions: std::collections::BTreeSet<String> =
            clusters.iter().map(|c| c.version(Stage::First)).collect();
        assert_eq!(versions.len(), 42);
        let ids: std::collections::BTreeSet<&str> = clusters.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids.len(), clusters.len());
        assert!(
            clusters
                .iter()
                .all(|c| c.id.len() == 36 && (0.0..100.0).contains(&c.place))
        );
    }

    #[test]
    fn a_permutation_holds_every_index_once() {
        let mut order = Random::new(7).permutation(1000);
        order.sort_unstable();
        assert!(
            order
                .iter()
                .enumerate()
                .all(|(index, value)| index as u32 == *value)
        );
    }
}
