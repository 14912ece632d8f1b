//! The commit a service binary was built from, for `build_info{git_commit}`.
//!
//! `main` reads it at compile time with [`source_commit!`](crate::source_commit)
//! and records it before building the service. Only a binary's `main.rs`
//! should expand that macro: the crate that expands it is rebuilt whenever
//! the git index changes, which for a `main.rs` is cheap.

use std::sync::OnceLock;

static GIT_COMMIT: OnceLock<&'static str> = OnceLock::new();

/// The commit the source tree was at when the calling crate was compiled,
/// with `-dirty` when it had uncommitted changes: the `GIT_COMMIT`
/// environment variable of the build if set (image builds, which have no
/// `.git`, pass it), else what git says, else `unknown`.
#[macro_export]
macro_rules! source_commit {
    () => {
        match option_env!("GIT_COMMIT") {
            Some(commit) => commit,
            None => $crate::__git_version::git_version!(
                args = ["--always", "--abbrev=40", "--dirty=-dirty", "--exclude=*"],
                fallback = "unknown"
            ),
        }
    };
}

/// Records the commit of the running binary. The first call wins.
pub fn record_git_commit(commit: &'static str) {
    GIT_COMMIT.set(commit).ok();
}

/// The commit recorded by `main`; `unknown` where none was (services built
/// in process by tests).
pub fn git_commit() -> &'static str {
    GIT_COMMIT.get().copied().unwrap_or("unknown")
}
