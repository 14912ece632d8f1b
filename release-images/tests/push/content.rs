//! Layer contents: missing or invalid metadata, layer order, large layers, graph-data.

use registry_testkit::LocalRegistry;
use release_images::{Image, Layer, RELEASE_METADATA_PATH, ReleaseMetadata};

use crate::support::*;

#[tokio::test]
async fn image_without_release_metadata_has_only_its_other_files() {
    let registry = LocalRegistry::start().await.expect("registry");
    let image = Image::new("amd64").layer(Layer::files([(
        "manifests/0000_namespace.yaml",
        "kind: Namespace\n",
    )]));
    plain_pusher(&registry)
        .push(REPOSITORY, "no-metadata", image)
        .await
        .expect("push");

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest(REPOSITORY, "no-metadata").await;
    let layers = reader.layer_files(REPOSITORY, &manifest).await;
    assert_eq!(layers.len(), 1);
    assert_eq!(
        layers[0].get("manifests/0000_namespace.yaml").map(Vec::as_slice),
        Some(&b"kind: Namespace\n"[..])
    );
    assert_eq!(reader.release_metadata(REPOSITORY, &manifest).await, None);
}

#[tokio::test]
async fn invalid_release_metadata_is_stored_byte_for_byte() {
    let registry = LocalRegistry::start().await.expect("registry");
    let garbage = b"{\"kind\": \"cincinnati-metadata-v0\", \"version\": ".to_vec();
    let image = Image::new("amd64").layer(Layer::raw_release_metadata(garbage.clone()));
    plain_pusher(&registry)
        .push(REPOSITORY, "invalid", image)
        .await
        .expect("push");

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest(REPOSITORY, "invalid").await;
    let stored = reader
        .release_metadata(REPOSITORY, &manifest)
        .await
        .expect("the file exists");
    assert_eq!(stored, garbage);
    assert!(serde_json::from_slice::<serde_json::Value>(&stored).is_err());
}

#[tokio::test]
async fn layers_are_listed_bottom_first_so_the_last_added_is_on_top() {
    let registry = LocalRegistry::start().await.expect("registry");
    let older = ReleaseMetadata::new("4.16.2");
    let newer = ReleaseMetadata::new("4.16.3").previous(["4.16.2"]);
    let image = Image::new("amd64")
        .layer(Layer::files([("bottom", "1")]))
        .layer(Layer::release_metadata(&older))
        .layer(Layer::release_metadata(&newer));
    plain_pusher(&registry)
        .push(REPOSITORY, "ordered", image)
        .await
        .expect("push");

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest(REPOSITORY, "ordered").await;
    let layers = reader.layer_files(REPOSITORY, &manifest).await;
    let names: Vec<Vec<&String>> = layers.iter().map(|files| files.keys().collect()).collect();
    assert_eq!(
        names,
        [
            vec!["bottom"],
            vec![RELEASE_METADATA_PATH],
            vec![RELEASE_METADATA_PATH]
        ]
    );
    assert_eq!(layers[1][RELEASE_METADATA_PATH], older.to_json());
    assert_eq!(layers[2][RELEASE_METADATA_PATH], newer.to_json());
    assert_eq!(
        reader.release_metadata(REPOSITORY, &manifest).await,
        Some(newer.to_json())
    );
}

#[tokio::test]
async fn large_random_layer_is_stored_whole_and_does_not_compress() {
    // Several MiB like real payload layers; hashing in debug builds makes larger sizes slow.
    const MEBIBYTES: u64 = 4;
    let registry = LocalRegistry::start().await.expect("registry");
    let metadata = ReleaseMetadata::new("4.16.3");
    let image = Image::new("amd64")
        .layer(Layer::random(MEBIBYTES, 7))
        .layer(Layer::release_metadata(&metadata));
    plain_pusher(&registry)
        .push(REPOSITORY, "large", image)
        .await
        .expect("push");

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest(REPOSITORY, "large").await;
    let compressed_size = manifest.json["layers"][0]["size"].as_u64().expect("size");
    assert!(
        compressed_size > MEBIBYTES * 1024 * 1024,
        "random data compressed to {compressed_size} bytes"
    );
    let layers = reader.layer_files(REPOSITORY, &manifest).await;
    let random_file = &layers[0]["random/7-4MiB.bin"];
    assert_eq!(random_file.len() as u64, MEBIBYTES * 1024 * 1024);
    assert_ne!(random_file[..4096], random_file[4096..8192], "the data repeats");
    assert_eq!(
        reader.release_metadata(REPOSITORY, &manifest).await,
        Some(metadata.to_json())
    );
}

#[tokio::test]
async fn graph_data_directory_becomes_a_single_layer_with_relative_paths() {
    let directory = tempfile::tempdir().expect("tempdir");
    let files: [(&str, &str); 4] = [
        ("version", "1.2.0\n"),
        (
            "channels/stable-4.16.yaml",
            "name: stable-4.16\nversions:\n- 4.16.3\n",
        ),
        ("blocked-edges/4.16.3-bug.yaml", "to: 4.16.3\nfrom: 4\\.16\\.2\n"),
        ("raw/metadata.json", "{}\n"),
    ];
    for (path, contents) in files {
        let path = directory.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, contents).expect("write");
    }
    let registry = LocalRegistry::start().await.expect("registry");
    let image = Image::graph_data(directory.path()).expect("graph-data image");
    plain_pusher(&registry)
        .push("openshift/graph-data", "latest", image)
        .await
        .expect("push");

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest("openshift/graph-data", "latest").await;
    let layers = reader.layer_files("openshift/graph-data", &manifest).await;
    assert_eq!(layers.len(), 1);
    let stored: Vec<(&str, &[u8])> = layers[0]
        .iter()
        .map(|(path, contents)| (path.as_str(), contents.as_slice()))
        .collect();
    let mut expected: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(path, contents)| (*path, contents.as_bytes()))
        .collect();
    expected.sort();
    assert_eq!(stored, expected);
}
