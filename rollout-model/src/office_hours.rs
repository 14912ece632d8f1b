//! A rollout's office hours (Nebraska's, per rollout): clusters are newly
//! offered its target only on the days and between the times given, in the
//! rollout's time zone; outside them its progress stays where the last
//! window closed, and catches up with its schedule when the next opens.
//! Clusters already inside keep their offer.
//!
//! ```yaml
//! office_hours: {days: [mon, tue, wed, thu, fri], from: "09:00", to: "17:00", time_zone: Europe/Berlin}
//! ```
//!
//! Times are wall-clock times of the zone (daylight saving included: a
//! time that a change skips is taken as the one after it).

use std::fmt;

use jiff::civil::{Date, Time, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan as _, Zoned};

/// When a rollout may newly offer its target.
#[derive(Debug, Clone)]
pub struct OfficeHours {
    /// Monday first.
    days: [bool; 7],
    from: Time,
    to: Time,
    zone: TimeZone,
    /// The zone's name, as written.
    zone_name: String,
}

const DAY_NAMES: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

impl OfficeHours {
    /// Office hours on `days` (three-letter English names, any case), from
    /// `from` to `to` (`HH:MM`, `from` before `to`) in the IANA time zone
    /// `zone`; why not, if they are not that.
    pub fn new(days: &[String], from: &str, to: &str, zone: &str) -> Result<Self, String> {
        let mut open = [false; 7];
        for day in days {
            let index = DAY_NAMES
                .iter()
                .position(|name| name.eq_ignore_ascii_case(day))
                .ok_or_else(|| format!("office_hours day {day:?} is not one of {}", DAY_NAMES.join(", ")))?;
            open[index] = true;
        }
        if !open.contains(&true) {
            return Err("office_hours names no day".to_owned());
        }
        let time = |name: &str, text: &str| {
            text.parse::<Time>()
                .map_err(|_| format!("office_hours {name} {text:?} is not a time (HH:MM)"))
        };
        let (from, to) = (time("from", from)?, time("to", to)?);
        if from >= to {
            return Err(format!(
                "office_hours from {from} is not before to {to} (a window within one day)"
            ));
        }
        let zone_found = TimeZone::get(zone)
            .map_err(|_| format!("office_hours time_zone {zone:?} is not an IANA time zone"))?;
        Ok(Self {
            days: open,
            from,
            to,
            zone: zone_found,
            zone_name: zone.to_owned(),
        })
    }

    /// `at` itself if within office hours, else when the last window
    /// closed (the moment a rollout's progress stays at meanwhile).
    pub fn last_open(&self, at: Timestamp) -> Timestamp {
        let now = at.to_zoned(self.zone.clone());
        for back in 0..=7_i64 {
            let Some((open, close)) = self.window(now.date(), -back) else {
                continue;
            };
            if now >= close {
                return close.timestamp();
            }
            if now >= open {
                return at;
            }
        }
        at
    }

    /// `at` itself if within office hours, else when the next window
    /// opens (the moment a cluster due meanwhile is offered).
    pub fn next_open(&self, at: Timestamp) -> Timestamp {
        let now = at.to_zoned(self.zone.clone());
        for ahead in 0..=7_i64 {
            let Some((open, close)) = self.window(now.date(), ahead) else {
                continue;
            };
            if now < open {
                return open.timestamp();
            }
            if now < close {
                return at;
            }
        }
        at
    }

    /// Whether `at` is within a window.
    pub fn is_open(&self, at: Timestamp) -> bool {
        self.last_open(at) == at
    }

    /// `at` as a person reads it in the zone: `Mon 09:00 Europe/Berlin`.
    pub fn local(&self, at: Timestamp) -> String {
        format!(
            "{} {}",
            at.to_zoned(self.zone.clone()).strftime("%a %H:%M"),
            self.zone_name
        )
    }

    /// The window of the day `days` from `date`, if it is an office day.
    fn window(&self, date: Date, days: i64) -> Option<(Zoned, Zoned)> {
        let day = date.checked_add(days.days()).ok()?;
        if !self.days[weekday_index(day.weekday())] {
            return None;
        }
        let at = |time: Time| self.zone.to_ambiguous_zoned(day.to_datetime(time)).later().ok();
        Some((at(self.from)?, at(self.to)?))
    }
}

