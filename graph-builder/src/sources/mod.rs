//! Where releases and graph-data come from.

pub mod graph_data;
pub mod releases;

use std::path::PathBuf;

/// Every source's default `root_certificate_dir` (upstream's).
fn default_root_certificate_dir() -> PathBuf {
    PathBuf::from(http_fetch::trust::DEFAULT_ROOT_CERTIFICATE_DIR)
}
