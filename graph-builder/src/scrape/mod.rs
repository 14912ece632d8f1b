//! Discovers every release in a registry repository.
//!
//! A scrape lists the tags, learns each tag's manifest digest, and reads the
//! release metadata of each digest it has never seen. What it learns is cached
//! by digest, so a refresh where one tag was added costs the tag listing plus
//! that one release's downloads. Known tags are trusted to keep their digest
//! between re-checks (one HEAD per tag every `digest_recheck_interval`):
//! retagging a release is rare but real, and this bounds how long a retag goes
//! unseen without paying thousands of requests every refresh.

pub mod cache;
pub mod release_metadata;

use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash as _, Hasher as _};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cincinnati_core::release::keys;
use futures::{StreamExt, stream};
use registry_client::manifest::{ImageConfig, ImageManifest, ListEntry, Manifest};
use registry_client::release_image::is_component_image;
use registry_client::{RegistryClient, RegistryError};
use tokio_util::io::{StreamReader, SyncIoBridge};

use self::cache::{CachedImage, ScrapeCache};
use self::release_metadata::find_release_metadata;
use crate::found::{Arch, DropReason, Dropped, FoundRelease, Payload};

/// An image config is a few KiB; anything near this is not one.
const CONFIG_SIZE_LIMIT: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct ScrapeSettings {
    /// Images read at the same time.
    pub fetch_concurrency: usize,
    /// How often known tags are re-checked for a new digest.
    pub digest_recheck_interval: Duration,
    /// The largest release-metadata file accepted.
    pub metadata_size_limit: u64,
    /// Where the cache is kept across restarts; `None` keeps it in memory.
    pub cache_path: Option<PathBuf>,
}

impl Default for ScrapeSettings {
    fn default() -> Self {
        Self {
            fetch_concurrency: 16,
            digest_recheck_interval: Duration::from_secs(3600),
            metadata_size_limit: release_metadata::DEFAULT_SIZE_LIMIT,
            cache_path: None,
        }
    }
}

/// What one scrape found: nothing new, or every release.
#[derive(Debug)]
pub enum Scrape {
    /// Every tag resolved to the digest the previous scrape found, none failed.
    Unchanged {
        tags: usize,
    },
    Changed(ScrapeReport),
}

/// Every release a scrape found, and what it left out.
#[derive(Debug, Default)]
pub struct ScrapeReport {
    pub releases: Vec<FoundRelease>,
    pub dropped: Vec<Dropped>,
    pub tags: usize,
    /// Digests whose content had to be downloaded this time.
    pub downloaded: usize,
}

/// Scrapes one repository, remembering what it learned.
pub struct Scraper {
    client: Arc<RegistryClient>,
    settings: ScrapeSettings,
    cache: ScrapeCache,
    last_digest_check: Option<Instant>,
    /// What the previous scrape resolved (see [`fingerprint`]).
    last_fingerprint: Option<u64>,
    /// The tags the previous scrape listed, sorted: what a check compares.
    last_tags: Option<Vec<String>>,
}

/// How one tag was resolved.
struct TagOutcome {
    tag: String,
    digest: Option<String>,
    image: Result<Arc<CachedImage>, DropReason>,
    downloaded: bool,
}

impl Scraper {
    /// A scraper with the cache from `settings.cache_path`, if any; a bad
    /// cache file is logged and ignored.
    pub fn new(client: Arc<RegistryClient>, settings: ScrapeSettings) -> Self {
        let cache = match &settings.cache_path {
            Some(path) => {
                let (cache, problem) = ScrapeCache::load(path, client.repository());
                if let Some(problem) = problem {
                    tracing::warn!(%problem, "ignoring the scrape cache");
                }
                cache
            }
            None => ScrapeCache::default(),
        };
        Self {
            client,
            settings,
            cache,
            last_digest_check: None,
            last_fingerprint: None,
            last_tags: None,
        }
    }

    pub fn client(&self) -> &Arc<RegistryClient> {
        &self.client
    }

