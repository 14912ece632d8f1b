//! A graph-data tarball (the `{prefix}/graph-data` format: paths from the
//! graph-data root) unpacked into a directory: its signatures only.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

use image_signature::MAX_SIGNATURE_BYTES;
use image_signature::layout::{SIGNATURES_DIR, SignatureName};

use crate::set::Counts;

/// What the signatures of one tarball may take on disk, each file charged
/// at least a filesystem block: a tarball (small when compressed) must not
/// fill the disk. A mirror's set (6,000 digests, 1 to 3 signatures each)
/// takes about a third of it.
pub(crate) const MAX_UNPACKED_BYTES: u64 = 256 * 1024 * 1024;
const BLOCK: u64 = 4096;

#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    #[error("not a gzip tarball: {0}")]
    Tarball(std::io::Error),
    #[error("not a graph-data tarball: it has no `version` file")]
    NotGraphData,
    #[error("its signatures take more than {MAX_UNPACKED_BYTES} bytes")]
    TooLarge,
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
}

/// Writes the tarball's signatures as `<into>/<algo>/<hex>/signature-<N>`.
/// Entries under `signatures/` that are not signature files (other names,
/// links, files over [`MAX_SIGNATURE_BYTES`]) are counted as misplaced and
/// not written; everything else is skipped.
pub(crate) fn unpack(tar_gz: &[u8], into: &Path) -> Result<Counts, UnpackError> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tar_gz));
    let mut counts = Counts::default();
    let mut digests = BTreeSet::new();
    let mut graph_data = false;
    let mut charged = 0u64;
    for entry in archive.entries().map_err(UnpackError::Tarball)? {
        let mut entry = entry.map_err(UnpackError::Tarball)?;
        let path = entry.path().map_err(UnpackError::Tarball)?;
        let Some(path) = path.to_str() else {
            continue;
        };
        // Paths are taken as written: a name with `..` or anything else
        // unexpected is not a signature name, so it is never written.
        let relative = path.strip_prefix("./").unwrap_or(path);
        graph_data |= relative == "version";
        let Some(inside) = relative
            .strip_prefix(SIGNATURES_DIR)
            .and_then(|rest| rest.strip_prefix('/'))
        else {
            continue;
        };
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        let name = match SignatureName::parse_path(inside) {
            Ok(name) if kind.is_file() && entry.size() <= MAX_SIGNATURE_BYTES as u64 => name,
            _ => {
                counts.misplaced += 1;
                continue;
            }
        };
        charged += entry.size().max(BLOCK);
        if charged > MAX_UNPACKED_BYTES {
            return Err(UnpackError::TooLarge);
        }
        let mut content = Vec::with_capacity(entry.size() as usize);
        entry.read_to_end(&mut content).map_err(UnpackError::Tarball)?;
        write(into, &name, &content)?;
        counts.signatures += 1;
        digests.insert((name.algorithm(), name.digest().to_owned()));
    }
    if !graph_data {
        return Err(UnpackError::NotGraphData);
    }
    counts.digests = digests.len();
    Ok(counts)
}

fn write(into: &Path, name: &SignatureName, content: &[u8]) -> Result<(), UnpackError> {
    let path = into.join(name.path());
    let error = |source| UnpackError::Write {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(path.parent().expect("a signature path has a directory")).map_err(error)?;
    std::fs::write(&path, content).map_err(error)
}
