//! Output compared with the files in `tests/golden`, or written there
//! instead when `CINCINNATI_BLESS` is set.

use std::path::{Path, PathBuf};

/// Rewrites the golden files instead of comparing with them.
pub const BLESS: &str = "CINCINNATI_BLESS";

pub fn golden_path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(file)
}

/// A golden file's text.
pub fn golden(file: &str) -> String {
    let path = golden_path(file);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A golden JSON document.
pub fn golden_json(file: &str) -> serde_json::Value {
    serde_json::from_str(&golden(file)).unwrap_or_else(|error| panic!("{file}: {error}"))
}

/// Outputs checked against golden files, every failure told at the end.
#[derive(Default)]
pub struct GoldenFiles {
    failures: Vec<String>,
}

impl GoldenFiles {
    /// Compares `shown` with `file` (writes it there under [`BLESS`]).
    pub fn check(&mut self, file: &str, shown: &str) {
        let path = golden_path(file);
        if std::env::var_os(BLESS).is_some() {
            std::fs::write(&path, shown).unwrap();
            return;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        if let Some(difference) = first_difference(&expected, shown) {
            self.failures
                .push(format!("{file} differs ({BLESS}=1 rewrites it): {difference}"));
        }
    }

    /// A failure other than a difference (the command's exit code, say).
    pub fn fail(&mut self, failure: String) {
        self.failures.push(failure);
    }

    pub fn assert_same(self) {
        assert!(self.failures.is_empty(), "{}", self.failures.join("\n"));
    }
}

/// The first line that differs, both ways.
fn first_difference(expected: &str, shown: &str) -> Option<String> {
    if expected == shown {
        return None;
    }
    let (mut expected_lines, mut shown_lines) = (expected.lines(), shown.lines());
    for number in 1.. {
        match (expected_lines.next(), shown_lines.next()) {
            (Some(a), Some(b)) if a == b => {}
            (a, b) => return Some(format!("line {number}: expected {a:?}, printed {b:?}")),
        }
    }
    unreachable!()
}
