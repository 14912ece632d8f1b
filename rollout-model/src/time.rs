//! Time as rollouts count it, in one place: instants are jiff's
//! [`Timestamp`] (UTC, to the nanosecond), durations its
//! [`SignedDuration`]; the store keeps instants as Unix milliseconds, so a
//! pause made 0.8 s into a second keeps its fraction; [`Periods`] is the
//! one way time is cut into equal periods (a rate's periods, deferral
//! buckets).

use std::time::SystemTime;

pub use jiff::{SignedDuration, Timestamp};

/// The instant `millis` milliseconds after the Unix epoch, clamped to
/// what jiff represents (years -9999 to 9999).
pub fn from_millis(millis: i64) -> Timestamp {
    Timestamp::from_millisecond(millis).unwrap_or(if millis < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

/// `at` as Unix milliseconds, as the store keeps it.
pub fn millis(at: Timestamp) -> i64 {
    at.as_millisecond()
}

/// The instant `seconds` seconds after the Unix epoch (clamped as
/// [`from_millis`]).
pub fn from_seconds(seconds: i64) -> Timestamp {
    from_millis(seconds.saturating_mul(1000))
}

/// `at` as whole Unix seconds (rounded down), as update checks are kept.
pub fn seconds(at: Timestamp) -> i64 {
    at.as_second()
}

/// `at` as a [`Timestamp`], clamped into jiff's range.
pub fn from_system(at: SystemTime) -> Timestamp {
    Timestamp::try_from(at).unwrap_or_else(|_| {
        if at < SystemTime::UNIX_EPOCH {
            Timestamp::MIN
        } else {
            Timestamp::MAX
        }
    })
}

/// How long from `now` until `at`, as caches count a max-age: zero once
/// `at` has come.
pub fn until(now: Timestamp, at: Timestamp) -> std::time::Duration {
    at.duration_since(now).max(SignedDuration::ZERO).unsigned_abs()
}

/// `at` as a [`SystemTime`].
pub fn to_system(at: Timestamp) -> SystemTime {
    SystemTime::from(at)
}

/// `at` as people read it: RFC 3339 in UTC, to the second (the fraction
/// cut, never rounded up: a pause made at 05:00:00.800 was made at
/// 05:00:00, not at 05:00:01).
pub fn to_the_second(at: Timestamp) -> String {
    let second = jiff::TimestampRound::new()
        .smallest(jiff::Unit::Second)
        .mode(jiff::RoundMode::Trunc);
    at.round(second).unwrap_or(at).to_string()
}

/// A length of time in hours (as files and settings write them), at least
/// a millisecond: `None` for what is not a finite positive number of hours.
pub fn hours(hours: f64) -> Option<SignedDuration> {
    let seconds = hours * 3600.0;
    (seconds.is_finite() && seconds >= 0.001).then(|| SignedDuration::from_secs_f64(seconds))
}

/// `duration` in hours, for a sentence: `6 h`, `1.5 h`.
pub fn hours_said(duration: SignedDuration) -> String {
    let hours = duration.as_secs_f64() / 3600.0;
    if hours.fract() == 0.0 {
        format!("{hours} h")
    } else {
        format!("{hours:.1} h")
    }
}

/// Equal periods from an origin: period `k` is `[origin + k·length,
/// origin + (k+1)·length)`, `k` negative before the origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Periods {
    origin: Timestamp,
    length: SignedDuration,
}

impl Periods {
    /// Periods of `length` (at least a millisecond) from `origin`.
    pub fn new(origin: Timestamp, length: SignedDuration) -> Self {
        Self {
            origin,
            length: length.max(SignedDuration::from_millis(1)),
        }
    }

    /// Periods of `length` from the Unix epoch: deferral buckets.
    pub fn from_epoch(length: SignedDuration) -> Self {
        Self::new(Timestamp::UNIX_EPOCH, length)
    }

    pub fn origin(&self) -> Timestamp {
        self.origin
    }

    pub fn length(&self) -> SignedDuration {
        self.length
    }

    /// The period `at` is in.
    pub fn index(&self, at: Timestamp) -> i64 {
        let elapsed = at.duration_since(self.origin).as_nanos();
        let length = self.length.as_nanos();
        i64::try_from(elapsed.div_euclid(length)).unwrap_or(if elapsed < 0 { i64::MIN } else { i64::MAX })
    }

    /// When period `index` starts (clamped to jiff's range).
    pub fn start(&self, index: i64) -> Timestamp {
        let offset = self.length.as_nanos().saturating_mul(i128::from(index));
        let nanos = self.origin.as_nanosecond().saturating_add(offset);
        Timestamp::from_nanosecond(
            nanos.clamp(Timestamp::MIN.as_nanosecond(), Timestamp::MAX.as_nanosecond()),
        )
        .expect("clamped into jiff's range")
    }

    /// When the period `at` is in ends (the next one's start).
    pub fn end_of(&self, at: Timestamp) -> Timestamp {
        self.start(self.index(at).saturating_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn the_store_keeps_milliseconds_and_checks_keep_seconds() {
        let paused = at("2026-11-28T10:00:00.800Z");
        assert_eq!(from_millis(millis(paused)), paused);
        assert_eq!(seconds(paused), at("2026-11-28T10:00:00Z").as_second());
        assert_eq!(from_millis(i64::MAX), Timestamp::MAX);
        assert_eq!(from_system(to_system(paused)), paused);
    }

    #[test]
    fn periods_cut_time_from_their_origin_both_ways() {
        let periods = Periods::new(at("2026-11-28T10:00:00Z"), SignedDuration::from_hours(24));
        assert_eq!(periods.index(at("2026-11-28T10:00:00Z")), 0);
        assert_eq!(periods.index(at("2026-11-29T09:59:59.999Z")), 0);
        assert_eq!(periods.index(at("2026-11-29T10:00:00Z")), 1);
        assert_eq!(periods.index(at("2026-11-28T09:59:59Z")), -1);
        assert_eq!(periods.start(2), at("2026-11-30T10:00:00Z"));
        assert_eq!(
            periods.end_of(at("2026-11-28T12:00:00Z")),
            at("2026-11-29T10:00:00Z")
        );
        let hours = Periods::from_epoch(SignedDuration::from_hours(1));
        assert_eq!(
            hours.start(hours.index(at("2026-11-28T10:59:59Z"))),
            at("2026-11-28T10:00:00Z")
        );
    }

    #[test]
    fn hours_are_positive_and_finite() {
        assert_eq!(hours(1.5), Some(SignedDuration::from_mins(90)));
        assert_eq!(hours(0.0), None);
        assert_eq!(hours(f64::NAN), None);
        assert_eq!(hours_said(SignedDuration::from_hours(6)), "6 h");
        assert_eq!(hours_said(SignedDuration::from_mins(90)), "1.5 h");
    }
}
