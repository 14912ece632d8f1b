//! A test's temporary directory — configurations, logs, graph-data trees,
//! the scrape cache — removed when the test passes and kept, with its path
//! on stderr, when it fails, to read the logs or rerun a service by hand.

use std::path::Path;

use anyhow::Context as _;
use tempfile::TempDir;

#[derive(Debug)]
pub struct Workdir(TempDir);

impl Workdir {
    pub fn new() -> anyhow::Result<Self> {
        tempfile::Builder::new()
            .prefix("cincinnati-e2e-")
            .tempdir()
            .map(Self)
            .context("creating the test's work directory")
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.disable_cleanup(true);
            eprintln!(
                "e2e: the failed test's configurations and logs are kept in {}",
                self.path().display()
            );
        }
    }
}
