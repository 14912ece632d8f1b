//! Phased rollouts (graph-data schema 2.0.0): when a release enters a
//! channel, and how long updates into it take to reach every cluster.
//!
//! A channel declares rules (`phasedRollouts`), each a duration and
//! optionally the kind of update it is for (`fromVersion`); a version entry
//! declares its `start`. An update from A to B in the channel is offered to
//! each cluster at some moment of its window, `[start of B, start of B +
//! duration]`, and to every cluster from its end on.
//!
//! Durations are ISO 8601 (`P2D`, `P2W`, `P1M`, `PT12H`), added to `start`
//! with calendar arithmetic in UTC: a day is always 24 hours (UTC has no
//! daylight saving time), and a month ends on the same day of the next month,
//! or on its last day when it is shorter (`P1M` from January 31 ends on
//! February 28 or 29, at the same time of day).

mod changes;
mod membership;
pub mod published;
mod updates;

use std::fmt;
use std::str::FromStr;

use cincinnati_core::Version;
use jiff::fmt::temporal::SpanParser;
use jiff::tz::TimeZone;
use jiff::{Span, Timestamp};

pub use changes::moved_rollouts;
pub use membership::Standing;
pub use updates::PhasedUpdate;

/// The updates a rule is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RolloutCriterion {
    /// No `fromVersion`: every update, at the lowest precedence.
    Default,
    /// `fromVersion: patch` or `fromVersion: minor`.
    FromVersion(UpdateKind),
    /// Any other `fromVersion`: accepted, so that graph-data may use values
    /// a newer reader knows, and matching no update.
    Unrecognised(String),
}

/// What changes between the source and the target of an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UpdateKind {
    /// The same major and minor, another patch (4.18.1 → 4.18.2).
    Patch,
    /// The same major, another minor (4.17.9 → 4.18.2).
    Minor,
}

impl UpdateKind {
    /// The kind of the update `from → to`; `None` for an update across
    /// majors, or between releases that differ only in their pre-release.
    pub fn of(from: &Version, to: &Version) -> Option<Self> {
        if from.major != to.major {
            None
        } else if from.minor != to.minor {
            Some(UpdateKind::Minor)
        } else if from.patch != to.patch {
            Some(UpdateKind::Patch)
        } else {
            None
        }
    }

    /// The `fromVersion` value naming this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateKind::Patch => "patch",
            UpdateKind::Minor => "minor",
        }
    }

    /// The name of `kind`, `other` for an update of no kind.
    pub fn name_of(kind: Option<Self>) -> &'static str {
        kind.map_or("other", Self::as_str)
    }
}

impl RolloutCriterion {
    /// The criterion of a rule with this `fromVersion`, or without one.
    pub fn from_version(value: Option<&str>) -> Self {
        match value {
            None => RolloutCriterion::Default,
            Some("patch") => RolloutCriterion::FromVersion(UpdateKind::Patch),
            Some("minor") => RolloutCriterion::FromVersion(UpdateKind::Minor),
            Some(other) => RolloutCriterion::Unrecognised(other.to_owned()),
        }
    }
}

impl fmt::Display for RolloutCriterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RolloutCriterion::Default => f.write_str("the default (no `fromVersion`)"),
            RolloutCriterion::FromVersion(kind) => write!(f, "`fromVersion: {}`", kind.as_str()),
            RolloutCriterion::Unrecognised(value) => write!(f, "`fromVersion: {value}`"),
        }
    }
}

/// A rollout's duration as declared: an ISO 8601 duration, not negative.
#[derive(Debug, Clone)]
pub struct RolloutDuration {
    text: String,
    span: Span,
}

/// Durations compare as written: `P1D` and `PT24H` are different
/// declarations, whatever they add up to.
impl PartialEq for RolloutDuration {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for RolloutDuration {}

impl FromStr for RolloutDuration {
    type Err = String;

