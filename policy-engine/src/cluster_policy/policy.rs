//! A validated policy: groups and their rules and blocked edges, cluster ids
//! and their groups, rollouts, scoped channels; and the class a request
//! falls in ([`Policy::classify`]), which is computed without touching the
//! graph.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cincinnati_client::cluster_policy::RolloutControlFacts;
use cincinnati_core::release::keys;
use cincinnati_core::{Graph, Release};
use openshift_graph_data::BlockedEdge;
use semver::Version;
use serde::{Deserialize, Serialize};
use service_kit::timestamp::rfc3339;

use super::id::{ClusterId, Place};
use super::office_hours::OfficeHours;

/// Rollouts in one policy: a class keeps one bit per rollout.
pub const MAX_ROLLOUTS: usize = 64;

const DAY_SECS: u64 = 24 * 3600;

/// What a group (or the default) asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// Offer a release only once its image is at least this many days old.
    pub deferral_days: u32,
    /// Offer no release above this version.
    pub max_version: Option<Version>,
}

impl Rules {
    /// The rules of a cluster in both groups: the longer deferral, the
    /// lower pin.
    fn strictest(&self, other: &Rules) -> Rules {
        let max_version = match (&self.max_version, &other.max_version) {
            (Some(a), Some(b)) => Some(a.min(b).clone()),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        Rules {
            deferral_days: self.deferral_days.max(other.deferral_days),
            max_version,
        }
    }
}

/// The groups a cluster is in (sorted; none: the default) and the rules
/// they add up to.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct GroupSet {
    pub names: Vec<String>,
    pub rules: Rules,
}

/// A phased rollout of one target release: declared in the policy file,
/// and changed at run time by its [`RolloutControl`], if any.
#[derive(Debug, Clone)]
pub struct Rollout {
    pub target: Version,
    pub start: SystemTime,
    pub duration: Duration,
    /// The share offered at `start`, in percent.
    pub starting_percentage: f64,
    /// Where the rollout is written in the policy file.
    pub line: u64,
    /// When the fleet's signals pause it (see `crate::control`).
    pub halt_when: Option<HaltWhen>,
    /// When a Prometheus query pauses it (see `crate::control::queries`).
    pub halt_query: Option<HaltQuery>,
    /// A pause made by an Alertmanager alert ends when that alert is
    /// resolved (see `crate::control::alerts`).
    pub auto_resume: bool,
    /// When it may newly offer its target; always when `None`.
    pub office_hours: Option<OfficeHours>,
    /// Its canaries and rate, as the file declares them.
    pub gates: Gates,
    /// How far its gates let it go, as rollout control last computed it
    /// from the fleet (see `crate::control::gates`); `None`: not yet.
    pub gate_status: Option<GateStatus>,
    /// What operators or automation did to it at run time.
    pub control: Option<RolloutControl>,
}

/// A rollout's gates (Nebraska's safe mode and updates per period): with
/// neither, its schedule alone decides.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Gates {
    /// This many clusters, the first offered, must arrive at the target
    /// before anyone else is offered it; the schedule starts then.
    pub canary: Option<u32>,
    /// At most this many clusters newly offered the target per period.
    pub max_offered: Option<MaxOffered>,
    /// A canary that has not arrived this long after its offer halts the
    /// rollout (and `halt_when`'s stuck criterion counts from it).
    pub arrival_timeout: Duration,
}

impl Gates {
    pub fn any(&self) -> bool {
        self.canary.is_some() || self.max_offered.is_some()
    }
}

/// `max_offered_per_period`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaxOffered {
    pub clusters: u64,
    pub period: Duration,
}

/// How far a rollout's gates let it go now (kept in the fleet store).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GateStatus {
    /// The canaries' places, lowest first: offered the target from
    /// `canaries_at`, while nobody else is.
    pub canaries: Vec<f64>,
    pub canaries_at: Option<SystemTime>,
    /// When the last canary arrived: the schedule starts then.
    pub canaries_arrived_at: Option<SystemTime>,
    /// How long the rollout was paused before they arrived.
    pub paused_before_arrival: Duration,
    /// The rate's period: when it started, the progress offered then.
    pub period: Option<(SystemTime, f64)>,
    /// The most progress the rate allows.
    pub allowed: Option<f64>,
    /// What the gates say, in words.
    pub reason: String,
}

/// A rollout's halt criteria from the fleet store, either or both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HaltWhen {
    /// The share (percent) of the clusters that arrived at its target and
    /// then went silent (not seen for `fleet.silent_hours`), judged once at
    /// least `min_arrived` arrived.
    pub silent_after_arriving_percent: Option<f64>,
    pub min_arrived: u64,
    /// The share (percent) of the clusters offered its target more than
    /// `stuck_after` ago that have not taken it, judged once at least
    /// `min_offered` were offered that long.
    pub stuck: Option<StuckHalt>,
}

/// `halt_when`'s stuck criterion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StuckHalt {
    pub percent: f64,
    pub after: Duration,
    pub min_offered: u64,
}

/// A rollout's halt criterion from Prometheus: the value of `promql`
/// (the largest sample of a vector) above `above`.
#[derive(Debug, Clone, PartialEq)]
pub struct HaltQuery {
    pub promql: String,
    pub above: f64,
}

