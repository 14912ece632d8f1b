//! Signatures from a directory (upstream's `[signatures] dir`: the
//! graph-data's `signatures/`, shared with the graph-builder). Files are read
//! when asked for, so a signature added to the directory is served at once;
//! a scan (names only, no file read) counts them for status.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use image_signature::MAX_SIGNATURE_BYTES;
use image_signature::layout::{self, Found};

use crate::set::{Counts, SignatureSet};
use crate::status::Signatures;

/// A directory source, and the [`Signatures`] it keeps in service.
#[derive(Clone)]
pub struct DirectorySource {
    root: PathBuf,
    signatures: Signatures,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot read the signature directory {path}: {source}")]
pub struct DirectoryError {
    path: PathBuf,
    source: std::io::Error,
}

impl DirectorySource {
    pub fn new(root: PathBuf) -> Self {
        let signatures = Signatures::new(format!("directory {}", root.display()));
        Self { root, signatures }
    }

    pub fn signatures(&self) -> &Signatures {
        &self.signatures
    }

    /// Scans the tree and puts the directory in service with what was
    /// counted. A directory that cannot be read keeps the last scan in
    /// service (lookups still read the directory as it is) and is reported.
    /// Blocking: a walk of every digest directory.
    pub fn refresh(&self) -> Result<(), DirectoryError> {
        match scan(&self.root) {
            Ok(counts) => {
                self.signatures
                    .swap(SignatureSet::new(self.root.clone(), None, None, counts));
                self.signatures.succeeded();
                Ok(())
            }
            Err(source) => {
                let error = DirectoryError {
                    path: self.root.clone(),
                    source,
                };
                self.signatures.failed(&error);
                Err(error)
            }
        }
    }
}

impl DirectorySource {
    /// One round of the periodic scan: [`DirectorySource::refresh`] on a
    /// blocking thread, a failure logged (and kept in the status).
    pub async fn round(&self) {
        let source = self.clone();
        let scanned = tokio::task::spawn_blocking(move || source.refresh())
            .await
            .expect("a scan does not panic");
        if let Err(error) = scanned {
            tracing::warn!(%error, "signature scan failed");
        }
    }
}

/// Counts the signatures of the tree at `root`, as they would be served.
fn scan(root: &Path) -> std::io::Result<Counts> {
    let mut counts = Counts::default();
    let mut digests = BTreeSet::new();
    layout::walk(root, &mut |found| match found {
        Found::Signature { name, len, .. } if len <= MAX_SIGNATURE_BYTES as u64 => {
            counts.signatures += 1;
            digests.insert((name.algorithm(), name.digest().to_owned()));
        }
        Found::Signature { .. } | Found::Misplaced { .. } | Found::Unreadable { .. } => counts.misplaced += 1,
    })?;
    counts.digests = digests.len();
    Ok(counts)
}