    /// Only ISO 8601 (`P2D`), not jiff's friendly format (`2 days`): the
    /// schema says ISO 8601, and other readers of graph-data read only that.
    fn from_str(text: &str) -> Result<Self, String> {
        let span = SpanParser::new().parse_span(text).map_err(|error| {
            format!("{text:?} is not an ISO 8601 duration (such as P2D or PT12H): {error}")
        })?;
        if span.is_negative() {
            return Err(format!(
                "{text:?} is negative: a rollout cannot end before it starts"
            ));
        }
        Ok(Self {
            text: text.to_owned(),
            span,
        })
    }
}

impl RolloutDuration {
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn span(&self) -> Span {
        self.span
    }
}

impl fmt::Display for RolloutDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One rule of a channel's `phasedRollouts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhasedRollout {
    pub criterion: RolloutCriterion,
    pub duration: RolloutDuration,
    /// The line of the rule in its channel file.
    pub line: u64,
}

/// A channel's rules by the updates they are for: what decides how long an
/// update's rollout takes, for the graph-builder reading graph-data and for
/// an engine reading [`published`] metadata alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RolloutDurations {
    /// `fromVersion: patch`.
    pub patch: Option<RolloutDuration>,
    /// `fromVersion: minor`.
    pub minor: Option<RolloutDuration>,
    /// The rule without `fromVersion`.
    pub default: Option<RolloutDuration>,
}

impl RolloutDurations {
    /// The durations of a channel's rules; a rule with an unrecognised
    /// `fromVersion` matches no update, so it has none. Loading refused
    /// graph-data declaring one criterion twice.
    pub fn of(rules: &[PhasedRollout]) -> Self {
        let mut durations = Self::default();
        for rule in rules {
            let slot = match &rule.criterion {
                RolloutCriterion::Default => &mut durations.default,
                RolloutCriterion::FromVersion(UpdateKind::Patch) => &mut durations.patch,
                RolloutCriterion::FromVersion(UpdateKind::Minor) => &mut durations.minor,
                RolloutCriterion::Unrecognised(_) => continue,
            };
            *slot = Some(rule.duration.clone());
        }
        durations
    }

    /// The declared duration an update of `kind` gets: the rule for its
    /// kind, else the default; `None` (zero) without either (the precedence
    /// of the schema).
    pub fn declared_for_kind(&self, kind: Option<UpdateKind>) -> Option<&RolloutDuration> {
        let for_its_kind = match kind {
            Some(UpdateKind::Patch) => self.patch.as_ref(),
            Some(UpdateKind::Minor) => self.minor.as_ref(),
            None => None,
        };
        for_its_kind.or(self.default.as_ref())
    }

    /// How long the rollout of an update of `kind` takes.
    pub fn for_kind(&self, kind: Option<UpdateKind>) -> Span {
        self.declared_for_kind(kind)
            .map_or_else(Span::new, RolloutDuration::span)
    }

    /// How long the rollout of the update `from → to` takes.
    pub fn for_update(&self, from: &Version, to: &Version) -> Span {
        self.for_kind(UpdateKind::of(from, to))
    }
}

/// A release's rollout in a channel: from its `start`, each update into it
/// takes the duration its kind gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelRollout {
    pub start: Timestamp,
    pub durations: RolloutDurations,
}

impl ChannelRollout {
    /// The window of an update of `kind` into the release.
    pub fn window_for_kind(&self, kind: Option<UpdateKind>) -> PhasedWindow {
        PhasedWindow::new(self.start, self.durations.for_kind(kind))
    }

    /// The window of the update `from → to` (`to` the release): when it is
    /// offered to each cluster, and from when to every cluster.
    pub fn window(&self, from: &Version, to: &Version) -> PhasedWindow {
        self.window_for_kind(UpdateKind::of(from, to))
    }
}

/// When an update is offered: to each cluster at some moment from `start`
/// to `end`, to every cluster from `end` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhasedWindow {
    pub start: Timestamp,
    pub end: Timestamp,
}

impl PhasedWindow {
    /// A window of `duration` from `start`, added in UTC (see the module's
    /// documentation). An end past the last time jiff represents (year
    /// 9999) is that time: such a rollout never ends.
    pub fn new(start: Timestamp, duration: Span) -> Self {
        Self {
            start,
            end: start.to_zoned(TimeZone::UTC).saturating_add(duration).timestamp(),
        }
    }

    /// Whether the rollout is under way at `now`: its window, ends included,
    /// contains it.
    pub fn contains(&self, now: Timestamp) -> bool {
        self.start <= now && now <= self.end
    }

