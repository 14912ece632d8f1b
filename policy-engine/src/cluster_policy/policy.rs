//! A validated policy: groups and their rules and blocked edges, cluster ids
//! and their groups, rollouts, scoped channels; and the class a request
//! falls in ([`Policy::classify`]), which is computed without touching the
//! graph.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use cincinnati_core::release::keys;
use cincinnati_core::{Graph, Metadata, Release};
use openshift_graph_data::BlockedEdge;
use openshift_graph_data::phased::published::PhasedChannels;
use parking_lot::Mutex;
use rollout_model::time::{Periods, SignedDuration, Timestamp};
use rollout_model::{ClusterId, Declaration, Rollout, Who};
use semver::Version;
use serde::{Deserialize, Serialize};

const DAY: SignedDuration = SignedDuration::from_hours(24);

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
    /// As the file declares them.
    rollouts: Vec<Arc<Declaration>>,
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
        rollouts: Vec<Declaration>,
    ) -> Self {
        let mut policy = Self {
            generation: 0,
            default: Arc::new(GroupSet {
                names: Vec::new(),
                rules: default,
            }),
            groups,
            clusters: HashMap::with_capacity(clusters.len()),
            rollouts: rollouts.into_iter().map(Arc::new).collect(),
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
    /// scoped channel gone from the releases' channel lists and phased
    /// rollouts, and the releases that were listed only there gone (what
    /// public pages show).
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
            if let Some(channels) = metadata.get(keys::CHANNELS) {
                let kept: Vec<&str> = channels
                    .split(',')
                    .filter(|channel| !scoped(channel.trim()))
                    .collect();
                metadata.insert(keys::CHANNELS, kept.join(","));
            }
            without_phased_rollouts_into(metadata, scoped);
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

    /// The rollouts as the file declares them.
    pub fn declarations(&self) -> &[Arc<Declaration>] {
        &self.rollouts
    }

    /// The clusters the file puts in `group`.
    pub fn members_of<'a>(&'a self, group: &'a str) -> impl Iterator<Item = &'a ClusterId> + 'a {
        self.clusters
            .iter()
            .filter(move |(_, set)| set.names.iter().any(|name| name == group))
            .map(|(id, _)| id)
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The class of a request at `now`, from the cluster's id (`None`: none
    /// or not a UUID), `who` it is to rollouts, its groups (`None`: those
    /// of the policy file) and `rollouts` (the file's, with what is known
    /// of their run-time state). Deferral is decided at the start of the
    /// `bucket` `now` is in, so that one answer serves a group for the
    /// whole bucket.
    pub fn classify(
        self: &Arc<Self>,
        (id, who): (Option<&ClusterId>, Who),
        groups: Option<Arc<GroupSet>>,
        rollouts: &Arc<Vec<Rollout>>,
        (now, bucket): (Timestamp, SignedDuration),
    ) -> PolicyClass {
        let groups = groups.unwrap_or_else(|| {
            id.and_then(|id| self.clusters.get(id))
                .unwrap_or(&self.default)
                .clone()
        });
        let mut withheld = 0_u64;
        let mut next_change: Option<Timestamp> = None;
        let mut sooner = |at: Timestamp| {
            next_change = Some(next_change.map_or(at, |next| next.min(at)));
        };
        for (index, rollout) in rollouts.iter().enumerate() {
            if !rollout.position(now).offers(who) {
                withheld |= 1 << index;
                if let Some(from) = rollout.offered_from(who) {
                    sooner(from.max(now));
                }
            }
        }
        let deferral_cutoff = (groups.rules.deferral_days > 0).then(|| {
            let buckets = Periods::from_epoch(bucket);
            let bucket_start = buckets.start(buckets.index(now));
            sooner(buckets.end_of(now));
            bucket_start - DAY * i32::try_from(groups.rules.deferral_days).unwrap_or(i32::MAX)
        });
        PolicyClass {
            policy: self.clone(),
            rollouts: rollouts.clone(),
            id: id.copied(),
            groups,
            withheld,
            deferral_cutoff,
            who,
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
    /// Releases built later are deferred.
    pub(super) deferral_cutoff: Option<Timestamp>,
    /// Who the cluster is to rollouts (not part of the class).
    pub(super) who: Who,
    /// When this cluster's class may change next (not part of the class):
    /// answers must not be cached beyond it.
    pub(super) next_change: Option<Timestamp>,
}

impl PolicyClass {
    /// How long an answer of this class stays true from `now`, if not for
    /// ever (until the policy or the graph changes).
    pub fn valid_for(&self, now: Timestamp) -> Option<std::time::Duration> {
        self.next_change.map(|at| rollout_model::time::until(now, at))
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

/// `metadata` without the phased rollouts into the channels `excluded`
/// names. A value that does not read stays: it names no rollout anyway.
fn without_phased_rollouts_into(metadata: &mut Metadata, excluded: impl Fn(&str) -> bool) {
    let Some(Ok(mut phased)) = metadata.get(keys::PHASED_ROLLOUTS).map(PhasedChannels::parse) else {
        return;
    };
    phased.0.retain(|channel, _| !excluded(channel));
    if phased.0.is_empty() {
        metadata.remove(keys::PHASED_ROLLOUTS);
    } else {
        metadata.insert(keys::PHASED_ROLLOUTS, phased.to_value());
    }
}

#[cfg(test)]
mod tests {
    use rollout_model::Knowledge;

    use super::*;

    const DAY_SECS: i64 = 24 * 3600;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap()
    }

    fn ids(count: u32) -> Vec<ClusterId> {
        (0..count)
            .map(|n| ClusterId::parse(&format!("{n:08x}-1111-4222-8333-444455556666")).unwrap())
            .collect()
    }

    /// The class of a request from `id` at `now`, with an hour's
    /// deferral buckets and the policy's rollouts as declared.
    fn classify(policy: &Arc<Policy>, id: Option<&ClusterId>, now: Timestamp) -> PolicyClass {
        let rollouts = Arc::new(Knowledge::Declared.rollouts(policy.declarations()));
        let who = Who {
            place: id.map(ClusterId::place),
            lot: None,
        };
        policy.classify((id, who), None, &rollouts, (now, SignedDuration::from_hours(1)))
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
        let class = classify(&policy, Some(&id), at(100 * DAY_SECS + 7));
        assert_eq!(class.groups.names, ["pinned", "production"]);
        assert_eq!(
            class.groups.rules,
            Rules {
                deferral_days: 14,
                max_version: Some(Version::new(4, 18, 5))
            }
        );
        assert_eq!(class.deferral_cutoff, Some(at(86 * DAY_SECS)));
        let stranger = classify(&policy, None, at(100 * DAY_SECS));
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
        let class = |id: Option<&ClusterId>| classify(&policy, id, at(0));
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
    fn public_views_lose_scoped_channels_and_their_phased_rollouts_and_the_releases_only_they_list() {
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
                {"version": "4.18.3", "payload": "p", "metadata": {}},
                {"version": "4.18.4", "payload": "p", "metadata": {"io.openshift.upgrades.graph.release.channels": "fast-4.18",
                  "io.openshift.upgrades.graph.release.phased_rollouts": "{\"hotfix-acme-4.18\":{\"start\":\"2025-06-02T09:00:00Z\"},\"stable-4.18\":{\"start\":\"2025-06-02T09:00:00Z\",\"patch\":\"P2D\"}}"}}
              ], "edges": [[0, 1]]}"#,
        )
        .unwrap()
        .graph;
        let public = policy.without_scoped_channels(&graph);
        let releases: Vec<(String, Option<&str>)> = public
            .releases()
            .map(|(_, release)| (release.version.to_string(), release.metadata.get(keys::CHANNELS)))
            .collect();
        assert_eq!(public.release_count(), 3);
        assert!(
            releases.contains(&("4.18.1".to_owned(), Some("stable-4.18"))),
            "{releases:?}"
        );
        assert!(releases.contains(&("4.18.3".to_owned(), None)), "{releases:?}");
        assert_eq!(public.edge_count(), 0);
        let phasing = public
            .releases()
            .find(|(_, release)| release.version.to_string() == "4.18.4")
            .map(|(_, release)| release.metadata.get(keys::PHASED_ROLLOUTS))
            .unwrap();
        assert_eq!(
            phasing,
            Some(r#"{"stable-4.18":{"start":"2025-06-02T09:00:00Z","patch":"P2D"}}"#),
            "phasing into the scoped channel is gone, into the others it stays"
        );
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
        let early = classify(&policy, None, at(36_000));
        let late = classify(&policy, None, at(39_599));
        let next = classify(&policy, None, at(39_600));
        assert_eq!(early, late);
        assert_ne!(late, next);
        assert_eq!(
            late.valid_for(at(39_599)),
            Some(std::time::Duration::from_secs(1))
        );
    }
}
