//! `graph-data preview`'s phased updates: per channel, each update into a
//! release phasing into it, its window, where the preview's moment falls in
//! it, and, against a base, whether the change phases it anew or moves its
//! window. Which updates are phased and their windows are
//! `openshift-graph-data`'s to say; this module only shows them.

use cincinnati_core::release::without_build;
use cincinnati_core::{Graph, Release};
use jiff::Timestamp;
use openshift_graph_data::{GraphData, PhasedWindow, UpdateKind};
use serde::Serialize;

use crate::output::{Cell, DIM, GOOD, HEADING, RISK, Text, styled};

/// An update one graph-data phases in a channel.
#[derive(Debug)]
pub struct Phased {
    channel: String,
    /// Versions without build metadata (the architecture).
    from: String,
    to: String,
    kind: &'static str,
    /// As declared for its kind; `None`: zero.
    duration: Option<String>,
    window: PhasedWindow,
}

impl Phased {
    fn is_same_update(&self, other: &Phased) -> bool {
        (&self.channel, &self.from, &self.to) == (&other.channel, &other.from, &other.to)
    }
}

/// The updates `graph_data` phases in `graph` (which it was applied to),
/// into the releases `keep` holds for (one architecture's).
pub fn phased_in(graph_data: &GraphData, graph: &Graph, keep: impl Fn(&Release) -> bool) -> Vec<Phased> {
    graph_data
        .phased_updates(graph)
        .into_iter()
        .filter_map(|update| {
            let (from, to) = (graph.release(update.from)?, graph.release(update.to)?);
            keep(to).then(|| Phased {
                channel: update.channel.name.clone(),
                from: without_build(&from.version).to_string(),
                to: without_build(&to.version).to_string(),
                kind: UpdateKind::name_of(update.kind),
                duration: update.duration.map(|duration| duration.to_string()),
                window: update.window,
            })
        })
        .collect()
}

/// The updates phased in `channel` only, when one is named.
pub fn in_channel(mut phased: Vec<Phased>, channel: Option<&str>) -> Vec<Phased> {
    if let Some(channel) = channel {
        phased.retain(|update| update.channel == channel);
    }
    phased
}

/// A phased update in `graph-data preview -o json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhasedUpdateJson {
    channel: String,
    from: String,
    to: String,
    /// `patch`, `minor` or `other`.
    kind: &'static str,
    #[serde(flatten)]
    rollout: RolloutJson,
    /// Where the preview's moment falls: `before`, `inside` or `after`.
    state: &'static str,
    /// With a base: whether the base did not phase this update; `null`
    /// without one.
    new: Option<bool>,
    /// With a base: its rollout there, when this change moves its window;
    /// `null` otherwise.
    moved_from: Option<RolloutJson>,
}

/// A rollout's declared duration (`null`: zero) and its window (RFC 3339).
#[derive(Debug, Serialize)]
struct RolloutJson {
    duration: Option<String>,
    start: String,
    end: String,
}

impl From<&Phased> for RolloutJson {
    fn from(update: &Phased) -> Self {
        Self {
            duration: update.duration.clone(),
            start: update.window.start.to_string(),
            end: update.window.end.to_string(),
        }
    }
}

/// `updates` as shown at `now`, each marked against what `base` phases,
/// when there is a base.
pub fn shown(updates: &[Phased], base: Option<&[Phased]>, now: Timestamp) -> Vec<PhasedUpdateJson> {
    updates
        .iter()
        .map(|update| {
            // None: no base; Some(None): the base does not phase it.
            let before = base.map(|base| base.iter().find(|old| old.is_same_update(update)));
            PhasedUpdateJson {
                channel: update.channel.clone(),
                from: update.from.clone(),
                to: update.to.clone(),
                kind: update.kind,
                rollout: RolloutJson::from(update),
                state: update.window.state_at(now).as_str(),
                new: before.map(|old| old.is_none()),
                moved_from: before
                    .flatten()
                    .filter(|old| old.window != update.window)
                    .map(RolloutJson::from),
            }
        })
        .collect()
}

/// Whether, against a base, the change phases an update anew or moves a
/// window: a change even when the graph served now stays the same.
pub fn changes_any(updates: &[PhasedUpdateJson]) -> bool {
    updates
        .iter()
        .any(|update| update.new == Some(true) || update.moved_from.is_some())
}

/// A section per channel with phased updates; a column saying what the
/// change does to each when there is a base.
pub fn table(text: &mut Text, updates: &[PhasedUpdateJson], now: Timestamp, with_base: bool) {
    let mut header = vec!["FROM", "TO", "KIND", "DURATION", "START", "END", "STATE"];
    if with_base {
        header.push("CHANGE");
    }
    for channel in updates.chunk_by(|a, b| a.channel == b.channel) {
        text.blank();
        text.line(styled(
            HEADING,
            format!("Phased updates in {} at {now}", channel[0].channel),
        ));
        let rows = channel
            .iter()
            .map(|update| {
                let rollout = &update.rollout;
                let mut row = vec![
                    Cell::plain(&update.from),
                    Cell::plain(&update.to),
                    Cell::plain(update.kind),
                    Cell::plain(rollout.duration.as_deref().unwrap_or("none")),
                    Cell::plain(&rollout.start),
                    Cell::plain(&rollout.end),
                    Cell::plain(update.state),
                ];
                if with_base {
                    row.push(change_cell(update));
                }
                row
            })
            .collect();
        text.table(&header, rows);
    }
}

/// What the change does to a phased update's rollout.
fn change_cell(update: &PhasedUpdateJson) -> Cell {
    match (&update.moved_from, update.new) {
        (Some(old), _) => Cell::styled(RISK, format!("moved (was {} to {})", old.start, old.end)),
        (None, Some(true)) => Cell::styled(GOOD, "new"),
        (None, _) => Cell::styled(DIM, "unchanged"),
    }
}
