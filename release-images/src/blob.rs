//! Content-addressed blobs (layers and configs) ready to upload.

use std::io::{self, Write};
use std::sync::Arc;

use bytes::Bytes;
use sha2::{Digest, Sha256};
use tempfile::NamedTempFile;

#[derive(Clone, Debug)]
pub(crate) struct Blob {
    /// `sha256:<hex>`
    pub(crate) digest: String,
    pub(crate) size: u64,
    pub(crate) content: BlobContent,
}

#[derive(Clone, Debug)]
pub(crate) enum BlobContent {
    Memory(Bytes),
    /// Large generated layers live on disk and are streamed to the registry.
    File(Arc<NamedTempFile>),
}

impl Blob {
    pub(crate) fn from_bytes(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Self {
            digest: sha256_digest(&bytes),
            size: bytes.len() as u64,
            content: BlobContent::Memory(bytes),
        }
    }
}

pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    digest_string(Sha256::digest(bytes))
}

fn digest_string(hash: impl AsRef<[u8]>) -> String {
    format!("sha256:{}", hex::encode(hash))
}

/// Passes writes through while hashing and counting them, so digests and
/// sizes come out of a single streaming pass.
pub(crate) struct DigestingWriter<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> DigestingWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            written: 0,
        }
    }

    /// The inner writer, the `sha256:<hex>` digest and the byte count.
    pub(crate) fn finish(self) -> (W, String, u64) {
        let digest = digest_string(self.hasher.finalize());
        (self.inner, digest, self.written)
    }
}

impl<W: Write> Write for DigestingWriter<W> {
    fn write(&mut self, buffer: &[u8]) -> io::Result<usize> {
        let count = self.inner.write(buffer)?;
        self.hasher.update(&buffer[..count]);
        self.written += count as u64;
        Ok(count)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
