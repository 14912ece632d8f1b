//! Reads what was pushed with plain registry API requests, independently of
//! the crate under test.

use std::collections::BTreeMap;
use std::io::Read;

use flate2::read::GzDecoder;
use registry_testkit::{LocalRegistry, LoggedRequest};
use release_images::{PushOptions, Pusher, RELEASE_METADATA_PATH};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
pub const DOCKER_CONFIG: &str = "application/vnd.docker.container.image.v1+json";
pub const DOCKER_LAYER: &str = "application/vnd.docker.image.rootfs.diff.tar.gzip";
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
pub const OCI_LAYER: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

pub const REPOSITORY: &str = "ocp/release";

pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

pub fn plain_pusher(registry: &LocalRegistry) -> Pusher {
    Pusher::new(&registry.url(), PushOptions::default()).expect("pusher")
}

/// A manifest as the registry serves it.
#[derive(Debug)]
pub struct FetchedManifest {
    pub content_type: String,
    pub digest: String,
    pub json: Value,
}

impl FetchedManifest {
    pub fn media_types_of(&self, field: &str) -> Vec<String> {
        self.descriptors(field)
            .iter()
            .map(|descriptor| descriptor["mediaType"].as_str().expect("mediaType").to_owned())
            .collect()
    }

    pub fn digests_of(&self, field: &str) -> Vec<String> {
        self.descriptors(field)
            .iter()
            .map(|descriptor| descriptor["digest"].as_str().expect("digest").to_owned())
            .collect()
    }

    /// `(architecture, os)` of every list entry, in order.
    pub fn platforms(&self) -> Vec<(String, String)> {
        self.descriptors("manifests")
            .iter()
            .map(|entry| {
                let platform = &entry["platform"];
                (
                    platform["architecture"]
                        .as_str()
                        .expect("architecture")
                        .to_owned(),
                    platform["os"].as_str().expect("os").to_owned(),
                )
            })
            .collect()
    }

    fn descriptors(&self, field: &str) -> &Vec<Value> {
        self.json[field]
            .as_array()
            .unwrap_or_else(|| panic!("no {field} array in {}", self.json))
    }
}

/// Registry API reads, optionally authenticated.
pub struct RegistryReader {
    client: reqwest::Client,
    base_url: String,
    basic_auth: Option<(String, String)>,
}

impl RegistryReader {
    pub fn new(registry: &LocalRegistry) -> Self {
        Self::with_client(registry, reqwest::Client::new())
    }

    pub fn with_client(registry: &LocalRegistry, client: reqwest::Client) -> Self {
        Self {
            client,
            base_url: registry.url(),
            basic_auth: registry
                .credentials()
                .map(|credentials| (credentials.username.clone(), credentials.password.clone())),
        }
    }

    pub async fn get(&self, path: &str) -> reqwest::Result<reqwest::Response> {
        let mut request = self.client.get(format!("{}/v2/{path}", self.base_url)).header(
            ACCEPT,
            [DOCKER_MANIFEST, DOCKER_LIST, OCI_MANIFEST, OCI_INDEX].join(", "),
        );
        if let Some((username, password)) = &self.basic_auth {
            request = request.basic_auth(username, Some(password));
        }
        request.send().await
    }

    pub async fn manifest(&self, repository: &str, reference: &str) -> FetchedManifest {
        let response = self
            .get(&format!("{repository}/manifests/{reference}"))
            .await
            .expect("GET manifest");
        assert_eq!(response.status(), 200, "manifest {repository}:{reference}");
        let content_type = response.headers()[CONTENT_TYPE]
            .to_str()
            .expect("content type")
            .to_owned();
        let digest = response.headers()["docker-content-digest"]
            .to_str()
            .expect("digest header")
            .to_owned();
        let body = response.bytes().await.expect("manifest body");
        assert_eq!(
            sha256_digest(&body),
            digest,
            "the digest header does not match the body"
        );
        FetchedManifest {
            content_type,
            digest,
            json: serde_json::from_slice(&body).expect("manifest JSON"),
        }
    }

    pub async fn blob(&self, repository: &str, digest: &str) -> Vec<u8> {
        let response = self
            .get(&format!("{repository}/blobs/{digest}"))
            .await
            .expect("GET blob");
        assert_eq!(response.status(), 200, "blob {digest}");
        let body = response.bytes().await.expect("blob body").to_vec();
        assert_eq!(
            sha256_digest(&body),
            digest,
            "blob content does not match its digest"
        );
        body
    }

    pub async fn config(&self, repository: &str, manifest: &FetchedManifest) -> Value {
        let digest = manifest.json["config"]["digest"].as_str().expect("config digest");
        serde_json::from_slice(&self.blob(repository, digest).await).expect("config JSON")
    }

    /// The files of every layer, bottom-most layer first.
    pub async fn layer_files(
        &self,
        repository: &str,
        manifest: &FetchedManifest,
    ) -> Vec<BTreeMap<String, Vec<u8>>> {
        let mut layers = Vec::new();
        for digest in manifest.digests_of("layers") {
            layers.push(untar_gzip(&self.blob(repository, &digest).await));
        }
        layers
    }

    /// The release metadata of the top-most layer that has one, as the graph-builder looks for it.
    pub async fn release_metadata(&self, repository: &str, manifest: &FetchedManifest) -> Option<Vec<u8>> {
        self.layer_files(repository, manifest)
            .await
            .into_iter()
            .rev()
            .find_map(|mut files| files.remove(RELEASE_METADATA_PATH))
    }
}

pub fn untar_gzip(blob: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut archive = tar::Archive::new(GzDecoder::new(blob));
    archive
        .entries()
        .expect("tar entries")
        .map(|entry| {
            let mut entry = entry.expect("tar entry");
            let path = entry.path().expect("entry path").to_string_lossy().into_owned();
            let mut contents = Vec::new();
            entry.read_to_end(&mut contents).expect("entry contents");
            (path, contents)
        })
        .collect()
}

/// Blob uploads that committed `digest` (the final PUT of an upload carries it).
pub fn committed_uploads_of(log: &[LoggedRequest], digest: &str) -> usize {
    log.iter()
        .filter(|request| {
            request.method == "PUT"
                && request.path.contains("/blobs/uploads/")
                && request.path.contains(digest.trim_start_matches("sha256:"))
        })
        .count()
}
