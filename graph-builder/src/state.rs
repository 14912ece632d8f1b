//! What the graph-builder serves and knows about itself, shared between the
//! refresh tasks (writers) and the HTTP servers (readers).
//!
//! The served graph is swapped atomically: a reader holds one complete
//! graph revision for as long as it needs, and writers never block readers.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;
use http_answers::PreparedBody;
use serde::{Deserialize, Serialize};
use service_kit::freshness::Freshness;
use service_kit::supervisor::TaskStatus;
use service_kit::timestamp::rfc3339;

use crate::found::Dropped;

/// One built graph, serialised once for every request.
#[derive(Debug)]
pub struct ServedGraph {
    pub body: PreparedBody,
    pub built_at: SystemTime,
    pub releases: usize,
    pub edges: usize,
    pub conditional_edges: usize,
    pub graph_data_revision: Option<String>,
}

/// The graph-data in use, published at `{prefix}/graph-data`.
#[derive(Debug)]
pub struct PublishedGraphData {
    pub tarball: bytes::Bytes,
    /// The digest of the tarball (its ETag).
    pub tarball_digest: String,
    /// The content revision of the graph-data (as in metrics).
    pub revision: String,
    /// The image it came from, when it came from an image.
    pub image_digest: Option<String>,
    /// How many release signatures (`signatures/`) the tarball holds.
    pub signatures: usize,
}

/// How one source is doing.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceHealth {
    pub description: String,
    #[serde(flatten)]
    pub freshness: Freshness,
    /// The cheap look for changes between refreshes, when it runs.
    #[serde(default)]
    pub change_check: Option<ChangeCheck>,
    /// When the source last brought something new (RFC 3339).
    #[serde(default)]
    pub last_change: Option<String>,
    /// When a graph built from that change was first served (RFC 3339):
    /// `null` while the change waits for a build (or could not be built).
    #[serde(default)]
    pub last_change_served: Option<String>,
}

/// The change check of one source: its interval, and when it last worked
/// and the failure since (a failing check leaves the graph as it is).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeCheck {
    pub interval_secs: u64,
    #[serde(flatten)]
    pub freshness: Freshness,
}

impl SourceHealth {
    pub fn new(description: String) -> Self {
        Self {
            description,
            ..Self::default()
        }
    }

    /// The same, with its change check every `interval`, if any.
    pub fn checked_every(self, interval: Option<std::time::Duration>) -> Self {
        Self {
            change_check: interval.map(|interval| ChangeCheck {
                interval_secs: interval.as_secs(),
                freshness: Freshness::default(),
            }),
            ..self
        }
    }
}

/// What the status route reports besides the graph.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Health {
    pub releases: SourceHealth,
    pub graph_data: Option<SourceHealth>,
    pub build: SourceHealth,
    /// Problems in the graph-data in use that did not refuse it.
    pub graph_data_warnings: Vec<String>,
    /// Problems found applying it to the current releases (a channel version
    /// that matches no release, say).
    pub apply_warnings: Vec<String>,
    pub dropped: Vec<DroppedEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DroppedEntry {
    pub subject: String,
    /// The `reason` label of `graph_releases_dropped`.
    pub reason: String,
    pub detail: String,
}

impl From<&Dropped> for DroppedEntry {
    fn from(dropped: &Dropped) -> Self {
        Self {
            subject: dropped.subject.clone(),
            reason: dropped.reason.label().to_owned(),
            detail: dropped.reason.to_string(),
        }
    }
}

/// Everything the servers read.
pub struct State {
    graph: ArcSwapOption<ServedGraph>,
    /// Counts the graphs served, so that a request waiting for a change
    /// (`http_answers::wait`) wakes when one is.
    graphs_served: tokio::sync::watch::Sender<u64>,
    pub graph_data: ArcSwapOption<PublishedGraphData>,
    pub health: Mutex<Health>,
}

impl State {
    pub fn new(health: Health) -> Arc<Self> {
        Arc::new(Self {
            graph: ArcSwapOption::empty(),
            graphs_served: tokio::sync::watch::Sender::new(0),
            graph_data: ArcSwapOption::empty(),
            health: Mutex::new(health),
        })
    }

    /// The graph served now, if any.
    pub fn graph(&self) -> Option<Arc<ServedGraph>> {
        self.graph.load_full()
    }

    /// Serves `graph` from now on, waking the requests waiting for a change.
    pub fn serve(&self, graph: ServedGraph) {
        self.graph.store(Some(Arc::new(graph)));
        self.graphs_served.send_modify(|count| *count += 1);
    }

    /// Wakes when a new graph is served.
    pub fn graph_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.graphs_served.subscribe()
    }

    /// Ready once the first complete graph is served; stays ready after,
    /// because the last good graph keeps being served.
    pub fn is_ready(&self) -> bool {
        self.graph.load().is_some()
    }

    pub fn health(&self) -> parking_lot::MutexGuard<'_, Health> {
        self.health.lock()
    }

    /// The `/status` document.
    pub fn status(&self, tasks: Vec<TaskStatus>) -> Status {
        let graph = self.graph.load();
        let graph_data = self.graph_data.load();
        Status {
            ready: graph.is_some(),
            graph: graph.as_ref().map(|served| GraphStatus {
                etag: served
                    .body
                    .entity_tag(http_answers::accept::APPLICATION_JSON, false),
                built_at: rfc3339(served.built_at),
                age_seconds: age_seconds(served.built_at),
                releases: served.releases,
                edges: served.edges,
                conditional_edges: served.conditional_edges,
                graph_data_revision: served.graph_data_revision.clone(),
            }),
            graph_data: graph_data.as_ref().map(|published| GraphDataStatus {
                revision: published.revision.clone(),
                image_digest: published.image_digest.clone(),
                tarball_digest: published.tarball_digest.clone(),
                signatures: published.signatures,
            }),
            sources: self.health().clone(),
            tasks,
        }
    }
}

/// The `/status` document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Status {
    pub ready: bool,
    pub graph: Option<GraphStatus>,
    pub graph_data: Option<GraphDataStatus>,
    pub sources: Health,
    pub tasks: Vec<TaskStatus>,
}

/// The graph served.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphStatus {
    pub etag: String,
    /// RFC 3339.
    pub built_at: String,
    pub age_seconds: f64,
    pub releases: usize,
    pub edges: usize,
    pub conditional_edges: usize,
    pub graph_data_revision: Option<String>,
}

/// The graph-data in use.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphDataStatus {
    /// Its content revision.
    pub revision: String,
    pub image_digest: Option<String>,
    /// The ETag of `{prefix}/graph-data`.
    pub tarball_digest: String,
    /// Release signatures (`signatures/`) in the tarball.
    pub signatures: usize,
}

pub fn unix_now() -> u64 {
    unix(SystemTime::now())
}

fn unix(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

pub fn age_seconds(time: SystemTime) -> f64 {
    SystemTime::now()
        .duration_since(time)
        .map_or(0.0, |age| age.as_secs_f64())
}
