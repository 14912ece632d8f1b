//! Update paths: how a cluster gets from one release to another, one
//! update at a time, and which channel it must be on for each update.
//!
//! An update into minor `M` is taken on the tier's channel of `M` (on EUS,
//! the even minor's channel, so 4.14 → 4.15 → 4.16 stays on `eus-4.16`).
//! A plan has the fewest updates, then the newest releases on the way
//! (compared update by update, from the first); a conditional update is
//! taken only when every one of its risks is accepted. When there is no
//! plan, [`Break`] says where updates stop (with the way there, and the
//! way on from the nearest release that has one), and
//! [`PathAnswer::NoPath`] carries the plan there would be if the risks
//! were accepted; [`other_tiers`] says what the other tiers offer.
//!
//! Planning walks the graph twice at most (backwards from the target,
//! forwards from the start), so it costs O(updates) whatever the distance.

use std::collections::{BTreeSet, HashMap, VecDeque};

use cincinnati_core::{Release, Risk, Version};

use crate::channel::Tier;
use crate::graph::{ChannelId, ReleaseRef, Update, UpdateGraph};

/// What to plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathQuery {
    pub from: Version,
    pub to: Version,
    pub tier: Tier,
    /// Conditional updates whose risks are all named here may be taken.
    pub accepted_risks: BTreeSet<String>,
    /// How many other plans of the same length to list beside the best.
    pub alternatives: usize,
}

/// One update of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop<'g> {
    pub from: &'g Release,
    pub to: &'g Release,
    /// The channel the cluster must be on to be offered this update.
    pub channel: &'g str,
    /// `None` when recommended; the (accepted) risks when conditional.
    pub risks: Option<&'g [Risk]>,
}

/// Updates in the order they are taken.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan<'g> {
    pub hops: Vec<Hop<'g>>,
    /// Per hop (same index), the releases that may be taken instead of its
    /// target, newest first: each is offered from the hop's start and has
    /// an update that may be taken to the next hop's target, so the plan
    /// stays as short. Empty unless alternatives were asked for.
    pub instead: Vec<Vec<&'g Release>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathAnswer<'g> {
    /// The best plan (no hops when `from` is `to`), and other plans of the
    /// same length, best first.
    Found {
        plan: Plan<'g>,
        alternatives: Vec<Plan<'g>>,
    },
    /// No plan with the accepted risks: where it breaks, and the best plan
    /// taking risky updates, if there is one.
    NoPath {
        reason: Break<'g>,
        with_risks: Option<RiskyPlan<'g>>,
    },
}

/// A plan that needs more risks accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RiskyPlan<'g> {
    pub plan: Plan<'g>,
    /// The risks it takes that were not accepted, sorted.
    pub risks: Vec<&'g str>,
}

/// Why there is no plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Break<'g> {
    /// The version is not a release of this architecture; `archs` are the
    /// architectures it was seen in.
    UnknownRelease { version: Version, archs: Vec<String> },
    /// The target is older than the start: clusters do not downgrade.
    NotNewer,
    /// No release is in the channel updates into some minor are taken on.
    NoChannel { channel: String },
    /// The graph does not hold the whole channel (it was built from other
    /// channels' answers).
    NotCovered { channel: String },
    /// The target is not (or not yet) in the channel that offers it.
    TargetNotInChannel { channel: String, channels: Vec<&'g str> },
    /// Updates stop at `at`, the newest release reachable on the way:
    /// `channel` offers it nothing that leads on, and `nearest` is the
    /// release of the same minor closest to it that has an update leading
    /// on. `oldest_leading_to` is the oldest release (not older than the
    /// start) from which the target can be reached: the target itself when
    /// no update leads to it.
    Stuck {
        at: &'g Release,
        channel: String,
        offers: Offers,
        nearest: Option<&'g Release>,
        oldest_leading_to: &'g Release,
        /// The way from the start to `at` (no hops when updates stop at
        /// the start).
        reached: Box<Plan<'g>>,
        /// The way on to the target from `nearest`, else from
        /// `oldest_leading_to` (none when that is the target).
        onward: Option<Box<Plan<'g>>>,
    },
}

/// What the channel of the next update offers the release updates stop at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offers {
    /// The release is not in the channel.
    NotInChannel,
    /// No update.
    Nothing,
    /// Conditional updates whose risks are not accepted, only.
    OnlyConditional,
    /// Updates that may be taken, none of which leads to the target.
    NothingLeadingOn,
}

