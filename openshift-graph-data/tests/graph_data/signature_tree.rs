//! A graph-data's `signatures/` tree (what `oc adm release mirror` and
//! oc-mirror write into a graph-data image): kept from a directory and from
//! a tarball with its names checked, published in the tarball, ignored when
//! graph-data is applied; and graph-data without one is published exactly
//! as before the tree was read.

use std::path::Path;

use image_signature::MAX_SIGNATURE_BYTES;
use openshift_graph_data::{DiagnosticKind, GraphData, GraphDataFiles, Location, Strictness, write_tar_gz};

use crate::support::{Context, fixture, fixture_graph_data, parse_then_edges, read_graph};

const HEX_A: &str = "4ab6f4a3e18df3e7c0b2be6cda44b6e1f6e8a0dba1b8a35b1b3a2bb0f5b6c7d8";
const HEX_B: &str = "1111111111111111111111111111111111111111111111111111111111111111";

/// A copy of the fixture graph-data, plus `files` (path → content).
fn graph_data_with(files: &[(String, Vec<u8>)]) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    let original = GraphDataFiles::from_dir(&fixture_graph_data()).unwrap();
    let published = original
        .published()
        .map(|(path, content)| (path.to_owned(), content.to_vec()));
    for (path, content) in published.chain(files.iter().cloned()) {
        let target = copy.path().join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, content).unwrap();
    }
    copy
}

fn signature(hex: &str, index: u32, content: &[u8]) -> (String, Vec<u8>) {
    (
        format!("signatures/sha256/{hex}/signature-{index}"),
        content.to_vec(),
    )
}

fn kept(files: &GraphDataFiles) -> Vec<(String, Vec<u8>)> {
    files
        .signatures()
        .map(|(name, content)| (format!("signatures/{}", name.path()), content.to_vec()))
        .collect()
}

fn signatures() -> Vec<(String, Vec<u8>)> {
    vec![
        signature(HEX_A, 1, b"first of a"),
        signature(HEX_A, 2, b"second of a"),
        signature(HEX_B, 1, b"only of b"),
    ]
}

#[test]
fn signatures_are_kept_from_a_directory_published_and_read_back_from_the_tarball() {
    let dir = graph_data_with(&signatures());
    let from_dir = GraphDataFiles::from_dir(dir.path()).unwrap();
    let mut expected = signatures();
    expected.sort();
    assert_eq!(kept(&from_dir), expected);

    let tarball = write_tar_gz(&from_dir);
    let from_tar = GraphDataFiles::from_tar_gz(tarball.bytes.as_slice()).unwrap();
    assert_eq!(kept(&from_tar), expected);
    assert_eq!(from_tar.revision(), from_dir.revision());

    let entries = tar_entries(&tarball.bytes);
    for directory in [
        "signatures/".to_owned(),
        "signatures/sha256/".to_owned(),
        format!("signatures/sha256/{HEX_A}/"),
    ] {
        assert!(entries.contains(&directory), "{directory} in {entries:?}");
    }
}

#[test]
fn a_signature_changes_the_revision() {
    let without = GraphDataFiles::from_dir(graph_data_with(&[]).path()).unwrap();
    let with = GraphDataFiles::from_dir(graph_data_with(&signatures()).path()).unwrap();
    let mut changed = signatures();
    changed[2].1 = b"re-signed b".to_vec();
    let with_changed = GraphDataFiles::from_dir(graph_data_with(&changed).path()).unwrap();
    assert_ne!(with.revision(), without.revision());
    assert_ne!(with_changed.revision(), with.revision());
}