    /// Whether the window has passed at `now`: every cluster has been
    /// offered the update since its end.
    pub fn has_passed(&self, now: Timestamp) -> bool {
        self.end < now
    }

    /// Where `now` falls: before the window, inside it, or after it.
    pub fn state_at(&self, now: Timestamp) -> WindowState {
        if now < self.start {
            WindowState::Before
        } else if self.has_passed(now) {
            WindowState::After
        } else {
            WindowState::Inside
        }
    }

    /// The share of the fleet offered the update at `now`, in [0, 1]: the
    /// fraction of the window gone by (a cluster at place `p` is offered it
    /// once `p` is below it). A zero-length window is all or nothing.
    pub fn share_passed(&self, now: Timestamp) -> f64 {
        if now < self.start {
            return 0.0;
        }
        let length = self.end.duration_since(self.start);
        if now >= self.end || length.is_zero() {
            return 1.0;
        }
        now.duration_since(self.start).div_duration_f64(length)
    }

    /// Whether a cluster at `fraction` has been offered the update by
    /// `now`: exactly `moment_at(fraction) <= now`, decided in
    /// floating-point seconds (a multiplication), and by the moment itself
    /// only within a millisecond of it, where rounding could tell them
    /// apart: what every request asks of every phased window, at a
    /// fraction of the moment's cost.
    pub fn has_reached(&self, fraction: f64, now: Timestamp) -> bool {
        /// Far above the rounding of seconds since 1970 in an `f64` (a
        /// quarter of a microsecond) and of a moment (a nanosecond).
        const MARGIN_SECONDS: f64 = 1e-3;
        if now < self.start {
            return false;
        }
        if now >= self.end {
            return true;
        }
        let gone = seconds(now) - seconds(self.start);
        let due = self.seconds_in(fraction);
        if gone > due + MARGIN_SECONDS {
            true
        } else if gone < due - MARGIN_SECONDS {
            false
        } else {
            self.moment_at(fraction) <= now
        }
    }

    /// Roughly (in floating-point seconds) how long after `now` a cluster
    /// at `fraction` is offered the update: to find which of several
    /// moments comes first without computing each.
    pub fn roughly_reached_in(&self, fraction: f64, now: Timestamp) -> f64 {
        seconds(self.start) + self.seconds_in(fraction) - seconds(now)
    }

    /// How far into the window, in seconds, a cluster at `fraction` is.
    fn seconds_in(&self, fraction: f64) -> f64 {
        (seconds(self.end) - seconds(self.start)) * fraction.clamp(0.0, 1.0)
    }

    /// The moment a cluster at `fraction` of the fleet (in [0, 1], its
    /// place) is offered the update: `start + fraction × (end - start)`, to
    /// the nanosecond. The same fraction always gives the same moment, so
    /// every replica agrees.
    pub fn moment_at(&self, fraction: f64) -> Timestamp {
        let length = self.end.duration_since(self.start);
        let into = length.mul_f64(fraction.clamp(0.0, 1.0));
        self.start.checked_add(into).unwrap_or(self.end)
    }
}

/// Where a moment falls in a [`PhasedWindow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowState {
    /// Before its start: no cluster is offered the update.
    Before,
    /// Within it, ends included: the rollout is under way.
    Inside,
    /// After its end: every cluster is offered the update.
    After,
}

impl WindowState {
    pub fn as_str(self) -> &'static str {
        match self {
            WindowState::Before => "before",
            WindowState::Inside => "inside",
            WindowState::After => "after",
        }
    }
}

