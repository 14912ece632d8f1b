//! The `release-images` binary.

use std::process::Command;

use registry_testkit::LocalRegistry;
use serde_json::Value;

use crate::support::*;

fn run(arguments: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_release-images"))
        .args(arguments)
        .output()
        .expect("run release-images");
    assert!(
        output.status.success(),
        "release-images {arguments:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

#[tokio::test]
async fn push_prints_the_pull_reference_of_a_multi_release() {
    let registry = LocalRegistry::start().await.expect("registry");
    let url = registry.url();
    let printed = run(&[
        "push",
        "--registry",
        &url,
        "--repository",
        REPOSITORY,
        "--version",
        "4.16.3",
        "--previous",
        "4.16.2,4.16.1",
        "--multi",
        "amd64,arm64",
        "--format",
        "oci",
    ]);

    let manifest = RegistryReader::new(&registry)
        .manifest(REPOSITORY, "4.16.3-multi")
        .await;
    assert_eq!(
        printed.trim(),
        format!("{}/{REPOSITORY}@{}", registry.host_port(), manifest.digest)
    );
    assert_eq!(manifest.content_type, OCI_INDEX);
    assert_eq!(manifest.platforms().len(), 2);
}

#[tokio::test]
async fn push_stores_previous_versions_and_the_default_tag_names_the_architecture() {
    let registry = LocalRegistry::start().await.expect("registry");
    let url = registry.url();
    run(&[
        "push",
        "--registry",
        &url,
        "--repository",
        REPOSITORY,
        "--version",
        "4.16.3",
        "--arch",
        "s390x",
        "--previous",
        "4.16.2,4.16.1",
    ]);

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest(REPOSITORY, "4.16.3-s390x").await;
    assert_eq!(manifest.content_type, DOCKER_MANIFEST);
    let metadata = reader
        .release_metadata(REPOSITORY, &manifest)
        .await
        .expect("metadata");
    let document: Value = serde_json::from_slice(&metadata).expect("JSON");
    assert_eq!(document["previous"], serde_json::json!(["4.16.2", "4.16.1"]));
    assert_eq!(
        reader.config(REPOSITORY, &manifest).await["architecture"],
        "s390x"
    );
}

#[tokio::test]
async fn push_dir_pushes_a_directory_under_the_tag() {
    let directory = tempfile::tempdir().expect("tempdir");
    std::fs::write(directory.path().join("version"), "1.0.0\n").expect("write");
    let registry = LocalRegistry::start().await.expect("registry");
    let url = registry.url();
    let path = directory.path().to_str().expect("UTF-8 path");
    run(&[
        "push-dir",
        "--registry",
        &url,
        "--repository",
        "graph-data",
        "--tag",
        "latest",
        path,
    ]);

    let reader = RegistryReader::new(&registry);
    let manifest = reader.manifest("graph-data", "latest").await;
    let layers = reader.layer_files("graph-data", &manifest).await;
    assert_eq!(layers[0]["version"], b"1.0.0\n");
}
