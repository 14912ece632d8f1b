//! What the graph-data tests share: a stage pipeline with its context, the
//! fixtures and today's graph-data, small graph-data written in a few lines,
//! and the expected conditional edges worked out independently.

pub mod expected;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cincinnati_core::release::keys;
use cincinnati_core::stage::{Catalog, Pipeline};
use cincinnati_core::{Graph, Metadata, Release, Version};
use jiff::Timestamp;
use openshift_graph_data::{
    Diagnostic, EdgeAddRemoveSettings, GraphData, GraphDataFiles, GraphDataInput, NodeRemoveSettings,
    SecondaryMetadataParseSettings, Strictness,
};

/// When graph-data without phased rollouts is applied: it gives the same
/// graph at any moment.
pub const ANY_TIME: Timestamp = Timestamp::UNIX_EPOCH;

/// A pipeline context holding graph-data and collecting what stages report.
#[derive(Default)]
pub struct Context {
    pub graph_data: Option<GraphData>,
    pub reported: Mutex<Vec<Diagnostic>>,
    /// The moment graphs are built for.
    pub now: Timestamp,
}

impl GraphDataInput for Context {
    fn graph_data(&self) -> Option<&GraphData> {
        self.graph_data.as_ref()
    }

    fn now(&self) -> Timestamp {
        self.now
    }

    fn report(&self, _stage: &'static str, warnings: Vec<Diagnostic>) {
        self.reported.lock().unwrap().extend(warnings);
    }
}

impl Context {
    pub fn with(graph_data: GraphData) -> Self {
        Self {
            graph_data: Some(graph_data),
            reported: Mutex::default(),
            now: ANY_TIME,
        }
    }

    pub fn reported(&self) -> Vec<Diagnostic> {
        self.reported.lock().unwrap().clone()
    }
}

pub fn catalog() -> Catalog<Context> {
    Catalog::new()
        .register::<SecondaryMetadataParseSettings>()
        .register::<EdgeAddRemoveSettings>()
        .register::<NodeRemoveSettings>()
}

/// A pipeline from `[[plugin_settings]]` tables, as in a graph-builder configuration.
pub fn pipeline(toml_text: &str) -> Pipeline<Context> {
    #[derive(serde::Deserialize)]
    struct Configuration {
        plugin_settings: Vec<toml::Table>,
    }
    let configuration: Configuration = toml::from_str(toml_text).expect("test configuration is valid TOML");
    catalog()
        .pipeline(&configuration.plugin_settings)
        .expect("test pipeline is valid")
}

/// The graph-builder's default graph-data steps.
pub fn parse_then_edges() -> Pipeline<Context> {
    pipeline(
        r#"
        [[plugin_settings]]
        name = "openshift-secondary-metadata-parse"
        [[plugin_settings]]
        name = "edge-add-remove"
        "#,
    )
}

pub fn edges_only() -> Pipeline<Context> {
    pipeline("[[plugin_settings]]\nname = \"edge-add-remove\"\n")
}

pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn fixture(name: &str) -> PathBuf {
    repository()
        .join("testdata/fixtures/secondary-metadata")
        .join(name)
}

/// The graph-data directory of the 2021-11 fixture.
pub fn fixture_graph_data() -> PathBuf {
    fixture("20211124.083150").join("cincinnati-graph-data")
}

pub fn read_graph(path: &Path) -> Graph {
    let bytes = std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    cincinnati_core::wire::parse(&bytes).unwrap().graph
}

/// Loads graph-data that must be accepted, with no errors.
pub fn load_dir(dir: &Path) -> (GraphData, Vec<Diagnostic>) {
    let files = GraphDataFiles::from_dir(dir).unwrap();
    let loaded =
        GraphData::load(&files, &Strictness::default()).unwrap_or_else(|refused| panic!("{refused}"));
    (loaded.graph_data, loaded.warnings)
}

/// Graph-data from in-memory files.
pub fn files(entries: &[(&str, &str)]) -> GraphDataFiles {
    let mut files = GraphDataFiles::default();
    for (path, content) in entries {
        assert!(
            files.insert(path, content.as_bytes().to_vec()),
            "{path} is not a graph-data path"
        );
    }
    files
}

/// Writes the graph-data files consumers read (see
/// [`GraphDataFiles::published`]) below `dir`, as a directory of graph-data.
pub fn write_published(files: &GraphDataFiles, dir: &Path) {
    for (path, content) in files.published() {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, content).unwrap();
    }
}

/// A graph of concrete releases (`4.1.0+amd64`, ...) with the given updates;
/// each release's arch metadata follows its build.
pub fn graph(releases: &[&str], edges: &[(&str, &str)]) -> Graph {
    let mut graph = Graph::new();
    for version in releases {
        let version = v(version);
        let mut metadata = Metadata::new();
        metadata.insert(keys::ARCH, version.build.as_str());
        graph
            .add_release(Release::concrete(
                version.clone(),
                format!("quay.io/r@{version}"),
                metadata,
            ))
            .unwrap();
    }
    for (from, to) in edges {
        graph.add_edge_by_version(&v(from), &v(to)).unwrap();
    }
    graph
}

pub fn v(text: &str) -> Version {
    Version::parse(text).unwrap()
}

/// Edges as sorted `from -> to` version pairs.
pub fn edge_names(graph: &Graph) -> Vec<(String, String)> {
    let name = |id| graph.release(id).unwrap().version.to_string();
    let mut edges: Vec<_> = graph.edges().map(|(from, to)| (name(from), name(to))).collect();
    edges.sort();
    edges
}
