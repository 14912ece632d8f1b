use std::path::PathBuf;

/// Why an image could not be built or pushed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    InvalidRegistry(#[from] registry_client::address::AddressError),

    #[error("could not configure the registry client")]
    Client(#[source] oci_client::errors::OciDistributionError),

    #[error("could not build the {layer} layer")]
    BuildLayer {
        layer: String,
        #[source]
        source: std::io::Error,
    },

    #[error("could not read {path} for a layer")]
    ReadDirectory {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path} is not valid UTF-8 and cannot be stored as a layer entry name")]
    NonUtf8Path { path: PathBuf },

    #[error("layer building was interrupted")]
    BuildInterrupted(#[source] tokio::task::JoinError),

    #[error("could not {action} {reference}")]
    Registry {
        action: &'static str,
        reference: String,
        #[source]
        source: oci_client::errors::OciDistributionError,
    },
}
