//! The policy file as served: read at start-up (a bad file stops start-up),
//! then read again every few seconds and taken when its content changed
//! and is valid. A bad edit keeps the last good policy; the problem shows in
//! `/status`, the log and the metrics until the file is good again.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::ArcSwap;
use parking_lot::Mutex;
use rollout_model::time::{SignedDuration, Timestamp};
use rollout_model::{ClusterId, Knowledge, Lot, Placed, Rollout, Who};
use serde::{Deserialize, Serialize};
use service_kit::freshness::Freshness;
use service_kit::timestamp::rfc3339;

use super::file::{self, PolicyFileError};
use super::lookup::{GroupLookup, Groups, LookupStatus, Outcome};
use super::policy::{Policy, PolicyClass, Rules, ScopedChannel};

/// Why the policy file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot read the policy file {path}: {error}")]
    Unreadable { path: String, error: std::io::Error },
    #[error(transparent)]
    Invalid(#[from] PolicyFileError),
}

/// What one reload did.
#[derive(Debug, PartialEq, Eq)]
pub enum Reload {
    Unchanged,
    Loaded { generation: u64 },
    Failed(String),
}

/// The policy file and the policy last read from it well.
#[derive(Debug)]
pub struct PolicySource {
    path: PathBuf,
    /// Deferral is decided per bucket of this length (see [`Policy::classify`]).
    bucket: SignedDuration,
    current: ArcSwap<Policy>,
    /// The served policy's rollouts with what is known of their run-time
    /// state: made again when either changes.
    rollouts: ArcSwap<Vec<Rollout>>,
    /// What is known of the rollouts' run-time state, given to every
    /// policy served (and to graph-data's phased rollouts); changed under
    /// `state`'s lock.
    knowledge: ArcSwap<Knowledge>,
    state: Mutex<SourceState>,
    /// The lookup service, which adds groups to the file's.
    lookup: Option<Arc<GroupLookup>>,
}

#[derive(Debug)]
struct SourceState {
    /// Of the content the served policy was read from.
    served: u64,
    /// Of the last content refused: the same bad content is not parsed (nor
    /// reported) again.
    refused: Option<u64>,
    loaded_at: SystemTime,
    /// The last reload that found the file good (the served policy's, or a
    /// new one), and the refusal since.
    freshness: Freshness,
}

impl PolicySource {
    /// Reads the policy file at start-up; `lookup` adds groups to the
    /// file's. Its rollouts follow their declarations alone until
    /// [`PolicySource::set_knowledge`] says otherwise.
    pub fn open(
        path: &Path,
        bucket: SignedDuration,
        lookup: Option<GroupLookup>,
    ) -> Result<Self, SourceError> {
        let text = read(path)?;
        let policy = file::parse(&path.display().to_string(), &text)?;
        let now = SystemTime::now();
        let mut freshness = Freshness::default();
        freshness.succeeded(now);
        let knowledge = Knowledge::Declared;
        Ok(Self {
            path: path.to_owned(),
            bucket,
            rollouts: ArcSwap::from_pointee(knowledge.rollouts(policy.declarations())),
            current: ArcSwap::from_pointee(policy),
            knowledge: ArcSwap::from_pointee(knowledge),
            state: Mutex::new(SourceState {
                served: digest(&text),
                refused: None,
                loaded_at: now,
                freshness,
            }),
            lookup: lookup.map(Arc::new),
        })
    }