/// `at` in floating-point seconds since 1970: a quarter of a microsecond
/// apart, and a few instructions to compute.
fn seconds(at: Timestamp) -> f64 {
    at.as_second() as f64 + f64::from(at.subsec_nanosecond()) * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    pub(super) fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn durations_are_iso_8601_and_not_negative() {
        for accepted in ["P2D", "P14D", "P1M", "P2W", "PT12H", "P1Y2M3DT4H5M6S", "PT0S"] {
            let duration: RolloutDuration = accepted.parse().unwrap_or_else(|error| panic!("{error}"));
            assert_eq!(duration.as_str(), accepted);
        }
        for (refused, because) in [
            ("2 days", "not an ISO 8601 duration"),
            ("2d", "not an ISO 8601 duration"),
            ("P", "not an ISO 8601 duration"),
            ("", "not an ISO 8601 duration"),
            ("-P2D", "is negative"),
        ] {
            let error = refused.parse::<RolloutDuration>().unwrap_err();
            assert!(error.contains(because), "{refused:?}: {error}");
        }
    }

    /// Windows from `start`: (duration, end), calendar arithmetic in UTC.
    #[test]
    fn windows_end_by_calendar_arithmetic_in_utc() {
        for (start, duration, end) in [
            ("2025-06-02T09:00:00Z", "P2D", "2025-06-04T09:00:00Z"),
            ("2025-06-02T09:00:00Z", "PT12H", "2025-06-02T21:00:00Z"),
            ("2025-06-02T09:00:00Z", "P2W", "2025-06-16T09:00:00Z"),
            ("2025-06-02T09:00:00Z", "PT0S", "2025-06-02T09:00:00Z"),
            // A month from the 31st ends on the last day of a shorter month.
            ("2025-01-31T10:00:00Z", "P1M", "2025-02-28T10:00:00Z"),
            ("2024-01-31T10:00:00Z", "P1M", "2024-02-29T10:00:00Z"),
            ("2025-03-31T23:30:00Z", "P1M", "2025-04-30T23:30:00Z"),
            ("2025-12-15T00:00:00Z", "P1M", "2026-01-15T00:00:00Z"),
            // A start written with an offset is the same instant in UTC.
            ("2025-03-29T12:00:00+01:00", "P1D", "2025-03-30T11:00:00Z"),
        ] {
            let duration: RolloutDuration = duration.parse().unwrap();
            let window = PhasedWindow::new(at(start), duration.span());
            assert_eq!(window.end, at(end), "{start} + {duration}");
        }
        let past_year_9999: RolloutDuration = "P1Y".parse().unwrap();
        assert_eq!(
            PhasedWindow::new(at("9999-12-01T00:00:00Z"), past_year_9999.span()).end,
            Timestamp::MAX,
            "never ends"
        );
    }

    #[test]
    fn a_window_contains_both_ends_and_has_passed_only_after_its_end() {
        let window = PhasedWindow::new(
            at("2025-06-02T09:00:00Z"),
            "P2D".parse::<RolloutDuration>().unwrap().span(),
        );
        let second = jiff::SignedDuration::from_secs(1);
        // (moment, contains, has passed, state)
        for (now, contains, passed, state) in [
            (window.start - second, false, false, WindowState::Before),
            (window.start, true, false, WindowState::Inside),
            (at("2025-06-03T09:00:00Z"), true, false, WindowState::Inside),
            (window.end, true, false, WindowState::Inside),
            (window.end + second, false, true, WindowState::After),
        ] {
            assert_eq!(window.contains(now), contains, "{now}");
            assert_eq!(window.has_passed(now), passed, "{now}");
            assert_eq!(window.state_at(now), state, "{now}");
        }
        let instant = PhasedWindow::new(window.start, Span::new());
        assert!(instant.contains(window.start) && instant.has_passed(window.start + second));
        assert_eq!(instant.state_at(window.start), WindowState::Inside);
    }

    /// A cluster's moment is its fraction of the way through the window;
    /// a zero-length window (an update without a duration) is its start.
    #[test]
    fn a_moment_is_the_fraction_of_the_way_through_the_window() {
        let window = PhasedWindow::new(
            at("2025-06-02T09:00:00Z"),
            "P2D".parse::<RolloutDuration>().unwrap().span(),
        );
        for (fraction, moment) in [
            (0.0, "2025-06-02T09:00:00Z"),
            (0.25, "2025-06-02T21:00:00Z"),
            (0.5, "2025-06-03T09:00:00Z"),
            (1.0, "2025-06-04T09:00:00Z"),
            (-1.0, "2025-06-02T09:00:00Z"),
            (2.0, "2025-06-04T09:00:00Z"),
        ] {
            assert_eq!(window.moment_at(fraction), at(moment), "{fraction}");
        }
        let instant = PhasedWindow::new(window.start, Span::new());
        assert_eq!(instant.moment_at(0.7), window.start);
    }

    /// The share offered ramps from 0 at the start to 1 at the end, the
    /// inverse of a cluster's moment.
    #[test]
    fn the_share_passed_is_the_fraction_of_the_window_gone_by() {
        let window = PhasedWindow::new(
            at("2025-06-02T09:00:00Z"),
            "P2D".parse::<RolloutDuration>().unwrap().span(),
        );
        for (now, share) in [
            ("2025-06-01T09:00:00Z", 0.0),
            ("2025-06-02T09:00:00Z", 0.0),
            ("2025-06-02T21:00:00Z", 0.25),
            ("2025-06-03T09:00:00Z", 0.5),
            ("2025-06-04T09:00:00Z", 1.0),
            ("2025-06-05T09:00:00Z", 1.0),
        ] {
            assert_eq!(window.share_passed(at(now)), share, "{now}");
            if (0.0..1.0).contains(&share) && at(now) >= window.start {
                assert_eq!(window.moment_at(share), at(now), "{now}");
            }
        }
        let instant = PhasedWindow::new(window.start, Span::new());
        let second = jiff::SignedDuration::from_secs(1);
        assert_eq!(instant.share_passed(window.start - second), 0.0);
        assert_eq!(instant.share_passed(window.start), 1.0);
    }

    /// `has_reached` is `moment_at(fraction) <= now`, at every fraction and
    /// time, at the moments themselves and a nanosecond either side.
    #[test]
    fn reaching_a_moment_is_decided_as_the_moment_says() {
        let windows = ["PT1S", "PT12H", "P2D", "P14D", "P1M", "P10Y"].map(|duration| {
            PhasedWindow::new(
                at("2025-06-02T09:00:00Z"),
                duration.parse::<RolloutDuration>().unwrap().span(),
            )
        });
        let nanosecond = jiff::SignedDuration::from_nanos(1);
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next_fraction = || {
            // xorshift: reproducible fractions over [0, 1).
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for window in windows
            .iter()
            .chain([&PhasedWindow::new(windows[0].start, Span::new())])
        {
            for _ in 0..2_000 {
                let fraction = next_fraction();
                let moment = window.moment_at(fraction);
                let elsewhere = window.moment_at(next_fraction());
                for now in [
                    moment - nanosecond,
                    moment,
                    moment + nanosecond,
                    elsewhere,
                    window.start,
                    window.end,
                ] {
                    assert_eq!(
                        window.has_reached(fraction, now),
                        moment <= now,
                        "{window:?} at {fraction} by {now}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_kind_without_its_own_rule_gets_the_default_as_declared() {
        let durations = RolloutDurations {
            patch: Some("P2D".parse().unwrap()),
            minor: None,
            default: Some("P14D".parse().unwrap()),
        };
        let declared = |kind| durations.declared_for_kind(kind).map(RolloutDuration::as_str);
        assert_eq!(declared(Some(UpdateKind::Patch)), Some("P2D"));
        assert_eq!(declared(Some(UpdateKind::Minor)), Some("P14D"));
        assert_eq!(declared(None), Some("P14D"));
        assert_eq!(RolloutDurations::default().declared_for_kind(None), None);
    }

    #[test]
    fn an_update_s_kind_is_the_most_significant_part_that_changes() {
        for (from, to, kind) in [
            ("4.18.1", "4.18.2", Some(UpdateKind::Patch)),
            ("4.17.9", "4.18.2", Some(UpdateKind::Minor)),
            ("4.17.2", "4.18.2", Some(UpdateKind::Minor)),
            ("3.11.0", "4.1.0", None),
            ("4.18.0-rc.1", "4.18.0", None),
            ("4.18.1+amd64", "4.18.2+amd64", Some(UpdateKind::Patch)),
        ] {
            assert_eq!(UpdateKind::of(&v(from), &v(to)), kind, "{from} → {to}");
        }
        let names = [Some(UpdateKind::Patch), Some(UpdateKind::Minor), None].map(UpdateKind::name_of);
        assert_eq!(names, ["patch", "minor", "other"]);
    }
}
