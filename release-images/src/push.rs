//! Pushing images and lists with oci-client, with bounded concurrency and each
//! blob uploaded at most once per repository.

use futures::{StreamExt, TryStreamExt, stream};
use oci_client::client::{Certificate, CertificateEncoding, ClientConfig};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use registry_client::RegistryAddress;
use tokio_util::io::ReaderStream;

use crate::blob::{Blob, BlobContent};
use crate::error::Error;
use crate::format::ManifestFormat;
use crate::image::{Image, ImageList, Pushable};
use crate::known_blobs::KnownBlobs;
use crate::layer::{BuiltLayer, Layer};
use crate::manifest::{ConfigFacts, Platform, RenderedManifest, image_config, image_manifest, list_manifest};

/// How to reach and authenticate to the registry.
#[derive(Clone, Debug)]
pub struct PushOptions {
    /// A PEM certificate to trust in addition to the system roots (TLS only).
    pub ca_pem: Option<String>,
    /// Username and password for HTTP basic authentication.
    pub basic_auth: Option<(String, String)>,
    /// How many tags `push_all` pushes at once.
    pub concurrency: usize,
}

impl Default for PushOptions {
    fn default() -> Self {
        Self {
            ca_pem: None,
            basic_auth: None,
            concurrency: 16,
        }
    }
}

/// Pushes to one registry. Remembers which blobs each repository already
/// has, so layers and configs shared by many images are uploaded once.
pub struct Pusher {
    client: Client,
    host_port: String,
    auth: Option<RegistryAuth>,
    concurrency: usize,
    known_blobs: KnownBlobs,
}

/// Where an image manifest goes: under a tag, or (inside a list) under its own digest.
#[derive(Clone, Copy)]
enum ManifestTarget<'a> {
    Tag(&'a str),
    OwnDigest,
}

impl Pusher {
    /// `registry_url` is `http://host:port` for plain HTTP, or `https://host:port`
    /// or `host:port` for TLS.
    pub fn new(registry_url: &str, options: PushOptions) -> Result<Self, Error> {
        let address = RegistryAddress::parse(registry_url)?;
        let config = ClientConfig {
            protocol: address.protocol(),
            extra_root_certificates: options
                .ca_pem
                .into_iter()
                .map(|pem| Certificate {
                    encoding: CertificateEncoding::Pem,
                    data: pem.into_bytes(),
                })
                .collect(),
            // POST + PUT per blob instead of POST + PATCH + PUT.
            use_monolithic_push: true,
            ..ClientConfig::default()
        };
        // `Client::new` would fall back to a default configuration on error.
        let client = Client::try_from(config).map_err(Error::Client)?;
        Ok(Self {
            client,
            host_port: address.host,
            auth: options
                .basic_auth
                .map(|(username, password)| RegistryAuth::Basic(username, password)),
            concurrency: options.concurrency.max(1),
            known_blobs: KnownBlobs::default(),
        })
    }

    /// `host:port`, the registry part of a pushed image's pull reference.
    pub fn registry(&self) -> &str {
        &self.host_port
    }

    /// Pushes an image or a list as `repository:tag` and returns its manifest
    /// digest (`sha256:<hex>`).
    pub async fn push(
        &self,
        repository: &str,
        tag: &str,
        item: impl Into<Pushable>,
    ) -> Result<String, Error> {
        self.push_tagged(repository, tag, &item.into()).await
    }

    /// Pushes every `(tag, item)` to `repository`, `concurrency` at a time, and
    /// returns the manifest digests in the same order.
    pub async fn push_all(
        &self,
        repository: &str,
        items: &[(String, Pushable)],
    ) -> Result<Vec<String>, Error> {
        stream::iter(items)
            .map(|(tag, item)| self.push_tagged(repository, tag, item))
            .buffered(self.concurrency)
            .try_collect()
            .await
    }

    async fn push_tagged(&self, repository: &str, tag: &str, item: &Pushable) -> Result<String, Error> {
        if let Some(auth) = &self.auth {
            // oci-client authenticates only registries it holds credentials for;
            // anonymous pushes skip its per-request `/v2/` probe this way.
            self.client.store_auth_if_needed(&self.host_port, auth).await;
        }
        let manifest = match item {
            Pushable::Image(image) => {
                self.push_image(repository, ManifestTarget::Tag(tag), image, image.format)
                    .await?
            }
            Pushable::List(list) => self.push_list(repository, tag, list).await?,
        };
        Ok(manifest.digest)
    }