    /// Makes the next scrape report every release, even if nothing changed:
    /// for when the last report was lost (its fetch failed or timed out
    /// before the releases were published).
    pub fn forget_previous(&mut self) {
        self.last_fingerprint = None;
        self.last_tags = None;
    }

    /// Whether the tag list differs from the one the last scrape listed
    /// (true before any scrape): the cheap check between scrapes, one tag
    /// listing. A tag moved to another image is not seen here, but by the
    /// scrapes' digest re-checks.
    pub async fn tags_changed(&self) -> Result<bool, RegistryError> {
        let tags = self.list_release_tags().await?;
        Ok(self.last_tags.as_ref() != Some(&tags))
    }

    /// The repository's tags but signatures', sorted.
    async fn list_release_tags(&self) -> Result<Vec<String>, RegistryError> {
        let mut tags: Vec<String> = self
            .client
            .list_tags()
            .await?
            .into_iter()
            .filter(|tag| !is_signature_tag(tag))
            .collect();
        tags.sort_unstable();
        Ok(tags)
    }

    /// Scrapes the repository. Only a failed tag listing fails the scrape;
    /// every other problem leaves one image out and is reported.
    pub async fn scrape(&mut self) -> Result<Scrape, RegistryError> {
        let tags = self.list_release_tags().await?;
        self.last_tags = Some(tags.clone());
        let present: HashSet<&str> = tags.iter().map(String::as_str).collect();
        self.cache.tags.retain(|tag, _| present.contains(tag.as_str()));

        if self
            .last_digest_check
            .is_none_or(|at| at.elapsed() >= self.settings.digest_recheck_interval)
        {
            self.recheck_digests().await;
            self.last_digest_check = Some(Instant::now());
        }

        let client = &self.client;
        let cache = &self.cache;
        let limit = self.settings.metadata_size_limit;
        let mut outcomes = stream::iter(tags.iter().cloned())
            .map(|tag| resolve_tag(client, cache, tag, limit))
            .buffer_unordered(self.settings.fetch_concurrency.max(1));

        let mut resolved = Vec::with_capacity(tags.len());
        while let Some(outcome) = outcomes.next().await {
            resolved.push(outcome);
        }
        drop(outcomes);

        Ok(self.record(tags.len(), resolved))
    }

    /// Re-reads the digest of every known tag, forgetting tags that moved.
    async fn recheck_digests(&mut self) {
        let client = &self.client;
        let known: Vec<(String, String)> = self
            .cache
            .tags
            .iter()
            .map(|(t, d)| (t.clone(), d.clone()))
            .collect();
        let checks: Vec<(String, String, Result<String, RegistryError>)> = stream::iter(known)
            .map(|(tag, digest)| async move {
                let current = client.manifest_digest(&tag).await;
                (tag, digest, current)
            })
            .buffer_unordered(self.settings.fetch_concurrency.max(1))
            .collect()
            .await;
        for (tag, digest, current) in checks {
            match current {
                Ok(current) if current != digest => {
                    tracing::info!(%tag, old = %digest, new = %current, "tag was moved to another image");
                    self.cache.tags.remove(&tag);
                }
                Ok(_) => {}
                // Keep the known digest: a stale answer beats a missing release.
                Err(error) => tracing::warn!(%tag, %error, "could not re-check the tag's digest"),
            }
        }
    }

    /// Folds outcomes into the cache; reports every release unless nothing
    /// changed since the previous scrape.
    fn record(&mut self, tag_count: usize, outcomes: Vec<TagOutcome>) -> Scrape {
        let fingerprint = fingerprint(&outcomes);
        // A failed image is retried, and reported, by every scrape.
        let complete = outcomes.iter().all(|outcome| outcome.image.is_ok());
        let unchanged = complete && self.last_fingerprint == Some(fingerprint);
        self.last_fingerprint = Some(fingerprint);
        let mut downloaded = 0;
        for outcome in &outcomes {
            downloaded += usize::from(outcome.downloaded);
            if let Some(digest) = &outcome.digest {
                // Most tags are where they were: no copies for those.
                if self.cache.tags.get(&outcome.tag) != Some(digest) {
                    self.cache.tags.insert(outcome.tag.clone(), digest.clone());
                }
                if let (true, Ok(image)) = (outcome.downloaded, &outcome.image) {
                    self.cache.images.insert(digest.clone(), Arc::clone(image));
                }
            }
        }
        if unchanged {
            return Scrape::Unchanged { tags: tag_count };
        }
        // Images no tag points at any more (deleted tags, moved ones) go.
        let current: HashSet<&String> = self.cache.tags.values().collect();
        self.cache.images.retain(|digest, _| current.contains(digest));
        self.save_cache();
        let mut report = self.report(outcomes);
        report.tags = tag_count;
        report.downloaded = downloaded;
        Scrape::Changed(report)
    }

