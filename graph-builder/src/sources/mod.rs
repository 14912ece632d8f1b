//! Where releases and graph-data come from.

pub mod graph_data;
pub mod releases;

use std::path::PathBuf;

use http_fetch::ExtraRoots;
use registry_client::Access;
use service_kit::secret::Secret;

/// Every source's default `root_certificate_dir` (upstream's).
fn default_root_certificate_dir() -> PathBuf {
    PathBuf::from(http_fetch::trust::DEFAULT_ROOT_CERTIFICATE_DIR)
}

/// Both registry sources name their registry with upstream's keys
/// (`registry`, `repository`, `username`, `password`, `credentials_path`):
/// one reading of them into the registry client's [`Access`].
macro_rules! registry_access {
    ($($settings:ty),+) => {$(
        impl $settings {
            /// The registry this source reads, and how it logs in.
            pub fn access<'a>(&'a self, roots: &'a ExtraRoots) -> Access<'a> {
                Access {
                    registry: &self.registry,
                    repository: &self.repository,
                    username: self.username.as_deref(),
                    password: self.password.as_ref().map(Secret::expose),
                    credentials_path: self.credentials_path.as_deref(),
                    roots,
                }
            }
        }
    )+};
}

registry_access!(releases::RegistryScrapeSettings, graph_data::ImageSettings);
