//! Where the service binaries are.
//!
//! Cargo builds a test executable into `target/<profile>/deps/` and the
//! workspace's binaries into `target/<profile>/`, so the services are found
//! next to the parent directory of the running test. `cargo nextest run
//! --workspace --all-targets` builds them; a run of this crate alone needs
//! `cargo build -p graph-builder -p policy-engine` first.

use std::path::PathBuf;

use anyhow::{Context as _, bail};

/// Overrides the directory the service binaries are taken from (to run the
/// suite against release builds, say).
pub const BIN_DIR_VARIABLE: &str = "E2E_BIN_DIR";

/// The path of the workspace binary `name`.
pub fn service_binary(name: &str) -> anyhow::Result<PathBuf> {
    let directory = match std::env::var_os(BIN_DIR_VARIABLE) {
        Some(directory) => PathBuf::from(directory),
        None => profile_directory()?,
    };
    let path = directory.join(name);
    if !path.is_file() {
        bail!(
            "{} does not exist: build the services first with \
             `cargo build -p graph-builder -p policy-engine` (scripts/test.sh builds them)",
            path.display()
        );
    }
    Ok(path)
}

/// `target/<profile>/`, from `target/<profile>/deps/<test executable>`.
fn profile_directory() -> anyhow::Result<PathBuf> {
    let executable = std::env::current_exe().context("finding the test executable")?;
    executable
        .parent()
        .and_then(|deps| deps.parent())
        .map(PathBuf::from)
        .with_context(|| format!("{} is not inside target/<profile>/deps", executable.display()))
}
