//! Signatures followed from a graph-data tarball on a real HTTP server:
//! conditional GETs, revisions swapped whole while readers finish on the
//! set they hold, and the last good set kept through every kind of failure.

use std::path::Path;
use std::time::Duration;

use http_fetch::{ExtraRoots, Url};
use metadata_helper::tarball::{Refresh, TarballError, TarballSettings, TarballSource};
use openshift_graph_data::{GraphDataFiles, write_tar_gz};
use registry_testkit::{Body, FileServer};

use crate::support::{A, B, name};

const PATH: &str = "/api/upgrades_info/graph-data";

/// A graph-data tarball with `signatures`, as the graph-builder publishes it.
fn tarball(signatures: &[(&str, u32, &[u8])]) -> Vec<u8> {
    let mut files = GraphDataFiles::default();
    files.insert("version", b"1.1.0\n".to_vec());
    files.insert(
        "channels/stable-4.18.yaml",
        b"name: stable-4.18\nversions: []\n".to_vec(),
    );
    for (hex, index, content) in signatures {
        let path = format!("signatures/{}", name(hex, *index).path());
        assert!(files.insert(&path, content.to_vec()), "{path}");
    }
    write_tar_gz(&files).bytes
}

fn first_revision() -> Vec<u8> {
    tarball(&[(A, 1, b"a1"), (A, 2, b"a2")])
}

fn source(server: &FileServer, work_dir: &Path) -> TarballSource {
    source_at(server.url(), work_dir)
}

fn source_at(base_url: &str, work_dir: &Path) -> TarballSource {
    TarballSource::new(TarballSettings {
        url: Url::parse(&format!("{base_url}{PATH}")).unwrap(),
        work_dir: work_dir.to_path_buf(),
        timeout: Duration::from_secs(30),
        roots: ExtraRoots::default(),
        user_agent: "metadata-helper-test".to_owned(),
    })
    .unwrap()
}

fn served(source: &TarballSource, hex: &str, index: u32) -> Option<Vec<u8>> {
    let set = source.signatures().set().expect("a set in service");
    set.lookup(&name(hex, index))
        .unwrap()
        .map(|signature| signature.bytes.to_vec())
}

fn revisions(work_dir: &Path) -> usize {
    std::fs::read_dir(work_dir).unwrap().count()
}

#[tokio::test]
async fn the_tarball_is_followed_with_conditional_gets() {
    let server = FileServer::start().unwrap();
    server.serve(PATH, Body::Tagged(first_revision()));
    let work = tempfile::tempdir().unwrap();
    let mut source = source(&server, work.path());
    assert!(!source.signatures().is_ready());

    let loaded = source.refresh().await.unwrap();
    let Refresh::Loaded {
        revision: Some(etag),
        signatures: 2,
    } = loaded
    else {
        panic!("{loaded:?}");
    };
    let status = source.signatures().status();
    assert_eq!(
        (status.revision.as_deref(), status.digests, status.signatures),
        (Some(etag.as_str()), 1, 2)
    );
    assert!(status.loaded_at.is_some() && status.age_seconds.is_some());
    assert_eq!(served(&source, A, 2).unwrap(), b"a2");
    assert_eq!(served(&source, B, 1), None);

    assert_eq!(source.refresh().await.unwrap(), Refresh::Unchanged);
    let asked = server.requests();
    assert_eq!(asked.last().unwrap().headers.get("if-none-match"), Some(&etag));

    server.serve(
        PATH,
        Body::Tagged(tarball(&[(A, 1, b"a1"), (A, 2, b"a2"), (B, 1, b"b1")])),
    );
    let loaded = source.refresh().await.unwrap();
    assert!(
        matches!(loaded, Refresh::Loaded { signatures: 3, .. }),
        "{loaded:?}"
    );
    assert_eq!(served(&source, B, 1).unwrap(), b"b1");
    assert_ne!(source.signatures().status().revision, Some(etag));
}

#[tokio::test]
async fn a_reader_keeps_its_set_across_a_swap_and_the_old_directory_goes_after_it() {
    let server = FileServer::start().unwrap();
    server.serve(PATH, Body::Tagged(first_revision()));
    let work = tempfile::tempdir().unwrap();
    let mut source = source(&server, work.path());
    source.refresh().await.unwrap();
    let held = source.signatures().set().unwrap();
    let old_root = held.root().to_path_buf();

    server.serve(PATH, Body::Tagged(tarball(&[(B, 1, b"b1")])));
    source.refresh().await.unwrap();
    assert_eq!(served(&source, A, 1), None, "the new set has no A");
    let still = held.lookup(&name(A, 1)).unwrap().unwrap();
    assert_eq!(still.bytes.as_ref(), b"a1", "the reader's set is whole");

    source.refresh().await.unwrap();
    assert!(old_root.exists(), "held by a reader");
    assert_eq!(revisions(work.path()), 2);
    drop(held);
    source.refresh().await.unwrap();
    assert!(!old_root.exists(), "removed once no reader held it");
    assert_eq!(revisions(work.path()), 1);
}

