//! Phased rollouts declared in graph-data, served per cluster.
//!
//! While a release B is phasing into a channel C, the graph-builder's full
//! graph does not list C in B's `release.channels` and carries C's rollout
//! in B's `release.phased_rollouts` (see docs/operations.md, "How the full
//! graph carries a phased rollout"). An engine reads those values once per
//! upstream revision ([`PhasedRollouts::of`]) and, per request, finds where
//! the asking cluster stands ([`PhasedRollouts::phase`]):
//!
//! - B is in C's view from its `start`, for everyone: a cluster already at
//!   B finds its version;
//! - the update A → B is offered to a cluster with an id from its moment in
//!   the update's window, `start + place × duration`, where `place` is the
//!   cluster's public place ([`rollout_model::Place`]), the same in every
//!   rollout; to a request without an id from the end of B's longest window,
//!   when a client that does not phase sees B in C.
//!
//! Each such moment is a [`Gate`]; a request's [`Phase`] is the set of the
//! channel's gates it has passed, a bitset of at most [`MAX_GATES`]: the
//! answers of a channel are bounded by its gates (a cluster's gates pass in
//! the order of their windows, so at most one answer per gate, plus the one
//! without an id), and the phase says when it next changes, so caches expire
//! then. Everything takes `now` as an argument.
//!
//! Run-time control: each release phasing is also a rollout of the
//! rollout model ([`PhasedRollouts::declarations`], its schedule the span
//! of its windows), which operators, Alertmanager and halts pause, resume
//! and hold like a policy file's. Its offers are read at the model's clock
//! for it ([`rollout_model::Reading`]): stopped while paused, later by the
//! time it stood still, nobody while its state is unknown, a held share of
//! every window. A release's entry into the channel is not an offer: no
//! control moves it.
//!
//! The updates phased and their windows are kept too ([`PhasedUpdate`]):
//! what `explain-cluster` says of them and what the
//! `phased_update_rollout` gauge shows.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwapOption;
use cincinnati_core::release::{arch_of, keys, without_build};
use cincinnati_core::{Graph, Release, ReleaseId, Version};
use openshift_graph_data::phased::published::PhasedChannels;
use openshift_graph_data::{ChannelRollout, PhasedWindow, RolloutDuration, UpdateKind};
use prometheus::GaugeVec;
use rollout_model::declaration::{Origin, Schedule};
use rollout_model::time::{SignedDuration, Timestamp};
use rollout_model::{Declaration, Knowledge, Place, Reading, Rollout};

/// Gates a channel has at most: the bits of a [`Phase`]. A release whose
/// gates do not fit is not phased here: it enters the channel when the
/// graph lists it, as for a client that does not phase.
pub const MAX_GATES: usize = 64;

/// The kinds of update into a release, in the order of [`PhasingRelease::updates`].
const KINDS: [Option<UpdateKind>; 3] = [Some(UpdateKind::Patch), Some(UpdateKind::Minor), None];

/// A moment a request passes in a channel: a release's entry, or the
/// offer of the updates of one kind into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Gate {
    /// A cluster at place `p` passes at `window.moment_at(p)`.
    window: PhasedWindow,
    /// When a request without a cluster id passes.
    unplaced: Timestamp,
    /// The rollout whose run-time control moves it (an index of
    /// [`PhasedRollouts::declarations`]); none for a release's entry.
    rollout: Option<usize>,
}

impl Gate {
    fn passed_at(&self, place: Option<Place>) -> Timestamp {
        place.map_or(self.unplaced, |place| self.window.moment_at(place.fraction()))
    }

    /// Whether a request at `place` has passed it by `clock`: as
    /// `passed_at(place) <= clock`, without computing the moment.
    fn is_passed_by(&self, place: Option<Place>, clock: Timestamp) -> bool {
        place.map_or(self.unplaced <= clock, |place| {
            self.window.has_reached(place.fraction(), clock)
        })
    }

    /// Whether a request at `place` has passed it at `now`, its rollout's
    /// clock read as `reading` (none: not under control); if not, the
    /// clock it waits for (none: a change of run-time control).
    fn judge(
        &self,
        place: Option<Place>,
        now: Timestamp,
        reading: Option<Reading>,
    ) -> Result<(), Option<Timestamp>> {
        let within = |share: f64| place.map_or(share >= 100.0, |place| place.is_below(share));
        let clock = match reading {
            None => now,
            Some(Reading::Nobody) => return Err(None),
            Some(Reading::Held(share)) => return if within(share) { Ok(()) } else { Err(None) },
            Some(Reading::At { at_most, .. }) if !within(at_most) => return Err(None),
            Some(Reading::At { clock, .. }) => clock,
        };
        if self.is_passed_by(place, clock) {
            Ok(())
        } else {
            Err(Some(clock))
        }
    }

    /// When a request at `place`, its rollout's clock at `clock`, passes
    /// it at the earliest: that clock runs no faster than time.
    fn passes_from(&self, place: Option<Place>, now: Timestamp, clock: Timestamp) -> Timestamp {
        let at = self.passed_at(place);
        now.saturating_add(at.duration_since(clock)).unwrap_or(at)
    }

    /// How long, roughly (in floating-point seconds), until the clock at
    /// `clock` passes it for `place`: to find the gate a request passes
    /// next without computing every gate's moment.
    fn roughly_in(&self, place: Option<Place>, clock: Timestamp) -> f64 {
        match place {
            Some(place) => self.window.roughly_reached_in(place.fraction(), clock),
            None => self.unplaced.duration_since(clock).as_secs_f64(),
        }
    }
}

/// A release phasing into a channel, by the indexes of its gates.
#[derive(Debug, Clone, Copy)]
struct PhasingRelease {
    /// Its entry into the channel's view: its `start`, for everyone.
    entry: u8,
    /// The offer of each kind of update into it, by [`KINDS`].
    updates: [u8; 3],
}

