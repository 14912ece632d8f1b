//! Signatures from a directory: read on demand from real files, counted by a
//! scan, and never from outside the tree, whatever links it holds.

use std::os::unix::fs::symlink;
use std::path::Path;

use image_signature::MAX_SIGNATURE_BYTES;
use image_signature::layout::SignatureName;
use metadata_helper::LookupError;
use metadata_helper::directory::DirectorySource;

use crate::support::{A, B, directory_source, name, write};

const C: &str = "2222222222222222222222222222222222222222222222222222222222222222";

/// Two signatures of A, one of B, and a stray file.
fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), A, 1, b"a1");
    write(root.path(), A, 2, b"a2");
    write(root.path(), B, 1, b"b1");
    std::fs::write(root.path().join("README"), "not a signature").unwrap();
    root
}

fn lookup(source: &DirectorySource, name: &SignatureName) -> Result<Option<Vec<u8>>, LookupError> {
    let set = source.signatures().set().expect("a set in service");
    set.lookup(name)
        .map(|found| found.map(|signature| signature.bytes.to_vec()))
}

#[test]
fn files_are_served_on_demand_and_counted_by_a_scan() {
    let root = tree();
    let source = directory_source(root.path());
    let status = source.signatures().status();
    assert_eq!((status.digests, status.signatures, status.misplaced), (2, 3, 1));
    assert!(source.signatures().is_ready() && !status.freshness.is_stale());
    assert!(status.source.starts_with("directory "), "{}", status.source);

    let set = source.signatures().set().unwrap();
    let signature = set.lookup(&name(A, 2)).unwrap().unwrap();
    assert_eq!(signature.bytes.as_ref(), b"a2");
    assert_eq!(signature.etag.len(), 2 + 64, "{}", signature.etag);
    assert_eq!(set.lookup(&name(A, 2)).unwrap().unwrap().etag, signature.etag);
    assert_ne!(set.lookup(&name(A, 1)).unwrap().unwrap().etag, signature.etag);
    assert_eq!(lookup(&source, &name(A, 3)).unwrap(), None);
    assert_eq!(lookup(&source, &name(C, 1)).unwrap(), None);

    write(root.path(), A, 3, b"a3");
    assert_eq!(
        lookup(&source, &name(A, 3)).unwrap().unwrap(),
        b"a3",
        "served before any scan"
    );
    source.refresh().unwrap();
    assert_eq!(source.signatures().status().signatures, 4);
}

/// A signature asked for is kept in memory (a signature never changes), so
/// one removed from the directory is served until the next scan, not after.
#[test]
fn a_signature_asked_for_is_served_from_memory_until_the_next_scan() {
    let root = tree();
    let source = directory_source(root.path());
    assert_eq!(lookup(&source, &name(A, 1)).unwrap().unwrap(), b"a1");
    std::fs::remove_file(root.path().join("sha256").join(A).join("signature-1")).unwrap();
    assert_eq!(
        lookup(&source, &name(A, 1)).unwrap().unwrap(),
        b"a1",
        "from memory"
    );
    assert_eq!(lookup(&source, &name(A, 2)).unwrap().unwrap(), b"a2");

    source.refresh().unwrap();
    assert_eq!(
        lookup(&source, &name(A, 1)).unwrap(),
        None,
        "a new scan, a new set"
    );
}

#[test]
fn links_that_lead_out_of_the_tree_are_refused_and_links_inside_followed() {
    let root = tree();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), C, 1, b"outside");
    std::fs::write(outside.path().join("secret"), b"secret").unwrap();
    symlink(
        outside.path().join("sha256").join(C),
        root.path().join("sha256").join(C),
    )
    .unwrap();
    symlink(
        outside.path().join("secret"),
        root.path().join("sha256").join(B).join("signature-2"),
    )
    .unwrap();
    let source = directory_source(root.path());
    for escaping in [name(C, 1), name(B, 2)] {
        let error = lookup(&source, &escaping).unwrap_err();
        assert!(matches!(error, LookupError::OutsideTree { .. }), "{error}");
    }

    let copy = "3333333333333333333333333333333333333333333333333333333333333333";
    symlink(Path::new(A), root.path().join("sha256").join(copy)).unwrap();
    assert_eq!(lookup(&source, &name(copy, 1)).unwrap().unwrap(), b"a1");
}

#[test]
fn a_root_that_is_a_link_is_followed_where_it_points_now() {
    let (first, second) = (tree(), tempfile::tempdir().unwrap());
    write(second.path(), A, 1, b"a1, second revision");
    let links = tempfile::tempdir().unwrap();
    let root = links.path().join("signatures");
    symlink(first.path(), &root).unwrap();
    let source = directory_source(&root);
    assert_eq!(lookup(&source, &name(A, 1)).unwrap().unwrap(), b"a1");

    // Replaced in place, as a volume updated by swapping a link is.
    let next = links.path().join("next");
    symlink(second.path(), &next).unwrap();
    std::fs::rename(&next, &root).unwrap();
    assert_eq!(
        lookup(&source, &name(A, 1)).unwrap().unwrap(),
        b"a1, second revision"
    );
    assert_eq!(lookup(&source, &name(B, 1)).unwrap(), None);
}

#[test]
fn what_is_not_a_small_file_is_not_served() {
    let root = tree();
    std::fs::create_dir_all(root.path().join("sha256").join(B).join("signature-2")).unwrap();
    write(root.path(), B, 3, &vec![b'x'; MAX_SIGNATURE_BYTES + 1]);
    let source = directory_source(root.path());
    assert_eq!(lookup(&source, &name(B, 2)).unwrap(), None, "a directory");
    assert!(matches!(
        lookup(&source, &name(B, 3)).unwrap_err(),
        LookupError::TooLarge { .. }
    ));
    assert_eq!(
        source.signatures().status().misplaced,
        3,
        "README, a directory, a large file"
    );
}

#[test]
fn a_missing_directory_is_reported_until_it_appears() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("signatures");
    let source = DirectorySource::new(root.clone());
    let error = source.refresh().unwrap_err();
    assert!(error.to_string().contains(&root.display().to_string()), "{error}");
    let status = source.signatures().status();
    assert!(!source.signatures().is_ready());
    assert_eq!(status.freshness.last_error().unwrap().message, error.to_string());

    write(&root, A, 1, b"a1");
    source.refresh().unwrap();
    let status = source.signatures().status();
    assert!(source.signatures().is_ready());
    assert_eq!((status.signatures, status.freshness.is_stale()), (1, false));
}