impl PathQuery {
    /// Why the question has no plan whatever the graph says, if it has
    /// none: checked before asking any service.
    pub fn refused(&self) -> Option<Break<'static>> {
        (self.to < self.from).then_some(Break::NotNewer)
    }

    /// The channels a plan may use: the tier's channel of every minor from
    /// the start's to the target's. A graph built from their answers holds
    /// every update the plan could take.
    pub fn channels(&self) -> Vec<String> {
        let mut channels: Vec<String> = minors_between(&self.from, &self.to)
            .into_iter()
            .map(|(major, minor)| self.tier.channel_into(major, minor))
            .collect();
        channels.dedup();
        channels
    }
}

/// `(major, minor)` from `from`'s to `to`'s; nothing when `to` is older.
/// The last minor of a major is not known before the graph is read, so
/// across majors only the start's minor and the target major's are given.
fn minors_between(from: &Version, to: &Version) -> Vec<(u64, u64)> {
    if (to.major, to.minor) < (from.major, from.minor) {
        Vec::new()
    } else if from.major == to.major {
        (from.minor..=to.minor).map(|minor| (from.major, minor)).collect()
    } else {
        std::iter::once((from.major, from.minor))
            .chain((0..=to.minor).map(|minor| (to.major, minor)))
            .collect()
    }
}

/// Plans the query on `graph`.
pub fn plan<'g>(graph: &'g UpdateGraph, query: &PathQuery) -> PathAnswer<'g> {
    let planner = Planner::new(graph, query, Acceptance::Named(&query.accepted_risks));
    match planner.answer() {
        Ok(PathAnswer::Found {
            mut plan,
            alternatives,
        }) => {
            if query.alternatives > 0 {
                plan.instead = planner.instead(&plan, query.alternatives);
            }
            PathAnswer::Found { plan, alternatives }
        }
        Ok(answer) => answer,
        Err(reason) => {
            let with_risks = Planner::new(graph, query, Acceptance::All)
                .answer()
                .ok()
                .and_then(|answer| match answer {
                    PathAnswer::Found { plan, .. } => Some(RiskyPlan {
                        risks: unaccepted_risks(&plan, &query.accepted_risks),
                        plan,
                    }),
                    PathAnswer::NoPath { .. } => None,
                });
            PathAnswer::NoPath { reason, with_risks }
        }
    }
}

/// What another tier offers for the same question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierPlan<'g> {
    pub tier: Tier,
    /// The best plan on that tier: with the accepted risks, else taking
    /// risky updates.
    pub plan: Plan<'g>,
    /// The risks it takes that were not accepted, sorted (none: a plan with
    /// the risks accepted).
    pub risks: Vec<&'g str>,
}

/// The tiers other than the query's with a plan for the same question, in
/// tier order (stable, fast, candidate, eus), on a graph that holds their
/// channels ([`PathQuery::channels`] of each).
pub fn other_tiers<'g>(graph: &'g UpdateGraph, query: &PathQuery) -> Vec<TierPlan<'g>> {
    Tier::ALL
        .into_iter()
        .filter(|&tier| tier != query.tier)
        .filter_map(|tier| {
            let asked = PathQuery {
                tier,
                alternatives: 0,
                ..query.clone()
            };
            match plan(graph, &asked) {
                PathAnswer::Found { plan, .. } => Some(TierPlan {
                    tier,
                    plan,
                    risks: Vec::new(),
                }),
                PathAnswer::NoPath {
                    with_risks: Some(risky),
                    ..
                } => Some(TierPlan {
                    tier,
                    plan: risky.plan,
                    risks: risky.risks,
                }),
                PathAnswer::NoPath { .. } => None,
            }
        })
        .collect()
}

fn unaccepted_risks<'g>(plan: &Plan<'g>, accepted: &BTreeSet<String>) -> Vec<&'g str> {
    let names: BTreeSet<&str> = plan
        .hops
        .iter()
        .flat_map(|hop| hop.risks.unwrap_or_default())
        .map(|risk| risk.name.as_str())
        .filter(|name| !accepted.contains(*name))
        .collect();
    names.into_iter().collect()
}

/// Which conditional updates a plan may take.
#[derive(Debug, Clone, Copy)]
enum Acceptance<'q> {
    Named(&'q BTreeSet<String>),
    All,
}

