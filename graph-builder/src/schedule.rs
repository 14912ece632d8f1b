//! When each source is refreshed (from `[service]`), and how long a source
//! may go without completing a round before the process is not live.

use std::time::Duration;

use crate::settings::ServiceSettings;

/// How often each source is refreshed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub releases: Duration,
    pub graph_data: Duration,
    pub scrape_timeout: Option<Duration>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("service.pause_secs must be positive")]
    ZeroPause,
    #[error("service.graph_data_pause_secs must be positive")]
    ZeroGraphDataPause,
}

/// Rounds of a source's schedule that may pass without one completing
/// before the process is not live.
const STALLED_ROUNDS: u32 = 3;

/// What one round may take beyond its pause when scrapes have no timeout: a
/// cold scrape of a large registry takes minutes, not hours.
const ROUND_ALLOWANCE: Duration = Duration::from_secs(3600);

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
        })
    }

    /// How long a source refreshed every `pause` may go without completing
    /// a round before the process is not live.
    pub fn stalls_after(&self, pause: Duration) -> Duration {
        STALLED_ROUNDS * pause + self.scrape_timeout.unwrap_or(ROUND_ALLOWANCE)
    }
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
    fn a_source_stalls_after_three_rounds_and_the_time_a_round_may_take() {
        let pause = Duration::from_secs(10);
        let timed = Schedule::from_settings(&ServiceSettings {
            scrape_timeout_secs: Some(60),
            ..service(10, None)
        })
        .unwrap();
        assert_eq!(timed.stalls_after(pause), Duration::from_secs(3 * 10 + 60));
        let untimed = Schedule::from_settings(&service(10, None)).unwrap();
        assert_eq!(
            untimed.stalls_after(pause),
            Duration::from_secs(3 * 10) + ROUND_ALLOWANCE
        );
    }
}
