//! Where the service binaries are, built before they are used.
//!
//! Cargo builds a test executable into `target/<profile>/deps/` and the
//! workspace's binaries into `target/<profile>/`. Another package's binaries
//! are not built for this crate's tests, and a binary built earlier may be
//! stale, so the first test in a process asks cargo to build the services
//! (with the test's own profile and target directory; a no-op when they are
//! up to date). `cargo test -p e2e` therefore works on its own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use anyhow::{Context as _, bail};

/// Overrides the directory the service binaries are taken from (to run the
/// suite against release builds, say). Binaries found there are not built.
pub const BIN_DIR_VARIABLE: &str = "E2E_BIN_DIR";

/// The services the suite runs. They are built together, as the scripts build
/// them, so that one resolution of features serves every build.
const SERVICES: &[&str] = &["graph-builder", "policy-engine", "metadata-helper"];

/// The path of the workspace binary `name`, one of the services.
pub fn service_binary(name: &str) -> anyhow::Result<PathBuf> {
    debug_assert!(
        SERVICES.contains(&name),
        "{name} is not a service the suite builds"
    );
    let directory = match std::env::var_os(BIN_DIR_VARIABLE) {
        Some(directory) => PathBuf::from(directory),
        None => {
            let directory = profile_directory()?;
            build_services_once(&directory)?;
            directory
        }
    };
    let path = directory.join(name);
    if !path.is_file() {
        bail!("{} does not exist", path.display());
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

fn build_services_once(profile_directory: &Path) -> anyhow::Result<()> {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    BUILT
        .get_or_init(|| build_services(profile_directory).map_err(|error| format!("{error:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
}

/// Builds the services into `profile_directory` (`target/<profile>/`).
fn build_services(profile_directory: &Path) -> anyhow::Result<()> {
    let (Some(target_directory), Some(directory_name)) =
        (profile_directory.parent(), profile_directory.file_name())
    else {
        bail!("{} is not target/<profile>", profile_directory.display());
    };
    // Cargo names the `dev` profile's directory `debug`.
    let profile = match directory_name.to_str() {
        Some("debug") => "dev",
        Some(other) => other,
        None => bail!("{} is not target/<profile>", profile_directory.display()),
    };
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "build",
            "--quiet",
            "--locked",
            "--profile",
            profile,
            "--target-dir",
        ])
        .arg(target_directory);
    for service in SERVICES {
        cargo.args(["-p", service]);
    }
    let output = cargo.output().context("running cargo")?;
    if !output.status.success() {
        bail!(
            "building the services failed ({:?}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}
