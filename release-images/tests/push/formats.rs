//! Each manifest format is stored with the right media types and platforms.

use registry_testkit::LocalRegistry;
use release_images::{ARCHITECTURE_KEY, Image, ImageList, ManifestFormat, ReleaseMetadata};
use serde_json::Value;

use crate::support::*;

fn metadata_4_16_3() -> ReleaseMetadata {
    ReleaseMetadata::new("4.16.3")
        .previous(["4.16.2", "4.16.1"])
        .metadata("url", "https://access.redhat.com/errata/RHBA-2024:0001")
}

#[tokio::test]
async fn docker_image_has_docker_media_types_and_its_config_names_the_architecture() {
    let registry = LocalRegistry::start().await.expect("registry");
    let metadata = metadata_4_16_3();
    let digest = plain_pusher(&registry)
        .push(REPOSITORY, "4.16.3-x86_64", Image::release(&metadata, "amd64"))
        .await
        .expect("push");

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest(REPOSITORY, "4.16.3-x86_64").await;
    assert_eq!(manifest.digest, digest);
    assert_eq!(manifest.content_type, DOCKER_MANIFEST);
    assert_eq!(manifest.json["mediaType"], DOCKER_MANIFEST);
    assert_eq!(manifest.json["config"]["mediaType"], DOCKER_CONFIG);
    assert_eq!(manifest.media_types_of("layers"), [DOCKER_LAYER]);

    let config = reader.config(REPOSITORY, &manifest).await;
    assert_eq!(config["architecture"], "amd64");
    assert_eq!(config["os"], "linux");
    assert_eq!(config["rootfs"]["diff_ids"].as_array().map(Vec::len), Some(1));

    let stored = reader
        .release_metadata(REPOSITORY, &manifest)
        .await
        .expect("release metadata");
    assert_eq!(stored, metadata.to_json());
    let document: Value = serde_json::from_slice(&stored).expect("JSON");
    assert_eq!(document["kind"], "cincinnati-metadata-v0");
    assert_eq!(document["version"], "4.16.3");
    assert_eq!(document["previous"], serde_json::json!(["4.16.2", "4.16.1"]));
    assert_eq!(document["next"], serde_json::json!([]));
    assert_eq!(
        document["metadata"]["url"],
        "https://access.redhat.com/errata/RHBA-2024:0001"
    );
    assert!(document["metadata"].get(ARCHITECTURE_KEY).is_none());
}

#[tokio::test]
async fn oci_image_has_oci_media_types() {
    let registry = LocalRegistry::start().await.expect("registry");
    let image = Image::release(&metadata_4_16_3(), "arm64").format(ManifestFormat::Oci);
    let digest = plain_pusher(&registry)
        .push(REPOSITORY, "4.16.3-aarch64", image)
        .await
        .expect("push");

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest(REPOSITORY, "4.16.3-aarch64").await;
    assert_eq!(manifest.digest, digest);
    assert_eq!(manifest.content_type, OCI_MANIFEST);
    assert_eq!(manifest.json["config"]["mediaType"], OCI_CONFIG);
    assert_eq!(manifest.media_types_of("layers"), [OCI_LAYER]);
    assert_eq!(
        reader.config(REPOSITORY, &manifest).await["architecture"],
        "arm64"
    );
}

#[tokio::test]
async fn docker_manifest_list_holds_one_multi_shard_per_architecture() {
    let registry = LocalRegistry::start().await.expect("registry");
    let metadata = metadata_4_16_3();
    let list = ImageList::multi_release(&metadata, ["amd64", "arm64", "s390x"], ManifestFormat::Docker);
    let digest = plain_pusher(&registry)
        .push(REPOSITORY, "4.16.3-multi", list)
        .await
        .expect("push");

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest(REPOSITORY, "4.16.3-multi").await;
    assert_eq!(manifest.digest, digest);
    assert_eq!(manifest.content_type, DOCKER_LIST);
    assert_eq!(manifest.media_types_of("manifests"), [DOCKER_MANIFEST; 3]);
    let platforms = manifest.platforms();
    let expected: Vec<(String, String)> = ["amd64", "arm64", "s390x"]
        .into_iter()
        .map(|architecture| (architecture.to_owned(), "linux".to_owned()))
        .collect();
    assert_eq!(platforms, expected);

    let shard_metadata = metadata.multi_arch().to_json();
    for (child_digest, (architecture, _)) in manifest.digests_of("manifests").iter().zip(&platforms) {
        let child = reader.manifest(REPOSITORY, child_digest).await;
        assert_eq!(child.content_type, DOCKER_MANIFEST);
        assert_eq!(
            &reader.config(REPOSITORY, &child).await["architecture"],
            architecture.as_str()
        );
        let stored = reader
            .release_metadata(REPOSITORY, &child)
            .await
            .expect("shard metadata");
        assert_eq!(stored, shard_metadata);
        let document: Value = serde_json::from_slice(&stored).expect("JSON");
        assert_eq!(document["metadata"][ARCHITECTURE_KEY], "multi");
    }
}

#[tokio::test]
async fn oci_index_with_a_single_entry_keeps_that_platform() {
    let registry = LocalRegistry::start().await.expect("registry");
    let list = ImageList::new(ManifestFormat::Oci).image(Image::release(&metadata_4_16_3(), "ppc64le"));
    plain_pusher(&registry)
        .push(REPOSITORY, "4.16.3-ppc64le", list)
        .await
        .expect("push");

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest(REPOSITORY, "4.16.3-ppc64le").await;
    assert_eq!(manifest.content_type, OCI_INDEX);
    assert_eq!(manifest.media_types_of("manifests"), [OCI_MANIFEST]);
    assert_eq!(manifest.platforms(), [("ppc64le".to_owned(), "linux".to_owned())]);
    let child = reader
        .manifest(REPOSITORY, &manifest.digests_of("manifests")[0])
        .await;
    assert_eq!(
        child.content_type, OCI_MANIFEST,
        "an OCI index holds OCI manifests"
    );
}
