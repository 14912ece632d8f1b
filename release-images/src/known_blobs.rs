use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OnceCell;

use crate::error::Error;

/// `(repository, digest)`: registries link blobs per repository.
type BlobKey = (String, String);

/// The blobs known to be in each repository. Concurrent pushes that need the
/// same blob share one upload instead of racing to upload it several times.
#[derive(Debug, Default)]
pub(crate) struct KnownBlobs {
    blobs: Mutex<HashMap<BlobKey, Arc<OnceCell<()>>>>,
}

impl KnownBlobs {
    /// Runs `make_present` unless the blob is already known to be present, or
    /// waits for the call already under way. A failed call is retried by the next caller.
    pub(crate) async fn ensure<F>(
        &self,
        repository: &str,
        digest: &str,
        make_present: impl FnOnce() -> F,
    ) -> Result<(), Error>
    where
        F: Future<Output = Result<(), Error>>,
    {
        let presence = self
            .blobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((repository.to_owned(), digest.to_owned()))
            .or_default()
            .clone();
        presence.get_or_try_init(make_present).await?;
        Ok(())
    }
}