impl Acceptance<'_> {
    fn allows(self, update: &Update<'_>) -> bool {
        match (self, update.risks) {
            (_, None) | (Acceptance::All, _) => true,
            (Acceptance::Named(accepted), Some(risks)) => {
                risks.iter().all(|risk| accepted.contains(&risk.name))
            }
        }
    }
}

const UNREACHED: u32 = u32::MAX;

struct Planner<'g, 'q> {
    graph: &'g UpdateGraph,
    query: &'q PathQuery,
    acceptance: Acceptance<'q>,
    /// Per release, the channel updates into it are taken on.
    channel_into: Vec<Option<ChannelId>>,
}

impl<'g, 'q> Planner<'g, 'q> {
    fn new(graph: &'g UpdateGraph, query: &'q PathQuery, acceptance: Acceptance<'q>) -> Self {
        let mut by_minor: HashMap<(u64, u64), Option<ChannelId>> = HashMap::new();
        let channel_into = graph
            .releases()
            .map(|(_, release)| {
                let version = &release.version;
                *by_minor.entry((version.major, version.minor)).or_insert_with(|| {
                    graph.channel_id(&query.tier.channel_into(version.major, version.minor))
                })
            })
            .collect();
        Self {
            graph,
            query,
            acceptance,
            channel_into,
        }
    }

    fn answer(&self) -> Result<PathAnswer<'g>, Break<'g>> {
        let from = self.release(&self.query.from)?;
        let to = self.release(&self.query.to)?;
        if to < from {
            return Err(Break::NotNewer);
        }
        self.check_channels(to)?;
        let distance = self.distances_to(to);
        if distance[from.index()] == UNREACHED {
            return Err(self.where_it_stops(from, to, &distance));
        }
        let mut plans = Vec::new();
        let mut hops = Vec::new();
        let wanted = self.query.alternatives.saturating_add(1);
        self.collect_plans(from, to, &distance, wanted, &mut hops, &mut plans);
        let mut plans = plans.into_iter();
        Ok(PathAnswer::Found {
            plan: plans.next().unwrap_or_default(),
            alternatives: plans.collect(),
        })
    }