impl PhasingRelease {
    fn gate_of(&self, from: &Version, to: &Version) -> u8 {
        let kind = UpdateKind::of(from, to);
        let slot = KINDS
            .iter()
            .position(|of| *of == kind)
            .expect("KINDS has every kind");
        self.updates[slot]
    }
}

/// The releases phasing into one channel and their gates.
#[derive(Debug, Default)]
pub struct ChannelPhasing {
    gates: Vec<Gate>,
    /// By payload: unchanged by the arch filter, whichever runs first.
    releases: HashMap<String, PhasingRelease>,
}

impl ChannelPhasing {
    /// Adds the gates of a release, its offers moved by the run-time
    /// control of `controlled_by`, and returns it, or `None` when they do
    /// not fit in [`MAX_GATES`].
    fn add(
        &mut self,
        rollout: &ChannelRollout,
        longest_end: Timestamp,
        controlled_by: usize,
    ) -> Option<PhasingRelease> {
        let entry = Gate {
            window: PhasedWindow {
                start: rollout.start,
                end: rollout.start,
            },
            unplaced: rollout.start,
            rollout: None,
        };
        let update = |kind| {
            let window = rollout.window_for_kind(kind);
            Gate {
                window,
                unplaced: window.end.max(longest_end),
                rollout: Some(controlled_by),
            }
        };
        let wanted = [entry, update(KINDS[0]), update(KINDS[1]), update(KINDS[2])];
        let new =
            wanted
                .iter()
                .filter(|gate| !self.gates.contains(gate))
                .fold(Vec::new(), |mut new, gate| {
                    if !new.contains(gate) {
                        new.push(*gate);
                    }
                    new
                });
        if self.gates.len() + new.len() > MAX_GATES {
            return None;
        }
        self.gates.extend(new);
        let index = |gate: &Gate| {
            let position = self.gates.iter().position(|known| known == gate);
            u8::try_from(position.expect("added above")).expect("MAX_GATES fits in u8")
        };
        Some(PhasingRelease {
            entry: index(&wanted[0]),
            updates: [index(&wanted[1]), index(&wanted[2]), index(&wanted[3])],
        })
    }
}

/// An update into a release phasing into a channel, from a release of the
/// channel: its window, and when a request passes it.
#[derive(Debug, Clone)]
pub struct PhasedUpdate {
    pub channel: String,
    /// The architecture of its releases.
    pub arch: Option<String>,
    /// Without build metadata (the architecture).
    pub from: Version,
    pub to: Version,
    /// The duration declared for its kind; none: zero.
    pub duration: Option<RolloutDuration>,
    gate: Gate,
}

impl PhasedUpdate {
    pub fn window(&self) -> PhasedWindow {
        self.gate.window
    }
}

/// Where a request stands with one phased update.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateStanding {
    pub offered: bool,
    /// From when it is (or is to be) offered: the request's moment in the
    /// window, later by the time run-time control held its rollout back
    /// (while paused or held: as if resumed now).
    pub from: Timestamp,
    /// What run-time control does to its rollout, in the rollout model's
    /// words, when it holds it back (unknown, paused, held, or behind its
    /// windows after a pause).
    pub control: Option<String>,
}

/// The phased rollouts of one upstream revision's graph, by channel; empty
/// for a graph without any (then a request pays one emptiness check).
#[derive(Debug, Default)]
pub struct PhasedRollouts {
    /// Looked up by every request for a channel (foldhash: see
    /// `crate::client::answers`).
    channels: HashMap<String, Arc<ChannelPhasing>, foldhash::fast::RandomState>,
    updates: Vec<PhasedUpdate>,
    /// A rollout per release phasing (by version, every architecture and
    /// channel), as run-time control knows it.
    declarations: Vec<Arc<Declaration>>,
    /// The declarations with the run-time state last asked with.
    controlled: ArcSwapOption<Controlled>,
}

/// The rollouts of [`PhasedRollouts::declarations`] with one run-time state.
#[derive(Debug)]
struct Controlled {
    knowledge: Arc<Knowledge>,
    rollouts: Vec<Rollout>,
}

impl Controlled {
    /// How the clock of `gate`'s rollout reads at `now`; none for a gate
    /// no control moves.
    fn reading(&self, gate: &Gate, now: Timestamp) -> Option<Reading> {
        Some(self.rollouts[gate.rollout?].reading(now))
    }
}

/// What a release phasing declares to run-time control: its windows'
/// span, and the channels it phases into.
#[derive(Debug)]
struct Span {
    target: Version,
    start: Timestamp,
    end: Timestamp,
    channels: BTreeSet<String>,
}

impl Span {
    fn declaration(&self) -> Arc<Declaration> {
        Arc::new(Declaration::new(
            self.target.clone(),
            Origin::GraphData {
                channels: self.channels.iter().cloned().collect(),
            },
            Schedule {
                start: self.start,
                duration: self.end.duration_since(self.start),
                starting_percentage: 0.0,
            },
        ))
    }
}

