/// Which family of media types an image or a list is pushed with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ManifestFormat {
    /// Docker image manifest v2 schema 2 and Docker manifest list: what the
    /// upstream graph-builder understands.
    #[default]
    Docker,
    /// OCI image manifest and OCI image index: ignored by the upstream graph-builder.
    Oci,
}

impl ManifestFormat {
    pub fn image_manifest_media_type(self) -> &'static str {
        match self {
            Self::Docker => "application/vnd.docker.distribution.manifest.v2+json",
            Self::Oci => "application/vnd.oci.image.manifest.v1+json",
        }
    }

    pub fn list_media_type(self) -> &'static str {
        match self {
            Self::Docker => "application/vnd.docker.distribution.manifest.list.v2+json",
            Self::Oci => "application/vnd.oci.image.index.v1+json",
        }
    }

    pub fn config_media_type(self) -> &'static str {
        match self {
            Self::Docker => "application/vnd.docker.container.image.v1+json",
            Self::Oci => "application/vnd.oci.image.config.v1+json",
        }
    }

    pub fn layer_media_type(self) -> &'static str {
        match self {
            Self::Docker => "application/vnd.docker.image.rootfs.diff.tar.gzip",
            Self::Oci => "application/vnd.oci.image.layer.v1.tar+gzip",
        }
    }
}