    async fn push_list(
        &self,
        repository: &str,
        tag: &str,
        list: &ImageList,
    ) -> Result<RenderedManifest, Error> {
        let images = list.images.iter().map(|image| async move {
            let manifest = self
                .push_image(repository, ManifestTarget::OwnDigest, image, list.format)
                .await?;
            Ok::<_, Error>((manifest, platform_of(image)))
        });
        let entries = futures::future::try_join_all(images).await?;
        let manifest = list_manifest(list.format, &entries);
        self.put_manifest(
            &self.reference(repository, ManifestTarget::Tag(tag), &manifest),
            &manifest,
        )
        .await?;
        Ok(manifest)
    }

    async fn push_image(
        &self,
        repository: &str,
        target: ManifestTarget<'_>,
        image: &Image,
        format: ManifestFormat,
    ) -> Result<RenderedManifest, Error> {
        let layers = build_layers(image.layers.clone()).await?;
        let diff_ids: Vec<String> = layers.iter().map(|layer| layer.diff_id.clone()).collect();
        let config = Blob::from_bytes(image_config(
            &ConfigFacts {
                platform: platform_of(image),
                created: image.created.as_deref(),
                labels: &image.labels,
            },
            &diff_ids,
        ));
        let layer_blobs: Vec<&Blob> = layers.iter().map(|layer| &layer.blob).collect();
        let uploads = layer_blobs
            .iter()
            .copied()
            .chain([&config])
            .map(|blob| self.ensure_blob(repository, blob));
        futures::future::try_join_all(uploads).await?;
        let manifest = image_manifest(format, &config, &layer_blobs);
        self.put_manifest(&self.reference(repository, target, &manifest), &manifest)
            .await?;
        Ok(manifest)
    }

    async fn put_manifest(&self, reference: &Reference, manifest: &RenderedManifest) -> Result<(), Error> {
        let content_type = manifest
            .media_type
            .parse()
            .expect("media types are valid header values");
        self.client
            .push_manifest_raw(reference, manifest.bytes.clone(), content_type)
            .await
            .map_err(registry_error("push manifest", reference))?;
        Ok(())
    }

    /// Uploads `blob` unless this pusher already did or the registry has it.
    async fn ensure_blob(&self, repository: &str, blob: &Blob) -> Result<(), Error> {
        self.known_blobs
            .ensure(repository, &blob.digest, || {
                self.upload_if_missing(repository, blob)
            })
            .await
    }

    async fn upload_if_missing(&self, repository: &str, blob: &Blob) -> Result<(), Error> {
        let reference =
            Reference::with_digest(self.host_port.clone(), repository.to_owned(), blob.digest.clone());
        let exists = self
            .client
            .blob_exists(&reference, &blob.digest)
            .await
            .map_err(registry_error("check for blob", &reference))?;
        if exists {
            return Ok(());
        }
        let pushed = match &blob.content {
            BlobContent::Memory(bytes) => {
                self.client
                    .push_blob(&reference, bytes.clone(), &blob.digest)
                    .await
            }
            BlobContent::File(file) => match file.reopen() {
                Ok(file) => {
                    let chunks = ReaderStream::new(tokio::fs::File::from_std(file))
                        .map_err(OciDistributionError::from);
                    self.client
                        .push_blob_stream(&reference, chunks, &blob.digest, Some(blob.size))
                        .await
                }
                Err(error) => Err(error.into()),
            },
        };
        pushed.map_err(registry_error("push blob", &reference))?;
        Ok(())
    }

    fn reference(
        &self,
        repository: &str,
        target: ManifestTarget<'_>,
        manifest: &RenderedManifest,
    ) -> Reference {
        let (registry, repository) = (self.host_port.clone(), repository.to_owned());
        match target {
            ManifestTarget::Tag(tag) => Reference::with_tag(registry, repository, tag.to_owned()),
            ManifestTarget::OwnDigest => {
                Reference::with_digest(registry, repository, manifest.digest.clone())
            }
        }
    }
}

/// Compressing layers is CPU-bound (and large ones write files), so it runs off the async threads.
async fn build_layers(layers: Vec<Layer>) -> Result<Vec<BuiltLayer>, Error> {
    tokio::task::spawn_blocking(move || layers.iter().map(Layer::build).collect())
        .await
        .map_err(Error::BuildInterrupted)?
}

fn platform_of(image: &Image) -> Platform<'_> {
    Platform {
        architecture: &image.architecture,
        os: &image.os,
    }
}

fn registry_error(action: &'static str, reference: &Reference) -> impl FnOnce(OciDistributionError) -> Error {
    let reference = reference.whole();
    move |source| Error::Registry {
        action,
        reference,
        source,
    }
}
