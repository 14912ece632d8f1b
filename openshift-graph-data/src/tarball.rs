//! The graph-data in use as a gzip tarball, the `{prefix}/graph-data` format,
//! so that one update service can feed another in a disconnected site.
//!
//! The bytes depend on the files only: entries in path order, fixed owner,
//! mode and timestamp, and a gzip header without name or time. Equal
//! graph-data therefore gives an equal tarball and an equal digest, which
//! makes a stable ETag.

use std::collections::BTreeSet;
use std::io::Write;

use sha2::{Digest, Sha256};

use crate::files::GraphDataFiles;

/// The largest graph-data tarball a reader fetches. Real ones are a few MiB;
/// this bounds a hostile or broken source (a URL, an image layer).
pub const MAX_TARBALL_BYTES: usize = 128 * 1024 * 1024;

/// A tarball and the digest of its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tarball {
    pub bytes: Vec<u8>,
    /// `sha256:<hex>` of `bytes`.
    pub digest: String,
}

/// Writes the published files (see [`GraphDataFiles::published`]) with their
/// directories, paths relative to the tarball root, as `tar xzf` users expect.
pub fn write_tar_gz(files: &GraphDataFiles) -> Tarball {
    let gzip = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::default());
    let mut builder = tar::Builder::new(gzip);
    let directories: BTreeSet<&str> = files
        .published()
        .flat_map(|(path, _)| path.match_indices('/').map(|(end, _)| &path[..end]))
        .collect();
    for dir in directories {
        append(
            &mut builder,
            &format!("{dir}/"),
            tar::EntryType::Directory,
            0o755,
            &[],
        );
    }
    for (path, content) in files.published() {
        append(&mut builder, path, tar::EntryType::Regular, 0o644, content);
    }
    let bytes = builder
        .into_inner()
        .and_then(|gzip| gzip.finish())
        .expect("writing to memory cannot fail");
    let digest = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
    Tarball { bytes, digest }
}

fn append<W: Write>(
    builder: &mut tar::Builder<W>,
    path: &str,
    kind: tar::EntryType,
    mode: u32,
    content: &[u8],
) {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(content.len() as u64);
    header.set_mtime(0);
    header.set_uid(0);
    header.set_gid(0);
    builder
        .append_data(&mut header, path, content)
        .expect("graph-data paths are short and relative; writing to memory cannot fail");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> GraphDataFiles {
        let mut files = GraphDataFiles::default();
        files.insert("version", b"1.1.0\n".to_vec());
        files.insert("raw/metadata.json", b"{}".to_vec());
        files.insert(
            "channels/fast-4.1.yaml",
            b"name: fast-4.1\nversions: []\n".to_vec(),
        );
        files.insert("blocked-edges/OWNERS", b"approvers: []\n".to_vec());
        files
    }

    #[test]
    fn the_tarball_reads_back_as_the_same_graph_data() {
        let files = sample();
        let tarball = write_tar_gz(&files);
        let read_back = GraphDataFiles::from_tar_gz(tarball.bytes.as_slice()).unwrap();
        assert_eq!(read_back.revision(), files.revision());
        assert_eq!(
            read_back.get("blocked-edges/OWNERS"),
            None,
            "only published files travel"
        );
        assert_eq!(
            read_back.get("channels/fast-4.1.yaml"),
            files.get("channels/fast-4.1.yaml")
        );
    }

    #[test]
    fn equal_graph_data_gives_equal_bytes() {
        let first = write_tar_gz(&sample());
        let second = write_tar_gz(&sample());
        assert_eq!(first, second);
        let mut changed = sample();
        changed.insert("version", b"1.2.0\n".to_vec());
        assert_ne!(write_tar_gz(&changed).digest, first.digest);
    }
}
