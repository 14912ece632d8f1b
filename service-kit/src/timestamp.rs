//! Times as every service writes them for people and scripts (`/status`,
//! explanations, policy files): RFC 3339 in UTC, to the second's fraction
//! the clock gives.

use std::time::SystemTime;

use jiff::Timestamp;

/// `at` in RFC 3339, UTC (a time beyond jiff's years -9999..=9999, which
/// no clock gives, is written at the nearest bound).
pub fn rfc3339(at: SystemTime) -> String {
    Timestamp::try_from(at)
        .unwrap_or_else(|_| {
            if at < SystemTime::UNIX_EPOCH {
                Timestamp::MIN
            } else {
                Timestamp::MAX
            }
        })
        .to_string()
}

/// An RFC 3339 time, in any offset.
pub fn parse_rfc3339(text: &str) -> Result<SystemTime, jiff::Error> {
    text.parse::<Timestamp>().map(SystemTime::from)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn times_round_trip_in_utc() {
        let at = UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        assert_eq!(rfc3339(at), "2026-11-18T11:06:40Z");
        assert_eq!(parse_rfc3339("2026-11-18T11:06:40Z").unwrap(), at);
        assert_eq!(parse_rfc3339("2026-11-18T12:06:40+01:00").unwrap(), at);
        assert!(parse_rfc3339("2026-11-18 10:13:20").is_err());
        assert_eq!(
            rfc3339(at + Duration::from_millis(250)),
            "2026-11-18T11:06:40.25Z"
        );
    }
}
