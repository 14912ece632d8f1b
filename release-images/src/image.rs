//! What to push: single images and manifest lists (image indexes).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Error;
use crate::format::ManifestFormat;
use crate::layer::Layer;
use crate::metadata::ReleaseMetadata;
use registry_client::release_image::RELEASE_LABEL;

/// One image: a config (`architecture`, `os`) and layers, bottom-most first
/// (the last layer is the top-most, as in the manifest).
#[derive(Clone, Debug)]
pub struct Image {
    pub(crate) architecture: String,
    pub(crate) os: String,
    /// The config's `created` (RFC 3339), if any.
    pub(crate) created: Option<String>,
    /// The config's `config.Labels`.
    pub(crate) labels: BTreeMap<String, String>,
    pub(crate) format: ManifestFormat,
    pub(crate) layers: Vec<Layer>,
}

impl Image {
    /// An image without layers, for `linux`, in Docker format.
    pub fn new(architecture: impl Into<String>) -> Self {
        Self {
            architecture: architecture.into(),
            os: "linux".to_owned(),
            created: None,
            labels: BTreeMap::new(),
            format: ManifestFormat::default(),
            layers: Vec::new(),
        }
    }

    /// A release image: one layer carrying `metadata`, labelled with its
    /// version as `oc adm release new` labels one.
    pub fn release(metadata: &ReleaseMetadata, architecture: impl Into<String>) -> Self {
        Self::new(architecture)
            .label(RELEASE_LABEL, metadata.version())
            .layer(Layer::release_metadata(metadata))
    }

    /// A graph-data image: one layer with every file below `directory`
    /// (`version`, `channels/*.yaml`, `blocked-edges/*.yaml`, `raw/metadata.json`, ...).
    pub fn graph_data(directory: impl AsRef<Path>) -> Result<Self, Error> {
        Ok(Self::new("amd64").layer(Layer::directory(directory)?))
    }

    pub fn os(mut self, os: impl Into<String>) -> Self {
        self.os = os.into();
        self
    }

    /// Adds a label to its config (`config.Labels`).
    pub fn label(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(name.into(), value.into());
        self
    }

    /// When the image says it was built (`created` in its config, RFC 3339).
    pub fn created(mut self, created: impl Into<String>) -> Self {
        self.created = Some(created.into());
        self
    }

    /// The manifest format when pushed on its own; inside an [`ImageList`] the
    /// list's format applies.
    pub fn format(mut self, format: ManifestFormat) -> Self {
        self.format = format;
        self
    }

    /// Adds `layer` on top of the existing layers.
    pub fn layer(mut self, layer: Layer) -> Self {
        self.layers.push(layer);
        self
    }
}

/// A Docker manifest list or OCI image index of images, each with its platform.
#[derive(Clone, Debug)]
pub struct ImageList {
    pub(crate) format: ManifestFormat,
    pub(crate) images: Vec<Image>,
}

impl ImageList {
    pub fn new(format: ManifestFormat) -> Self {
        Self {
            format,
            images: Vec::new(),
        }
    }

    /// A multi-architecture release: one image per architecture, each carrying
    /// `metadata` marked with `release.openshift.io/architecture: multi`.
    pub fn multi_release<A: Into<String>>(
        metadata: &ReleaseMetadata,
        architectures: impl IntoIterator<Item = A>,
        format: ManifestFormat,
    ) -> Self {
        let shard_layer = Layer::release_metadata(&metadata.clone().multi_arch());
        architectures
            .into_iter()
            .fold(Self::new(format), |list, architecture| {
                list.image(
                    Image::new(architecture)
                        .label(RELEASE_LABEL, metadata.version())
                        .layer(shard_layer.clone()),
                )
            })
    }

    pub fn image(mut self, image: Image) -> Self {
        self.images.push(image);
        self
    }
}

/// Anything that can be pushed under a tag.
#[derive(Clone, Debug)]
pub enum Pushable {
    Image(Image),
    List(ImageList),
}

impl From<Image> for Pushable {
    fn from(image: Image) -> Self {
        Self::Image(image)
    }
}

impl From<ImageList> for Pushable {
    fn from(list: ImageList) -> Self {
        Self::List(list)
    }
}