    /// The policy file, as configured.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn lookup(&self) -> Option<&GroupLookup> {
        self.lookup.as_deref()
    }

    pub fn current(&self) -> Arc<Policy> {
        self.current.load_full()
    }

    /// Reads the file again and takes its policy if it changed and is valid.
    /// Blocking: reads and hashes the file.
    pub fn reload(&self) -> Reload {
        let text = match read(&self.path) {
            Ok(text) => text,
            Err(error) => return self.refused(error.to_string(), None),
        };
        let digest = digest(&text);
        {
            let mut state = self.lock();
            if digest == state.served {
                // Back to what is served (a bad edit undone, a file that
                // was unreadable for a while): nothing is refused any more.
                state.refused = None;
                state.freshness.succeeded(SystemTime::now());
                return Reload::Unchanged;
            }
            if state.refused == Some(digest) {
                // Still the content refused (and reported) before.
                return Reload::Unchanged;
            }
        }
        match file::parse(&self.path.display().to_string(), &text) {
            Ok(policy) => self.take(policy, digest),
            Err(error) => self.refused(error.to_string(), Some(digest)),
        }
    }

    /// Serves `policy`, read from content of `digest`.
    fn take(&self, mut policy: Policy, digest: u64) -> Reload {
        let mut state = self.lock();
        policy.generation = self.current.load().generation + 1;
        let generation = policy.generation;
        self.rollouts
            .store(Arc::new(self.knowledge.load().rollouts(policy.declarations())));
        self.current.store(Arc::new(policy));
        let now = SystemTime::now();
        state.served = digest;
        state.refused = None;
        state.loaded_at = now;
        state.freshness.succeeded(now);
        tracing::info!(path = %self.path.display(), generation, "policy file loaded");
        Reload::Loaded { generation }
    }

    /// Keeps the served policy, reporting why the file is refused (content
    /// of `digest`, if it could be read).
    fn refused(&self, message: String, digest: Option<u64>) -> Reload {
        tracing::warn!("the policy file is refused; the last good policy is kept: {message}");
        let mut state = self.lock();
        state.refused = digest;
        state.freshness.failed(SystemTime::now(), &message);
        Reload::Failed(message)
    }

    /// Gives the rollouts what is known of their run-time state (the fleet
    /// store's), this policy's and every one read after.
    pub fn set_knowledge(&self, knowledge: Knowledge) {
        let _state = self.lock();
        if **self.knowledge.load() != knowledge {
            self.rollouts
                .store(Arc::new(knowledge.rollouts(self.current().declarations())));
            self.knowledge.store(Arc::new(knowledge));
        }
    }

    /// What is known of the rollouts' run-time state now.
    pub fn knowledge(&self) -> Arc<Knowledge> {
        self.knowledge.load_full()
    }

    /// The rollouts now, with what is known of their run-time state.
    pub fn rollouts(&self) -> Arc<Vec<Rollout>> {
        self.rollouts.load_full()
    }

    /// Whether the file on disk is refused and an older policy served.
    pub fn is_stale(&self) -> bool {
        self.lock().freshness.is_stale()
    }

    /// The class of a request with `id` (any text; one that is not a UUID
    /// is treated as none) at `now`, and how the lookup service (if any)
    /// was asked; `lot_of` gives a cluster's lot, asked only when a
    /// rollout names clusters.
    pub async fn classify(
        &self,
        cluster: Option<Placed>,
        lot_of: impl FnOnce(&ClusterId) -> Option<Lot>,
        now: Timestamp,
    ) -> (PolicyClass, Option<Outcome>) {
        match (&self.lookup, cluster) {
            (Some(lookup), Some(Placed { id, .. })) => {
                let (looked_up, outcome) = lookup.groups(&id).await;
                (self.class_of(cluster, lot_of, looked_up, now), Some(outcome))
            }
            _ => (self.class_of(cluster, lot_of, None, now), None),
        }
    }

    /// [`PolicySource::classify`] when it asks no lookup service (there is
    /// none, or the request has no id); `None` when it would.
    pub fn classify_at_hand(
        &self,
        cluster: Option<Placed>,
        lot_of: impl FnOnce(&ClusterId) -> Option<Lot>,
        now: Timestamp,
    ) -> Option<PolicyClass> {
        (self.lookup.is_none() || cluster.is_none()).then(|| self.class_of(cluster, lot_of, None, now))
    }

    /// The class of `cluster` at `now`, in the groups `looked_up` names
    /// (if the lookup service was asked and answered).
    fn class_of(
        &self,
        cluster: Option<Placed>,
        lot_of: impl FnOnce(&ClusterId) -> Option<Lot>,
        looked_up: Option<Groups>,
        now: Timestamp,
    ) -> PolicyClass {
        let id = cluster.map(|cluster| cluster.id);
        let policy = self.current();
        let rollouts = self.rollouts();
        let who = Who {
            place: cluster.map(|cluster| cluster.place),
            lot: id
                .as_ref()
                .filter(|_| rollouts.iter().any(Rollout::names_clusters))
                .and_then(lot_of),
        };
        let groups = looked_up
            .zip(id.as_ref())
            .and_then(|(names, id)| policy.with_looked_up(id, &names));
        policy.classify((id.as_ref(), who), groups, &rollouts, (now, self.bucket))
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, SourceState> {
        self.state.lock()
    }

    /// What `/status` shows.
    pub fn status(&self, now: SystemTime) -> PolicyStatus {
        let policy = self.current();
        let rollouts = self.rollouts();
        let now = rollout_model::time::from_system(now);
        let state = self.lock();
        PolicyStatus {
            file: self.path.display().to_string(),
            generation: policy.generation(),
            loaded_at: rfc3339(state.loaded_at),
            freshness: state.freshness.clone(),
            default: policy.default_rules().clone(),
            groups: policy.groups().clone(),
            clusters: policy.cluster_count(),
            lookup: self.lookup.as_ref().map(|lookup| lookup.status()),
            rollouts: rollouts
                .iter()
                .map(|rollout| {
                    let declaration = &rollout.declaration();
                    let position = rollout.position(now);
                    RolloutStatus {
                        target: declaration.target.to_string(),
                        start: declaration.schedule.start.to_string(),
                        duration_hours: declaration.schedule.duration.as_secs_f64() / 3600.0,
                        starting_percentage: declaration.schedule.starting_percentage,
                        progress_percent: position.threshold,
                        said: rollout_model::describe::said(rollout, &position),
                    }
                })
                .collect(),
            blocked_edges: policy.edge_rule_count(),
            scoped_channels: policy.scoped_channels().to_vec(),
        }
    }
}