/// What run-time control does to a rollout (kept in the fleet store; see
/// `crate::rollouts`): its clock stopped, the time it stood still, a
/// progress held.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutControl {
    /// When its clock stopped; `None`: running.
    pub paused_at: Option<SystemTime>,
    /// How long its clock stood still in earlier pauses: its schedule runs
    /// that much later than the file says.
    pub stood_still: Duration,
    /// A progress held (percent), whatever the schedule.
    pub held_progress: Option<f64>,
    /// While paused, its progress when paused: the most it offers, however
    /// the file's schedule is edited meanwhile.
    pub paused_progress: Option<f64>,
    /// The last change: who, why, when.
    pub actor: String,
    pub reason: String,
    pub changed_at: SystemTime,
}

/// Run-time control of rollouts and their gates, by target as written
/// (`4.18.52`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Controls {
    pub states: BTreeMap<String, RolloutControl>,
    pub gates: BTreeMap<String, GateStatus>,
}

impl RolloutControl {
    /// What explain and `/status` say of it.
    pub fn facts(&self) -> RolloutControlFacts {
        let state = match (self.paused_at, self.held_progress) {
            (Some(_), _) => "paused",
            (None, Some(_)) => "held",
            (None, None) => "running",
        };
        RolloutControlFacts {
            state: state.to_owned(),
            held_progress: self.held_progress,
            stood_still_secs: self.stood_still.as_secs(),
            by: self.actor.clone(),
            at: rfc3339(self.changed_at),
            reason: self.reason.clone(),
        }
    }

    /// When the rollout's clock stopped, or `now` if it runs.
    fn stopped(&self, now: SystemTime) -> SystemTime {
        self.paused_at.map_or(now, |paused_at| paused_at.min(now))
    }
}

impl Rollout {
    /// The share of clusters offered the target at `now`, in percent: as
    /// its schedule and run-time control give it ([`Rollout::ungated_progress`]),
    /// no more than its gates allow: nothing while its canaries are
    /// awaited (they alone are offered), no more than its rate allows (and
    /// nothing before the rate is first counted).
    pub fn progress(&self, now: SystemTime) -> f64 {
        if self.awaits_canaries() {
            return 0.0;
        }
        let progress = self.ungated_progress(now);
        match self.gates.max_offered {
            Some(_) => progress.min(self.rate_allowed().unwrap_or(0.0)),
            None => progress,
        }
    }

    /// The share its schedule and run-time control give at `now`: a held
    /// progress; else, at the time on the rollout's clock, 0 before the
    /// start, then from the starting percentage up to 100 linearly over
    /// the duration; while paused, no more than when it was paused.
    pub fn ungated_progress(&self, now: SystemTime) -> f64 {
        match &self.control {
            Some(RolloutControl {
                held_progress: Some(held),
                ..
            }) => held.clamp(0.0, 100.0),
            Some(control) => {
                let scheduled = self.scheduled_progress(self.schedule_clock(now));
                control
                    .paused_progress
                    .map_or(scheduled, |paused| scheduled.min(paused))
            }
            None => self.scheduled_progress(self.schedule_clock(now)),
        }
    }

    /// The time its schedule is read at, at `now`: when its clock stopped
    /// (paused) or now; outside office hours (wall-clock windows), when the
    /// last window closed; earlier by the time its clock stood still and
    /// the wait for its canaries.
    fn schedule_clock(&self, now: SystemTime) -> SystemTime {
        let stopped = self.control.as_ref().map_or(now, |control| control.stopped(now));
        let open = self
            .office_hours
            .as_ref()
            .map_or(stopped, |office| office.last_open(stopped));
        open.checked_sub(self.shift()).unwrap_or(UNIX_EPOCH)
    }

    /// How much later than the file says its schedule runs: the time its
    /// clock stood still in pauses, and the wait for its canaries.
    fn shift(&self) -> Duration {
        let stood_still = self
            .control
            .as_ref()
            .map_or(Duration::ZERO, |control| control.stood_still);
        stood_still + self.canary_wait()
    }

    /// How much later its schedule runs because it waited for its
    /// canaries: from its start until the last arrived, less the pauses of
    /// then (already counted in the time its clock stood still).
    fn canary_wait(&self) -> Duration {
        let Some(status) = self.gate_status.as_ref().filter(|_| self.gates.canary.is_some()) else {
            return Duration::ZERO;
        };
        status.canaries_arrived_at.map_or(Duration::ZERO, |arrived| {
            arrived
                .duration_since(self.start)
                .unwrap_or_default()
                .saturating_sub(status.paused_before_arrival)
        })
    }

    /// Whether it declares canaries that have not all arrived yet (or are
    /// not chosen yet): nobody but them is offered the target.
    pub fn awaits_canaries(&self) -> bool {
        self.gates.canary.is_some()
            && self
                .gate_status
                .as_ref()
                .is_none_or(|status| status.canaries_arrived_at.is_none())
    }

    /// The most progress its rate allows now, once counted.
    fn rate_allowed(&self) -> Option<f64> {
        self.gate_status.as_ref()?.allowed
    }

    /// The share of clusters it had offered its target at `then`, as far
    /// as is known at `now`: what its schedule gave then, no more than its
    /// rate allowed in that period (before the current period, its base).
    pub fn offered_at(&self, then: SystemTime, now: SystemTime) -> f64 {
        let progress = self.progress(then.min(now));
        match self.gate_status.as_ref().and_then(|status| status.period) {
            Some((period_start, base)) if then < period_start => progress.min(base),
            _ => progress,
        }
    }

