//! The JSON documents the registry stores: image configs, image manifests and lists.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::blob::Blob;
use crate::format::ManifestFormat;

/// A manifest as pushed: its bytes, media type and digest.
#[derive(Clone, Debug)]
pub(crate) struct RenderedManifest {
    pub(crate) bytes: Vec<u8>,
    pub(crate) media_type: &'static str,
    pub(crate) digest: String,
}

impl RenderedManifest {
    fn new(document: &Value, media_type: &'static str) -> Self {
        let bytes = document.to_string().into_bytes();
        Self {
            digest: crate::blob::sha256_digest(&bytes),
            media_type,
            bytes,
        }
    }
}

/// An image's platform, as its config and list entries state it.
#[derive(Clone, Debug)]
pub(crate) struct Platform<'a> {
    pub(crate) architecture: &'a str,
    pub(crate) os: &'a str,
}

/// What an image's config says besides its platform.
#[derive(Clone, Debug)]
pub(crate) struct ConfigFacts<'a> {
    pub(crate) platform: Platform<'a>,
    pub(crate) created: Option<&'a str>,
    pub(crate) labels: &'a BTreeMap<String, String>,
}

pub(crate) fn image_config(facts: &ConfigFacts<'_>, diff_ids: &[String]) -> Vec<u8> {
    let mut config = json!({
        "architecture": facts.platform.architecture,
        "os": facts.platform.os,
        "config": if facts.labels.is_empty() { json!({}) } else { json!({ "Labels": facts.labels }) },
        "rootfs": { "type": "layers", "diff_ids": diff_ids },
    });
    if let Some(created) = facts.created {
        config["created"] = json!(created);
    }
    config.to_string().into_bytes()
}

pub(crate) fn image_manifest(format: ManifestFormat, config: &Blob, layers: &[&Blob]) -> RenderedManifest {
    let media_type = format.image_manifest_media_type();
    let layers: Vec<Value> = layers
        .iter()
        .map(|layer| descriptor(format.layer_media_type(), &layer.digest, layer.size))
        .collect();
    let document = json!({
        "schemaVersion": 2,
        "mediaType": media_type,
        "config": descriptor(format.config_media_type(), &config.digest, config.size),
        "layers": layers,
    });
    RenderedManifest::new(&document, media_type)
}

pub(crate) fn list_manifest(
    format: ManifestFormat,
    entries: &[(RenderedManifest, Platform<'_>)],
) -> RenderedManifest {
    let media_type = format.list_media_type();
    let manifests: Vec<Value> = entries
        .iter()
        .map(|(manifest, platform)| {
            let mut entry = descriptor(manifest.media_type, &manifest.digest, manifest.bytes.len() as u64);
            entry["platform"] = json!({ "architecture": platform.architecture, "os": platform.os });
            entry
        })
        .collect();
    let document = json!({
        "schemaVersion": 2,
        "mediaType": media_type,
        "manifests": manifests,
    });
    RenderedManifest::new(&document, media_type)
}

fn descriptor(media_type: &str, digest: &str, size: u64) -> Value {
    json!({ "mediaType": media_type, "digest": digest, "size": size })
}
