pub mod app;
pub mod upstream;

pub use registry_testkit::poll::eventually;

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