    /// The releases and the problems of a scrape, one release per digest,
    /// whichever tags point at it.
    fn report(&self, outcomes: Vec<TagOutcome>) -> ScrapeReport {
        let mut report = ScrapeReport::default();
        let mut by_digest: BTreeMap<String, FoundRelease> = BTreeMap::new();
        for outcome in outcomes {
            let subject = || format!("{}:{}", self.client.repository(), outcome.tag);
            let image = match &outcome.image {
                Ok(image) => image,
                Err(reason) => {
                    report.dropped.push(Dropped {
                        subject: subject(),
                        reason: reason.clone(),
                    });
                    continue;
                }
            };
            let Some(digest) = &outcome.digest else { continue };
            let reason = match &**image {
                CachedImage::Release { .. } if by_digest.contains_key(digest) => continue,
                CachedImage::Release {
                    metadata,
                    arch,
                    created,
                } => match cache::document(metadata) {
                    Ok(mut document) => {
                        if let Some(created) = created {
                            document.metadata.insert(keys::CREATED, created.clone());
                        }
                        let pull_spec = self.client.address().payload(self.client.repository(), digest);
                        match Payload::parse(pull_spec) {
                            Ok(payload) => {
                                let arch = Arch::new(arch.as_str());
                                let release = FoundRelease {
                                    document,
                                    arch,
                                    payload,
                                };
                                by_digest.insert(digest.clone(), release);
                                continue;
                            }
                            Err(reason) => reason,
                        }
                    }
                    Err(error) => DropReason::InvalidReleaseMetadata(error.to_string()),
                },
                CachedImage::NotARelease(reason) => reason.clone(),
            };
            report.dropped.push(Dropped {
                subject: subject(),
                reason,
            });
        }
        report.releases = by_digest.into_values().collect();
        report.dropped.sort();
        report
    }

    fn save_cache(&self) {
        if let Some(path) = &self.settings.cache_path
            && let Err(error) = self.cache.save(path, self.client.repository())
        {
            tracing::warn!(path = %path.display(), %error, "could not save the scrape cache");
        }
    }
}

/// A digest of how each tag resolved: the same fingerprint twice means the
/// same releases and the same problems.
fn fingerprint(outcomes: &[TagOutcome]) -> u64 {
    let mut resolved: Vec<(&str, Option<&str>, Option<&DropReason>)> = outcomes
        .iter()
        .map(|outcome| {
            (
                outcome.tag.as_str(),
                outcome.digest.as_deref(),
                outcome.image.as_ref().err(),
            )
        })
        .collect();
    resolved.sort_unstable();
    let mut hasher = std::hash::DefaultHasher::new();
    resolved.hash(&mut hasher);
    hasher.finish()
}

/// Cosign signatures, attestations and SBOMs share release repositories.
fn is_signature_tag(tag: &str) -> bool {
    [".sig", ".att", ".sbom"]
        .iter()
        .any(|suffix| tag.ends_with(suffix))
}