#[test]
fn everything_else_under_signatures_is_reported_and_not_kept() {
    let upper = HEX_A.to_uppercase();
    let mut files = signatures();
    files.extend([
        signature(HEX_A, 0, b"signature-0"),
        (
            format!("signatures/sha256/{HEX_A}/signature-01"),
            b"leading zero".to_vec(),
        ),
        (
            format!("signatures/sha256/{upper}/signature-1"),
            b"upper case".to_vec(),
        ),
        (
            format!("signatures/sha256/{}/signature-1", &HEX_A[1..]),
            b"short".to_vec(),
        ),
        (
            "signatures/sha512/abc/signature-1".to_owned(),
            b"algorithm".to_vec(),
        ),
        ("signatures/README.md".to_owned(), b"stray".to_vec()),
        signature(HEX_B, 2, &vec![b'x'; MAX_SIGNATURE_BYTES + 1]),
    ]);
    let dir = graph_data_with(&files);
    let read = GraphDataFiles::from_dir(dir.path()).unwrap();
    let mut expected = signatures();
    expected.sort();
    assert_eq!(kept(&read), expected);
    let misplaced: Vec<&str> = read.misplaced_signatures().map(|(path, _)| path).collect();
    assert_eq!(
        misplaced,
        [
            "signatures/README.md".to_owned(),
            format!("signatures/sha256/{HEX_B}/signature-2"),
            format!("signatures/sha256/{upper}"),
            format!("signatures/sha256/{HEX_A}/signature-0"),
            format!("signatures/sha256/{HEX_A}/signature-01"),
            format!("signatures/sha256/{}", &HEX_A[1..]),
            "signatures/sha512".to_owned(),
        ]
    );

    let loaded = GraphData::load(&read, &Strictness::default()).unwrap();
    let reported: Vec<(&DiagnosticKind, &Location)> = loaded
        .warnings
        .iter()
        .filter(|warning| warning.kind == DiagnosticKind::MisplacedSignature)
        .map(|warning| (&warning.kind, &warning.location))
        .collect();
    assert_eq!(reported.len(), misplaced.len(), "{:#?}", loaded.warnings);
    let oversized = loaded
        .warnings
        .iter()
        .find(|warning| matches!(&warning.location, Location::File { path, .. } if path.ends_with("signature-2")))
        .unwrap();
    assert!(
        oversized
            .message
            .contains(&format!("larger than the {MAX_SIGNATURE_BYTES} bytes")),
        "{oversized}"
    );
    assert!(
        write_tar_gz(&read)
            .bytes
            .windows(b"stray".len())
            .all(|window| window != b"stray"),
        "misplaced files are not published"
    );
}

#[test]
fn links_and_odd_entries_in_a_tarball_are_reported_not_followed() {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let mut add = |path: &str, kind: tar::EntryType, content: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        if kind == tar::EntryType::Symlink {
            header.set_link_name("/etc/passwd").unwrap();
        }
        builder.append_data(&mut header, path, content).unwrap();
    };
    add("version", tar::EntryType::Regular, b"1.1.0\n");
    add(
        &format!("signatures/sha256/{HEX_A}/signature-1"),
        tar::EntryType::Regular,
        b"kept",
    );
    add(
        &format!("signatures/sha256/{HEX_A}/signature-2"),
        tar::EntryType::Symlink,
        b"",
    );
    let bytes = builder.into_inner().unwrap().finish().unwrap();

    let read = GraphDataFiles::from_tar_gz(bytes.as_slice()).unwrap();
    assert_eq!(
        kept(&read),
        [(format!("signatures/sha256/{HEX_A}/signature-1"), b"kept".to_vec())]
    );
    let misplaced: Vec<(&str, &str)> = read.misplaced_signatures().collect();
    assert_eq!(
        misplaced,
        [(
            format!("signatures/sha256/{HEX_A}/signature-2").as_str(),
            "not a regular file"
        )]
    );
}

#[test]
fn applying_graph_data_ignores_its_signatures() {
    let raw = read_graph(&fixture("20211124.083150").join("graph-gb-raw.json"));
    let applied = |dir: &Path| {
        let files = GraphDataFiles::from_dir(dir).unwrap();
        let loaded = GraphData::load(&files, &Strictness::default()).unwrap();
        let mut graph = raw.clone();
        parse_then_edges()
            .run(&mut graph, &Context::with(loaded.graph_data))
            .unwrap();
        (cincinnati_core::wire::serialize(&graph, None), loaded.warnings)
    };
    let (with_signatures, warnings_with) = applied(graph_data_with(&signatures()).path());
    let (without, warnings_without) = applied(&fixture_graph_data());
    assert!(with_signatures == without, "the same graph");
    assert_eq!(warnings_with, warnings_without);
}

/// The revision and the tarball of graph-data without signatures, as they
/// were before signatures were read (computed by the code of that time):
/// downstream ETags and `graph_data_revision` labels do not change.
#[test]
fn graph_data_without_signatures_is_published_as_before() {
    let files = GraphDataFiles::from_dir(&fixture_graph_data()).unwrap();
    assert_eq!(
        files.revision().as_str(),
        "sha256:2a262f0647cb8f4c562a55c4eb91342a193112fadc60396813890ecdc28d2047"
    );
    assert_eq!(
        write_tar_gz(&files).digest,
        "sha256:ff4a59d3804fef80a49f938c1a13465ef584db2e12a519b6d8435752e70261b7"
    );
    let present_day =
        GraphDataFiles::from_dir(&crate::support::repository().join("testdata/graph-data")).unwrap();
    assert_eq!(
        write_tar_gz(&present_day).digest,
        "sha256:8b25559e9866746ea9ea44d970cd717ab8cb12cd1a1d2c85fd2e5280a12cd4bc"
    );
}

fn tar_entries(tar_gz: &[u8]) -> Vec<String> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tar_gz));
    archive
        .entries()
        .unwrap()
        .map(|entry| entry.unwrap().path().unwrap().display().to_string())
        .collect()
}