    /// What its gates say now, if it has any (`/v1/rollouts`, the fleet's
    /// rollouts).
    pub fn gates_said(&self) -> Option<String> {
        self.gates.any().then(|| {
            self.gate_status.as_ref().map_or_else(
                || "not judged yet: nobody is offered the target until its gates are".to_owned(),
                |status| status.reason.clone(),
            )
        })
    }

    /// Whether a cluster at `place` is one of its canaries.
    fn is_canary(&self, place: Place) -> bool {
        self.gate_status.as_ref().is_some_and(|status| {
            status
                .canaries
                .binary_search_by(|canary| canary.total_cmp(&place.percent()))
                .is_ok()
        })
    }

    /// Which of its gates withholds the target from a cluster at `place`
    /// at `now` (the one its schedule and control alone would offer it):
    /// `canary` or `max_offered_per_period`.
    pub fn withholding_gate(&self, place: Place, now: SystemTime) -> Option<&'static str> {
        if self.includes(place, now) {
            return None;
        }
        let ungated = self.ungated_progress(now);
        if !(ungated >= 100.0 || place.percent() < ungated) {
            return None;
        }
        if self.awaits_canaries() {
            Some("canary")
        } else {
            self.gates.max_offered.map(|_| "max_offered_per_period")
        }
    }

    /// The progress the file's schedule gives at `clock`.
    pub fn scheduled_progress(&self, clock: SystemTime) -> f64 {
        let Ok(elapsed) = clock.duration_since(self.start) else {
            return 0.0;
        };
        let fraction = (elapsed.as_secs_f64() / self.duration.as_secs_f64()).min(1.0);
        self.starting_percentage + (100.0 - self.starting_percentage) * fraction
    }

    /// Whether a cluster at `place` is offered the target at `now`: a
    /// canary from when it was chosen, whatever happens after.
    pub fn includes(&self, place: Place, now: SystemTime) -> bool {
        if self.is_canary(place) {
            return true;
        }
        let progress = self.progress(now);
        progress >= 100.0 || place.percent() < progress
    }

    /// Whether its progress follows its schedule (not paused, not held):
    /// only then does a cluster outside come inside by itself.
    pub fn is_on_schedule(&self) -> bool {
        self.control
            .as_ref()
            .is_none_or(|control| control.paused_at.is_none() && control.held_progress.is_none())
    }

    /// Whether time alone says when a cluster comes inside: on its
    /// schedule, without gates (whose openings the fleet decides).
    pub fn follows_schedule(&self) -> bool {
        self.is_on_schedule() && !self.awaits_canaries() && self.gates.max_offered.is_none()
    }

    /// When a cluster at `place` is first offered the target while the
    /// rollout is on its schedule: the schedule's moment, later by the time
    /// its clock stood still and the wait for its canaries (a canary: when
    /// it was chosen).
    pub fn includes_from(&self, place: Place) -> SystemTime {
        if self.is_canary(place)
            && let Some(chosen) = self.gate_status.as_ref().and_then(|status| status.canaries_at)
        {
            return chosen;
        }
        let due = self.scheduled_includes_from(place) + self.shift();
        self.office_hours
            .as_ref()
            .map_or(due, |office| office.next_open(due))
    }

    fn scheduled_includes_from(&self, place: Place) -> SystemTime {
        let percent = place.percent();
        // (At 100% from the start, the fraction below would be 0/0.)
        if percent < self.starting_percentage || self.starting_percentage >= 100.0 {
            return self.start;
        }
        let fraction = ((percent - self.starting_percentage) / (100.0 - self.starting_percentage)).min(1.0);
        self.start + self.duration.mul_f64(fraction)
    }
}

/// A blocked edge of a group's own (graph-data's shape): the updates it
/// matches removed, or made conditional with its risk, for that group only.
#[derive(Debug, Clone)]
pub struct EdgeRule {
    pub edge: BlockedEdge,
    /// Where it is written in the policy file.
    pub line: u64,
}

/// A channel only some groups see (a customer's hotfixes, say): for them,
/// its releases join the views of the channels it `joins`; for everyone
/// else it does not exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopedChannel {
    pub channel: String,
    pub joins: Vec<String>,
    pub groups: Vec<String>,
}

/// A validated policy file.
#[derive(Debug)]
pub struct Policy {
    /// Set by the source on each load: classes of different loads differ.
    pub(super) generation: u64,
    default: Arc<GroupSet>,
    groups: BTreeMap<String, Rules>,
    clusters: HashMap<ClusterId, Arc<GroupSet>>,
    /// As the file declares them, with their run-time control
    /// ([`Policy::set_controls`]).
    rollouts: ArcSwap<Vec<Rollout>>,
    /// The default's blocked edges (for clusters in no defined group).
    default_edges: Vec<EdgeRule>,
    /// Each group's blocked edges.
    group_edges: BTreeMap<String, Vec<EdgeRule>>,
    scoped_channels: Vec<ScopedChannel>,
    /// The group sets of clusters whose groups come from the lookup service,
    /// by their names: made once, shared by every request of such a
    /// cluster, and by every cluster with the same groups.
    looked_up_sets: Mutex<HashMap<Vec<String>, Arc<GroupSet>>>,
}

/// Group sets kept for clusters of the lookup service: far more than there
/// are combinations of groups in practice.
const MAX_LOOKED_UP_SETS: usize = 4096;

