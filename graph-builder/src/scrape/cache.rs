//! What the scraper learned about each image, keyed by manifest digest, so a
//! release is downloaded once in the life of the cache — across restarts too.
//!
//! The cache file is a convenience: if it is missing, unreadable or corrupt,
//! the scraper starts empty (and says so); start-up never fails because of it.
//! Entries keep the raw release-metadata text and are parsed again on load,
//! so the file format does not depend on the document type.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cincinnati_core::metadata_document::ReleaseMetadataDocument;
use serde::{Deserialize, Serialize};

use crate::scraped::DropReason;

/// What an image digest turned out to be. Transient failures are not cached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CachedImage {
    Release {
        document: ReleaseMetadataDocument,
        /// The raw document, kept for the cache file.
        raw: String,
        arch: String,
    },
    /// Not a usable release, for a reason that will not change.
    NotARelease(DropReason),
}

/// Digest → what the image is, and tag → digest.
#[derive(Debug, Default)]
pub struct ScrapeCache {
    pub images: HashMap<String, CachedImage>,
    pub tags: HashMap<String, String>,
}

/// The on-disk form. `format` guards against reading a future layout.
#[derive(Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    repository: String,
    images: HashMap<String, FileEntry>,
    tags: HashMap<String, String>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FileEntry {
    Release { arch: String, metadata: String },
    NoReleaseMetadata,
    InvalidReleaseMetadata(String),
    UnknownArchitecture(String),
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
        if file.format != FORMAT || file.repository != repository {
            let why = format!(
                "{} belongs to another format or repository; starting afresh",
                path.display()
            );
            return (Self::default(), Some(why));
        }
        let images = file
            .images
            .into_iter()
            .filter_map(|(digest, entry)| Some((digest, entry.into_cached()?)))
            .collect();
        (
            Self {
                images,
                tags: file.tags,
            },
            None,
        )
    }

    /// Writes the cache atomically: a crash mid-write leaves the old file.
    pub fn save(&self, path: &Path, repository: &str) -> std::io::Result<()> {
        let file = CacheFile {
            format: FORMAT,
            repository: repository.to_owned(),
            images: self
                .images
                .iter()
                .filter_map(|(digest, image)| Some((digest.clone(), FileEntry::from_cached(image)?)))
                .collect(),
            tags: self.tags.clone(),
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let temporary = temporary_path(path);
        std::fs::write(&temporary, serde_json::to_vec(&file)?)?;
        std::fs::rename(&temporary, path)
    }
}

fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".tmp");
    path.with_file_name(name)
}

impl FileEntry {
    fn from_cached(image: &CachedImage) -> Option<Self> {
        Some(match image {
            CachedImage::Release { raw, arch, .. } => FileEntry::Release {
                arch: arch.clone(),
                metadata: raw.clone(),
            },
            CachedImage::NotARelease(DropReason::NoReleaseMetadata) => FileEntry::NoReleaseMetadata,
            CachedImage::NotARelease(DropReason::InvalidReleaseMetadata(why)) => {
                FileEntry::InvalidReleaseMetadata(why.clone())
            }
            CachedImage::NotARelease(DropReason::UnknownArchitecture(why)) => {
                FileEntry::UnknownArchitecture(why.clone())
            }
            CachedImage::NotARelease(_) => return None,
        })
    }

    /// `None` for an entry that no longer parses: it is simply fetched again.
    fn into_cached(self) -> Option<CachedImage> {
        Some(match self {
            FileEntry::Release { arch, metadata } => CachedImage::Release {
                document: ReleaseMetadataDocument::parse(metadata.as_bytes()).ok()?,
                raw: metadata,
                arch,
            },
            FileEntry::NoReleaseMetadata => CachedImage::NotARelease(DropReason::NoReleaseMetadata),
            FileEntry::InvalidReleaseMetadata(why) => {
                CachedImage::NotARelease(DropReason::InvalidReleaseMetadata(why))
            }
            FileEntry::UnknownArchitecture(why) => {
                CachedImage::NotARelease(DropReason::UnknownArchitecture(why))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"kind":"cincinnati-metadata-v0","version":"4.1.0","previous":["4.0.0"]}"#;

    fn sample() -> ScrapeCache {
        let mut cache = ScrapeCache::default();
        cache.images.insert(
            "sha256:a".into(),
            CachedImage::Release {
                document: ReleaseMetadataDocument::parse(DOC.as_bytes()).unwrap(),
                raw: DOC.into(),
                arch: "amd64".into(),
            },
        );
        cache.images.insert(
            "sha256:b".into(),
            CachedImage::NotARelease(DropReason::NoReleaseMetadata),
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
