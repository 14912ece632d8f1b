//! One revision of a signature tree on disk, read on demand.

use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::ArcSwapOption;
use bytes::Bytes;
use image_signature::MAX_SIGNATURE_BYTES;
use image_signature::layout::SignatureName;
use sha2::{Digest as _, Sha256};
use tempfile::TempDir;

/// A signature tree (`<root>/<algo>/<hex>/signature-<N>`) and what is known
/// about it. Files are read when asked for; nothing is held in memory.
#[derive(Debug)]
pub struct SignatureSet {
    root: PathBuf,
    /// The root's real path as last resolved: resolving it for every lookup
    /// took an eighth of the helper's CPU under load (one `readlink` per
    /// component).
    real_root: ArcSwapOption<PathBuf>,
    /// A tree unpacked for this set: removed when the set is dropped, that
    /// is, once no reader holds it any more.
    _unpacked: Option<TempDir>,
    /// The source's name for this revision (a tarball's entity tag).
    pub revision: Option<String>,
    /// Digests with at least one signature.
    pub digests: usize,
    pub signatures: usize,
    /// Entries of the tree that are not served (misnamed, not files, too large).
    pub misplaced: usize,
    pub loaded_at: SystemTime,
}

/// A signature file's bytes and its strong entity tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub bytes: Bytes,
    /// `"<sha256 of the bytes>"`, quoted: a signature for a digest never
    /// changes, so neither does its tag.
    pub etag: String,
}

/// A signature that exists but cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    /// The path leads out of the tree through a symbolic link: refused, as
    /// if the file did not exist, but worth a warning.
    #[error("{path} leads out of the signature tree {root}")]
    OutsideTree { path: PathBuf, root: PathBuf },
    #[error("{path} is larger than the {MAX_SIGNATURE_BYTES} bytes a signature may have")]
    TooLarge { path: PathBuf },
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// What a walk of the tree counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub digests: usize,
    pub signatures: usize,
    pub misplaced: usize,
}

impl SignatureSet {
    pub(crate) fn new(
        root: PathBuf,
        unpacked: Option<TempDir>,
        revision: Option<String>,
        counts: Counts,
    ) -> Self {
        Self {
            root,
            real_root: ArcSwapOption::empty(),
            _unpacked: unpacked,
            revision,
            digests: counts.digests,
            signatures: counts.signatures,
            misplaced: counts.misplaced,
            loaded_at: SystemTime::now(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The signature `name`, `None` when the tree has no such file.
    ///
    /// The file's real path (links resolved) must lie under the root's real
    /// path. That is resolved again whenever a file seems to lie outside it,
    /// so that a root that is a link replaced in place (a volume updated by
    /// swapping a link) is followed.
    pub fn lookup(&self, name: &SignatureName) -> Result<Option<Signature>, LookupError> {
        let path = self.root.join(name.path());
        let io_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| LookupError::Io { path, source }
        };
        let real = match std::fs::canonicalize(&path) {
            Ok(real) => real,
            Err(error) if is_missing(&error) => return Ok(None),
            Err(error) => return Err(io_error(&path)(error)),
        };
        let cached = self.real_root.load_full();
        if !cached.is_some_and(|root| real.starts_with(&*root)) {
            let root = std::fs::canonicalize(&self.root).map_err(io_error(&self.root))?;
            if !real.starts_with(&root) {
                return Err(LookupError::OutsideTree { path, root });
            }
            self.real_root.store(Some(Arc::new(root)));
        }
        let file = match std::fs::File::open(&real) {
            Ok(file) => file,
            Err(error) if is_missing(&error) => return Ok(None),
            Err(error) => return Err(io_error(&path)(error)),
        };
        let metadata = file.metadata().map_err(io_error(&path))?;
        if !metadata.is_file() {
            return Ok(None);
        }
        if metadata.len() > MAX_SIGNATURE_BYTES as u64 {
            return Err(LookupError::TooLarge { path });
        }
        let mut bytes = Vec::with_capacity(metadata.len() as usize);
        file.take(MAX_SIGNATURE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(io_error(&path))?;
        if bytes.len() > MAX_SIGNATURE_BYTES {
            return Err(LookupError::TooLarge { path });
        }
        let etag = format!("\"{}\"", hex::encode(Sha256::digest(&bytes)));
        Ok(Some(Signature {
            bytes: bytes.into(),
            etag,
        }))
    }
}

/// Missing, or a path through something that is not a directory.
fn is_missing(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}
