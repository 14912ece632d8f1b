//! A small schema 2.0.0 graph-data and the releases it applies to:
//! stable-4.18 phases 4.18.2 in (patch updates over P2D, minor ones over
//! P14D), fast-4.18 lists the same releases without phasing, and a risk
//! makes the minor update into 4.18.2 conditional.

use std::path::{Path, PathBuf};

use openshift_graph_data::apply::apply_with_defaults;
use openshift_graph_data::{GraphData, GraphDataFiles, Strictness};

use super::write_releases;

/// 4.18.2's version entry in stable-4.18: phased in from 2025-06-02 09:00.
pub const STARTED: &str = "- name: 4.18.2\n  start: 2025-06-02T09:00:00Z\n";

/// The channel file's path, relative to the graph-data.
pub const STABLE: &str = "channels/stable-4.18.yaml";

/// Writes the graph-data in `dir`, with `entry` as 4.18.2's version entry
/// in stable-4.18 (at line 5 of [`STABLE`]).
pub fn write_phased(dir: &Path, entry: &str) {
    for subdirectory in ["channels", "blocked-edges", "raw"] {
        std::fs::create_dir_all(dir.join(subdirectory)).unwrap();
    }
    std::fs::write(dir.join("raw/metadata.json"), "{}").unwrap();
    std::fs::write(dir.join("version"), "2.0.0\n").unwrap();
    std::fs::write(
        dir.join(STABLE),
        format!(
            "name: stable-4.18\nversions:\n- 4.17.9\n- 4.18.1\n{entry}phasedRollouts:\n\
             - duration: P2D\n  fromVersion: patch\n- duration: P14D\n  fromVersion: minor\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("channels/fast-4.18.yaml"),
        "name: fast-4.18\nversions:\n- 4.17.9\n- 4.18.1\n- 4.18.2\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("blocked-edges/4.18.2-MinorRisk.yaml"),
        "to: 4.18.2\nfrom: 4[.]17[.].*\nurl: https://issues.example.com/MINOR\nname: MinorRisk\n\
         message: Minor updates into 4.18.2 need care.\nmatchingRules:\n- type: Always\n",
    )
    .unwrap();
}

/// The releases the graph-data applies to, written in `dir`: 4.16.0 (in no
/// channel), 4.17.9 and 4.18.1, each with an update into 4.18.2, and
/// 4.17.9 → 4.18.1.
pub fn write_phased_releases(dir: &Path) -> PathBuf {
    let path = dir.join("releases.json");
    write_releases(
        &path,
        &["4.16.0", "4.17.9", "4.18.1", "4.18.2"],
        &[(0, 3), (1, 3), (2, 3), (1, 2)],
    );
    path
}

/// Writes at `path` the full graph the graph-builder serves at `now` from
/// `releases` and the graph-data in `graph_data`: the server a preview
/// compares with.
pub fn write_served(path: &Path, graph_data: &Path, releases: &Path, now: &str) {
    let files = GraphDataFiles::from_dir(graph_data).unwrap();
    let loaded =
        GraphData::load(&files, &Strictness::default()).unwrap_or_else(|refused| panic!("{refused}"));
    let releases = std::fs::read(releases).unwrap();
    let mut graph = cincinnati_core::wire::parse(&releases).unwrap().graph;
    apply_with_defaults(&mut graph, &loaded.graph_data, now.parse().unwrap()).unwrap();
    std::fs::write(path, cincinnati_core::wire::serialize(&graph, None)).unwrap();
}