/// The policy in `/status`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyStatus {
    pub file: String,
    /// 0 for the policy read at start-up, one more for each reload taken.
    pub generation: u64,
    /// When the policy served was read (RFC 3339).
    pub loaded_at: String,
    /// The last reload that found the file good, and the refusal since:
    /// while stale, the file on disk is refused and the policy shown older.
    #[serde(flatten)]
    pub freshness: Freshness,
    pub default: Rules,
    pub groups: std::collections::BTreeMap<String, Rules>,
    /// Cluster ids the file names.
    pub clusters: usize,
    pub rollouts: Vec<RolloutStatus>,
    /// The lookup service, if one is configured.
    pub lookup: Option<LookupStatus>,
    /// Blocked edges of the default and the groups, in all.
    pub blocked_edges: usize,
    pub scoped_channels: Vec<ScopedChannel>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolloutStatus {
    pub target: String,
    pub start: String,
    pub duration_hours: f64,
    pub starting_percentage: f64,
    /// The share of clusters offered the target now by their place.
    pub progress_percent: f64,
    /// Where it is, in words (run-time control and gates included).
    pub said: String,
}

fn read(path: &Path) -> Result<String, SourceError> {
    std::fs::read_to_string(path).map_err(|error| SourceError::Unreadable {
        path: path.display().to_string(),
        error,
    })
}

fn digest(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_edit_keeps_the_last_good_policy_until_the_file_is_good_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.yaml");
        std::fs::write(&path, "groups: {a: {deferral_days: 3}}\n").unwrap();
        let source = PolicySource::open(&path, SignedDuration::from_hours(1), None).unwrap();
        assert_eq!(source.reload(), Reload::Unchanged);

        std::fs::write(&path, "groups: {a: {deferral_days: three}}\n").unwrap();
        let Reload::Failed(message) = source.reload() else {
            panic!("a bad file is refused")
        };
        assert!(message.contains("policy.yaml:1"), "{message}");
        assert!(source.is_stale());
        assert_eq!(source.current().groups()["a"].deferral_days, 3);
        assert_eq!(source.reload(), Reload::Unchanged, "reported once");

        std::fs::remove_file(&path).unwrap();
        assert!(matches!(source.reload(), Reload::Failed(_)));
        assert_eq!(source.current().groups()["a"].deferral_days, 3);
        assert!(matches!(source.reload(), Reload::Failed(_)), "unreadable, still");

        // The served content back: good again, without a new generation.
        std::fs::write(&path, "groups: {a: {deferral_days: 3}}\n").unwrap();
        assert_eq!(source.reload(), Reload::Unchanged);
        assert!(!source.is_stale(), "the file is the served policy's again");
        std::fs::write(&path, "groups: {a: {deferral_days: three}}\n").unwrap();
        assert!(
            matches!(source.reload(), Reload::Failed(_)),
            "the same bad edit, again"
        );

        std::fs::write(&path, "groups: {a: {deferral_days: 4}}\n").unwrap();
        assert_eq!(source.reload(), Reload::Loaded { generation: 1 });
        assert!(!source.is_stale());
        assert_eq!(source.current().groups()["a"].deferral_days, 4);
        assert_eq!(source.status(SystemTime::now()).generation, 1);
    }

    #[test]
    fn a_bad_file_at_start_up_is_an_error_naming_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.yaml");
        std::fs::write(&path, "clusters:\n  nope: []\n").unwrap();
        let error = PolicySource::open(&path, SignedDuration::from_secs(1), None).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("policy.yaml:2: cluster id \"nope\" is not a UUID"),
            "{error}"
        );
        let missing = PolicySource::open(
            &dir.path().join("absent.yaml"),
            SignedDuration::from_secs(1),
            None,
        )
        .unwrap_err();
        assert!(matches!(missing, SourceError::Unreadable { .. }));
    }
}
