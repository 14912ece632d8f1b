pub mod app;
pub mod upstream;

use std::time::{Duration, Instant};

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

/// Polls `check` until it holds, failing the test after `deadline`.
pub async fn eventually<F, Fut>(what: &str, deadline: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