async fn resolve_tag(client: &RegistryClient, cache: &ScrapeCache, tag: String, limit: u64) -> TagOutcome {
    if let Some(digest) = cache.tags.get(&tag)
        && let Some(image) = cache.images.get(digest)
    {
        return TagOutcome {
            digest: Some(digest.clone()),
            image: Ok(Arc::clone(image)),
            tag,
            downloaded: false,
        };
    }
    let (manifest, digest) = match client.manifest(&tag).await {
        Ok(found) => found,
        Err(error) => {
            return TagOutcome {
                tag,
                digest: None,
                image: Err(DropReason::Unavailable(error.to_string())),
                downloaded: false,
            };
        }
    };
    if let Some(image) = cache.images.get(&digest) {
        return TagOutcome {
            tag,
            image: Ok(Arc::clone(image)),
            digest: Some(digest),
            downloaded: false,
        };
    }
    let image = read_image(client, manifest, limit).await.map(Arc::new);
    TagOutcome {
        tag,
        digest: Some(digest),
        image,
        downloaded: true,
    }
}

/// Works out an image's architecture and creation time and reads its
/// release metadata. `Err` is a transient failure (not cached);
/// `Ok(NotARelease)` is final.
async fn read_image(
    client: &RegistryClient,
    manifest: Manifest,
    limit: u64,
) -> Result<CachedImage, DropReason> {
    let (arch, image, config) = match manifest {
        Manifest::Image(image) => {
            let config = read_config(client, &image).await?;
            match config.architecture.clone() {
                Some(arch) => (arch, image, config),
                None => return Ok(unknown_arch("the image config names no architecture")),
            }
        }
        Manifest::List(entries) => {
            let Some((arch, entry)) = list_architecture(&entries) else {
                return Ok(unknown_arch("a manifest list without usable entries"));
            };
            let unavailable = |error: RegistryError| DropReason::Unavailable(error.to_string());
            match client.manifest(&entry.digest).await.map_err(unavailable)? {
                (Manifest::Image(image), _) => {
                    let config = read_config(client, &image).await?;
                    (arch, image, config)
                }
                (Manifest::List(_), _) => return Ok(unknown_arch("a manifest list inside a manifest list")),
            }
        }
    };
    // Component images mirrored into the releases' repository are told
    // apart by their config, never by reading their layers: reading every
    // layer of tens of thousands of them is how upstream runs out of
    // memory.
    if config.labels().is_some_and(is_component_image) {
        return Ok(CachedImage::NotARelease(DropReason::ComponentImage));
    }
    match find_in_layers(client, &image, limit).await? {
        None => Ok(CachedImage::NotARelease(DropReason::NoReleaseMetadata)),
        Some(raw) => Ok(parse_release(raw, arch, config.created)),
    }
}

/// The image's config; one that is not JSON reads as naming nothing.
async fn read_config(client: &RegistryClient, image: &ImageManifest) -> Result<ImageConfig, DropReason> {
    let config = client
        .small_blob(&image.config_digest, CONFIG_SIZE_LIMIT)
        .await
        .map_err(|error| DropReason::Unavailable(error.to_string()))?;
    Ok(serde_json::from_slice(&config).unwrap_or_default())
}

fn unknown_arch(why: &str) -> CachedImage {
    CachedImage::NotARelease(DropReason::UnknownArchitecture(why.to_owned()))
}

/// A list with several images is a `multi` release, read through one of its
/// images; a list with one image is that image's architecture.
fn list_architecture(entries: &[ListEntry]) -> Option<(String, &ListEntry)> {
    match entries {
        [] => None,
        [only] => Some((only.architecture.clone()?, only)),
        several => {
            let preferred = several
                .iter()
                .find(|entry| entry.architecture.as_deref() == Some("amd64"))
                .unwrap_or(&several[0]);
            Some(("multi".to_owned(), preferred))
        }
    }
}

fn parse_release(raw: Vec<u8>, arch: String, created: Option<String>) -> CachedImage {
    match String::from_utf8(raw) {
        Ok(metadata) => CachedImage::release(metadata, arch, created),
        Err(_) => CachedImage::NotARelease(DropReason::InvalidReleaseMetadata("not UTF-8".to_owned())),
    }
}

