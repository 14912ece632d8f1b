//! Shared layers and configs are uploaded once; existing blobs are not re-uploaded.

use registry_testkit::{LocalRegistry, RequestKind};
use release_images::{Image, Layer, Pushable, ReleaseMetadata};

use crate::support::*;

fn releases_sharing(layer: &Layer, count: usize) -> Vec<(String, Pushable)> {
    (0..count)
        .map(|patch| {
            let metadata = ReleaseMetadata::new(format!("4.16.{patch}"));
            let image = Image::new("amd64")
                .layer(layer.clone())
                .layer(Layer::release_metadata(&metadata));
            (format!("4.16.{patch}-x86_64"), image.into())
        })
        .collect()
}

#[tokio::test]
async fn concurrent_pushes_upload_a_shared_layer_once_and_return_each_tags_digest() {
    let registry = LocalRegistry::start().await.expect("registry");
    let shared = Layer::random(1, 99);
    let releases = releases_sharing(&shared, 20);
    let digests = plain_pusher(&registry)
        .push_all(REPOSITORY, &releases)
        .await
        .expect("push_all");

    let reader = RegistryReader::new(&registry);
    let mut shared_digest = None;
    for ((tag, _), digest) in releases.iter().zip(&digests) {
        let manifest = reader.manifest(REPOSITORY, tag).await;
        assert_eq!(&manifest.digest, digest, "digest returned for {tag}");
        let layers = manifest.digests_of("layers");
        assert_eq!(layers.len(), 2);
        assert_eq!(shared_digest.get_or_insert_with(|| layers[0].clone()), &layers[0]);
    }
    let shared_digest = shared_digest.expect("at least one release");

    let log = registry.request_log().await.expect("request log");
    assert_eq!(
        committed_uploads_of(&log, &shared_digest),
        1,
        "shared layer uploads"
    );
    // Each release has its own release layer and config (its diff_ids differ).
    let uploads = log
        .iter()
        .filter(|request| request.kind() == RequestKind::BlobUpload && request.method == "PUT")
        .count();
    assert_eq!(uploads, 1 + 2 * releases.len());
}

#[tokio::test]
async fn a_new_pusher_finds_existing_blobs_and_uploads_only_new_ones() {
    let registry = LocalRegistry::start().await.expect("registry");
    let shared = Layer::random(1, 5);
    let first = releases_sharing(&shared, 1);
    plain_pusher(&registry)
        .push_all(REPOSITORY, &first)
        .await
        .expect("first push");
    registry.clear_request_log();

    // Same shared layer, a different release layer and config.
    let metadata = ReleaseMetadata::new("4.17.0");
    let image = Image::new("amd64")
        .layer(shared.clone())
        .layer(Layer::release_metadata(&metadata));
    plain_pusher(&registry)
        .push(REPOSITORY, "4.17.0-x86_64", image)
        .await
        .expect("second push");

    let log = registry.request_log().await.expect("request log");
    let blob_checks = log
        .iter()
        .filter(|request| request.kind() == RequestKind::Blob && request.method == "HEAD");
    assert_eq!(blob_checks.count(), 3, "one existence check per blob");
    let uploads = log
        .iter()
        .filter(|request| request.kind() == RequestKind::BlobUpload && request.method == "PUT")
        .count();
    assert_eq!(uploads, 2, "only the new release layer and config are uploaded");
}