impl Policy {
    /// A policy whose group sets are shared between the clusters that have
    /// the same groups.
    pub fn new(
        default: Rules,
        groups: BTreeMap<String, Rules>,
        clusters: HashMap<ClusterId, Vec<String>>,
        rollouts: Vec<Rollout>,
    ) -> Self {
        let mut policy = Self {
            generation: 0,
            default: Arc::new(GroupSet {
                names: Vec::new(),
                rules: default,
            }),
            groups,
            clusters: HashMap::with_capacity(clusters.len()),
            rollouts: ArcSwap::from_pointee(rollouts),
            default_edges: Vec::new(),
            group_edges: BTreeMap::new(),
            scoped_channels: Vec::new(),
            looked_up_sets: Mutex::default(),
        };
        let mut interned: HashMap<Vec<String>, Arc<GroupSet>> = HashMap::new();
        for (id, mut names) in clusters {
            names.sort();
            names.dedup();
            let set = interned
                .entry(names)
                .or_insert_with_key(|names| policy.group_set(names.clone()))
                .clone();
            policy.clusters.insert(id, set);
        }
        policy
    }

    /// With blocked edges of the default's (`None`) and of groups.
    pub fn with_edge_rules(
        mut self,
        default: Vec<EdgeRule>,
        groups: BTreeMap<String, Vec<EdgeRule>>,
    ) -> Self {
        self.default_edges = default;
        self.group_edges = groups;
        self
    }

    /// With channels only some groups see.
    pub fn with_scoped_channels(mut self, scoped: Vec<ScopedChannel>) -> Self {
        self.scoped_channels = scoped;
        self
    }

    pub fn scoped_channels(&self) -> &[ScopedChannel] {
        &self.scoped_channels
    }

    /// `graph` as a cluster that may see no scoped channel sees it: every
    /// scoped channel gone from the releases' channel lists, and the
    /// releases that were listed only there gone (what public pages show).
    pub fn without_scoped_channels(&self, graph: &Graph) -> Graph {
        let scoped = |channel: &str| {
            self.scoped_channels
                .iter()
                .any(|scoped| scoped.channel == channel)
        };
        let lists_only_scoped = |release: &Release| {
            let mut channels = release.metadata_list(keys::CHANNELS).peekable();
            channels.peek().is_some() && channels.all(scoped)
        };
        let mut view = graph.subgraph(|release| !lists_only_scoped(release));
        let ids: Vec<_> = view.releases().map(|(id, _)| id).collect();
        for id in ids {
            let Some(metadata) = view.metadata_mut(id) else {
                continue;
            };
            if let Some(channels) = metadata.get_mut(keys::CHANNELS) {
                let kept: Vec<&str> = channels
                    .split(',')
                    .filter(|channel| !scoped(channel.trim()))
                    .collect();
                *channels = kept.join(",");
            }
        }
        view
    }

    /// Blocked edges in the policy, of the default and every group.
    pub fn edge_rule_count(&self) -> usize {
        self.default_edges.len() + self.group_edges.values().map(Vec::len).sum::<usize>()
    }

    /// The groups `names` and their rules: the strictest of the groups'
    /// that the policy defines, or the default's when it defines none.
    pub fn group_set(&self, mut names: Vec<String>) -> Arc<GroupSet> {
        names.sort();
        names.dedup();
        let rules = names.iter().filter_map(|name| self.groups.get(name)).fold(
            None,
            |combined: Option<Rules>, rules| {
                Some(combined.map_or_else(|| rules.clone(), |combined| combined.strictest(rules)))
            },
        );
        match rules {
            None if names.is_empty() => self.default.clone(),
            rules => Arc::new(GroupSet {
                rules: rules.unwrap_or_else(|| self.default.rules.clone()),
                names,
            }),
        }
    }

    /// The group set of `id` with the groups the lookup service named for
    /// it (`looked_up`, sorted): the file's groups and those of the
    /// service's the policy defines; `None` when that adds no group.
    pub fn with_looked_up(&self, id: &ClusterId, looked_up: &[String]) -> Option<Arc<GroupSet>> {
        let from_file = self.groups_of(id);
        let adds = |name: &String| self.groups.contains_key(name) && !from_file.contains(name);
        if !looked_up.iter().any(adds) {
            return None;
        }
        // Mostly the service names every group and the file none: its
        // answer is the key as it is.
        let built;
        let names = if from_file.is_empty() && looked_up.iter().all(adds) {
            looked_up
        } else {
            let mut names: Vec<String> = from_file
                .iter()
                .chain(looked_up.iter().filter(|name| adds(name)))
                .cloned()
                .collect();
            names.sort();
            built = names;
            &built[..]
        };
        let mut sets = self.looked_up_sets.lock();
        if let Some(set) = sets.get(names) {
            return Some(set.clone());
        }
        let set = self.group_set(names.to_vec());
        if sets.len() < MAX_LOOKED_UP_SETS {
            sets.insert(names.to_vec(), set.clone());
        }
        Some(set)
    }

    /// The groups the file puts `id` in.
    pub fn groups_of(&self, id: &ClusterId) -> &[String] {
        self.clusters.get(id).map_or(&[], |set| &set.names)
    }

    pub fn groups(&self) -> &BTreeMap<String, Rules> {
        &self.groups
    }

    pub fn default_rules(&self) -> &Rules {
        &self.default.rules
    }

    pub fn cluster_count(&self) -> usize {
        self.clusters.len()
    }

    /// The rollouts now, with their run-time control.
    pub fn rollouts(&self) -> Arc<Vec<Rollout>> {
        self.rollouts.load_full()
    }

