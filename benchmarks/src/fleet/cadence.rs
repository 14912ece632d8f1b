//! When the fleet's clusters ask for updates, as the cluster-version
//! operator does: it polls every resync period, its 2-minute minimum times
//! a jitter factor drawn anew each period from [1, 2), so each cluster asks
//! every 2 to 4 minutes and `n` clusters ask `n / 180` times a second on
//! average (renewal: one check per mean interval). At the peak, every
//! period at the 2-minute minimum, `n / 120`.
//!
//! A window of the fleet's timeline is the checks whose times fall in it,
//! in time order. Each cluster's first check in the window is drawn from
//! its intervals' forward-recurrence distribution (the wait from any moment
//! to the next check), so a window looks like one taken from the middle of
//! a long run, not like every cluster starting together; the next checks
//! follow a fresh interval apart.

use super::model::{Random, mix};

/// How long a cluster waits between two checks: uniform in
/// `[shortest, longest)` seconds, drawn anew for each wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cadence {
    pub shortest: f64,
    pub longest: f64,
}

/// One check of a window: when (seconds from its start) and which cluster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Check {
    pub at: f64,
    pub cluster: u32,
}

impl Cadence {
    /// The CVO's: 2 to 4 minutes.
    pub const MEAN: Self = Self {
        shortest: 120.0,
        longest: 240.0,
    };
    /// Every wait at the CVO's 2-minute minimum.
    pub const PEAK: Self = Self {
        shortest: 120.0,
        longest: 120.0,
    };

    /// Checks per second of `clusters` clusters.
    pub fn rate(&self, clusters: u64) -> f64 {
        clusters as f64 / self.mean_interval()
    }

    /// The same spread of waits, stretched so `clusters` clusters ask
    /// `rate` times a second.
    pub fn scaled_to(&self, clusters: u64, rate: f64) -> Self {
        let factor = self.rate(clusters) / rate;
        Self {
            shortest: self.shortest * factor,
            longest: self.longest * factor,
        }
    }

    fn mean_interval(&self) -> f64 {
        (self.shortest + self.longest) / 2.0
    }

    /// Every check of `clusters` clusters in a window of `seconds`, in time
    /// order; `seed` picks the window.
    pub fn window(&self, clusters: u64, seed: u64, seconds: f64) -> Vec<Check> {
        let mut checks = Vec::with_capacity((self.rate(clusters) * seconds * 1.05) as usize + 16);
        for cluster in 0..clusters {
            let mut random = Random::new(mix(seed ^ mix(cluster)));
            let mut at = self.first_wait(random.unit());
            while at < seconds {
                checks.push(Check {
                    at,
                    cluster: cluster as u32,
                });
                at += self.shortest + (self.longest - self.shortest) * random.unit();
            }
        }
        checks.sort_unstable_by(|a, b| a.at.total_cmp(&b.at));
        checks
    }

    /// The wait from a moment to a cluster's next check, by inverting its
    /// distribution at `unit` (in [0, 1)): density `P(wait > x) / mean`,
    /// flat up to `shortest`, then falling linearly to 0 at `longest`.
    fn first_wait(&self, unit: f64) -> f64 {
        let (low, high, mean) = (self.shortest, self.longest, self.mean_interval());
        let flat = low / mean;
        if unit < flat {
            return unit * mean;
        }
        let spread = high - low;
        high - (spread * spread - 2.0 * spread * mean * (unit - flat))
            .max(0.0)
            .sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_holds_the_cadences_rate_in_time_order() {
        for cadence in [Cadence::MEAN, Cadence::PEAK] {
            let checks = cadence.window(100_000, 3, 60.0);
            let expected = cadence.rate(100_000) * 60.0;
            let ratio = checks.len() as f64 / expected;
            assert!((0.98..1.02).contains(&ratio), "{cadence:?}: {ratio}");
            assert!(checks.windows(2).all(|pair| pair[0].at <= pair[1].at));
            // Spread over the window, not bunched at its start.
            let first_half = checks.iter().filter(|check| check.at < 30.0).count() as f64;
            assert!((0.48..0.52).contains(&(first_half / checks.len() as f64)));
        }
    }

    #[test]
    fn the_rates_are_the_cvos_at_a_million_clusters() {
        assert_eq!(Cadence::MEAN.rate(1_000_000).round(), 5_556.0);
        assert_eq!(Cadence::PEAK.rate(1_000_000).round(), 8_333.0);
        let scaled = Cadence::MEAN.scaled_to(1_000_000, 7_000.0);
        assert!((scaled.rate(1_000_000) - 7_000.0).abs() < 1e-6);
        assert!((scaled.longest / scaled.shortest - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_cluster_asks_again_within_its_waits() {
        let checks = Cadence::MEAN.window(2_000, 5, 600.0);
        let mut last = std::collections::HashMap::new();
        for check in checks {
            if let Some(before) = last.insert(check.cluster, check.at) {
                let wait = check.at - before;
                assert!((120.0..240.0).contains(&wait), "{wait}");
            }
        }
    }
}
