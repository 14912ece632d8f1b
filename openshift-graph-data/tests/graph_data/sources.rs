//! Graph-data read from a directory and from gzip tarballs, and the
//! tarball served from it.

use std::io::Write;

use openshift_graph_data::{GraphData, GraphDataFiles, Strictness, write_tar_gz};

use crate::support::{fixture_graph_data, write_published};

/// A tarball of `files` under `prefix`, as a repository snapshot is laid out.
fn tarball_under(prefix: &str, files: &GraphDataFiles) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let mut add = |path: &str, content: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, format!("{prefix}{path}"), content)
            .unwrap();
    };
    add("README.md", b"not graph-data");
    add("hack/graph-util.py", b"not graph-data");
    for (path, content) in files.published() {
        add(path, content);
    }
    builder.into_inner().unwrap().finish().unwrap()
}

#[test]
fn a_repository_snapshot_under_a_prefix_reads_like_the_directory() {
    let from_dir = GraphDataFiles::from_dir(&fixture_graph_data()).unwrap();
    let tarball = tarball_under("openshift-cincinnati-graph-data-0123abc/", &from_dir);
    let from_tar = GraphDataFiles::from_tar_gz(tarball.as_slice()).unwrap();
    assert_eq!(from_tar.revision(), from_dir.revision());
    assert_eq!(from_tar.get("README.md"), None);
}

#[test]
fn the_served_tarball_feeds_another_service() {
    let files = GraphDataFiles::from_dir(&fixture_graph_data()).unwrap();
    let loaded = GraphData::load(&files, &Strictness::default()).unwrap();
    let served = write_tar_gz(&files);
    assert_eq!(
        served,
        write_tar_gz(&GraphDataFiles::from_dir(&fixture_graph_data()).unwrap()),
        "the same bytes every time"
    );
    let downstream = GraphData::load(
        &GraphDataFiles::from_tar_gz(served.bytes.as_slice()).unwrap(),
        &Strictness::default(),
    )
    .unwrap()
    .graph_data;
    assert_eq!(downstream.revision(), loaded.graph_data.revision());
    assert_eq!(downstream.channels(), loaded.graph_data.channels());
}

#[test]
fn a_tarball_without_version_is_not_graph_data() {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(&mut encoder);
    let mut header = tar::Header::new_gnu();
    header.set_size(2);
    builder
        .append_data(&mut header, "channels/a.yaml", &b"{}"[..])
        .unwrap();
    builder.finish().unwrap();
    drop(builder);
    encoder.flush().unwrap();
    let bytes = encoder.finish().unwrap();
    let error = GraphDataFiles::from_tar_gz(bytes.as_slice()).unwrap_err();
    assert_eq!(error.to_string(), "graph-data tarball has no `version` file");
}

#[test]
fn an_unchanged_directory_keeps_its_revision() {
    let first = GraphDataFiles::from_dir(&fixture_graph_data())
        .unwrap()
        .revision();
    let second = GraphDataFiles::from_dir(&fixture_graph_data())
        .unwrap()
        .revision();
    assert_eq!(first, second);

    let copy = tempfile::tempdir().unwrap();
    write_published(
        &GraphDataFiles::from_dir(&fixture_graph_data()).unwrap(),
        copy.path(),
    );
    assert_eq!(GraphDataFiles::from_dir(copy.path()).unwrap().revision(), first);
    std::fs::write(
        copy.path().join("channels/fast-4.6.yaml"),
        "name: fast-4.6\nversions: []\n",
    )
    .unwrap();
    assert_ne!(GraphDataFiles::from_dir(copy.path()).unwrap().revision(), first);
}

#[test]
fn a_missing_directory_is_an_error() {
    let error = GraphDataFiles::from_dir(std::path::Path::new("/nonexistent/graph-data")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("cannot read graph-data directory /nonexistent/graph-data"),
        "{error}"
    );
}
