//! One revision of a signature tree on disk, read on demand.

use std::fs::File;
use std::io::{self, Read as _};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::ArcSwapOption;
use image_signature::MAX_SIGNATURE_BYTES;
use image_signature::layout::SignatureName;
use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
use rustix::io::Errno;
use tempfile::TempDir;

use crate::cache::{CACHE_BYTES, SignatureCache};
use crate::signature::Signature;

/// A signature tree (`<root>/<algo>/<hex>/signature-<N>`) and what is known
/// about it. Files are read when asked for; only the most recently asked
/// are held in memory ([`crate::cache`]).
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

/// The root directory, opened, which directory it is, and the signatures
/// read from it lately.
#[derive(Debug)]
struct OpenRoot {
    dir: OwnedFd,
    identity: (u64, u64),
    recent: SignatureCache,
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
        let root = self.current_root().map_err(|source| LookupError::Io {
            path: self.root.clone(),
            source,
        })?;
        if let Some(recent) = root.recent.get(name) {
            return Ok(Some(recent));
        }
        let relative = name.path();
        let path = self.root.join(&relative);
        let io_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| LookupError::Io { path, source }
        };
        let mut file = match self.open_beneath(&root, &relative) {
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
        let signature = Signature::of(bytes.into());
        root.recent.insert(name.clone(), signature.clone());
        Ok(Some(signature))
    }

    /// Opens `relative` beneath `root`; `CrossesDevices` (EXDEV) when the
    /// path leaves the tree. Non-blocking, so that a FIFO in the tree cannot
    /// hold a worker (it is then refused as not a file).
    fn open_beneath(&self, root: &OpenRoot, relative: &str) -> io::Result<File> {
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        match openat2(&root.dir, relative, flags, Mode::empty(), ResolveFlags::BENEATH) {
            Ok(file) => Ok(file.into()),
            // A kernel before 5.6, or a seccomp profile without openat2.
            Err(Errno::NOSYS | Errno::PERM) => self.open_resolving(relative),
            Err(errno) => Err(errno.into()),
        }
    }

    /// [`Self::open_beneath`] without openat2: the file's real path
    /// must lie under the root's (a `readlink` per component, twice).
    fn open_resolving(&self, relative: &str) -> io::Result<File> {
        let real = std::fs::canonicalize(self.root.join(relative))?;
        if !real.starts_with(std::fs::canonicalize(&self.root)?) {
            return Err(io::ErrorKind::CrossesDevices.into());
        }
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(OFlags::NONBLOCK.bits() as i32)
            .open(real)
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
            recent: SignatureCache::new(CACHE_BYTES),
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// The way without openat2 refuses what openat2 refuses: a link out.
    #[test]
    fn without_openat2_a_link_out_of_the_tree_is_refused_and_files_inside_open() {
        let (root, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::create_dir(root.path().join("sha256")).unwrap();
        std::fs::write(root.path().join("sha256/inside"), b"in").unwrap();
        std::fs::write(outside.path().join("secret"), b"out").unwrap();
        symlink(outside.path().join("secret"), root.path().join("sha256/out")).unwrap();
        symlink("inside", root.path().join("sha256/link")).unwrap();
        let set = SignatureSet::new(root.path().to_path_buf(), None, None, Counts::default());

        let mut read = String::new();
        set.open_resolving("sha256/link")
            .unwrap()
            .read_to_string(&mut read)
            .unwrap();
        assert_eq!(read, "in");
        let refused = set.open_resolving("sha256/out").unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::CrossesDevices);
        let missing = set.open_resolving("sha256/none").unwrap_err();
        assert!(is_missing(&missing), "{missing}");
    }
}
