//! The four manifest formats operators have: Docker schema 2 images and
//! manifest lists, OCI image manifests and image indexes. Upstream ignores
//! the OCI ones; we read all four.

use std::collections::BTreeMap;

use serde::Deserialize;

pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const DOCKER_MANIFEST_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";

/// What the scraper asks the registry for.
pub const ACCEPTED: [&str; 4] = [DOCKER_MANIFEST, DOCKER_MANIFEST_LIST, OCI_MANIFEST, OCI_INDEX];

/// A parsed manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Manifest {
    Image(ImageManifest),
    List(Vec<ListEntry>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageManifest {
    pub config_digest: String,
    /// Layer digests and media types, bottom-most first (as in the manifest).
    pub layers: Vec<Layer>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub digest: String,
    pub media_type: String,
}

/// One image of a manifest list or index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    pub digest: String,
    pub architecture: Option<String>,
    pub os: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("manifest is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("unsupported manifest media type {0:?}")]
    Unsupported(String),
    #[error("manifest has neither layers nor manifests")]
    Empty,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawManifest {
    #[serde(default)]
    media_type: Option<String>,
    #[serde(default)]
    config: Option<RawDescriptor>,
    #[serde(default)]
    layers: Option<Vec<RawDescriptor>>,
    #[serde(default)]
    manifests: Option<Vec<RawListEntry>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDescriptor {
    digest: String,
    #[serde(default)]
    media_type: String,
}

#[derive(Deserialize)]
struct RawListEntry {
    digest: String,
    #[serde(default)]
    platform: Option<RawPlatform>,
}

#[derive(Deserialize)]
struct RawPlatform {
    #[serde(default)]
    architecture: Option<String>,
    #[serde(default)]
    os: Option<String>,
}

impl Manifest {
    /// Parses a manifest of any supported format. The `mediaType` field is
    /// optional in OCI manifests, so the shape decides when it is absent.
    pub fn parse(json: &[u8]) -> Result<Self, ManifestError> {
        let raw: RawManifest = serde_json::from_slice(json)?;
        if let Some(media_type) = &raw.media_type
            && !ACCEPTED.contains(&media_type.as_str())
        {
            return Err(ManifestError::Unsupported(media_type.clone()));
        }
        if let Some(entries) = raw.manifests {
            return Ok(Manifest::List(
                entries
                    .into_iter()
                    .map(|entry| ListEntry {
                        digest: entry.digest,
                        architecture: entry.platform.as_ref().and_then(|p| p.architecture.clone()),
                        os: entry.platform.and_then(|p| p.os),
                    })
                    .collect(),
            ));
        }
        match (raw.config, raw.layers) {
            (Some(config), Some(layers)) => Ok(Manifest::Image(ImageManifest {
                config_digest: config.digest,
                layers: layers
                    .into_iter()
                    .map(|layer| Layer {
                        digest: layer.digest,
                        media_type: layer.media_type,
                    })
                    .collect(),
            })),
            _ => Err(ManifestError::Empty),
        }
    }
}

/// The part of an image config the scraper reads.
#[derive(Debug, Default, Deserialize)]
pub struct ImageConfig {
    #[serde(default)]
    pub architecture: Option<String>,
    /// When the image was built (RFC 3339), as the builder wrote it.
    #[serde(default)]
    pub created: Option<String>,
    /// What the image runs with; only its labels are read.
    #[serde(default)]
    config: Option<RunConfig>,
}

#[derive(Debug, Default, Deserialize)]
struct RunConfig {
    /// `null` in many configs.
    #[serde(rename = "Labels", default)]
    labels: Option<BTreeMap<String, String>>,
}

impl ImageConfig {
    /// The image's labels (`config.Labels`), none if it has none.
    pub fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.config
            .as_ref()
            .and_then(|config| config.labels.as_ref())
            .filter(|labels| !labels.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_docker_and_oci_images() {
        for media_type in [DOCKER_MANIFEST, OCI_MANIFEST] {
            let json = format!(
                r#"{{"schemaVersion":2,"mediaType":"{media_type}","config":{{"digest":"sha256:c","mediaType":"x"}},
                    "layers":[{{"digest":"sha256:l1","mediaType":"a"}},{{"digest":"sha256:l2","mediaType":"b"}}]}}"#
            );
            let Manifest::Image(image) = Manifest::parse(json.as_bytes()).unwrap() else {
                panic!("{media_type} is an image");
            };
            assert_eq!(image.config_digest, "sha256:c");
            assert_eq!(
                image.layers.iter().map(|l| l.digest.as_str()).collect::<Vec<_>>(),
                ["sha256:l1", "sha256:l2"]
            );
        }
    }

    #[test]
    fn reads_lists_and_indexes_even_without_media_type() {
        let json = r#"{"schemaVersion":2,"manifests":[
            {"digest":"sha256:a","platform":{"architecture":"amd64","os":"linux"}},
            {"digest":"sha256:b","platform":{"architecture":"arm64","os":"linux"}}]}"#;
        let Manifest::List(entries) = Manifest::parse(json.as_bytes()).unwrap() else {
            panic!("an index");
        };
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].architecture.as_deref(), Some("arm64"));
    }

    #[test]
    fn refuses_schema_1_and_garbage() {
        let v1 =
            r#"{"schemaVersion":1,"mediaType":"application/vnd.docker.distribution.manifest.v1+prettyjws"}"#;
        assert!(matches!(
            Manifest::parse(v1.as_bytes()),
            Err(ManifestError::Unsupported(_))
        ));
        assert!(matches!(Manifest::parse(b"{}"), Err(ManifestError::Empty)));
        assert!(matches!(Manifest::parse(b"nope"), Err(ManifestError::Json(_))));
    }

    #[test]
    fn reads_an_image_configs_labels_null_absent_or_given() {
        let labels = |json: &str| {
            serde_json::from_str::<ImageConfig>(json)
                .unwrap()
                .labels()
                .map(|labels| labels.keys().cloned().collect::<Vec<_>>())
        };
        assert_eq!(labels(r#"{"architecture":"amd64"}"#), None);
        assert_eq!(labels(r#"{"config":{"Labels":null}}"#), None);
        assert_eq!(labels(r#"{"config":{"Labels":{}}}"#), None);
        assert_eq!(
            labels(r#"{"config":{"Labels":{"io.openshift.release":"4.18.52","vendor":"x"}}}"#),
            Some(vec!["io.openshift.release".to_owned(), "vendor".to_owned()])
        );
    }
}
