pub mod app;
pub mod oracle;
pub mod rollouts;
pub mod upstream;

pub use registry_testkit::poll::eventually;
use sha2::Digest as _;

/// The largest real graph-builder output in the repository (1,085 releases).
pub const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testdata/fixtures/secondary-metadata/20211124.083150/graph-gb-with-quay-metadata.json"
);

pub fn fixture() -> Vec<u8> {
    std::fs::read(FIXTURE).expect("the fixture is in the repository")
}

/// An older, smaller real graph (132 releases), to tell a new revision from
/// the old one.
pub fn other_fixture() -> Vec<u8> {
    std::fs::read(FIXTURE.replace("20211124.083150", "20200319.204124"))
        .expect("the fixture is in the repository")
}

/// The versions `from` has recommended updates to in a served graph.
pub fn recommended_from<'g>(graph: &'g serde_json::Value, from: &str) -> Vec<&'g str> {
    let versions: Vec<&str> = graph["nodes"]
        .as_array()
        .expect("a graph has nodes")
        .iter()
        .map(|node| node["version"].as_str().expect("a node has a version"))
        .collect();
    graph["edges"]
        .as_array()
        .expect("a graph has edges")
        .iter()
        .filter(|edge| versions[edge[0].as_u64().unwrap() as usize] == from)
        .map(|edge| versions[edge[1].as_u64().unwrap() as usize])
        .collect()
}

/// A graph-builder's graph: 4.18.1 updates to 4.18.2, .3 and .4; 4.18.3 was
/// built "in 2100", so any deferral withholds it.
pub fn small_graph() -> Vec<u8> {
    let node = |version: &str, created: &str| {
        serde_json::json!({
            "version": format!("{version}+amd64"),
            "payload": format!("quay.io/r@sha256:{version}"),
            "metadata": {
                "io.openshift.upgrades.graph.release.arch": "amd64",
                "io.openshift.upgrades.graph.release.channels": "stable-4.18",
                "io.openshift.upgrades.graph.release.created": created,
            }
        })
    };
    serde_json::to_vec(&serde_json::json!({
        "nodes": [
            node("4.18.1", "2026-01-01T00:00:00Z"),
            node("4.18.2", "2026-01-10T00:00:00Z"),
            node("4.18.3", "2100-01-01T00:00:00Z"),
            node("4.18.4", "2026-01-20T00:00:00Z"),
        ],
        "edges": [[0, 1], [0, 2], [0, 3], [1, 3]],
    }))
    .unwrap()
}

/// A rollout of 4.18.4 that started `started_hours_ago` (negative: starts
/// later) and lasts `hours`.
pub fn rollout(started_hours_ago: f64, hours: f64) -> String {
    let start = hours_ago(started_hours_ago);
    format!("rollouts:\n  - {{target: 4.18.4, start: \"{start}\", duration_hours: {hours}}}\n")
}

/// The time `hours` ago (negative: ahead), RFC 3339.
pub fn hours_ago(hours: f64) -> jiff::Timestamp {
    jiff::Timestamp::now() - jiff::SignedDuration::from_secs_f64(hours * 3600.0)
}

/// The documented place formula, computed independently of the engine.
pub fn place_percent(id: &str) -> f64 {
    let digest = sha2::Sha256::digest(id.to_lowercase().as_bytes());
    u64::from_be_bytes(digest[..8].try_into().unwrap()) as f64 / 2f64.powi(64) * 100.0
}