    /// Gives each rollout its control in `controls` (none: the file's
    /// schedule alone).
    pub fn set_controls(&self, controls: &Controls) {
        let rollouts = self
            .rollouts
            .load()
            .iter()
            .map(|rollout| {
                let target = rollout.target.to_string();
                Rollout {
                    control: controls.states.get(&target).cloned(),
                    gate_status: controls.gates.get(&target).cloned(),
                    ..rollout.clone()
                }
            })
            .collect();
        self.rollouts.store(Arc::new(rollouts));
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The class of a request at `now`, from the cluster's id (`None`: none
    /// or not a UUID) and its groups (`None`: those of the policy file).
    /// Deferral is decided at the start of the `bucket` `now` is in, so
    /// that one answer serves a group for the whole bucket.
    pub fn classify(
        self: &Arc<Self>,
        id: Option<&ClusterId>,
        groups: Option<Arc<GroupSet>>,
        now: SystemTime,
        bucket: Duration,
    ) -> PolicyClass {
        let groups = groups.unwrap_or_else(|| {
            id.and_then(|id| self.clusters.get(id))
                .unwrap_or(&self.default)
                .clone()
        });
        let place = id.map_or(Place::LAST, ClusterId::place);
        let mut withheld = 0_u64;
        let mut next_change: Option<SystemTime> = None;
        let mut sooner = |at: SystemTime| {
            next_change = Some(next_change.map_or(at, |next| next.min(at)));
        };
        let rollouts = self.rollouts();
        for (index, rollout) in rollouts.iter().enumerate() {
            if !rollout.includes(place, now) {
                withheld |= 1 << index;
                if rollout.follows_schedule() {
                    sooner(rollout.includes_from(place).max(now));
                }
            }
        }
        let deferral_cutoff = (groups.rules.deferral_days > 0).then(|| {
            let bucket_secs = bucket.as_secs().max(1);
            let now_secs = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
            let bucket_start = now_secs - now_secs % bucket_secs;
            sooner(UNIX_EPOCH + Duration::from_secs(bucket_start + bucket_secs));
            bucket_start as i64 - i64::from(groups.rules.deferral_days) * DAY_SECS as i64
        });
        PolicyClass {
            policy: self.clone(),
            rollouts,
            id: id.copied(),
            groups,
            withheld,
            deferral_cutoff,
            place,
            next_change,
        }
    }
}

/// What a request's answer depends on besides (channel, arch): its groups'
/// rules, the rollouts withheld from it and the deferral cutoff. Requests of
/// one class share one answer.
#[derive(Debug, Clone)]
pub struct PolicyClass {
    pub(super) policy: Arc<Policy>,
    /// The rollouts as they were when the class was made (not part of the
    /// class: `withheld` says what they did).
    pub(super) rollouts: Arc<Vec<Rollout>>,
    /// The cluster's id, if valid (not part of the class).
    pub(super) id: Option<ClusterId>,
    pub(super) groups: Arc<GroupSet>,
    /// Bit `i`: rollout `i`'s target is not offered yet.
    pub(super) withheld: u64,
    /// Unix seconds: releases built later are deferred.
    pub(super) deferral_cutoff: Option<i64>,
    /// The cluster's place (not part of the class).
    pub(super) place: Place,
    /// When this cluster's class may change next (not part of the class):
    /// answers must not be cached beyond it.
    pub(super) next_change: Option<SystemTime>,
}

impl PolicyClass {
    /// How long an answer of this class stays true from `now`, if not for
    /// ever (until the policy or the graph changes).
    pub fn valid_for(&self, now: SystemTime) -> Option<Duration> {
        self.next_change
            .map(|at| at.duration_since(now).unwrap_or_default())
    }

    /// The blocked edges that apply to this class: those of its groups the
    /// policy defines (each group's in file order), or the default's when
    /// it is in none, as its rules are.
    pub fn edge_rules(&self) -> Vec<&EdgeRule> {
        let policy = &self.policy;
        let defined: Vec<&String> = self
            .groups
            .names
            .iter()
            .filter(|name| policy.groups.contains_key(*name))
            .collect();
        if defined.is_empty() {
            return policy.default_edges.iter().collect();
        }
        defined
            .into_iter()
            .filter_map(|name| policy.group_edges.get(name))
            .flatten()
            .collect()
    }

    /// The channels whose releases make this class's view of `requested`:
    /// `requested` itself, unless it is a scoped channel none of the class's
    /// groups may see, and every scoped channel the class may see that
    /// joins `requested`.
    pub fn view_channels<'a>(&'a self, requested: &'a str) -> Vec<&'a str> {
        let entitled = |scoped: &ScopedChannel| {
            scoped
                .groups
                .iter()
                .any(|group| self.groups.names.contains(group))
        };
        let scoped = &self.policy.scoped_channels;
        let hidden = scoped
            .iter()
            .any(|scoped| scoped.channel == requested && !entitled(scoped));
        let joined = scoped
            .iter()
            .filter(|scoped| entitled(scoped) && scoped.joins.iter().any(|joined| joined == requested))
            .map(|scoped| scoped.channel.as_str());
        (!hidden).then_some(requested).into_iter().chain(joined).collect()
    }

