//! Release signatures from graph-data to a cluster: a graph-data image with
//! a `signatures/` tree → graph-builder → metadata-helper (following the
//! graph-builder's tarball, and reading a directory) → a client that
//! searches `signature-1..N` until the first 404 as the CVO does and checks
//! each signature with the test key, for releases really in the registry.

use cincinnati_client::signatures::{Outcome, check_release};
use e2e::graph_builder::GraphBuilderOptions;
use e2e::graph_data::GraphData;
use e2e::metadata_helper::{self, SignatureSource};
use e2e::poll;
use e2e::releases::PushedRelease;
use e2e::scenario;
use e2e::stack::Stack;
use http_fetch::ExtraRoots;
use image_signature::layout::SignatureName;
use image_signature::store::SignatureStore;
use image_signature::{Digest, TrustedKeys};
use release_images::signature::SigningKey;
use serde_json::Value;
use tokio::time::Instant;

const KEY_SEED: u64 = 14;

/// Where release tooling published `release`: its tag in the registry.
fn docker_reference(release: &PushedRelease) -> String {
    let (repository, _) = release.payload.split_once('@').expect("a pull spec by digest");
    format!("{repository}:{}", release.release.tag())
}

fn digest(release: &PushedRelease) -> Digest {
    Digest::parse(&release.digest).expect("a pushed digest")
}

/// `graph_data` with `count` signatures of each of `releases`.
fn sign(mut graph_data: GraphData, key: &SigningKey, releases: &[(&PushedRelease, u32)]) -> GraphData {
    for &(release, count) in releases {
        let reference = docker_reference(release);
        for index in 1..=count {
            let name = SignatureName::of(&digest(release), index).expect("a SHA-256 digest");
            graph_data = graph_data.signature(name, key.sign(&reference, &release.digest));
        }
    }
    graph_data
}

/// What the CVO would find for `release` in the store: the number of
/// signatures, each of which must check out and name the release.
async fn verified_count(store: &SignatureStore, keys: &TrustedKeys, release: &PushedRelease) -> usize {
    let found = check_release(store, keys, &release.payload)
        .await
        .expect("a pull spec with a digest");
    for signature in &found.signatures {
        match &signature.outcome {
            Outcome::Verified(verified) => {
                assert_eq!(verified.document.manifest_digest(), release.digest);
                assert_eq!(verified.document.docker_reference(), docker_reference(release));
            }
            other => panic!("{} signature-{}: {other:?}", release.payload, signature.index),
        }
    }
    found.signatures.len()
}

fn graph_builder_signatures(status: &Value) -> Option<u64> {
    status["graph_data"]["signatures"].as_u64()
}

#[tokio::test]
async fn clusters_verify_releases_with_signatures_served_by_the_metadata_helper() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    let key = SigningKey::from_seed(KEY_SEED);
    let keys = TrustedKeys::from_armored(&key.public_key_armored()).unwrap();
    let releases = stack.published().releases.clone();
    let find = |version: &str, arch: &str| {
        releases
            .iter()
            .find(|pushed| pushed.release.version == version && pushed.release.arch == arch)
            .unwrap_or_else(|| panic!("{version} {arch} is pushed"))
    };
    let (once, twice, unsigned) = (
        find("4.17.0", "amd64"),
        find("4.17.1", "arm64"),
        find("4.16.0", "amd64"),
    );

    let signed = sign(scenario::graph_data(), &key, &[(once, 1), (twice, 2)]);
    stack.push_graph_data(&signed).await.unwrap();
    stack
        .graph_builder
        .await_status("3 signatures", |status| {
            graph_builder_signatures(status) == Some(3)
        })
        .await
        .unwrap();
    let directory = stack.workdir().join("signatures-directory");
    signed.write_to(&directory).unwrap();

    let followed = SignatureSource::tarball_of(&stack.graph_builder).unwrap();
    let following = metadata_helper::start(stack.workdir(), "followed", &followed)
        .await
        .unwrap();
    let reading = metadata_helper::start(
        stack.workdir(),
        "directory",
        &SignatureSource::Directory(GraphData::signatures_dir(&directory)),
    )
    .await
    .unwrap();
    for helper in [&following, &reading] {
        let store =
            SignatureStore::new(&metadata_helper::store_url(helper), ExtraRoots::default(), "e2e").unwrap();
        assert_eq!(verified_count(&store, &keys, once).await, 1, "{}", helper.name());
        assert_eq!(verified_count(&store, &keys, twice).await, 2, "{}", helper.name());
        // A release with no signatures: 404 on signature-1.
        assert_eq!(store.fetch(&digest(unsigned), 1).await.unwrap(), None);
        assert_eq!(verified_count(&store, &keys, unsigned).await, 0);
        // The typed document (unknown fields refused): what the helper says is
        // what its status type declares.
        let status: ::metadata_helper::Status =
            serde_json::from_value(helper.status().await.unwrap()).unwrap();
        assert!(status.ready);
        assert_eq!(status.signatures.signatures, 3, "{status:#?}");
    }

    // A new graph-data revision signs the unsigned release: the following
    // helper serves it (registry → graph-builder → helper).
    let more = sign(signed, &key, &[(unsigned, 1)]);
    stack.push_graph_data(&more).await.unwrap();
    let pushed = Instant::now();
    let store = SignatureStore::new(
        &metadata_helper::store_url(&following),
        ExtraRoots::default(),
        "e2e",
    )
    .unwrap();
    poll::until("the new signature to be served", poll::CHANGE_TIMEOUT, || async {
        let count = verified_count(&store, &keys, unsigned).await;
        anyhow::ensure!(count == 1, "{count} signatures");
        Ok(())
    })
    .await
    .unwrap();
    let took = pushed.elapsed();
    println!("e2e: a new signature was served in {took:.2?}");
    assert_eq!(verified_count(&store, &keys, twice).await, 2);
}
