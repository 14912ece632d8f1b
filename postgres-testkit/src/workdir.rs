//! A server's temporary directory, and the sweep of those left behind.
//!
//! A dropped server removes its directory, but a test process that dies
//! cannot: killed by `SIGKILL` or nextest's timeout, or holding its server
//! in a `static`, which Rust never drops (under nextest, where every test is
//! a process of its own, that is one directory per test). Left alone, these
//! filled the disk: about 60 MB each, 19 a suite run. So each directory
//! holds a lock file its process keeps locked (`flock`, which the kernel
//! releases when the process dies, however it dies), and every start first
//! removes the directories beside it whose lock is free and whose server
//! has stopped.

use std::fs::File;
use std::path::Path;

use process_testkit::processes::Process;
use rustix::fs::{FlockOperation, flock};
use tempfile::TempDir;

use crate::error::Error;

const PREFIX: &str = "postgres-testkit-";
/// Locked by the process that owns the directory, for as long as it lives.
const OWNER_LOCK: &str = "owner.lock";
/// Where the lock file is made and locked before it takes its name, so a
/// sweep never finds the lock file of a live process unlocked.
const OWNER_LOCK_DRAFT: &str = "owner.lock.draft";

#[derive(Debug)]
pub(crate) struct Workdir {
    directory: TempDir,
    /// Held, not read: the lock lives as long as this open file.
    _owner_lock: File,
}

impl Workdir {
    /// Removes the abandoned directories in `parent`, then makes one of our
    /// own there, locked for this process.
    pub(crate) fn create_in(parent: &Path) -> Result<Self, Error> {
        sweep_abandoned(parent);
        let directory = TempDir::with_prefix_in(PREFIX, parent).map_err(|source| Error::Filesystem {
            path: parent.to_owned(),
            source,
        })?;
        let draft = directory.path().join(OWNER_LOCK_DRAFT);
        let owner_lock = File::create(&draft)
            .and_then(|file| {
                flock(&file, FlockOperation::NonBlockingLockExclusive)?;
                std::fs::rename(&draft, directory.path().join(OWNER_LOCK))?;
                Ok(file)
            })
            .map_err(|source| Error::Filesystem { path: draft, source })?;
        Ok(Self {
            directory,
            _owner_lock: owner_lock,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        self.directory.path()
    }
}

/// Removes each directory of ours in `parent` whose owner has died and whose
/// server has stopped. Best effort: a directory it cannot read or remove
/// (another user's, one another sweep is removing) is not this test's
/// concern, so failures are skipped, not reported.
fn sweep_abandoned(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let is_ours = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(PREFIX));
        if is_ours {
            remove_if_abandoned(&entry.path());
        }
    }
}

fn remove_if_abandoned(directory: &Path) {
    // No lock file: made before this sweep existed, or not yet named by a
    // process starting now; either way not ours to judge.
    let Ok(lock) = File::open(directory.join(OWNER_LOCK)) else {
        return;
    };
    if flock(&lock, FlockOperation::NonBlockingLockExclusive).is_err() {
        return;
    }
    // The owner is dead; its server got the parent-death signal but may
    // still be shutting down. The next sweep will find it stopped.
    if postmaster_runs(directory) {
        return;
    }
    // Removed while holding the lock, so a concurrent sweep skips it.
    let _ = std::fs::remove_dir_all(directory);
}

/// Whether the server of `directory` still runs, by the pid on the first
/// line of its `postmaster.pid` (absent once the server has stopped).
fn postmaster_runs(directory: &Path) -> bool {
    std::fs::read_to_string(directory.join("data/postmaster.pid"))
        .ok()
        .and_then(|text| text.lines().next()?.trim().parse().ok())
        .and_then(Process::read)
        .is_some_and(|process| process.runs())
}
