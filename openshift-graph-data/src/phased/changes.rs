//! A change of graph-data judged against the graph-data it replaces: a
//! rollout under way must not move (the enhancement's "mutating time
//! windows" hazard), unless the version entry says so (`locked: true`).
//!
//! The rule, for each release a channel lists in both and whose new entry
//! is not `locked`, and for each of its windows (its entry into the channel
//! at `start`, and the rollout of each kind of update into it from a release
//! listed before it in the channel, older than it):
//!
//! - a window under way (`now` within it, ends included) must not change at
//!   all: neither its start nor its end;
//! - a window that has passed (or a release without `start`, in the channel
//!   from the beginning) must stay passed: moving it to end after `now`
//!   would take the update (or the release) away from clusters that had it.
//!
//! A window that has not started may change freely, and so may one that
//! has passed and stays passed (a duration shortened after the fact). A
//! release taken out of a channel is never refused here: pulling a release
//! must always be possible.

use std::collections::BTreeSet;

use jiff::{Span, Timestamp};

use super::{PhasedWindow, UpdateKind};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Location, Severity};
use crate::model::{Channel, ChannelVersion, GraphData};

/// The version entries of `new` whose change against `previous` moves a
/// rollout as [the module](self) describes, at `now`: one error each, at
/// the entry's line.
pub fn moved_rollouts(previous: &GraphData, new: &GraphData, now: Timestamp) -> Vec<Diagnostic> {
    let mut moved = Vec::new();
    for channel in new.channels() {
        let Some(before) = previous.channels().iter().find(|old| old.name == channel.name) else {
            continue;
        };
        for entry in channel.versions.iter().filter(|entry| !entry.locked) {
            let Some(old_entry) = before.versions.iter().find(|old| old.name == entry.name) else {
                continue;
            };
            let windows = Windows {
                entry,
                old_entry,
                channel,
                before,
            };
            if let Some(message) = windows.first_moved(now) {
                moved.push(Diagnostic {
                    location: Location::file(&channel.origin.path, Some(entry.line)),
                    kind: DiagnosticKind::MovedRollout,
                    severity: Severity::Error,
                    message,
                });
            }
        }
    }
    moved
}

/// One release's entries in a channel, before and after the change.
struct Windows<'a> {
    entry: &'a ChannelVersion,
    old_entry: &'a ChannelVersion,
    channel: &'a Channel,
    before: &'a Channel,
}

impl Windows<'_> {
    /// Why the change moves one of the release's windows, if it does: its
    /// updates' rollouts first, then its entry into the channel.
    fn first_moved(&self, now: Timestamp) -> Option<String> {
        let updates = self.update_kinds().into_iter().map(|kind| {
            let what = format!(
                "the rollout of {} updates into {}",
                UpdateKind::name_of(kind),
                self.entry.name
            );
            let window = |channel: &Channel, entry: &ChannelVersion| {
                Some(channel.rollout_of(entry)?.window_for_kind(kind))
            };
            (
                what,
                window(self.before, self.old_entry),
                window(self.channel, self.entry),
            )
        });
        let entering = (
            format!("the entry of {}", self.entry.name),
            self.old_entry
                .start
                .map(|start| PhasedWindow::new(start, Span::new())),
            self.entry
                .start
                .map(|start| PhasedWindow::new(start, Span::new())),
        );
        updates
            .chain(std::iter::once(entering))
            .find(|(_, old, new)| moves(*old, *new, now))
            .map(|(what, old, new)| {
                format!(
                    "{what} in channel {} is {} ({}); this change makes it {}: \
                     add `locked: true` to the entry if this is deliberate",
                    self.channel.name,
                    if old.is_some_and(|window| window.contains(now)) {
                        "under way"
                    } else {
                        "past"
                    },
                    describe(old),
                    describe(new),
                )
            })
    }

    /// The kinds of update into the release from an older release listed
    /// in the channel, before or after the change: durations depend only on
    /// the kind.
    fn update_kinds(&self) -> BTreeSet<Option<UpdateKind>> {
        let to = &self.entry.name.release;
        let mut kinds = self.before.update_kinds_into(to);
        kinds.extend(self.channel.update_kinds_into(to));
        kinds
    }
}

/// Whether changing a window from `old` to `new` (`None`: offered from the
/// beginning) is refused at `now`.
fn moves(old: Option<PhasedWindow>, new: Option<PhasedWindow>, now: Timestamp) -> bool {
    let settled = |window: Option<PhasedWindow>| window.is_none_or(|window| window.has_passed(now));
    old != new && (old.is_some_and(|window| window.contains(now)) || (settled(old) && !settled(new)))
}

fn describe(window: Option<PhasedWindow>) -> String {
    match window {
        Some(window) if window.start == window.end => format!("at {}", window.start),
        Some(window) => format!("from {} to {}", window.start, window.end),
        None => "from the beginning".to_owned(),
    }
}
