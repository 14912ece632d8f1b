//! The bundled demo's graph: what `scripts/demo.sh`'s graph-builder serves.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cincinnati_core::Graph;
use jiff::Timestamp;
use openshift_graph_data::apply::apply_with_defaults;
use openshift_graph_data::{GraphData, GraphDataFiles, Strictness};

use crate::testdata_graph_data;

/// `testdata/demo/releases.json.gz`: the generated release set, as the
/// demo graph-builder reads it.
pub fn demo_releases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/demo/releases.json.gz")
}

/// The graph-data in `dir` applied to `releases` as the graph-builder
/// applies it at `now`.
pub fn apply_graph_data(releases: &mut Graph, dir: &Path, now: Timestamp) -> anyhow::Result<()> {
    let files = GraphDataFiles::from_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let data = GraphData::load(&files, &Strictness::default())?.graph_data;
    apply_with_defaults(releases, &data, now)?;
    Ok(())
}

/// The full graph the demo graph-builder serves now: the demo releases with
/// `testdata/graph-data` applied (which phases nothing: the same graph at
/// any moment).
pub fn demo_graph() -> anyhow::Result<Graph> {
    let path = demo_releases();
    let file = std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let mut graph =
        cincinnati_core::wire::parse_reader(flate2::read::GzDecoder::new(std::io::BufReader::new(file)))
            .with_context(|| format!("reading {}", path.display()))?
            .graph;
    apply_graph_data(&mut graph, &testdata_graph_data(), Timestamp::now())?;
    Ok(graph)
}
