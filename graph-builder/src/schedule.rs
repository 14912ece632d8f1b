//! When each source is refreshed and checked for changes (from
//! `[service]`), and what one round may take (the allowance of
//! service-kit's liveness rule for periodic tasks).

use std::time::Duration;

use crate::settings::ServiceSettings;

/// How often each source is refreshed, and how often it is looked at
/// cheaply for a change in between (`None`: not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub releases: Duration,
    pub graph_data: Duration,
    pub scrape_timeout: Option<Duration>,
    pub release_check: Option<Duration>,
    pub graph_data_check: Option<Duration>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("service.pause_secs must be positive")]
    ZeroPause,
    #[error("service.graph_data_pause_secs must be positive")]
    ZeroGraphDataPause,
}

/// What one round may take beyond its pause when scrapes have no timeout: a
/// cold scrape of a large registry takes minutes, not hours. With the
/// default pause (300 s), a source is stalled after 3 × 25 min.
const ROUND_ALLOWANCE: Duration = Duration::from_secs(20 * 60);

impl Schedule {
    /// The schedule `[service]` asks for, refusing pauses of zero.
    /// Graph-data is refreshed every `pause_secs` unless it has its own pause.
    pub fn from_settings(service: &ServiceSettings) -> Result<Self, ScheduleError> {
        if service.pause_secs == 0 {
            return Err(ScheduleError::ZeroPause);
        }
        if service.graph_data_pause_secs == Some(0) {
            return Err(ScheduleError::ZeroGraphDataPause);
        }
        Ok(Self {
            releases: Duration::from_secs(service.pause_secs),
            graph_data: Duration::from_secs(service.graph_data_pause_secs.unwrap_or(service.pause_secs)),
            scrape_timeout: service.scrape_timeout_secs.map(Duration::from_secs),
            release_check: check_interval(service.release_check_secs),
            graph_data_check: check_interval(service.graph_data_check_secs),
        })
    }

    /// What one round of a source may take: the scrape timeout, or
    /// twenty minutes.
    pub fn round_allowance(&self) -> Duration {
        self.scrape_timeout.unwrap_or(ROUND_ALLOWANCE)
    }
}

/// A check interval: 0 turns the check off.
fn check_interval(secs: u64) -> Option<Duration> {
    (secs > 0).then(|| Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(pause_secs: u64, graph_data_pause_secs: Option<u64>) -> ServiceSettings {
        ServiceSettings {
            pause_secs,
            graph_data_pause_secs,
            ..ServiceSettings::default()
        }
    }

    #[test]
    fn graph_data_follows_the_release_pause_unless_it_has_its_own() {
        let shared = Schedule::from_settings(&service(300, None)).unwrap();
        assert_eq!(shared.releases, Duration::from_secs(300));
        assert_eq!(shared.graph_data, Duration::from_secs(300));
        assert_eq!(shared.scrape_timeout, None);

        let own = Schedule::from_settings(&ServiceSettings {
            scrape_timeout_secs: Some(60),
            ..service(300, Some(30))
        })
        .unwrap();
        assert_eq!(own.graph_data, Duration::from_secs(30));
        assert_eq!(own.scrape_timeout, Some(Duration::from_secs(60)));
    }

    #[test]
    fn change_checks_run_on_their_own_interval_and_zero_turns_them_off() {
        let checked = Schedule::from_settings(&service(300, None)).unwrap();
        assert_eq!(checked.releases, Duration::from_secs(300));
        assert_eq!(checked.release_check, Some(Duration::from_secs(15)));
        assert_eq!(checked.graph_data_check, Some(Duration::from_secs(5)));
        let off = Schedule::from_settings(&ServiceSettings {
            release_check_secs: 0,
            graph_data_check_secs: 0,
            ..service(300, None)
        })
        .unwrap();
        assert_eq!((off.release_check, off.graph_data_check), (None, None));
    }

    #[test]
    fn pauses_of_zero_are_refused_naming_the_key() {
        let error = Schedule::from_settings(&service(0, None)).unwrap_err();
        assert!(error.to_string().contains("service.pause_secs"), "{error}");
        let error = Schedule::from_settings(&service(300, Some(0))).unwrap_err();
        assert!(
            error.to_string().contains("service.graph_data_pause_secs"),
            "{error}"
        );
    }

    #[test]
    fn a_round_may_take_the_scrape_timeout_or_twenty_minutes() {
        let timed = Schedule::from_settings(&ServiceSettings {
            scrape_timeout_secs: Some(60),
            ..service(10, None)
        })
        .unwrap();
        assert_eq!(timed.round_allowance(), Duration::from_secs(60));
        let untimed = Schedule::from_settings(&service(10, None)).unwrap();
        assert_eq!(untimed.round_allowance(), ROUND_ALLOWANCE);
    }
}
