//! The signed content: an "atomic container signature" JSON document
//! (containers/image's format, which the CVO reads).

use serde::{Deserialize, Serialize};

/// The `critical.type` of every release signature.
pub const ATOMIC_CONTAINER_SIGNATURE: &str = "atomic container signature";

/// ```json
/// {"critical": {"type": "atomic container signature",
///               "image": {"docker-manifest-digest": "sha256:…"},
///               "identity": {"docker-reference": "quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64"}},
///  "optional": {"creator": "…", "timestamp": 1735689600}}
/// ```
///
/// Read as the CVO reads it: an unknown key anywhere refuses the document,
/// a missing one reads as empty (and then fails the check that needs it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    #[serde(default)]
    pub critical: Critical,
    #[serde(default)]
    pub optional: Optional,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Critical {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub image: ImageClaim,
    #[serde(default)]
    pub identity: Identity,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageClaim {
    #[serde(rename = "docker-manifest-digest", default)]
    pub docker_manifest_digest: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    #[serde(rename = "docker-reference", default)]
    pub docker_reference: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Optional {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creator: Option<String>,
    /// Seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
}

impl Document {
    /// A signature document for the image `digest` published as `reference`.
    pub fn new(reference: &str, digest: &str) -> Self {
        Self {
            critical: Critical {
                kind: ATOMIC_CONTAINER_SIGNATURE.to_owned(),
                image: ImageClaim {
                    docker_manifest_digest: digest.to_owned(),
                },
                identity: Identity {
                    docker_reference: reference.to_owned(),
                },
            },
            optional: Optional::default(),
        }
    }

    pub fn with_creator(mut self, creator: &str) -> Self {
        self.optional.creator = Some(creator.to_owned());
        self
    }

    pub fn parse(content: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(content)
    }

    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a document of strings and numbers serialises")
    }

    pub fn manifest_digest(&self) -> &str {
        &self.critical.image.docker_manifest_digest
    }

    pub fn docker_reference(&self) -> &str {
        &self.critical.identity.docker_reference
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_reads_back_as_written() {
        let document = Document::new("quay.io/a/b:1", "sha256:00").with_creator("test");
        let json = String::from_utf8(document.to_json()).unwrap();
        assert_eq!(
            json,
            r#"{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"sha256:00"},"identity":{"docker-reference":"quay.io/a/b:1"}},"optional":{"creator":"test"}}"#
        );
        assert_eq!(Document::parse(json.as_bytes()).unwrap(), document);
    }

    #[test]
    fn unknown_keys_are_refused_and_missing_ones_read_empty() {
        let extra = br#"{"critical": {"type": "x", "image": {}, "identity": {}, "extra": 1}}"#;
        assert!(
            Document::parse(extra)
                .unwrap_err()
                .to_string()
                .contains("unknown field `extra`")
        );
        let sparse = Document::parse(b"{}").unwrap();
        assert_eq!((sparse.manifest_digest(), sparse.docker_reference()), ("", ""));
    }
}