#[tokio::test]
async fn every_failure_keeps_the_last_good_set_and_is_reported_until_a_refresh_works() {
    let server = FileServer::start().unwrap();
    server.serve(PATH, Body::Tagged(first_revision()));
    let work = tempfile::tempdir().unwrap();
    let mut source = source(&server, work.path());
    source.refresh().await.unwrap();
    let good = source.signatures().status().revision;

    let without_version = {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        let mut header = tar::Header::new_gnu();
        header.set_size(2);
        header.set_mode(0o644);
        builder
            .append_data(
                &mut header,
                format!("signatures/{}", name(B, 1).path()),
                &b"b1"[..],
            )
            .unwrap();
        builder.into_inner().unwrap().finish().unwrap()
    };
    let failures = [
        (Body::Status(500), "HTTP 500"),
        (
            Body::Tagged(b"<html>a login page</html>".to_vec()),
            "not a gzip tarball",
        ),
        (Body::Tagged(without_version), "no `version` file"),
    ];
    for (body, expected) in failures {
        server.serve(PATH, body);
        let error = source.refresh().await.unwrap_err();
        assert!(error.to_string().contains(expected), "{error}");
        let status = source.signatures().status();
        assert_eq!(status.freshness.last_error().unwrap().message, error.to_string());
        assert_eq!(status.revision, good, "the last good set stays");
        assert_eq!(served(&source, A, 1).unwrap(), b"a1");
    }
    assert_eq!(revisions(work.path()), 1, "nothing half-unpacked is left");

    server.serve(PATH, Body::Tagged(first_revision()));
    assert_eq!(source.refresh().await.unwrap(), Refresh::Unchanged);
    assert!(!source.signatures().status().freshness.is_stale());
}

#[tokio::test]
async fn a_graph_builder_unreachable_at_start_leaves_the_source_not_ready() {
    let server = FileServer::start().unwrap();
    let base_url = server.url().to_owned();
    drop(server);
    let work = tempfile::tempdir().unwrap();
    let mut source = source_at(&base_url, work.path());
    let error = source.refresh().await.unwrap_err();
    assert!(matches!(error, TarballError::Fetch(_)), "{error}");
    assert!(!source.signatures().is_ready());
    assert!(source.signatures().status().freshness.is_stale());
}

#[tokio::test]
async fn odd_entries_are_counted_not_written_and_old_runs_are_cleared() {
    let work = tempfile::tempdir().unwrap();
    let leftover = work.path().join("revision-abc123");
    std::fs::create_dir_all(leftover.join("sha256")).unwrap();
    std::fs::write(work.path().join("keep-me"), b"not ours").unwrap();

    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let mut add = |path: String, kind: tar::EntryType, content: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        if kind == tar::EntryType::Symlink {
            header.set_link_name("/etc/passwd").unwrap();
        }
        builder.append_data(&mut header, path, content).unwrap();
    };
    add("./version".to_owned(), tar::EntryType::Regular, b"1.1.0\n");
    add(
        format!("./signatures/{}", name(A, 1).path()),
        tar::EntryType::Regular,
        b"a1",
    );
    add(
        format!("signatures/{}", name(A, 2).path()),
        tar::EntryType::Symlink,
        b"",
    );
    add(
        format!("signatures/sha256/{A}/signature-02"),
        tar::EntryType::Regular,
        b"x",
    );
    add(
        "signatures/sha512/x/signature-1".to_owned(),
        tar::EntryType::Regular,
        b"x",
    );
    let bytes = builder.into_inner().unwrap().finish().unwrap();

    let server = FileServer::start().unwrap();
    server.serve(PATH, Body::Tagged(bytes));
    let mut source = source(&server, work.path());
    assert!(!leftover.exists(), "a previous run's revision is removed");
    assert!(work.path().join("keep-me").exists());
    source.refresh().await.unwrap();
    let status = source.signatures().status();
    assert_eq!((status.signatures, status.misplaced), (1, 3));
    assert_eq!(served(&source, A, 1).unwrap(), b"a1");
    assert_eq!(served(&source, A, 2), None, "the link was not made");
}
