//! Release images as a test describes them, and pushing them with the
//! workspace's own image tool (`release-images`).

use release_images::{Image, ImageList, Layer, ManifestFormat, Pushable, Pusher, ReleaseMetadata};

/// The repository releases are pushed to.
pub const RELEASE_REPOSITORY: &str = "ocp/release";

/// Architectures with single-architecture release images.
pub const SINGLE_ARCHITECTURES: [&str; 4] = ["amd64", "arm64", "s390x", "ppc64le"];

/// A multi-architecture release: a manifest list (or OCI index) of one image
/// per single architecture.
pub const MULTI: &str = "multi";

/// One release image to push.
#[derive(Debug, Clone)]
pub struct Release {
    pub version: String,
    /// One of [`SINGLE_ARCHITECTURES`] or [`MULTI`].
    pub arch: &'static str,
    /// Versions this release updates from.
    pub previous: Vec<String>,
    /// Versions this release updates to.
    pub next: Vec<String>,
    pub format: ManifestFormat,
    /// An extra layer on top of the release-metadata layer (a scraper reads
    /// layers top-most first, so it must read this one before finding the
    /// metadata): makes each image slower to scrape.
    pub bulk: Option<Layer>,
    /// The image config's `created` (RFC 3339), which the graph-builder
    /// publishes as the release's creation time.
    pub created: Option<String>,
}

impl Release {
    pub fn new(version: &str, arch: &'static str, format: ManifestFormat) -> Self {
        Self {
            version: version.to_owned(),
            arch,
            previous: Vec::new(),
            next: Vec::new(),
            format,
            bulk: None,
            created: None,
        }
    }

    /// `4.16.1-multi`, as OpenShift tags its release images.
    pub fn tag(&self) -> String {
        format!("{}-{}", self.version, self.arch)
    }

    /// The `url` metadata every release carries (an errata page).
    pub fn errata_url(&self) -> String {
        format!("https://errata.example.com/{}", self.version)
    }

    fn metadata(&self) -> ReleaseMetadata {
        ReleaseMetadata::new(&self.version)
            .previous(&self.previous)
            .next(&self.next)
            .metadata("url", self.errata_url())
    }

    fn image(&self, architecture: &str, metadata: &ReleaseMetadata) -> Image {
        let mut image = Image::release(metadata, architecture).format(self.format);
        if let Some(created) = &self.created {
            image = image.created(created);
        }
        match &self.bulk {
            Some(layer) => image.layer(layer.clone()),
            None => image,
        }
    }

    fn pushable(&self) -> Pushable {
        if self.arch != MULTI {
            return self.image(self.arch, &self.metadata()).into();
        }
        let shard_metadata = self.metadata().multi_arch();
        SINGLE_ARCHITECTURES
            .iter()
            .fold(ImageList::new(self.format), |list, architecture| {
                list.image(self.image(architecture, &shard_metadata))
            })
            .into()
    }
}

/// A release as the registry holds it.
#[derive(Debug, Clone)]
pub struct PushedRelease {
    pub release: Release,
    /// The manifest (or manifest list) digest, `sha256:...`.
    pub digest: String,
    /// `<registry>/<repository>@<digest>`, where clusters pull it from.
    pub payload: String,
}

/// Pushes `releases`, each under its tag, and returns them with their digests.
pub async fn push(pusher: &Pusher, releases: &[Release]) -> anyhow::Result<Vec<PushedRelease>> {
    let items: Vec<(String, Pushable)> = releases
        .iter()
        .map(|release| (release.tag(), release.pushable()))
        .collect();
    let digests = pusher.push_all(RELEASE_REPOSITORY, &items).await?;
    Ok(releases
        .iter()
        .zip(digests)
        .map(|(release, digest)| PushedRelease {
            payload: format!("{}/{RELEASE_REPOSITORY}@{digest}", pusher.registry()),
            release: release.clone(),
            digest,
        })
        .collect())
}
