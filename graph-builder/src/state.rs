//! What the graph-builder serves and knows about itself, shared between the
//! refresh tasks (writers) and the HTTP servers (readers).
//!
//! The served graph is swapped atomically: a reader holds one complete
//! graph revision for as long as it needs, and writers never block readers.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;
use serde::Serialize;
use service_kit::PreparedBody;

use crate::scraped::Dropped;

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
    pub revision: String,
    /// The content revision of the graph-data (as in metrics).
    pub content_revision: String,
    /// The image it came from, when it came from an image.
    pub image_digest: Option<String>,
    /// How many release signatures (`signatures/`) the tarball holds.
    pub signatures: usize,
}

/// How one source is doing.
#[derive(Debug, Default, Clone, Serialize)]
pub struct SourceHealth {
    pub description: String,
    pub last_success_unix: Option<u64>,
    pub last_error: Option<String>,
    pub last_error_unix: Option<u64>,
}

impl SourceHealth {
    pub fn new(description: String) -> Self {
        Self {
            description,
            ..Self::default()
        }
    }

    pub fn succeeded(&mut self) {
        self.last_success_unix = Some(unix_now());
        self.last_error = None;
    }

    pub fn failed(&mut self, error: impl std::fmt::Display) {
        self.last_error = Some(error.to_string());
        self.last_error_unix = Some(unix_now());
    }
}

/// What the status route reports besides the graph.
#[derive(Debug, Default, Clone, Serialize)]
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DroppedEntry {
    pub subject: String,
    pub reason: &'static str,
    pub detail: String,
}

impl From<&Dropped> for DroppedEntry {
    fn from(dropped: &Dropped) -> Self {
        Self {
            subject: dropped.subject.clone(),
            reason: dropped.reason.label(),
            detail: dropped.reason.to_string(),
        }
    }
}

/// Everything the servers read.
#[derive(Default)]
pub struct State {
    pub graph: ArcSwapOption<ServedGraph>,
    pub graph_data: ArcSwapOption<PublishedGraphData>,
    pub health: Mutex<Health>,
}

impl State {
    pub fn new(health: Health) -> Arc<Self> {
        Arc::new(Self {
            health: Mutex::new(health),
            ..Self::default()
        })
    }

    /// Ready once the first complete graph is served; stays ready after,
    /// because the last good graph keeps being served.
    pub fn is_ready(&self) -> bool {
        self.graph.load().is_some()
    }

    pub fn health(&self) -> std::sync::MutexGuard<'_, Health> {
        self.health
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The JSON status document.
    pub fn status_document(&self) -> serde_json::Value {
        let graph = self.graph.load();
        let graph_json = graph.as_ref().map(|served| {
            serde_json::json!({
                "etag": served.body.entity_tag(service_kit::accept::APPLICATION_JSON, false),
                "built_unix": unix(served.built_at),
                "age_seconds": age_seconds(served.built_at),
                "releases": served.releases,
                "edges": served.edges,
                "conditional_edges": served.conditional_edges,
                "graph_data_revision": served.graph_data_revision,
            })
        });
        let graph_data = self.graph_data.load();
        let graph_data_json = graph_data.as_ref().map(|published| {
            serde_json::json!({
                "revision": published.content_revision,
                "image_digest": published.image_digest,
                "tarball_digest": published.revision,
                "signatures": published.signatures,
            })
        });
        serde_json::json!({
            "ready": graph.is_some(),
            "graph": graph_json,
            "graph_data": graph_data_json,
            "sources": &*self.health(),
        })
    }
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