impl PhasedRollouts {
    /// Reads the rollouts of `graph`'s releases. A value that does not read
    /// is no rollout (logged): the release then enters its channel when the
    /// graph lists it, as for a client that does not phase.
    pub fn of(graph: &Graph) -> Self {
        let published: HashMap<ReleaseId, PhasedChannels> = graph
            .releases()
            .filter_map(|(id, release)| {
                let value = release.metadata.get(keys::PHASED_ROLLOUTS)?;
                match PhasedChannels::parse(value) {
                    Ok(channels) => Some((id, channels)),
                    Err(error) => {
                        tracing::warn!(release = %release.version, "{}: {error}; not phased", keys::PHASED_ROLLOUTS);
                        None
                    }
                }
            })
            .collect();
        let mut channels: HashMap<String, ChannelPhasing> = HashMap::new();
        let mut updates = Vec::new();
        let mut spans: Vec<Span> = Vec::new();
        for (&id, phased) in &published {
            let Some((release, payload)) = graph
                .release(id)
                .and_then(|release| Some((release, release.payload.clone()?)))
            else {
                continue;
            };
            for (channel, rollout) in &phased.0 {
                // The end of the longest window of the updates into the
                // release from the channel's releases, recommended or
                // conditional: when the graph-builder lists it, and a
                // request without an id gets them.
                let in_channel = |from: ReleaseId| {
                    graph.release(from).is_some_and(|from| {
                        from.metadata_list(keys::CHANNELS).any(|listed| listed == channel)
                    }) || published
                        .get(&from)
                        .is_some_and(|phased| phased.get(channel).is_some())
                };
                let conditional_parents = graph
                    .conditional_edges()
                    .iter()
                    .flat_map(|group| &group.edges)
                    .filter(|edge| *edge.to == release.version)
                    .filter_map(|edge| graph.find(&edge.from));
                let sources: Vec<&Release> = graph
                    .parents(id)
                    .chain(conditional_parents)
                    .filter(|from| in_channel(*from))
                    .filter_map(|from| graph.release(from))
                    .collect();
                let longest_end = sources
                    .iter()
                    .map(|from| rollout.window(&from.version, &release.version).end)
                    .max()
                    .unwrap_or(rollout.start);
                let target = without_build(&release.version);
                let rollout_index = spans
                    .iter()
                    .position(|span| span.target == target)
                    .unwrap_or_else(|| {
                        spans.push(Span {
                            target,
                            start: rollout.start,
                            end: rollout.start,
                            channels: BTreeSet::new(),
                        });
                        spans.len() - 1
                    });
                let phasing = channels.entry(channel.clone()).or_default();
                match phasing.add(rollout, longest_end, rollout_index) {
                    Some(gates) => {
                        let span = &mut spans[rollout_index];
                        span.start = span.start.min(rollout.start);
                        span.end = KINDS
                            .iter()
                            .map(|kind| rollout.window_for_kind(*kind).end)
                            .fold(span.end.max(longest_end), Timestamp::max);
                        span.channels.insert(channel.clone());
                        phasing.releases.insert(payload.clone(), gates);
                        updates.extend(sources.iter().map(|from| {
                            let kind = UpdateKind::of(&from.version, &release.version);
                            PhasedUpdate {
                                channel: channel.clone(),
                                arch: arch_of(release).map(str::to_owned),
                                from: without_build(&from.version),
                                to: without_build(&release.version),
                                duration: rollout.durations.declared_for_kind(kind).cloned(),
                                gate: phasing.gates
                                    [usize::from(gates.gate_of(&from.version, &release.version))],
                            }
                        }));
                    }
                    None => {
                        if spans[rollout_index].channels.is_empty() {
                            spans.pop();
                        }
                        tracing::warn!(
                            release = %release.version,
                            channel,
                            "more than {MAX_GATES} phased windows in one channel; this release enters it when the graph lists it"
                        );
                    }
                }
            }
        }
        Self {
            channels: channels
                .into_iter()
                .map(|(channel, phasing)| (channel, Arc::new(phasing)))
                .collect(),
            updates,
            declarations: spans.iter().map(Span::declaration).collect(),
            controlled: ArcSwapOption::empty(),
        }
    }

    /// Every update phased, from each release of its channel, in no order.
    pub fn updates(&self) -> &[PhasedUpdate] {
        &self.updates
    }

    /// A rollout per release phasing, for run-time control: its target
    /// the release's version, its schedule from the earliest start of its
    /// windows to the end of the longest.
    pub fn declarations(&self) -> &[Arc<Declaration>] {
        &self.declarations
    }

    /// Where a request at `place` stands with `update` at `now`, with
    /// `knowledge` of run-time control.
    pub fn standing(
        &self,
        update: &PhasedUpdate,
        place: Option<Place>,
        now: Timestamp,
        knowledge: Option<&Arc<Knowledge>>,
    ) -> UpdateStanding {
        let controlled = self.controlled(knowledge);
        let rollout = controlled
            .as_ref()
            .zip(update.gate.rollout)
            .map(|(controlled, index)| &controlled.rollouts[index]);
        let reading = rollout.map(|rollout| rollout.reading(now));
        let judged = update.gate.judge(place, now, reading);
        let declared = update.gate.passed_at(place);
        let from = match (judged, reading) {
            (Err(Some(clock)), _) => update.gate.passes_from(place, now, clock),
            (_, Some(Reading::At { clock, .. })) => {
                let late = now.duration_since(clock).max(SignedDuration::ZERO);
                declared.saturating_add(late).unwrap_or(declared)
            }
            _ => declared,
        };
        let held_back = rollout.filter(|rollout| {
            let control = rollout.control();
            matches!(rollout.state(), rollout_model::RunState::Unknown)
                || control.overrides()
                || control.stood_still.is_positive()
        });
        UpdateStanding {
            offered: judged.is_ok(),
            from,
            control: held_back.map(|rollout| rollout_model::describe::said(rollout, &rollout.position(now))),
        }
    }

    /// The declarations' rollouts with `knowledge`; none when no run-time
    /// control is configured (the windows alone decide).
    fn controlled(&self, knowledge: Option<&Arc<Knowledge>>) -> Option<Arc<Controlled>> {
        let knowledge = knowledge.filter(|knowledge| !matches!(***knowledge, Knowledge::Declared))?;
        if let Some(controlled) = self.controlled.load_full()
            && Arc::ptr_eq(&controlled.knowledge, knowledge)
        {
            return Some(controlled);
        }
        let controlled = Arc::new(Controlled {
            knowledge: knowledge.clone(),
            rollouts: knowledge.rollouts(&self.declarations),
        });
        self.controlled.store(Some(controlled.clone()));
        Some(controlled)
    }