    /// The rollouts whose targets are withheld, with their index.
    pub fn withheld_rollouts(&self) -> impl Iterator<Item = (usize, &Rollout)> {
        self.rollouts
            .iter()
            .enumerate()
            .filter(|(index, _)| self.withheld & (1 << index) != 0)
    }
}

impl PartialEq for PolicyClass {
    fn eq(&self, other: &Self) -> bool {
        self.policy.generation == other.policy.generation
            // Group sets are shared: most classes compare by address.
            && (Arc::ptr_eq(&self.groups, &other.groups) || self.groups == other.groups)
            && self.withheld == other.withheld
            && self.deferral_cutoff == other.deferral_cutoff
    }
}

impl Eq for PolicyClass {}

impl Hash for PolicyClass {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.policy.generation.hash(state);
        self.groups.names.hash(state);
        self.withheld.hash(state);
        self.deferral_cutoff.hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    fn rollout(start: u64, hours: u64, starting_percentage: f64) -> Rollout {
        Rollout {
            target: Version::new(4, 18, 7),
            start: at(start),
            duration: Duration::from_secs(hours * 3600),
            starting_percentage,
            line: 1,
            halt_when: None,
            halt_query: None,
            auto_resume: false,
            office_hours: None,
            gates: Gates::default(),
            gate_status: None,
            control: None,
        }
    }

    fn ids(count: u32) -> Vec<ClusterId> {
        (0..count)
            .map(|n| ClusterId::parse(&format!("{n:08x}-1111-4222-8333-444455556666")).unwrap())
            .collect()
    }

    fn policy(rollouts: Vec<Rollout>) -> Arc<Policy> {
        Arc::new(Policy::new(
            Rules::default(),
            BTreeMap::new(),
            HashMap::new(),
            rollouts,
        ))
    }

    #[test]
    fn progress_rises_from_the_starting_percentage_to_100() {
        let rollout = rollout(1000, 10, 20.0);
        assert_eq!(rollout.progress(at(999)), 0.0);
        assert_eq!(rollout.progress(at(1000)), 20.0);
        assert_eq!(rollout.progress(at(1000 + 5 * 3600)), 60.0);
        assert_eq!(rollout.progress(at(1000 + 10 * 3600)), 100.0);
        assert_eq!(rollout.progress(at(1000 + 99 * 3600)), 100.0);
        assert!(rollout.includes(Place::LAST, at(1000 + 10 * 3600)));
        assert!(!rollout.includes(Place::LAST, at(1000 + 10 * 3600 - 1)));
    }

    #[test]
    fn outside_office_hours_a_rollout_offers_nobody_new_and_catches_up_at_the_next_window() {
        // From Monday 2026-11-23 00:00 UTC, 0% to 100% over 100 hours, newly
        // offering Monday to Friday 09:00-17:00 UTC.
        let monday = 1_795_392_000;
        let days: Vec<String> = ["mon", "tue", "wed", "thu", "fri"].map(str::to_owned).to_vec();
        let office = Rollout {
            office_hours: Some(OfficeHours::new(&days, "09:00", "17:00", "UTC").unwrap()),
            ..rollout(monday, 100, 0.0)
        };
        let hours = |hours: u64| at(monday + hours * 3600);
        let progress = |at_hour: u64| (office.progress(hours(at_hour)) * 1e6).round() / 1e6;
        assert_eq!(progress(58), 58.0, "Wednesday 10:00: open");
        assert_eq!(progress(68), 65.0, "Wednesday 20:00: as at 17:00");
        assert_eq!(progress(80), 65.0, "Thursday 08:00: still closed");
        assert_eq!(progress(81), 81.0, "Thursday 09:00: caught up");
        // Due Wednesday 18:00 (66%): offered at Thursday's opening.
        assert_eq!(office.includes_from(Place::from_percent(66.0)), hours(81));
        let (due, noon) = (office.includes_from(Place::from_percent(60.0)), hours(60));
        let gap = due.max(noon).duration_since(due.min(noon)).unwrap();
        assert!(gap < Duration::from_secs(1), "due Wednesday 12:00, open: then");
    }

    #[test]
    fn a_paused_rollout_offers_no_more_than_when_it_was_paused_whatever_the_file_says() {
        // Paused at 60% (5 h into 10 h from 20%).
        let paused = |rollout: Rollout| Rollout {
            control: Some(RolloutControl {
                paused_at: Some(at(100_000 + 5 * 3600)),
                stood_still: Duration::ZERO,
                held_progress: None,
                paused_progress: Some(60.0),
                actor: "ops".into(),
                reason: "alarms".into(),
                changed_at: at(100_000 + 5 * 3600),
            }),
            ..rollout
        };
        let later = at(100_000 + 8 * 3600);
        assert_eq!(paused(rollout(100_000, 10, 20.0)).progress(later), 60.0);
        // The file edited: started earlier, its clock now past 90%.
        assert_eq!(
            paused(rollout(100_000 - 4 * 3600, 10, 20.0)).progress(later),
            60.0,
            "no jump"
        );
        // Edited to a slower schedule: it offers less, never more.
        assert_eq!(paused(rollout(100_000, 20, 20.0)).progress(later), 40.0);
    }

