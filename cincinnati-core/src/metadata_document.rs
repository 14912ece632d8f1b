//! The release metadata document (`cincinnati-metadata-v0`) found in every
//! release image at `release-manifests/release-metadata`.
//!
//! ```json
//! {"kind": "cincinnati-metadata-v0", "version": "4.16.3",
//!  "previous": ["4.16.2"], "next": [], "metadata": {"url": "..."}}
//! ```

use semver::Version;
use serde_json::{Map, Value};

use crate::metadata::Metadata;

/// The only `kind` this document format has.
pub const KIND: &str = "cincinnati-metadata-v0";

/// A validated release metadata document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseMetadataDocument {
    pub version: Version,
    /// Releases that can update to this one.
    pub previous: Vec<Version>,
    /// Releases this one can update to.
    pub next: Vec<Version>,
    pub metadata: Metadata,
}

/// Why a release metadata document was refused; names the field at fault.
#[derive(Debug, thiserror::Error)]
pub enum MetadataDocumentError {
    #[error("release metadata is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("release metadata is not a JSON object")]
    NotAnObject,
    #[error("release metadata has no `{0}`")]
    MissingField(&'static str),
    #[error("release metadata `kind` is {found}, expected \"{KIND}\"")]
    WrongKind { found: String },
    #[error("release metadata `{field}` must be {expected}")]
    WrongType { field: String, expected: &'static str },
    #[error("release metadata `{field}` is {value:?}, not SemVer: {source}")]
    InvalidVersion {
        field: String,
        value: String,
        source: semver::Error,
    },
}

impl ReleaseMetadataDocument {
    /// Parses and validates a document. Unknown top-level keys are ignored,
    /// as every client of this format does.
    pub fn parse(json: &[u8]) -> Result<Self, MetadataDocumentError> {
        let Value::Object(document) = serde_json::from_slice(json)? else {
            return Err(MetadataDocumentError::NotAnObject);
        };
        match document.get("kind") {
            None => return Err(MetadataDocumentError::MissingField("kind")),
            Some(Value::String(kind)) if kind == KIND => {}
            Some(other) => {
                return Err(MetadataDocumentError::WrongKind {
                    found: other.to_string(),
                });
            }
        }
        let version = match document.get("version") {
            None => return Err(MetadataDocumentError::MissingField("version")),
            Some(value) => parse_version(|| "version".to_owned(), value)?,
        };
        Ok(Self {
            version,
            previous: parse_versions(&document, "previous")?,
            next: parse_versions(&document, "next")?,
            metadata: parse_metadata(&document)?,
        })
    }
}

/// `field` names the value in an error; only a failure pays for the name.
fn parse_version(field: impl FnOnce() -> String, value: &Value) -> Result<Version, MetadataDocumentError> {
    let Value::String(text) = value else {
        return Err(MetadataDocumentError::WrongType {
            field: field(),
            expected: "a string",
        });
    };
    Version::parse(text).map_err(|source| MetadataDocumentError::InvalidVersion {
        field: field(),
        value: text.clone(),
        source,
    })
}

fn parse_versions(
    document: &Map<String, Value>,
    field: &'static str,
) -> Result<Vec<Version>, MetadataDocumentError> {
    match document.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => {
            // Sized up front: a scrape holds thousands of these lists at once.
            let mut versions = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                versions.push(parse_version(|| format!("{field}[{index}]"), item)?);
            }
            Ok(versions)
        }
        Some(_) => Err(MetadataDocumentError::WrongType {
            field: field.to_owned(),
            expected: "an array of version strings",
        }),
    }
}

fn parse_metadata(document: &Map<String, Value>) -> Result<Metadata, MetadataDocumentError> {
    match document.get("metadata") {
        None | Some(Value::Null) => Ok(Metadata::new()),
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => Ok((key, text.as_str())),
                _ => Err(MetadataDocumentError::WrongType {
                    field: format!("metadata.{key}"),
                    expected: "a string",
                }),
            })
            .collect(),
        Some(_) => Err(MetadataDocumentError::WrongType {
            field: "metadata".to_owned(),
            expected: "an object of strings",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<ReleaseMetadataDocument, MetadataDocumentError> {
        ReleaseMetadataDocument::parse(json.as_bytes())
    }

    #[test]
    fn parses_a_full_document() {
        let document = parse(
            r#"{"kind":"cincinnati-metadata-v0","version":"4.2.10-s390x","previous":["4.2.9-s390x"],
                "next":["4.2.11-s390x"],"metadata":{"url":"https://example.com","extra":"kept"},"unknown":1}"#,
        )
        .unwrap();
        assert_eq!(document.version.to_string(), "4.2.10-s390x");
        assert_eq!(document.previous, [Version::parse("4.2.9-s390x").unwrap()]);
        assert_eq!(document.next, [Version::parse("4.2.11-s390x").unwrap()]);
        assert_eq!(&document.metadata["extra"], "kept");
    }

    #[test]
    fn optional_lists_and_metadata_default_to_empty() {
        let document = parse(r#"{"kind":"cincinnati-metadata-v0","version":"1.0.0"}"#).unwrap();
        assert!(document.previous.is_empty() && document.next.is_empty() && document.metadata.is_empty());
    }

    #[test]
    fn each_bad_field_is_named() {
        let cases = [
            ("not json", "not valid JSON"),
            ("[]", "not a JSON object"),
            (r#"{"version":"1.0.0"}"#, "no `kind`"),
            (
                r#"{"kind":"cincinnati-metadata-v1","version":"1.0.0"}"#,
                "`kind` is \"cincinnati-metadata-v1\"",
            ),
            (r#"{"kind":"cincinnati-metadata-v0"}"#, "no `version`"),
            (
                r#"{"kind":"cincinnati-metadata-v0","version":"4.1"}"#,
                "`version` is \"4.1\", not SemVer",
            ),
            (
                r#"{"kind":"cincinnati-metadata-v0","version":4}"#,
                "`version` must be a string",
            ),
            (
                r#"{"kind":"cincinnati-metadata-v0","version":"1.0.0","previous":["0.9.0","x"]}"#,
                "`previous[1]` is \"x\", not SemVer",
            ),
            (
                r#"{"kind":"cincinnati-metadata-v0","version":"1.0.0","next":"1.1.0"}"#,
                "`next` must be an array",
            ),
            (
                r#"{"kind":"cincinnati-metadata-v0","version":"1.0.0","metadata":{"url":1}}"#,
                "`metadata.url` must be a string",
            ),
        ];
        for (json, expected) in cases {
            let error = parse(json).expect_err(json).to_string();
            assert!(error.contains(expected), "{json}: {error:?} lacks {expected:?}");
        }
    }
}