    fn release(&self, version: &Version) -> Result<ReleaseRef, Break<'g>> {
        self.graph.find(version).ok_or_else(|| Break::UnknownRelease {
            version: version.clone(),
            archs: self.graph.archs_of(version).to_vec(),
        })
    }

    /// Every channel the plan may use exists and is known whole, and the
    /// target is in the channel that offers it.
    fn check_channels(&self, to: ReleaseRef) -> Result<(), Break<'g>> {
        for channel in self.query.channels() {
            if self.graph.channel_id(&channel).is_none() {
                return Err(Break::NoChannel { channel });
            }
            if !self.graph.covers(&channel) {
                return Err(Break::NotCovered { channel });
            }
        }
        let into_target = self.channel_into[to.index()].expect("checked above");
        if !self.graph.is_in(to, into_target) {
            return Err(Break::TargetNotInChannel {
                channel: self.graph.channel_name(into_target).to_owned(),
                channels: self.graph.channels_of(to).collect(),
            });
        }
        Ok(())
    }

    /// Whether a plan may take `update`: it is offered on the channel of
    /// its target, and its risks are accepted.
    fn may_take(&self, update: &Update<'_>) -> bool {
        self.channel_into[update.to.index()].is_some_and(|channel| {
            self.graph.is_in(update.from, channel)
                && self.graph.is_in(update.to, channel)
                && self.acceptance.allows(update)
        })
    }

    /// The fewest updates from each release to `to`.
    fn distances_to(&self, to: ReleaseRef) -> Vec<u32> {
        let mut distance = vec![UNREACHED; self.graph.release_count()];
        distance[to.index()] = 0;
        let mut queue = VecDeque::from([to]);
        while let Some(target) = queue.pop_front() {
            let next = distance[target.index()] + 1;
            for &source in self.graph.updaters_of(target) {
                if distance[source.index()] != UNREACHED {
                    continue;
                }
                let update = self
                    .graph
                    .update(source, target)
                    .expect("updaters have the update");
                if self.may_take(&update) {
                    distance[source.index()] = next;
                    queue.push_back(source);
                }
            }
        }
        distance
    }

    /// Plans of the fewest updates, best first, up to `wanted`: depth
    /// first along updates that bring the target one closer, newest release
    /// first.
    fn collect_plans(
        &self,
        at: ReleaseRef,
        to: ReleaseRef,
        distance: &[u32],
        wanted: usize,
        hops: &mut Vec<Hop<'g>>,
        plans: &mut Vec<Plan<'g>>,
    ) {
        if at == to {
            plans.push(Plan {
                hops: hops.clone(),
                instead: Vec::new(),
            });
            return;
        }
        let closer = distance[at.index()] - 1;
        for update in self.graph.updates_from(at).rev() {
            if plans.len() >= wanted {
                return;
            }
            if distance[update.to.index()] == closer && self.may_take(&update) {
                hops.push(self.hop(&update));
                self.collect_plans(update.to, to, distance, wanted, hops, plans);
                hops.pop();
            }
        }
    }

    fn hop(&self, update: &Update<'g>) -> Hop<'g> {
        let channel = self.channel_into[update.to.index()].expect("a hop's channel exists");
        Hop {
            from: self.graph.release(update.from),
            to: self.graph.release(update.to),
            channel: self.graph.channel_name(channel),
            risks: update.risks,
        }
    }

    /// Where updates from `from` stop short of `to` (`distance` is what
    /// [`Planner::distances_to`] found).
    fn where_it_stops(&self, from: ReleaseRef, to: ReleaseRef, distance: &[u32]) -> Break<'g> {
        let at = self.furthest_reached(from, to);
        let channel = self.next_channel(at, to);
        let leads_on = |release: ReleaseRef| {
            self.graph
                .updates_from(release)
                .any(|update| distance[update.to.index()] != UNREACHED && self.may_take(&update))
        };
        let oldest_leading_to = self
            .graph
            .releases()
            .skip(from.index())
            .map(|(release, _)| release)
            .find(|release| distance[release.index()] != UNREACHED)
            .unwrap_or(to);
        let nearest = self.nearest_in_minor(at, leads_on);
        let onward = nearest
            .or((oldest_leading_to != to).then_some(oldest_leading_to))
            .map(|start| Box::new(self.best_plan(start, to, distance)));
        Break::Stuck {
            at: self.graph.release(at),
            offers: self.offers(at, &channel),
            channel,
            nearest: nearest.map(|release| self.graph.release(release)),
            oldest_leading_to: self.graph.release(oldest_leading_to),
            reached: Box::new(self.best_plan(from, at, &self.distances_to(at))),
            onward,
        }
    }

    /// The best plan from `from` to `to`, which `distance` (to `to`) says
    /// there is.
    fn best_plan(&self, from: ReleaseRef, to: ReleaseRef, distance: &[u32]) -> Plan<'g> {
        let mut plans = Vec::new();
        self.collect_plans(from, to, distance, 1, &mut Vec::new(), &mut plans);
        plans.into_iter().next().unwrap_or_default()
    }

    /// [`Plan::instead`] of `plan`, at most `limit` releases per hop.
    fn instead(&self, plan: &Plan<'g>, limit: usize) -> Vec<Vec<&'g Release>> {
        let release = |version: &Version| self.graph.find(version).expect("a release of the plan");
        plan.hops
            .iter()
            .enumerate()
            .map(|(index, hop)| {
                // The last hop's target is the plan's: nothing replaces it.
                let Some(next) = plan.hops.get(index + 1) else {
                    return Vec::new();
                };
                let (from, chosen, next) = (
                    release(&hop.from.version),
                    release(&hop.to.version),
                    release(&next.to.version),
                );
                self.graph
                    .updates_from(from)
                    .rev()
                    .filter(|update| update.to != chosen && self.may_take(update))
                    .filter(|update| {
                        self.graph
                            .update(update.to, next)
                            .is_some_and(|onward| self.may_take(&onward))
                    })
                    .map(|update| self.graph.release(update.to))
                    .take(limit)
                    .collect()
            })
            .collect()
    }

    /// The channel the update after `at` towards `to` would be on: into
    /// the next minor, or into the target's when `at` is in it.
    fn next_channel(&self, at: ReleaseRef, to: ReleaseRef) -> String {
        let (at, target) = (self.graph.version(at), self.graph.version(to));
        let (major, minor) = if (at.major, at.minor) == (target.major, target.minor) {
            (target.major, target.minor)
        } else if at.major == target.major {
            (at.major, at.minor + 1)
        } else {
            (at.major + 1, 0)
        };
        self.query.tier.channel_into(major, minor)
    }

    /// What `channel` offers `at`.
    fn offers(&self, at: ReleaseRef, channel: &str) -> Offers {
        let Some(id) = self
            .graph
            .channel_id(channel)
            .filter(|&id| self.graph.is_in(at, id))
        else {
            return Offers::NotInChannel;
        };
        let offered: Vec<Update> = self
            .graph
            .updates_from(at)
            .filter(|update| self.graph.is_in(update.to, id))
            .collect();
        if offered.is_empty() {
            Offers::Nothing
        } else if offered.iter().any(|update| self.may_take(update)) {
            Offers::NothingLeadingOn
        } else {
            Offers::OnlyConditional
        }
    }

    /// The release of `at`'s minor closest to it for which `wanted` holds:
    /// the oldest newer one, else the newest older one.
    fn nearest_in_minor(&self, at: ReleaseRef, wanted: impl Fn(ReleaseRef) -> bool) -> Option<ReleaseRef> {
        let version = self.graph.version(at);
        let same_minor = |release: &ReleaseRef| {
            let other = self.graph.version(*release);
            (other.major, other.minor) == (version.major, version.minor)
        };
        let releases = || self.graph.releases().map(|(release, _)| release);
        let newer = releases()
            .skip(at.index() + 1)
            .take_while(same_minor)
            .find(|&release| wanted(release));
        newer.or_else(|| {
            releases()
                .take(at.index())
                .rev()
                .take_while(same_minor)
                .find(|&release| wanted(release))
        })
    }

    /// The newest release reachable from `from` without passing `to`.
    fn furthest_reached(&self, from: ReleaseRef, to: ReleaseRef) -> ReleaseRef {
        let mut reached = vec![false; self.graph.release_count()];
        reached[from.index()] = true;
        let mut furthest = from;
        let mut queue = VecDeque::from([from]);
        while let Some(release) = queue.pop_front() {
            for update in self.graph.updates_from(release) {
                if update.to <= to && !reached[update.to.index()] && self.may_take(&update) {
                    reached[update.to.index()] = true;
                    furthest = furthest.max(update.to);
                    queue.push_back(update.to);
                }
            }
        }
        furthest
    }
}