fn weekday_index(weekday: Weekday) -> usize {
    usize::try_from(weekday.to_monday_zero_offset()).unwrap_or_default()
}

/// As explain says it: `mon-fri 09:00-17:00 Europe/Berlin` (or the days
/// listed).
impl fmt::Display for OfficeHours {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days: Vec<&str> = DAY_NAMES
            .iter()
            .zip(self.days)
            .filter(|(_, open)| *open)
            .map(|(name, _)| *name)
            .collect();
        let first_to_last = self
            .days
            .iter()
            .skip_while(|open| !**open)
            .take_while(|open| **open)
            .count();
        let days = if days.len() > 2 && first_to_last == days.len() {
            format!("{}-{}", days[0], days[days.len() - 1])
        } else {
            days.join(",")
        };
        write!(
            f,
            "{days} {}-{} {}",
            self.from.strftime("%H:%M"),
            self.to.strftime("%H:%M"),
            self.zone_name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weekdays(zone: &str) -> OfficeHours {
        let days: Vec<String> = ["mon", "tue", "wed", "thu", "fri"].map(str::to_owned).to_vec();
        OfficeHours::new(&days, "09:00", "17:00", zone).unwrap()
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn outside_office_hours_the_last_window_stands_and_the_next_is_awaited() {
        let berlin = weekdays("Europe/Berlin");
        // Wednesday 2026-11-25, 10:00 in Berlin (UTC+1): open.
        let open = at("2026-11-25T09:00:00Z");
        assert_eq!(berlin.last_open(open), open);
        assert_eq!(berlin.next_open(open), open);
        // Wednesday 20:00 Berlin: closed since 17:00, opens Thursday 09:00.
        let evening = at("2026-11-25T19:00:00Z");
        assert_eq!(berlin.last_open(evening), at("2026-11-25T16:00:00Z"));
        assert_eq!(berlin.next_open(evening), at("2026-11-26T08:00:00Z"));
        // Sunday: the week's last window was Friday's; Monday's is next.
        let sunday = at("2026-11-29T12:00:00Z");
        assert_eq!(berlin.last_open(sunday), at("2026-11-27T16:00:00Z"));
        assert_eq!(berlin.next_open(sunday), at("2026-11-30T08:00:00Z"));
        assert_eq!(berlin.to_string(), "mon-fri 09:00-17:00 Europe/Berlin");
        assert!(berlin.is_open(open) && !berlin.is_open(sunday));
        assert_eq!(berlin.local(berlin.next_open(sunday)), "Mon 09:00 Europe/Berlin");
    }

    #[test]
    fn the_zones_daylight_saving_moves_the_window_in_utc() {
        let berlin = weekdays("Europe/Berlin");
        // Monday 2026-06-01: summer time (UTC+2), 09:00 is 07:00 UTC.
        assert_eq!(
            berlin.next_open(at("2026-06-01T06:00:00Z")),
            at("2026-06-01T07:00:00Z")
        );
    }

    #[test]
    fn office_hours_that_are_not_are_refused_by_name() {
        let days = |names: &[&str]| names.iter().map(|name| (*name).to_owned()).collect::<Vec<_>>();
        let refused = |days: &[String], from, to, zone| OfficeHours::new(days, from, to, zone).unwrap_err();
        assert!(refused(&days(&["Mon", "funday"]), "09:00", "17:00", "UTC").contains("\"funday\""));
        assert!(refused(&days(&[]), "09:00", "17:00", "UTC").contains("no day"));
        assert!(refused(&days(&["mon"]), "17:00", "09:00", "UTC").contains("not before"));
        assert!(refused(&days(&["mon"]), "9 am", "17:00", "UTC").contains("not a time"));
        assert!(refused(&days(&["mon"]), "09:00", "17:00", "Mars/Olympus").contains("IANA"));
        let some = OfficeHours::new(&days(&["sat", "MON"]), "08:30", "12:00", "UTC").unwrap();
        assert_eq!(some.to_string(), "mon,sat 08:30-12:00 UTC");
    }
}
