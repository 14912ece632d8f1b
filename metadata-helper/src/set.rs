//! One revision of a signature tree on disk, read on demand.

use std::fs::File;
use std::io::{self, Read as _};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::ArcSwapOption;
use bytes::Bytes;
use image_signature::MAX_SIGNATURE_BYTES;
use image_signature::layout::SignatureName;
use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
use sha2::{Digest as _, Sha256};
use tempfile::TempDir;

/// A signature tree (`<root>/<algo>/<hex>/signature-<N>`) and what is known
/// about it. Files are read when asked for; nothing is held in memory.
#[derive(Debug)]
pub struct SignatureSet {
    root: PathBuf,
    /// The root directory as last opened. Files are opened beneath it with
    /// `openat2(RESOLVE_BENEATH)`, so the kernel refuses a path leaving the
    /// tree (through `..`, an absolute link or a link pointing out) in the
    /// system call that opens it; resolving real paths in user space took six
    /// `readlink` calls per request, half the helper's system calls.
    open_root: ArcSwapOption<OpenRoot>,
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

/// The root directory, opened, and which directory it is.
#[derive(Debug)]
struct OpenRoot {
    dir: OwnedFd,
    identity: (u64, u64),
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
            open_root: ArcSwapOption::empty(),
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
    /// A file reached through a link is served when the link stays inside
    /// the tree (relative links, as Kubernetes volumes make them). The root
    /// itself may be a link: a volume updated by swapping a link in place is
    /// followed from the next lookup on.
    pub fn lookup(&self, name: &SignatureName) -> Result<Option<Signature>, LookupError> {
        let relative = name.path();
        let path = self.root.join(&relative);
        let io_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| LookupError::Io { path, source }
        };
        let mut file = match self.open_beneath_root(&relative) {
            Ok(file) => file,
            Err(error) if is_missing(&error) => return Ok(None),
            Err(error) if error.kind() == io::ErrorKind::CrossesDevices => {
                return Err(LookupError::OutsideTree {
                    path,
                    root: self.root.clone(),
                });
            }
            Err(error) => return Err(io_error(&path)(error)),
        };
        let metadata = file.metadata().map_err(io_error(&path))?;
        if !metadata.is_file() {
            return Ok(None);
        }
        if metadata.len() > MAX_SIGNATURE_BYTES as u64 {
            return Err(LookupError::TooLarge { path });
        }
        // As long as the file said it was: one read, not a second one to
        // find the end (signatures never change once written).
        let mut bytes = vec![0; metadata.len() as usize];
        file.read_exact(&mut bytes).map_err(io_error(&path))?;
        let etag = format!("\"{}\"", hex::encode(Sha256::digest(&bytes)));
        Ok(Some(Signature {
            bytes: bytes.into(),
            etag,
        }))
    }

    /// Opens `relative` beneath the root; `CrossesDevices` (EXDEV) when the
    /// path leaves the tree.
    fn open_beneath_root(&self, relative: &str) -> io::Result<File> {
        let root = self.current_root()?;
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY;
        Ok(openat2(&root.dir, relative, flags, Mode::empty(), ResolveFlags::BENEATH)?.into())
    }

    /// The root directory the root path names now, opened again when that
    /// is another directory than last time.
    fn current_root(&self) -> io::Result<Arc<OpenRoot>> {
        let named = rustix::fs::stat(&self.root)?;
        let identity = (named.st_dev, named.st_ino);
        if let Some(open) = self.open_root.load_full()
            && open.identity == identity
        {
            return Ok(open);
        }
        let dir = rustix::fs::open(
            &self.root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let opened = rustix::fs::fstat(&dir)?;
        let open = Arc::new(OpenRoot {
            dir,
            identity: (opened.st_dev, opened.st_ino),
        });
        self.open_root.store(Some(Arc::clone(&open)));
        Ok(open)
    }
}

/// Missing, or a path through something that is not a directory.
fn is_missing(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}
