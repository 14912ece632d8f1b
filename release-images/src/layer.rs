//! Gzip-compressed tar layers, built once per [`Layer`] value (clones share the result).

use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore as _, SeedableRng as _};
use registry_client::release_image::RELEASE_METADATA_PATH;
use tempfile::NamedTempFile;

use crate::blob::{Blob, BlobContent, DigestingWriter};
use crate::directory;
use crate::error::Error;
use crate::metadata::ReleaseMetadata;

const MIB: u64 = 1024 * 1024;

/// One layer of an image. Cheap to clone: clones share the built (compressed,
/// digested) layer, so a layer used by thousands of images is built once.
#[derive(Clone)]
pub struct Layer {
    contents: Arc<LayerContents>,
    built: Arc<Mutex<Option<BuiltLayer>>>,
}

enum LayerContents {
    Files(Vec<(String, Vec<u8>)>),
    Random { mebibytes: u64, seed: u64 },
}

/// A layer as pushed: the compressed blob and the digest of the uncompressed
/// tar (the config's `rootfs.diff_ids` entry).
#[derive(Clone, Debug)]
pub(crate) struct BuiltLayer {
    pub(crate) blob: Blob,
    pub(crate) diff_id: String,
}

impl Layer {
    /// Regular files at the given paths (relative, `/`-separated), in this order.
    pub fn files<P: Into<String>, C: Into<Vec<u8>>>(entries: impl IntoIterator<Item = (P, C)>) -> Self {
        let entries = entries
            .into_iter()
            .map(|(path, contents)| (path.into(), contents.into()))
            .collect();
        Self::from_contents(LayerContents::Files(entries))
    }

    /// A layer holding only `release-manifests/release-metadata`.
    pub fn release_metadata(metadata: &ReleaseMetadata) -> Self {
        Self::raw_release_metadata(metadata.to_json())
    }

    /// A layer whose `release-manifests/release-metadata` holds exactly these
    /// bytes, valid JSON or not.
    pub fn raw_release_metadata(contents: impl Into<Vec<u8>>) -> Self {
        Self::files([(RELEASE_METADATA_PATH, contents)])
    }

    /// A layer with one file of `mebibytes` MiB of incompressible pseudo-random
    /// bytes, so the compressed layer is as large as the file. The same seed and
    /// size give the same layer. It is generated streaming into a temporary file.
    pub fn random(mebibytes: u64, seed: u64) -> Self {
        Self::from_contents(LayerContents::Random { mebibytes, seed })
    }

    /// Every regular file below `root`, stored under its path relative to
    /// `root`, in sorted order so the same tree always gives the same digest.
    /// Symbolic links are skipped.
    pub fn directory(root: impl AsRef<Path>) -> Result<Self, Error> {
        Ok(Self::files(directory::read_files(root.as_ref())?))
    }

    fn from_contents(contents: LayerContents) -> Self {
        Self {
            contents: Arc::new(contents),
            built: Arc::default(),
        }
    }

    /// Builds the layer on first use; blocking, CPU-bound work.
    pub(crate) fn build(&self) -> Result<BuiltLayer, Error> {
        // Holding the lock while building makes concurrent users wait for one build.
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(layer) = built.as_ref() {
            return Ok(layer.clone());
        }
        let layer = self.contents.build().map_err(|source| Error::BuildLayer {
            layer: format!("{self:?}"),
            source,
        })?;
        *built = Some(layer.clone());
        Ok(layer)
    }
}

impl fmt::Debug for Layer {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.contents.as_ref() {
            LayerContents::Files(entries) => formatter
                .debug_list()
                .entries(entries.iter().map(|(path, _)| path))
                .finish(),
            LayerContents::Random { mebibytes, seed } => {
                write!(formatter, "random {mebibytes} MiB (seed {seed})")
            }
        }
    }
}

impl LayerContents {
    fn build(&self) -> io::Result<BuiltLayer> {
        match self {
            Self::Files(entries) => {
                let written = write_layer(Vec::new(), Compression::default(), |tar| {
                    for (path, contents) in entries {
                        let mut header = file_header(contents.len() as u64);
                        tar.append_data(&mut header, path, contents.as_slice())?;
                    }
                    Ok(())
                })?;
                Ok(written.into_built(|bytes| BlobContent::Memory(Bytes::from(bytes))))
            }
            Self::Random { mebibytes, seed } => {
                let file_size = mebibytes * MIB;
                let path = format!("random/{seed}-{mebibytes}MiB.bin");
                let random = RandomBytes::new(*seed).take(file_size);
                // Random data does not compress: store it in gzip framing only.
                let written = write_layer(NamedTempFile::new()?, Compression::none(), |tar| {
                    tar.append_data(&mut file_header(file_size), path, random)
                })?;
                Ok(written.into_built(|file| BlobContent::File(Arc::new(file))))
            }
        }
    }
}

type LayerWriter<W> = tar::Builder<DigestingWriter<GzEncoder<DigestingWriter<W>>>>;

/// A layer written to a sink, with its compressed digest and size and its diff_id.
struct WrittenLayer<W> {
    sink: W,
    digest: String,
    size: u64,
    diff_id: String,
}

impl<W> WrittenLayer<W> {
    fn into_built(self, content: impl FnOnce(W) -> BlobContent) -> BuiltLayer {
        BuiltLayer {
            blob: Blob {
                digest: self.digest,
                size: self.size,
                content: content(self.sink),
            },
            diff_id: self.diff_id,
        }
    }
}

/// Streams tar → (diff_id hash) → gzip → (digest hash) → `sink` in one pass.
fn write_layer<W: Write>(
    sink: W,
    compression: Compression,
    append_entries: impl FnOnce(&mut LayerWriter<W>) -> io::Result<()>,
) -> io::Result<WrittenLayer<W>> {
    let compressed = DigestingWriter::new(sink);
    let uncompressed = DigestingWriter::new(GzEncoder::new(compressed, compression));
    let mut tar = tar::Builder::new(uncompressed);
    append_entries(&mut tar)?;
    let (gzip, diff_id, _) = tar.into_inner()?.finish();
    let (mut sink, digest, size) = gzip.finish()?.finish();
    sink.flush()?;
    Ok(WrittenLayer {
        sink,
        digest,
        size,
        diff_id,
    })
}

/// A header with fixed mode, owner and time, so equal contents give equal digests.
fn file_header(size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(size);
    header.set_mode(0o644);
    header.set_mtime(0);
    header.set_uid(0);
    header.set_gid(0);
    header
}

struct RandomBytes(ChaCha8Rng);

impl RandomBytes {
    fn new(seed: u64) -> Self {
        Self(ChaCha8Rng::seed_from_u64(seed))
    }
}

impl Read for RandomBytes {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        self.0.fill_bytes(buffer);
        Ok(buffer.len())
    }
}