impl Break<'_> {
    /// Where planning `query` broke, in one sentence.
    pub fn summary(&self, query: &PathQuery) -> String {
        let (from, to) = (&query.from, &query.to);
        match self {
            Break::UnknownRelease { version, archs } if archs.is_empty() => {
                format!("{version} is not a release")
            }
            Break::UnknownRelease { version, archs } => format!(
                "{version} is not released for this architecture (only for {})",
                archs.join(", ")
            ),
            Break::NotNewer => format!("{to} is older than {from}: clusters do not downgrade"),
            Break::NoChannel { channel } => format!("no release is in {channel}"),
            Break::NotCovered { channel } => format!("the graph read does not hold channel {channel}"),
            Break::TargetNotInChannel { channel, channels } if channels.is_empty() => {
                format!("{to} is not in {channel} (it is in no channel)")
            }
            Break::TargetNotInChannel { channel, channels } => {
                format!("{to} is not in {channel} yet (it is in {})", channels.join(", "))
            }
            Break::Stuck {
                at,
                channel,
                offers,
                nearest,
                oldest_leading_to,
                ..
            } => {
                let at_version = &at.version;
                let stop = match offers {
                    Offers::NotInChannel => format!("{at_version} is not in {channel}"),
                    Offers::Nothing => format!("{at_version} has no update in {channel} yet"),
                    Offers::OnlyConditional => {
                        format!(
                            "{at_version} has only conditional updates in {channel}, with risks not accepted"
                        )
                    }
                    Offers::NothingLeadingOn => {
                        format!("{at_version}'s updates in {channel} do not lead to {to}")
                    }
                };
                let oldest = &oldest_leading_to.version;
                match nearest {
                    Some(nearest) if *offers == Offers::Nothing => {
                        format!("{stop}; the nearest release that has one is {}", nearest.version)
                    }
                    Some(nearest) => format!(
                        "{stop}; the nearest release with an update leading on is {}",
                        nearest.version
                    ),
                    None if oldest == to => format!("{stop}; no update that may be taken leads to {to}"),
                    None => format!(
                        "{stop}; no {}.{} release has one, and the oldest release leading to {to} is {oldest}",
                        at_version.major, at_version.minor
                    ),
                }
            }
        }
    }
}
