//! A graph-data tarball (a URL source, an upstream's `{prefix}/graph-data`).
//! The input is the tar stream; the target gzips it, so the fuzzer explores
//! tar and graph-data rather than deflate checksums. Reading and loading
//! never panic, and what was read survives the published tarball
//! (`write_tar_gz`) unchanged: same files, same revision.
#![no_main]

use std::io::Write as _;

use libfuzzer_sys::fuzz_target;
use openshift_graph_data::{GraphData, GraphDataFiles, Strictness, write_tar_gz};

fuzz_target!(|tar: &[u8]| {
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(tar).expect("writing to memory");
    let tar_gz = gzip.finish().expect("writing to memory");
    let Ok(files) = GraphDataFiles::from_tar_gz(tar_gz.as_slice()) else {
        return;
    };
    let republished = write_tar_gz(&files);
    let reread = GraphDataFiles::from_tar_gz(republished.bytes.as_slice()).expect("our own tarball reads");
    assert_eq!(
        reread.revision(),
        files.revision(),
        "the published tarball holds the same files"
    );
    let _ = GraphData::load(&files, &Strictness::default());
});
