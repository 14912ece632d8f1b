//! What the scraper learned about each image, keyed by manifest digest, so a
//! release is downloaded once in the life of the cache — across restarts too.
//!
//! The cache file is a convenience: if it is missing, unreadable or corrupt,
//! the scraper starts empty (and says so); start-up never fails because of it.
//!
//! Entries keep the release-metadata text, checked once, rather than the
//! parsed document: the text is a third of the size, and documents are only
//! needed, briefly, when the graph is assembled anew.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cincinnati_core::metadata_document::{MetadataDocumentError, ReleaseMetadataDocument};
use serde::{Deserialize, Serialize};

use crate::found::DropReason;

/// What an image digest turned out to be. Transient failures are not cached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CachedImage {
    Release {
        /// A `cincinnati-metadata-v0` document that parsed when it was read.
        metadata: Box<str>,
        arch: String,
        /// When the image was built, as its config says (RFC 3339).
        created: Option<Box<str>>,
    },
    /// Not a usable release, for a reason that will not change.
    NotARelease(DropReason),
}

impl CachedImage {
    /// A release if `metadata` is a valid document, else why it is not one.
    pub fn release(metadata: String, arch: String, created: Option<String>) -> Self {
        match ReleaseMetadataDocument::parse(metadata.as_bytes()) {
            Ok(_) => CachedImage::Release {
                metadata: metadata.into_boxed_str(),
                arch,
                created: created.map(String::into_boxed_str),
            },
            Err(error) => CachedImage::NotARelease(DropReason::InvalidReleaseMetadata(error.to_string())),
        }
    }
}

/// Parses the document of a cached release.
pub fn document(metadata: &str) -> Result<ReleaseMetadataDocument, MetadataDocumentError> {
    ReleaseMetadataDocument::parse(metadata.as_bytes())
}

/// Digest → what the image is, and tag → digest.
#[derive(Debug, Default)]
pub struct ScrapeCache {
    pub images: HashMap<String, Arc<CachedImage>>,
    pub tags: HashMap<String, String>,
}

/// The on-disk form. `format` guards against reading a future layout.
#[derive(Serialize, Deserialize)]
struct CacheFile<'a> {
    format: u32,
    #[serde(borrow)]
    repository: Cow<'a, str>,
    #[serde(borrow)]
    images: HashMap<Cow<'a, str>, FileEntry<'a>>,
    #[serde(borrow)]
    tags: HashMap<Cow<'a, str>, Cow<'a, str>>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FileEntry<'a> {
    Release {
        #[serde(borrow)]
        arch: Cow<'a, str>,
        #[serde(borrow)]
        metadata: Cow<'a, str>,
        /// Absent from files written before creation times were kept: such
        /// releases are published without one until the image is read again.
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        created: Option<Cow<'a, str>>,
    },
    NoReleaseMetadata,
    InvalidReleaseMetadata(#[serde(borrow)] Cow<'a, str>),
    UnknownArchitecture(#[serde(borrow)] Cow<'a, str>),
    ComponentImage,
}

const FORMAT: u32 = 1;

impl ScrapeCache {
    /// Loads the cache kept for `repository` at `path`. Anything wrong with
    /// the file gives an empty cache and the reason, for the log.
    pub fn load(path: &Path, repository: &str) -> (Self, Option<String>) {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return (Self::default(), None),
            Err(error) => {
                return (
                    Self::default(),
                    Some(format!("cannot read {}: {error}", path.display())),
                );
            }
        };
        let file: CacheFile = match serde_json::from_slice(&bytes) {
            Ok(file) => file,
            Err(error) => {
                return (
                    Self::default(),
                    Some(format!("{} is corrupt: {error}", path.display())),
                );
            }
        };
        if file.format != FORMAT || file.repository.as_ref() != repository {
            let why = format!(
                "{} belongs to another format or repository; starting afresh",
                path.display()
            );
            return (Self::default(), Some(why));
        }
        let images = file
            .images
            .into_iter()
            .filter_map(|(digest, entry)| Some((digest.into_owned(), Arc::new(entry.into_cached()?))))
            .collect();
        let tags = file
            .tags
            .into_iter()
            .map(|(tag, digest)| (tag.into_owned(), digest.into_owned()))
            .collect();
        (Self { images, tags }, None)
    }

    /// Writes the cache atomically: a crash mid-write leaves the old file.
    pub fn save(&self, path: &Path, repository: &str) -> std::io::Result<()> {
        let file = CacheFile {
            format: FORMAT,
            repository: Cow::Borrowed(repository),
            images: self
                .images
                .iter()
                .filter_map(|(digest, image)| {
                    Some((Cow::Borrowed(digest.as_str()), FileEntry::from_cached(image)?))
                })
                .collect(),
            tags: self
                .tags
                .iter()
                .map(|(tag, digest)| (Cow::Borrowed(tag.as_str()), Cow::Borrowed(digest.as_str())))
                .collect(),
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let temporary = temporary_path(path);
        let mut out = std::io::BufWriter::new(std::fs::File::create(&temporary)?);
        serde_json::to_writer(&mut out, &file)?;
        out.flush()?;
        drop(out);
        std::fs::rename(&temporary, path)
    }
}

fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".tmp");
    path.with_file_name(name)
}

