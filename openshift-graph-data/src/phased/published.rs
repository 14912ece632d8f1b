//! The phased rollouts a release is in, as the full graph publishes them:
//! the value of [`keys::PHASED_ROLLOUTS`] on the release, written by the
//! graph-builder while the release is [phasing](super::Standing::Phasing)
//! into a channel (and so not yet listed in `release.channels` for it), and
//! read by the engines that phase per cluster.
//!
//! The value is compact JSON: for each such channel, the rollout's `start`
//! (RFC 3339) and the channel's durations by kind of update (ISO 8601;
//! a kind without its own rule is left out):
//!
//! ```json
//! {"stable-4.18":{"start":"2025-06-02T09:00:00Z","patch":"P2D","default":"P14D"}}
//! ```
//!
//! The update `A → B` in that channel (`A` a release of the channel, `B`
//! this release) is offered to each cluster at some moment of
//! [`ChannelRollout::window`], the same precedence as graph-data's (the rule
//! for the update's kind, else `default`, else zero). A value that does not
//! read (a field this version does not know, say) must be treated as no
//! rollout: the release is then not in the channel until the graph lists
//! it, which is what a client that does not know phasing sees.
//!
//! [`keys::PHASED_ROLLOUTS`]: cincinnati_core::release::keys::PHASED_ROLLOUTS

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{ChannelRollout, RolloutDuration, RolloutDurations};

/// The channels a release is phasing into, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhasedChannels(pub BTreeMap<String, ChannelRollout>);

/// A channel's rollout as written in the value.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenRollout {
    start: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    patch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    minor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    default: Option<String>,
}

impl PhasedChannels {
    /// The rollout into the release in `channel`, if it is phasing into it.
    pub fn get(&self, channel: &str) -> Option<&ChannelRollout> {
        self.0.get(channel)
    }

    /// The metadata value: compact JSON, channels in name order.
    pub fn to_value(&self) -> String {
        let text = |duration: &Option<RolloutDuration>| duration.as_ref().map(ToString::to_string);
        let written: BTreeMap<&str, WrittenRollout> = self
            .0
            .iter()
            .map(|(channel, rollout)| {
                let durations = &rollout.durations;
                let written = WrittenRollout {
                    start: rollout.start.to_string(),
                    patch: text(&durations.patch),
                    minor: text(&durations.minor),
                    default: text(&durations.default),
                };
                (channel.as_str(), written)
            })
            .collect();
        serde_json::to_string(&written).expect("strings serialise")
    }

    /// Reads a metadata value, or says what is wrong with it (the channel
    /// and the field).
    pub fn parse(value: &str) -> Result<Self, String> {
        let written: BTreeMap<String, WrittenRollout> = serde_json::from_str(value).map_err(|error| {
            format!("a phased-rollouts value is not what the graph-builder writes: {error}")
        })?;
        let channels = written
            .into_iter()
            .map(|(channel, written)| {
                let rollout = read_rollout(written).map_err(|error| format!("channel {channel}: {error}"))?;
                Ok((channel, rollout))
            })
            .collect::<Result<_, String>>()?;
        Ok(Self(channels))
    }
}

fn read_rollout(written: WrittenRollout) -> Result<ChannelRollout, String> {
    let start = written
        .start
        .parse::<Timestamp>()
        .map_err(|error| format!("start {:?} is not an RFC 3339 time: {error}", written.start))?;
    let duration = |field: &str, text: Option<String>| {
        text.map(|text| text.parse::<RolloutDuration>())
            .transpose()
            .map_err(|error| format!("{field}: {error}"))
    };
    Ok(ChannelRollout {
        start,
        durations: RolloutDurations {
            patch: duration("patch", written.patch)?,
            minor: duration("minor", written.minor)?,
            default: duration("default", written.default)?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phased::tests::{at, v};

    fn duration(text: &str) -> Option<RolloutDuration> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn a_value_reads_back_as_written_and_windows_follow_the_schema_s_precedence() {
        let rollout = ChannelRollout {
            start: at("2025-06-02T09:00:00Z"),
            durations: RolloutDurations {
                patch: duration("P2D"),
                minor: None,
                default: duration("P14D"),
            },
        };
        let channels = PhasedChannels(BTreeMap::from([("stable-4.18".to_owned(), rollout)]));
        let value = channels.to_value();
        assert_eq!(
            value,
            r#"{"stable-4.18":{"start":"2025-06-02T09:00:00Z","patch":"P2D","default":"P14D"}}"#
        );
        let read = PhasedChannels::parse(&value).unwrap();
        assert_eq!(read, channels);
        let rollout = read.get("stable-4.18").unwrap();
        // (from, end of the window into 4.18.2)
        for (from, end) in [
            ("4.18.1+amd64", "2025-06-04T09:00:00Z"),
            ("4.17.9+amd64", "2025-06-16T09:00:00Z"),
            ("3.11.0+amd64", "2025-06-16T09:00:00Z"),
        ] {
            let window = rollout.window(&v(from), &v("4.18.2+amd64"));
            assert_eq!((window.start, window.end), (rollout.start, at(end)), "{from}");
        }
        assert_eq!(read.get("fast-4.18"), None);
    }

    #[test]
    fn a_value_that_does_not_read_says_where() {
        for (value, says) in [
            ("not json", "not what the graph-builder writes"),
            (
                r#"{"c":{"start":"2025-06-02T09:00:00Z","major":"P1D"}}"#,
                "unknown field `major`",
            ),
            (r#"{"c":{"patch":"P1D"}}"#, "missing field `start`"),
            (r#"{"c":{"start":"yesterday"}}"#, "channel c: start \"yesterday\""),
            (
                r#"{"c":{"start":"2025-06-02T09:00:00Z","minor":"2 days"}}"#,
                "channel c: minor: \"2 days\" is not an ISO 8601 duration",
            ),
        ] {
            let error = PhasedChannels::parse(value).unwrap_err();
            assert!(error.contains(says), "{value}: {error}");
        }
    }
}