    /// Sets `gauge` (`phased_update_rollout{channel,from,to}`) afresh: for
    /// each update from its window's start until it is offered to every
    /// cluster (its end, unless run-time control holds it back), the share
    /// of clusters offered it at `now`, with `knowledge` of run-time
    /// control. The series are bounded by the updates in a window; the
    /// architectures of an update share a series (their windows are the
    /// same release's).
    pub fn set_rollout_gauge(&self, gauge: &GaugeVec, now: Timestamp, knowledge: Option<&Arc<Knowledge>>) {
        gauge.reset();
        let controlled = self.controlled(knowledge);
        for update in &self.updates {
            let window = update.window();
            let share = match controlled
                .as_ref()
                .and_then(|controlled| controlled.reading(&update.gate, now))
            {
                None => window.share_passed(now),
                Some(Reading::Nobody) => 0.0,
                Some(Reading::Held(share)) => share / 100.0,
                Some(Reading::At { clock, at_most }) => window.share_passed(clock).min(at_most / 100.0),
            };
            if now >= window.start && (window.contains(now) || share < 1.0) {
                let (from, to) = (update.from.to_string(), update.to.to_string());
                gauge
                    .with_label_values(&[update.channel.as_str(), &from, &to])
                    .set(share);
            }
        }
    }

    /// Where a request for `channel` stands at `now`: by the cluster's
    /// `place`, or as a request without an id, with `knowledge` of run-time
    /// control (none: not configured). `None` when no release is phasing
    /// into the channel: its answers are the graph's.
    pub fn phase(
        &self,
        channel: &str,
        place: impl FnOnce() -> Option<Place>,
        now: Timestamp,
        knowledge: impl FnOnce() -> Option<Arc<Knowledge>>,
    ) -> Option<Phase> {
        if self.channels.is_empty() {
            return None;
        }
        let phasing = self.channels.get(channel)?;
        // Hashed and read only for a phased channel: most requests ask
        // another.
        let place = place();
        let controlled = self.controlled(knowledge().as_ref());
        let mut passed = 0u64;
        // The gate passed next, roughly: only its moment is computed.
        let mut next: Option<(f64, &Gate, Timestamp)> = None;
        for (index, gate) in phasing.gates.iter().enumerate() {
            let reading = controlled
                .as_ref()
                .and_then(|controlled| controlled.reading(gate, now));
            match gate.judge(place, now, reading) {
                Ok(()) => passed |= 1 << index,
                Err(Some(clock)) => {
                    let roughly = gate.roughly_in(place, clock);
                    if next.is_none_or(|(soonest, _, _)| roughly < soonest) {
                        next = Some((roughly, gate, clock));
                    }
                }
                Err(None) => {}
            }
        }
        let next_change = next.map(|(_, gate, clock)| gate.passes_from(place, now, clock));
        Some(Phase {
            channel: phasing.clone(),
            passed,
            next_change,
        })
    }
}

/// Where a request stands in the phased rollouts of its channel: the gates
/// it has passed (what its answer is keyed by), and when the next passes.
#[derive(Debug, Clone)]
pub struct Phase {
    channel: Arc<ChannelPhasing>,
    passed: u64,
    next_change: Option<Timestamp>,
}

impl Phase {
    /// The gates passed, a bit per gate: requests with the same bits get
    /// the same answer.
    pub fn passed(&self) -> u64 {
        self.passed
    }

    /// How long from `now` this phase holds, if not for ever (until the
    /// graph changes).
    pub fn valid_for(&self, now: Timestamp) -> Option<Duration> {
        self.next_change.map(|at| rollout_model::time::until(now, at))
    }

    fn is_passed(&self, gate: u8) -> bool {
        self.passed & (1 << gate) != 0
    }

    fn phasing(&self, release: &Release) -> Option<&PhasingRelease> {
        self.channel.releases.get(release.payload.as_deref()?)
    }

    /// Whether `release` is phasing into the channel and has entered it for
    /// this request (from its `start`).
    pub fn admits(&self, release: &Release) -> bool {
        self.phasing(release)
            .is_some_and(|phasing| self.is_passed(phasing.entry))
    }

