//! A metadata-helper with every metric registered (built, not running), on
//! a signatures directory. Shared by the tests that check the metrics
//! against docs/operations.md and the operations kit.

use metadata_helper::{Application, Settings};

/// The helper and its (empty) signatures directory.
pub fn helper_with_every_metric() -> (Application, tempfile::TempDir) {
    let signatures = tempfile::tempdir().unwrap();
    let mut settings = Settings::default();
    settings.service.api.port = 0;
    settings.status.port = 0;
    settings.signatures.dir = Some(signatures.path().to_path_buf());
    (Application::build(&settings).unwrap(), signatures)
}