    #[test]
    fn canaries_alone_are_offered_until_they_arrived_and_the_schedule_starts_then() {
        let canary = ids(1)[0].place();
        let other = Place::from_percent(if canary.percent() < 50.0 { 75.0 } else { 25.0 });
        let awaiting = Rollout {
            gates: Gates {
                canary: Some(1),
                ..Gates::default()
            },
            ..rollout(1000, 10, 100.0)
        };
        assert!(!awaiting.includes(canary, at(5000)), "not chosen yet: nobody");
        assert_eq!(awaiting.withholding_gate(other, at(5000)), Some("canary"));
        let chosen = Rollout {
            gate_status: Some(GateStatus {
                canaries: vec![canary.percent()],
                canaries_at: Some(at(2000)),
                ..GateStatus::default()
            }),
            ..awaiting.clone()
        };
        assert!(chosen.includes(canary, at(5000)) && !chosen.includes(other, at(5000)));
        assert_eq!(chosen.progress(at(5000)), 0.0);
        assert_eq!(chosen.includes_from(canary), at(2000));
        let arrived_at = 1000 + 4 * 3600;
        let opened = Rollout {
            starting_percentage: 0.0,
            gate_status: Some(GateStatus {
                canaries_arrived_at: Some(at(arrived_at)),
                ..chosen.gate_status.clone().unwrap()
            }),
            ..chosen
        };
        assert_eq!(opened.progress(at(arrived_at)), 0.0, "its schedule starts then");
        assert_eq!(opened.progress(at(arrived_at + 5 * 3600)), 50.0);
        assert_eq!(opened.withholding_gate(other, at(arrived_at + 5 * 3600)), None);
        assert!(opened.follows_schedule(), "time alone again");
        // Paused for an hour while awaiting them: that hour counted once.
        let paused_meanwhile = Rollout {
            control: Some(RolloutControl {
                paused_at: None,
                stood_still: Duration::from_secs(3600),
                held_progress: None,
                paused_progress: None,
                actor: "ops".into(),
                reason: "resumed".into(),
                changed_at: at(arrived_at - 3600),
            }),
            gate_status: Some(GateStatus {
                paused_before_arrival: Duration::from_secs(3600),
                ..opened.gate_status.clone().unwrap()
            }),
            ..opened
        };
        assert_eq!(paused_meanwhile.progress(at(arrived_at + 5 * 3600)), 50.0);
    }

    #[test]
    fn a_rate_caps_the_progress_and_offers_nobody_before_it_is_counted() {
        let rated = Rollout {
            gates: Gates {
                max_offered: Some(MaxOffered {
                    clusters: 10,
                    period: Duration::from_secs(3600),
                }),
                ..Gates::default()
            },
            ..rollout(1000, 10, 100.0)
        };
        assert_eq!(rated.progress(at(2000)), 0.0, "not counted yet");
        let counted = Rollout {
            gate_status: Some(GateStatus {
                period: Some((at(1500), 10.0)),
                allowed: Some(30.0),
                ..GateStatus::default()
            }),
            ..rated
        };
        assert_eq!(counted.progress(at(2000)), 30.0);
        assert_eq!(counted.ungated_progress(at(2000)), 100.0);
        let (inside, outside) = (Place::from_percent(20.0), Place::from_percent(40.0));
        assert!(counted.includes(inside, at(2000)) && !counted.includes(outside, at(2000)));
        assert_eq!(
            counted.withholding_gate(outside, at(2000)),
            Some("max_offered_per_period")
        );
        assert_eq!(
            counted.withholding_gate(outside, at(999)),
            None,
            "not started: the schedule withholds"
        );
        assert!(!counted.follows_schedule(), "the fleet says when more come in");
        assert_eq!(
            counted.offered_at(at(1200), at(2000)),
            10.0,
            "the last period's end"
        );
        assert_eq!(counted.offered_at(at(1600), at(2000)), 30.0);
    }

    #[test]
    fn a_rollout_at_100_from_its_start_includes_everyone_from_its_start() {
        let rollout = rollout(1000, 10, 100.0);
        for place in [Place::LAST, ids(1)[0].place()] {
            assert_eq!(rollout.includes_from(place), at(1000));
            assert!(rollout.includes(place, at(1000)));
        }
    }

    /// The share of 10,000 ids a rollout offers its target to, at 0%, 50%
    /// and 100% of its progress, time injected.
    #[test]
    fn a_rollout_offers_its_target_to_its_progress_share_of_clusters() {
        let policy = policy(vec![rollout(1_000_000, 100, 0.0)]);
        let ids = ids(10_000);
        for (now, expected) in [
            (at(999_999), 0.0),
            (at(1_000_000), 0.0),
            (at(1_000_000 + 50 * 3600), 0.5),
            (at(1_000_000 + 100 * 3600), 1.0),
        ] {
            let offered = ids
                .iter()
                .filter(|id| {
                    policy
                        .classify(Some(id), None, now, Duration::from_secs(3600))
                        .withheld
                        == 0
                })
                .count();
            let share = offered as f64 / ids.len() as f64;
            assert!((share - expected).abs() <= 0.02, "{share} at {now:?}");
        }
    }

    #[test]
    fn a_cluster_keeps_its_answer_until_its_threshold() {
        let policy = policy(vec![rollout(1_000_000, 100, 0.0)]);
        let id = ids(1)[0];
        let before = policy.classify(Some(&id), None, at(1_000_000), Duration::from_secs(3600));
        let threshold = before.next_change.unwrap();
        let place = id.place().percent();
        assert_eq!(
            threshold,
            at(1_000_000) + Duration::from_secs(100 * 3600).mul_f64(place / 100.0)
        );
        let just_before = policy.classify(
            Some(&id),
            None,
            threshold - Duration::from_secs(1),
            Duration::from_secs(3600),
        );
        assert_eq!(just_before, before, "the same class until the threshold");
        assert_eq!(
            just_before.valid_for(threshold - Duration::from_secs(1)),
            Some(Duration::from_secs(1))
        );
        let after = policy.classify(
            Some(&id),
            None,
            threshold + Duration::from_secs(1),
            Duration::from_secs(3600),
        );
        assert_eq!(after.withheld, 0);
        assert_eq!(after.next_change, None);
    }