/// Searches the layers, top-most first, stopping at the first hit.
async fn find_in_layers(
    client: &RegistryClient,
    image: &ImageManifest,
    limit: u64,
) -> Result<Option<Vec<u8>>, DropReason> {
    for layer in image.layers.iter().rev() {
        let blob = client
            .blob_stream(&layer.digest)
            .await
            .map_err(|error| DropReason::Unavailable(error.to_string()))?;
        let reader = SyncIoBridge::new(StreamReader::new(blob.stream));
        let search = tokio::task::spawn_blocking(move || find_release_metadata(reader, limit));
        match search.await.expect("the layer search does not panic") {
            Ok(Some(found)) => return Ok(Some(found)),
            Ok(None) => {}
            Err(release_metadata::LayerError::TooLarge(limit)) => {
                return Err(DropReason::InvalidReleaseMetadata(format!(
                    "larger than {limit} bytes"
                )));
            }
            Err(error) => {
                return Err(DropReason::Unavailable(format!(
                    "layer {}: {error}",
                    layer.digest
                )));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_client::{RegistryAddress, RegistrySettings};

    /// A scraper whose registry is never contacted: `record` is pure.
    fn scraper() -> Scraper {
        let client = RegistryClient::new(RegistrySettings {
            address: RegistryAddress::parse("http://127.0.0.1:1").unwrap(),
            repository: "ocp/release".to_owned(),
            credentials: None,
            roots: Default::default(),
            retry: Default::default(),
            user_agent: crate::USER_AGENT,
        })
        .unwrap();
        Scraper::new(Arc::new(client), ScrapeSettings::default())
    }

    fn resolved(tag: &str, digest: &str, version: &str) -> TagOutcome {
        let metadata = format!(r#"{{"kind":"cincinnati-metadata-v0","version":"{version}"}}"#);
        TagOutcome {
            tag: tag.to_owned(),
            digest: Some(digest.to_owned()),
            image: Ok(Arc::new(CachedImage::release(metadata, "amd64".to_owned(), None))),
            downloaded: false,
        }
    }

    fn unavailable(tag: &str) -> TagOutcome {
        TagOutcome {
            tag: tag.to_owned(),
            digest: None,
            image: Err(DropReason::Unavailable("connection reset".to_owned())),
            downloaded: false,
        }
    }

    fn is_unchanged(scrape: &Scrape) -> bool {
        matches!(scrape, Scrape::Unchanged { .. })
    }

    #[test]
    fn a_scrape_is_unchanged_only_when_every_tag_resolved_well_and_as_before() {
        let mut scraper = scraper();
        let first = scraper.record(
            2,
            vec![
                resolved("a", "sha256:1", "4.1.0"),
                resolved("b", "sha256:2", "4.1.1"),
            ],
        );
        let Scrape::Changed(report) = first else {
            panic!("a first scrape reports its releases");
        };
        assert_eq!(report.releases.len(), 2);
        // In another order: the same resolution.
        let again = scraper.record(
            2,
            vec![
                resolved("b", "sha256:2", "4.1.1"),
                resolved("a", "sha256:1", "4.1.0"),
            ],
        );
        assert!(is_unchanged(&again));

        let moved = scraper.record(
            2,
            vec![
                resolved("a", "sha256:1", "4.1.0"),
                resolved("b", "sha256:3", "4.1.2"),
            ],
        );
        assert!(!is_unchanged(&moved), "a retag is a change");
        assert_eq!(scraper.cache.tags["b"], "sha256:3");

        // A report that never reached the graph is not taken as delivered.
        let same = || {
            vec![
                resolved("a", "sha256:1", "4.1.0"),
                resolved("b", "sha256:3", "4.1.2"),
            ]
        };
        assert!(is_unchanged(&scraper.record(2, same())));
        scraper.forget_previous();
        assert!(!is_unchanged(&scraper.record(2, same())));

        // A failing image is retried and reported by every scrape, never
        // hidden behind "unchanged".
        for _ in 0..2 {
            let failing = scraper.record(2, vec![resolved("a", "sha256:1", "4.1.0"), unavailable("b")]);
            let Scrape::Changed(report) = failing else {
                panic!("a scrape with a failed image reports it");
            };
            assert_eq!(report.dropped.len(), 1);
        }
    }
}