    /// Takes the updates into the releases that entered the channel for
    /// this request (and that `channels_key` does not list in `channel`)
    /// which it has not reached yet out of `graph` (recommended and
    /// conditional), and lists `channel` on each such release: it is in the
    /// channel for this request, which an engine chained to this one reads.
    pub fn apply(&self, graph: &mut Graph, channel: &str, channels_key: &str) {
        let listed = |release: &Release| {
            release
                .metadata_list(channels_key)
                .any(|listed| listed == channel)
        };
        let phasing: HashMap<ReleaseId, (Version, PhasingRelease)> = graph
            .releases()
            .filter(|(_, release)| self.admits(release) && !listed(release))
            .filter_map(|(id, release)| Some((id, (release.version.clone(), *self.phasing(release)?))))
            .collect();
        if phasing.is_empty() {
            return;
        }
        let not_reached = |from: &Version, (to, gates): &(Version, PhasingRelease)| {
            !self.is_passed(gates.gate_of(from, to))
        };
        let withheld: Vec<(ReleaseId, ReleaseId)> = graph
            .edges()
            .filter(|(from, to)| {
                let from = graph.release(*from).map(|release| &release.version);
                from.zip(phasing.get(to))
                    .is_some_and(|(from, to)| not_reached(from, to))
            })
            .collect();
        graph.remove_edges(withheld);
        let by_version: HashMap<&Version, &(Version, PhasingRelease)> =
            phasing.values().map(|entry| (&entry.0, entry)).collect();
        graph.retain_conditional_edges(|edge| {
            by_version
                .get(&*edge.to)
                .is_none_or(|to| !not_reached(&edge.from, to))
        });
        for id in phasing.keys() {
            if let Some(metadata) = graph.metadata_mut(*id) {
                let channels = match metadata.get(channels_key) {
                    Some(listed) if !listed.is_empty() => format!("{listed},{channel}"),
                    _ => channel.to_owned(),
                };
                metadata.insert(channels_key, channels);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use cincinnati_core::stage::Pipeline;
    use rollout_model::ClusterId;

    use super::*;
    use crate::client::filters::{catalog, default_tables};
    use crate::client::request::{PolicyRequest, UpstreamKind};
    use crate::test_graphs::{graph, serialized};

    const START: &str = "2025-06-02T09:00:00Z";
    const DAY: SignedDuration = SignedDuration::from_hours(24);
    const SECOND: SignedDuration = SignedDuration::from_secs(1);

    /// 4.18.2 phasing into stable-4.18 from `START`, listed in fast-4.18
    /// already; `rules` are stable-4.18's durations, `extra_nodes` and
    /// `extra_edges` more of the graph.
    fn full_graph(rules: &str, extra_nodes: &str, extra_edges: &str) -> Graph {
        let phased = format!(r#"{{\"stable-4.18\":{{\"start\":\"{START}\",{rules}}}}}"#);
        graph(&format!(
            r#"{{"nodes": [
              {{"version": "4.18.1+amd64", "payload": "p1", "metadata": {{
                "io.openshift.upgrades.graph.release.arch": "amd64",
                "io.openshift.upgrades.graph.release.channels": "fast-4.18,stable-4.18"}}}},
              {{"version": "4.18.2+amd64", "payload": "p2", "metadata": {{
                "io.openshift.upgrades.graph.release.arch": "amd64",
                "io.openshift.upgrades.graph.release.channels": "fast-4.18",
                "io.openshift.upgrades.graph.release.phased_rollouts": "{phased}"}}}}
              {extra_nodes}],
              "edges": [[0, 1]{extra_edges}]}}"#
        ))
    }

    fn patch_only() -> Graph {
        full_graph(r#"\"patch\":\"P2D\""#, "", "")
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn pipeline() -> Pipeline<PolicyRequest> {
        catalog().pipeline(&default_tables(false)).unwrap()
    }

    /// The answer to `query` at `now`, and the request's phase.
    fn answer(base: &Graph, query: &str, now: Timestamp) -> (Graph, Option<Phase>) {
        controlled_answer(base, query, now, None)
    }

    /// [`answer`] with `knowledge` of run-time control.
    fn controlled_answer(
        base: &Graph,
        query: &str,
        now: Timestamp,
        knowledge: Option<&Arc<Knowledge>>,
    ) -> (Graph, Option<Phase>) {
        let mut request = PolicyRequest::for_test(query, UpstreamKind::GraphBuilder);
        let place = request.query.cluster().map(|cluster| cluster.place);
        let channel = request.query.channel.clone().unwrap();
        request.phase =
            PhasedRollouts::of(base).phase(channel.as_str(), || place, now, || knowledge.cloned());
        let phase = request.phase.clone();
        (pipeline().run_on(base, &request).unwrap(), phase)
    }

    fn has(graph: &Graph, version: &str) -> bool {
        graph.find(&Version::parse(version).unwrap()).is_some()
    }

    fn offers(graph: &Graph, from: &str, to: &str) -> bool {
        let (Some(from), Some(to)) = (
            graph.find(&Version::parse(from).unwrap()),
            graph.find(&Version::parse(to).unwrap()),
        ) else {
            return false;
        };
        graph.children(from).any(|child| child == to)
    }

    /// Ids and their places, by the documented formula.
    const IDS: [&str; 3] = [
        "0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60",
        "7d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6",
        "c3d4e5f6-a7b8-4c9d-8e0f-112233445566",
    ];

    #[test]
    fn a_cluster_is_offered_the_update_from_start_plus_its_place_times_the_duration() {
        let base = patch_only();
        let start = at(START);
        for id in IDS {
            let place = ClusterId::parse(id).unwrap().place().fraction();
            let moment = PhasedWindow {
                start,
                end: start + 2 * DAY,
            }
            .moment_at(place);
            let expected = start + SignedDuration::from_secs_f64(place * 2.0 * 86_400.0);
            assert!(
                moment.duration_since(expected).abs() < SignedDuration::from_micros(1),
                "{id}"
            );
            let query = format!("channel=stable-4.18&id={id}");
            // (now, 4.18.2 in the channel, 4.18.1 → 4.18.2 offered)
            for (now, in_channel, offered) in [
                (start - SECOND, false, false),
                (start, true, moment == start),
                (moment - SECOND, moment - SECOND >= start, false),
                (moment, true, true),
                (start + 2 * DAY, true, true),
            ] {
                let (answer, _) = answer(&base, &query, now);
                assert_eq!(
                    has(&answer, "4.18.2"),
                    in_channel,
                    "{id} (place {place}) at {now}"
                );
                assert_eq!(
                    offers(&answer, "4.18.1", "4.18.2"),
                    offered,
                    "{id} (place {place}) at {now}"
                );
            }
        }
    }

    #[test]
    fn without_an_id_the_update_is_offered_at_the_end_of_the_longest_window() {
        let start = at(START);
        let base = patch_only();
        for (now, offered) in [
            (start, false),
            (start + 2 * DAY - SECOND, false),
            (start + 2 * DAY, true),
        ] {
            let (answer, _) = answer(&base, "channel=stable-4.18", now);
            assert!(has(&answer, "4.18.2"), "in the channel from start, for everyone");
            assert_eq!(offers(&answer, "4.18.1", "4.18.2"), offered, "{now}");
        }
        // A minor update into 4.18.2 from 4.17.9 (P14D, conditional): the
        // graph-builder lists 4.18.2 at the end of that longest window, and
        // so a request without an id gets the patch update then too.
        let base = full_graph(
            r#"\"patch\":\"P2D\",\"default\":\"P14D\""#,
            r#",{"version": "4.17.9+amd64", "payload": "p0", "metadata": {
                "io.openshift.upgrades.graph.release.arch": "amd64",
                "io.openshift.upgrades.graph.release.channels": "stable-4.18"}}"#,
            "",
        );
        let base = {
            let mut json = serialized(&base);
            json["conditionalEdges"] = serde_json::json!([{
                "edges": [{"from": "4.17.9+amd64", "to": "4.18.2+amd64"}],
                "risks": [{"url": "u", "name": "R", "message": "m", "matchingRules": [{"type": "Always"}]}]
            }]);
            graph(&json.to_string())
        };
        let conditional = |answer: &Graph| !answer.conditional_edges().is_empty();
        for (now, patch, minor) in [
            (start + 2 * DAY, false, false),
            (start + 14 * DAY - SECOND, false, false),
            (start + 14 * DAY, true, true),
        ] {
            let (answer, _) = answer(&base, "channel=stable-4.18", now);
            assert_eq!(offers(&answer, "4.18.1", "4.18.2"), patch, "{now}");
            assert_eq!(conditional(&answer), minor, "{now}");
        }
        // A cluster: the patch update from its moment in two days, the
        // conditional minor one from its moment in fourteen.
        let id = IDS[0];
        let place = ClusterId::parse(id).unwrap().place().fraction();
        let query = format!("channel=stable-4.18&id={id}");
        let two_days = PhasedWindow {
            start,
            end: start + 2 * DAY,
        }
        .moment_at(place);
        let fourteen_days = PhasedWindow {
            start,
            end: start + 14 * DAY,
        }
        .moment_at(place);
        for (now, patch, minor) in [
            (two_days, true, false),
            (fourteen_days - SECOND, true, false),
            (fourteen_days, true, true),
        ] {
            let (answer, _) = answer(&base, &query, now);
            assert_eq!(offers(&answer, "4.18.1", "4.18.2"), patch, "{now}");
            assert_eq!(conditional(&answer), minor, "{now}");
        }
    }

    #[test]
    fn a_cluster_at_the_phasing_release_finds_it_in_the_channel() {
        let base = patch_only();
        let late = IDS
            .iter()
            .max_by(|a, b| {
                let place = |id: &&str| ClusterId::parse(id).unwrap().place().fraction();
                place(a).total_cmp(&place(b))
            })
            .unwrap();
        let (answer, _) = answer(
            &base,
            &format!("channel=stable-4.18&id={late}&version=4.18.2"),
            at(START) + SECOND,
        );
        let json = serialized(&answer);
        let node = json["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|node| node["version"] == "4.18.2")
            .expect("4.18.2 in stable-4.18's answer");
        assert_eq!(
            node["metadata"]["io.openshift.upgrades.graph.release.channels"], "fast-4.18,stable-4.18",
            "listed in the channel, for an engine chained to this one"
        );
        assert!(!offers(&answer, "4.18.1", "4.18.2"), "not offered yet");
    }

    #[test]
    fn a_channel_without_phasing_answers_the_same_bytes() {
        let base = patch_only();
        let rollouts = PhasedRollouts::of(&base);
        for query in [
            "channel=fast-4.18",
            "channel=fast-4.18&id=0f2a9c4e-5b1d-4c3e-8f7a-1b2c3d4e5f60",
        ] {
            let plain = PolicyRequest::for_test(query, UpstreamKind::GraphBuilder);
            let place = plain.query.cluster().map(|cluster| cluster.place);
            assert!(
                rollouts
                    .phase("fast-4.18", || place, at(START), || None)
                    .is_none(),
                "no phase, no key"
            );
            let bytes = |request| {
                cincinnati_core::wire::serialize(&pipeline().run_on(&base, request).unwrap(), Some(1))
            };
            let (phased, _) = answer(&base, query, at(START));
            assert_eq!(cincinnati_core::wire::serialize(&phased, Some(1)), bytes(&plain));
            assert!(offers(&phased, "4.18.1", "4.18.2"), "fast-4.18 lists 4.18.2");
        }
        assert!(
            PhasedRollouts::of(&graph(r#"{"nodes": [], "edges": []}"#))
                .phase("a", || None, at(START), || None)
                .is_none()
        );
    }

    /// Answers are keyed by the gates passed: a handful per channel, however
    /// many clusters ask, and each says when it next changes.
    #[test]
    fn a_phase_is_a_few_bits_and_expires_when_the_next_gate_passes() {
        let base = patch_only();
        let rollouts = PhasedRollouts::of(&base);
        let start = at(START);
        let phase = |place: f64, now| {
            let place = rollout_model::Place::from_percent(place * 100.0);
            rollouts
                .phase("stable-4.18", || Some(place), now, || None)
                .unwrap()
        };
        let mut distinct = std::collections::BTreeSet::new();
        for step in 0..1000 {
            let place = f64::from(step) / 1000.0;
            distinct.insert(phase(place, start + DAY).passed());
        }
        assert_eq!(distinct.len(), 2, "entered, and entered and offered");
        let early = phase(0.25, start);
        assert_eq!(early.valid_for(start), Some(Duration::from_secs(12 * 3600)));
        assert_eq!(
            phase(0.25, start + DAY).valid_for(start + DAY),
            None,
            "nothing left to pass"
        );
        let before = rollouts
            .phase("stable-4.18", || None, start - SECOND, || None)
            .unwrap();
        assert_eq!(before.valid_for(start - SECOND), Some(Duration::from_secs(1)));
        assert_eq!(before.passed(), 0);
    }

    /// What explain says of the phased update for a cluster: its window and
    /// its own moment, offered once that has come; without an id, the end
    /// of the window.
    #[test]
    fn explain_says_when_a_phased_update_is_offered_to_a_cluster() {
        let rollouts = PhasedRollouts::of(&patch_only());
        let start = at(START);
        let cluster = ClusterId::parse(IDS[0]).unwrap().placed();
        let moment = PhasedWindow {
            start,
            end: start + 2 * DAY,
        }
        .moment_at(cluster.place.fraction());
        let offers = |cluster, version: &str, arch: &str, now| {
            crate::cluster_policy::phased_offers(
                (&rollouts, None),
                "stable-4.18",
                arch,
                &Version::parse(version).unwrap(),
                cluster,
                now,
            )
        };
        let before = offers(Some(cluster), "4.18.1", "amd64", moment - SECOND);
        let expected = cincinnati_client::cluster_policy::PhasedOffer {
            channel: "stable-4.18".to_owned(),
            from: "4.18.1".to_owned(),
            to: "4.18.2".to_owned(),
            duration: Some("P2D".to_owned()),
            start: START.to_owned(),
            end: "2025-06-04T09:00:00Z".to_owned(),
            offered_from: crate::cluster_policy::shown(moment),
            offered: false,
            control: None,
        };
        assert_eq!(before, std::slice::from_ref(&expected));
        assert!(
            before[0]
                .said()
                .starts_with("to be offered to this cluster from ")
        );
        let offered = cincinnati_client::cluster_policy::PhasedOffer {
            offered: true,
            ..expected
        };
        assert_eq!(offers(Some(cluster), "4.18.1", "amd64", moment), [offered]);
        let without_id = offers(None, "4.18.1", "amd64", start + DAY);
        assert_eq!(
            (without_id[0].offered_from.as_str(), without_id[0].offered),
            ("2025-06-04T09:00:00Z", false)
        );
        assert_eq!(
            offers(Some(cluster), "4.18.2", "amd64", moment),
            [],
            "no update from 4.18.2"
        );
        assert_eq!(
            offers(Some(cluster), "4.18.1", "arm64", moment),
            [],
            "another architecture"
        );
    }

    /// The gauge ramps from 0 at the start to 1 at the end of the window,
    /// one series per update (the architectures share it), gone after.
    #[test]
    fn the_rollout_gauge_ramps_over_the_window_and_goes_after_it() {
        let base = patch_only();
        let rollouts = PhasedRollouts::of(&base);
        let gauge = GaugeVec::new(
            prometheus::Opts::new("phased_update_rollout", "test"),
            &["channel", "from", "to"],
        )
        .unwrap();
        let series = |now| {
            rollouts.set_rollout_gauge(&gauge, now, None);
            prometheus::core::Collector::collect(&gauge)
                .iter()
                .flat_map(|family| family.get_metric().to_vec())
                .map(|metric| {
                    let labels: Vec<String> = metric
                        .get_label()
                        .iter()
                        .map(|label| format!("{}={}", label.name(), label.value()))
                        .collect();
                    (labels.join(","), metric.get_gauge().get_value())
                })
                .collect::<Vec<_>>()
        };
        let start = at(START);
        let labels = "channel=stable-4.18,from=4.18.1,to=4.18.2".to_owned();
        assert_eq!(series(start - SECOND), [], "not yet in its window");
        for (now, share) in [
            (start, 0.0),
            (start + DAY / 2, 0.25),
            (start + DAY, 0.5),
            (start + 2 * DAY, 1.0),
        ] {
            assert_eq!(series(now), [(labels.clone(), share)], "{now}");
        }
        assert_eq!(series(start + 2 * DAY + SECOND), [], "the window has ended");
    }

    #[test]
    fn a_value_that_does_not_read_is_no_rollout() {
        let mut json = serialized(&patch_only());
        json["nodes"][1]["metadata"]["io.openshift.upgrades.graph.release.phased_rollouts"] =
            serde_json::json!("{\"stable-4.18\":{\"start\":\"tomorrow\"}}");
        let rollouts = PhasedRollouts::of(&graph(&json.to_string()));
        assert!(
            rollouts
                .phase("stable-4.18", || None, at(START), || None)
                .is_none()
        );
    }

    /// Control of 4.18.2's rollout, as the store would have it: `requests`
    /// by an operator, each at its time, read at `as_of`.
    fn controlled(
        requests: &[(rollout_model::change::Request, Timestamp)],
        as_of: Timestamp,
    ) -> Arc<Knowledge> {
        let rollouts = PhasedRollouts::of(&patch_only());
        let declaration = &rollouts.declarations()[0];
        let actor = rollout_model::control::Actor::operator("ops");
        let control = requests
            .iter()
            .fold(rollout_model::Control::default(), |control, (request, at)| {
                rollout_model::change::decide(declaration, (&control, None), request, (&actor, "test"), *at)
                    .control
            });
        Arc::new(Knowledge::Read {
            as_of,
            controls: std::collections::BTreeMap::from([("4.18.2".to_owned(), control)]),
            gates: std::collections::BTreeMap::new(),
        })
    }

    /// The release phasing is a rollout of the model, declared by graph-data.
    #[test]
    fn a_release_phasing_is_a_rollout_spanning_its_windows() {
        let rollouts = PhasedRollouts::of(&patch_only());
        let [declaration] = rollouts.declarations() else {
            panic!("one release phasing: {:?}", rollouts.declarations());
        };
        assert_eq!(declaration.target.to_string(), "4.18.2");
        assert_eq!(
            declaration.origin,
            rollout_model::declaration::Origin::GraphData {
                channels: vec!["stable-4.18".to_owned()]
            }
        );
        assert_eq!(declaration.schedule.start, at(START));
        assert_eq!(declaration.schedule.end(), at(START) + 2 * DAY);
    }

    /// The documented rules of run-time control over a phased rollout, as
    /// an oracle over clusters at every hundredth place and over requests
    /// without an id: state unknown, nobody is offered the update (the
    /// release is in the channel all the same); a pause offers nobody new
    /// (a cluster is offered it when its moment is no later than the
    /// pause); after a resume every moment is later by the time it stood
    /// still; a hold offers the clusters placed below it, in every window.
    #[test]
    fn run_time_control_moves_the_offers_of_a_phased_rollout() {
        use rollout_model::change::Request;
        let base = patch_only();
        let start = at(START);
        let window = PhasedWindow {
            start,
            end: start + 2 * DAY,
        };
        let (pause, resume) = (start + DAY / 2, start + DAY);
        let now = start + DAY + DAY / 2;
        let unknown = Arc::new(Knowledge::Unknown);
        let paused = controlled(&[(Request::Pause, pause)], now);
        let resumed = controlled(&[(Request::Pause, pause), (Request::Resume, resume)], now);
        let held = controlled(&[(Request::Hold(25.0), start)], now);
        type Oracle = Box<dyn Fn(Option<Place>) -> bool>;
        let moment = move |place: Place| window.moment_at(place.fraction());
        let cases: [(&str, Option<&Arc<Knowledge>>, Oracle); 5] = [
            (
                "no control",
                None,
                Box::new(move |place: Option<Place>| place.is_some_and(|place| moment(place) <= now)),
            ),
            ("unknown", Some(&unknown), Box::new(|_| false)),
            (
                "paused",
                Some(&paused),
                Box::new(move |place: Option<Place>| place.is_some_and(|place| moment(place) <= pause)),
            ),
            (
                "resumed",
                Some(&resumed),
                Box::new(move |place: Option<Place>| {
                    place.is_some_and(|place| moment(place) + (resume - pause) <= now)
                }),
            ),
            (
                "held",
                Some(&held),
                Box::new(|place: Option<Place>| place.is_some_and(|place| place.is_below(25.0))),
            ),
        ];
        let rollouts = PhasedRollouts::of(&base);
        for (name, knowledge, oracle) in cases {
            let mut offered = 0;
            for place in (0..100)
                .map(|hundredth| Some(Place::from_percent(f64::from(hundredth) + 0.5)))
                .chain([None])
            {
                let mut request = PolicyRequest::for_test("channel=stable-4.18", UpstreamKind::GraphBuilder);
                request.phase = rollouts.phase("stable-4.18", || place, now, || knowledge.cloned());
                let answer = pipeline().run_on(&base, &request).unwrap();
                assert!(
                    has(&answer, "4.18.2"),
                    "{name}: in the channel from start, for everyone"
                );
                let is_offered = offers(&answer, "4.18.1", "4.18.2");
                assert_eq!(is_offered, oracle(place), "{name} at {place:?}");
                offered += usize::from(is_offered);
            }
            let expected = match name {
                "no control" => 75,
                "unknown" => 0,
                "paused" => 25,
                "resumed" => 50,
                _ => 25,
            };
            assert_eq!(offered, expected, "{name}: clusters offered of 100");
        }
    }

    /// A request's answer expires no later than when its next gate may
    /// pass: never earlier than the time alone says, later while paused.
    #[test]
    fn under_control_an_answer_expires_when_the_rollouts_clock_may_pass_its_gate() {
        use rollout_model::change::Request;
        let start = at(START);
        let rollouts = PhasedRollouts::of(&patch_only());
        let place = Some(Place::from_percent(75.0));
        let now = start + DAY;
        let fresh = controlled(&[], now);
        let phase = rollouts
            .phase("stable-4.18", || place, now, || Some(fresh.clone()))
            .unwrap();
        assert_eq!(phase.valid_for(now), Some(Duration::from_secs(12 * 3600)));
        let resumed = controlled(
            &[(Request::Pause, start), (Request::Resume, start + DAY / 2)],
            now,
        );
        let phase = rollouts
            .phase("stable-4.18", || place, now, || Some(resumed.clone()))
            .unwrap();
        assert_eq!(
            phase.valid_for(now),
            Some(Duration::from_secs(24 * 3600)),
            "half a day later"
        );
    }

    /// Explain says what control does, and from when the update would be
    /// offered if resumed now.
    #[test]
    fn explain_says_a_paused_phased_rollout_is_paused() {
        use rollout_model::change::Request;
        let rollouts = PhasedRollouts::of(&patch_only());
        let start = at(START);
        let now = start + DAY;
        let paused = controlled(&[(Request::Pause, start)], now);
        let update = &rollouts.updates()[0];
        let place = Some(Place::from_percent(50.0));
        let standing = rollouts.standing(update, place, now, Some(&paused));
        assert!(!standing.offered);
        assert_eq!(
            standing.from,
            now + DAY,
            "its moment, a day later: as if resumed now"
        );
        let control = standing.control.expect("paused");
        assert!(
            control.starts_with("paused at 0.0% by ops since 2025-06-02T09:00:00Z"),
            "{control}"
        );
        let running = rollouts.standing(update, place, now, Some(&controlled(&[], now)));
        assert_eq!(
            (running.offered, running.from, running.control),
            (true, now, None)
        );
    }
}
