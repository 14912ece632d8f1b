//! The signature set in service and how its source is doing: what the
//! servers read, and what status and metrics show.

use std::fmt::Display;
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::ArcSwapOption;
use parking_lot::{Mutex, MutexGuard};
use serde::{Deserialize, Serialize};
use service_kit::freshness::Freshness;
use service_kit::supervisor::TaskStatus;
use service_kit::timestamp::rfc3339;

use crate::set::SignatureSet;

/// Shared by a source (the writer) and the servers (readers). A reader
/// holds one whole set for as long as it needs; a new set replaces it
/// atomically, and readers never wait for the source.
#[derive(Clone)]
pub struct Signatures(Arc<Inner>);

struct Inner {
    set: ArcSwapOption<SignatureSet>,
    status: Mutex<SourceStatus>,
}

/// The `/status` document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Status {
    /// A signature set is in service.
    pub ready: bool,
    pub signatures: SourceStatus,
    pub tasks: Vec<TaskStatus>,
}

/// How a source is doing, for `/status` and metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceStatus {
    /// What the signatures come from (`directory …`, `graph-data tarball …`).
    pub source: String,
    /// The revision of the set in service (a tarball's entity tag).
    pub revision: Option<String>,
    pub digests: usize,
    pub signatures: usize,
    /// Entries of the tree in service that are not served.
    pub misplaced: usize,
    /// When the set in service was loaded (RFC 3339), and its age now.
    pub loaded_at: Option<String>,
    pub age_seconds: Option<f64>,
    /// The last refresh that worked (unchanged included), and the failure
    /// since: the set in service stays the last good one.
    #[serde(flatten)]
    pub freshness: Freshness,
}

impl Signatures {
    pub fn new(source: String) -> Self {
        Self(Arc::new(Inner {
            set: ArcSwapOption::empty(),
            status: Mutex::new(SourceStatus {
                source,
                ..SourceStatus::default()
            }),
        }))
    }

    /// The set in service; `None` until a first one is loaded.
    pub fn set(&self) -> Option<Arc<SignatureSet>> {
        self.0.set.load_full()
    }

    /// Ready once a set is loaded; it stays, whatever fails later.
    pub fn is_ready(&self) -> bool {
        self.0.set.load().is_some()
    }

    /// A snapshot of the source's status, with the age of the set as of now.
    pub fn status(&self) -> SourceStatus {
        let mut status = self.lock().clone();
        status.age_seconds = self.set().map(|set| {
            SystemTime::now()
                .duration_since(set.loaded_at)
                .map_or(0.0, |age| age.as_secs_f64())
        });
        status
    }

    /// Puts `set` in service; returns the one it replaces.
    pub(crate) fn swap(&self, set: SignatureSet) -> Option<Arc<SignatureSet>> {
        let mut status = self.lock();
        status.revision.clone_from(&set.revision);
        status.digests = set.digests;
        status.signatures = set.signatures;
        status.misplaced = set.misplaced;
        status.loaded_at = Some(rfc3339(set.loaded_at));
        self.0.set.swap(Some(Arc::new(set)))
    }

    pub(crate) fn succeeded(&self) {
        self.lock().freshness.succeeded(SystemTime::now());
    }

    pub(crate) fn failed(&self, error: impl Display) {
        self.lock().freshness.failed(SystemTime::now(), error);
    }

    fn lock(&self) -> MutexGuard<'_, SourceStatus> {
        self.0.status.lock()
    }
}