impl<'a> FileEntry<'a> {
    fn from_cached(image: &'a CachedImage) -> Option<Self> {
        Some(match image {
            CachedImage::Release {
                metadata,
                arch,
                created,
            } => FileEntry::Release {
                arch: Cow::Borrowed(arch),
                metadata: Cow::Borrowed(metadata),
                created: created.as_deref().map(Cow::Borrowed),
            },
            CachedImage::NotARelease(DropReason::NoReleaseMetadata) => FileEntry::NoReleaseMetadata,
            CachedImage::NotARelease(DropReason::InvalidReleaseMetadata(why)) => {
                FileEntry::InvalidReleaseMetadata(Cow::Borrowed(why))
            }
            CachedImage::NotARelease(DropReason::UnknownArchitecture(why)) => {
                FileEntry::UnknownArchitecture(Cow::Borrowed(why))
            }
            CachedImage::NotARelease(DropReason::ComponentImage) => FileEntry::ComponentImage,
            CachedImage::NotARelease(_) => return None,
        })
    }

    /// `None` for an entry that no longer parses, or a release without its
    /// creation time (written before it was kept; deferral rings need it):
    /// it is simply fetched again.
    fn into_cached(self) -> Option<CachedImage> {
        Some(match self {
            FileEntry::Release { created: None, .. } => return None,
            FileEntry::Release {
                arch,
                metadata,
                created,
            } => {
                match CachedImage::release(
                    metadata.into_owned(),
                    arch.into_owned(),
                    created.map(Cow::into_owned),
                ) {
                    release @ CachedImage::Release { .. } => release,
                    CachedImage::NotARelease(_) => return None,
                }
            }
            FileEntry::NoReleaseMetadata => CachedImage::NotARelease(DropReason::NoReleaseMetadata),
            FileEntry::InvalidReleaseMetadata(why) => {
                CachedImage::NotARelease(DropReason::InvalidReleaseMetadata(why.into_owned()))
            }
            FileEntry::UnknownArchitecture(why) => {
                CachedImage::NotARelease(DropReason::UnknownArchitecture(why.into_owned()))
            }
            FileEntry::ComponentImage => CachedImage::NotARelease(DropReason::ComponentImage),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"kind":"cincinnati-metadata-v0","version":"4.1.0","previous":["4.0.0"]}"#;

    fn sample() -> ScrapeCache {
        let mut cache = ScrapeCache::default();
        let release = CachedImage::release(DOC.into(), "amd64".into(), Some("2024-05-01T10:00:00Z".into()));
        assert!(matches!(release, CachedImage::Release { .. }));
        cache.images.insert("sha256:a".into(), Arc::new(release));
        cache.images.insert(
            "sha256:b".into(),
            Arc::new(CachedImage::NotARelease(DropReason::NoReleaseMetadata)),
        );
        cache.images.insert(
            "sha256:c".into(),
            Arc::new(CachedImage::NotARelease(DropReason::ComponentImage)),
        );
        cache.tags.insert("4.1.0-x86_64".into(), "sha256:a".into());
        cache
    }

    #[test]
    fn survives_a_round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache/scrape.json");
        let cache = sample();
        cache.save(&path, "ocp/release").unwrap();
        let (loaded, problem) = ScrapeCache::load(&path, "ocp/release");
        assert_eq!(problem, None);
        assert_eq!(loaded.images, cache.images);
        assert_eq!(loaded.tags, cache.tags);
    }

    #[test]
    fn a_corrupt_or_foreign_file_gives_an_empty_cache_and_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scrape.json");
        std::fs::write(&path, b"{ truncated").unwrap();
        let (loaded, problem) = ScrapeCache::load(&path, "ocp/release");
        assert!(loaded.images.is_empty());
        assert!(problem.unwrap().contains("corrupt"));

        sample().save(&path, "ocp/release").unwrap();
        let (loaded, problem) = ScrapeCache::load(&path, "another/repository");
        assert!(loaded.images.is_empty() && problem.is_some());
    }

    #[test]
    fn a_missing_file_is_a_quiet_empty_cache() {
        let (loaded, problem) = ScrapeCache::load(Path::new("/nonexistent/scrape.json"), "r");
        assert!(loaded.images.is_empty() && problem.is_none());
    }
}