    #[test]
    fn groups_add_up_to_their_strictest_rules_and_no_group_is_the_default() {
        let groups = BTreeMap::from([
            (
                "production".to_owned(),
                Rules {
                    deferral_days: 14,
                    max_version: Some(Version::new(4, 18, 9)),
                },
            ),
            (
                "pinned".to_owned(),
                Rules {
                    deferral_days: 1,
                    max_version: Some(Version::new(4, 18, 5)),
                },
            ),
        ]);
        let id = ids(1)[0];
        let policy = Arc::new(Policy::new(
            Rules {
                deferral_days: 2,
                max_version: None,
            },
            groups,
            HashMap::from([(id, vec!["production".to_owned(), "pinned".to_owned()])]),
            Vec::new(),
        ));
        let class = policy.classify(Some(&id), None, at(100 * DAY_SECS + 7), Duration::from_secs(3600));
        assert_eq!(class.groups.names, ["pinned", "production"]);
        assert_eq!(
            class.groups.rules,
            Rules {
                deferral_days: 14,
                max_version: Some(Version::new(4, 18, 5))
            }
        );
        assert_eq!(class.deferral_cutoff, Some(86 * DAY_SECS as i64));
        let stranger = policy.classify(None, None, at(100 * DAY_SECS), Duration::from_secs(3600));
        assert!(stranger.groups.names.is_empty());
        assert_eq!(stranger.groups.rules.deferral_days, 2);
        assert_ne!(stranger, class);
    }

    #[test]
    fn a_scoped_channel_joins_the_views_of_its_groups_and_is_hidden_from_others() {
        let (acme, other) = (ids(2)[0], ids(2)[1]);
        let policy = Arc::new(
            Policy::new(
                Rules::default(),
                BTreeMap::from([
                    ("acme".to_owned(), Rules::default()),
                    ("other".to_owned(), Rules::default()),
                ]),
                HashMap::from([(acme, vec!["acme".to_owned()]), (other, vec!["other".to_owned()])]),
                Vec::new(),
            )
            .with_scoped_channels(vec![ScopedChannel {
                channel: "hotfix-acme-4.18".to_owned(),
                joins: vec!["stable-4.18".to_owned()],
                groups: vec!["acme".to_owned()],
            }]),
        );
        let class = |id: Option<&ClusterId>| policy.classify(id, None, at(0), Duration::from_secs(3600));
        let acme = class(Some(&acme));
        assert_eq!(
            acme.view_channels("stable-4.18"),
            ["stable-4.18", "hotfix-acme-4.18"]
        );
        assert_eq!(acme.view_channels("fast-4.18"), ["fast-4.18"]);
        assert_eq!(acme.view_channels("hotfix-acme-4.18"), ["hotfix-acme-4.18"]);
        for class in [class(Some(&other)), class(None)] {
            assert_eq!(class.view_channels("stable-4.18"), ["stable-4.18"]);
            assert!(class.view_channels("hotfix-acme-4.18").is_empty());
        }
    }

    #[test]
    fn public_views_lose_scoped_channels_and_the_releases_only_they_list() {
        let policy = Policy::new(Rules::default(), BTreeMap::new(), HashMap::new(), Vec::new())
            .with_scoped_channels(vec![ScopedChannel {
                channel: "hotfix-acme-4.18".to_owned(),
                joins: Vec::new(),
                groups: vec!["acme".to_owned()],
            }]);
        let graph = cincinnati_core::wire::parse(
            br#"{"nodes": [
                {"version": "4.18.1", "payload": "p", "metadata": {"io.openshift.upgrades.graph.release.channels": "stable-4.18,hotfix-acme-4.18"}},
                {"version": "4.18.2-0.hotfix", "payload": "p", "metadata": {"io.openshift.upgrades.graph.release.channels": "hotfix-acme-4.18"}},
                {"version": "4.18.3", "payload": "p", "metadata": {}}
              ], "edges": [[0, 1]]}"#,
        )
        .unwrap()
        .graph;
        let public = policy.without_scoped_channels(&graph);
        let releases: Vec<(String, Option<&String>)> = public
            .releases()
            .map(|(_, release)| (release.version.to_string(), release.metadata.get(keys::CHANNELS)))
            .collect();
        assert_eq!(public.release_count(), 2);
        assert!(
            releases.contains(&("4.18.1".to_owned(), Some(&"stable-4.18".to_owned()))),
            "{releases:?}"
        );
        assert!(releases.contains(&("4.18.3".to_owned(), None)), "{releases:?}");
        assert_eq!(public.edge_count(), 0);
    }

    #[test]
    fn deferral_is_decided_per_time_bucket() {
        let policy = Arc::new(Policy::new(
            Rules {
                deferral_days: 1,
                max_version: None,
            },
            BTreeMap::new(),
            HashMap::new(),
            Vec::new(),
        ));
        let hour = Duration::from_secs(3600);
        let early = policy.classify(None, None, at(36_000), hour);
        let late = policy.classify(None, None, at(39_599), hour);
        let next = policy.classify(None, None, at(39_600), hour);
        assert_eq!(early, late);
        assert_ne!(late, next);
        assert_eq!(late.valid_for(at(39_599)), Some(Duration::from_secs(1)));
    }
}
