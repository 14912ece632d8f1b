//! The scraper against a real registry (distribution's `docker-registry` on
//! 127.0.0.1) holding release images pushed by the workspace's image tool.
//! Registry-level behaviour (authentication, TLS, paging, retries) is tested
//! in the registry-client crate.

use std::sync::Arc;
use std::time::Duration;

use cincinnati_core::release::keys;
use graph_builder::assemble::assemble;
use graph_builder::found::DropReason;
use graph_builder::scrape::{Scrape, ScrapeReport, ScrapeSettings, Scraper};
use http_fetch::ExtraRoots;
use registry_client::manifest::Manifest;
use registry_client::{RegistryAddress, RegistryClient, RegistrySettings, RetryPolicy};
use registry_testkit::poll::eventually;
use registry_testkit::{LocalRegistry, RequestKind};
use release_images::{
    Image, ImageList, Layer, ManifestFormat, PushOptions, Pushable, Pusher, ReleaseMetadata,
};

const REPOSITORY: &str = "ocp/release";

fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        attempts: 2,
        first_backoff: Duration::from_millis(10),
        attempt_timeout: Duration::from_secs(20),
    }
}

fn client_for(registry: &LocalRegistry) -> RegistryClient {
    RegistryClient::new(RegistrySettings {
        address: RegistryAddress::parse(&registry.url()).unwrap(),
        repository: REPOSITORY.to_owned(),
        credentials: None,
        roots: ExtraRoots::default(),
        retry: quick_retries(),
        user_agent: graph_builder::USER_AGENT,
    })
    .unwrap()
}

fn scraper_for(registry: &LocalRegistry, settings: ScrapeSettings) -> Scraper {
    Scraper::new(Arc::new(client_for(registry)), settings)
}

fn pusher_for(registry: &LocalRegistry) -> Pusher {
    Pusher::new(&registry.url(), PushOptions::default()).unwrap()
}

fn release(version: &str, previous: &[&str]) -> ReleaseMetadata {
    ReleaseMetadata::new(version).previous(previous.iter().copied())
}

/// The report of a scrape that must have found something new.
trait Changed {
    fn changed(self) -> ScrapeReport;
}

impl Changed for Scrape {
    fn changed(self) -> ScrapeReport {
        match self {
            Scrape::Changed(report) => report,
            Scrape::Unchanged { tags } => panic!("expected releases, got no change ({tags} tags)"),
        }
    }
}

/// Pushes `items` under their tags, then scrapes the repository afresh.
async fn push_and_scrape<const N: usize>(
    registry: &LocalRegistry,
    pusher: &Pusher,
    items: [(&str, Pushable); N],
) -> ScrapeReport {
    for (tag, item) in items {
        pusher.push(REPOSITORY, tag, item).await.unwrap();
    }
    scraper_for(registry, ScrapeSettings::default())
        .scrape()
        .await
        .unwrap()
        .changed()
}

fn versions(report: &ScrapeReport) -> Vec<String> {
    let mut found: Vec<String> = report
        .releases
        .iter()
        .map(|r| format!("{}+{}", r.document.version, r.arch))
        .collect();
    found.sort();
    found
}

/// Waits until the registry has logged `expected` requests of `kind`.
async fn settle(registry: &LocalRegistry, kind: RequestKind, expected: usize) {
    let what = format!("the registry to log {expected} {kind:?} requests");
    eventually(&what, Duration::from_secs(10), || async {
        count(registry, kind).await >= expected
    })
    .await;
}

/// The graph-builder's requests the registry logged (pushes are the test's own).
async fn scraper_requests(registry: &LocalRegistry) -> Vec<registry_testkit::LoggedRequest> {
    let log = registry.request_log().await.unwrap();
    log.into_iter()
        .filter(|request| request.user_agent.starts_with("cincinnati-rs-graph-builder"))
        .collect()
}

async fn count(registry: &LocalRegistry, kind: RequestKind) -> usize {
    let requests = scraper_requests(registry).await;
    requests.iter().filter(|request| request.kind() == kind).count()
}

#[tokio::test]
async fn every_manifest_format_and_architecture_rule() {
    let registry = LocalRegistry::start().await.unwrap();
    let pusher = pusher_for(&registry);
    let docker = Image::release(&release("4.1.0", &[]), "amd64");
    let oci = Image::release(&release("4.1.1", &["4.1.0"]), "amd64").format(ManifestFormat::Oci);
    let arm = Image::release(&release("4.1.1", &[]), "arm64").format(ManifestFormat::Oci);
    let multi = ImageList::multi_release(
        &release("4.1.1", &["4.1.0"]),
        ["amd64", "arm64", "s390x"],
        ManifestFormat::Docker,
    );
    let multi_oci =
        ImageList::multi_release(&release("4.1.0", &[]), ["amd64", "ppc64le"], ManifestFormat::Oci);
    let single_entry_list =
        ImageList::new(ManifestFormat::Oci).image(Image::release(&release("4.1.1", &[]), "ppc64le"));
    // A shard of a multi release pushed under its own tag: must not become a release.
    let shard = Image::release(&release("4.1.2", &[]).multi_arch(), "amd64");
    let items: [(&str, Pushable); 7] = [
        ("4.1.0-x86_64", docker.into()),
        ("4.1.1-x86_64", oci.into()),
        ("4.1.1-aarch64", arm.into()),
        ("4.1.1-multi", multi.into()),
        ("4.1.0-multi", multi_oci.into()),
        ("4.1.1-ppc64le", single_entry_list.into()),
        ("4.1.2-x86_64-shard", shard.into()),
    ];
    let report = push_and_scrape(&registry, &pusher, items).await;
    assert_eq!(
        versions(&report),
        [
            "4.1.0+amd64",
            "4.1.0+multi",
            "4.1.1+amd64",
            "4.1.1+arm64",
            "4.1.1+multi",
            "4.1.1+ppc64le",
            "4.1.2+amd64"
        ]
    );
    let assembled = assemble(report.releases);
    let shard_dropped = assembled
        .dropped
        .iter()
        .any(|d| d.reason == DropReason::MultiArchShard);
    assert!(shard_dropped, "{:?}", assembled.dropped);
    let graph = &assembled.graph;
    let find = |v: &str| graph.find(&v.parse().unwrap()).unwrap();
    assert!(graph.has_edge(find("4.1.0+amd64"), find("4.1.1+amd64")));
    assert!(graph.has_edge(find("4.1.0+multi"), find("4.1.1+multi")));
    let multi_node = graph.release(find("4.1.1+multi")).unwrap();
    assert_eq!(
        &multi_node.metadata["io.openshift.upgrades.graph.release.arch"],
        "multi"
    );
    let payload = multi_node.payload.as_deref().unwrap();
    assert!(
        payload.starts_with(&format!("{}/{REPOSITORY}@sha256:", registry.host_port())),
        "{payload}"
    );
    assert_eq!(
        &multi_node.metadata["io.openshift.upgrades.graph.release.manifestref"],
        payload.split('@').nth(1).unwrap()
    );
}

#[tokio::test]
async fn each_release_carries_its_image_creation_time() {
    let registry = LocalRegistry::start().await.unwrap();
    let pusher = pusher_for(&registry);
    let built = Image::release(&release("4.3.0", &[]), "amd64").created("2024-05-01T10:00:00Z");
    let undated = Image::release(&release("4.3.1", &["4.3.0"]), "amd64");
    // A list is dated by the image the scraper reads through it.
    let list = ImageList::new(ManifestFormat::Oci)
        .image(Image::release(&release("4.3.0", &[]), "arm64").created("2024-06-02T00:00:00Z"));
    let items: [(&str, Pushable); 3] = [
        ("4.3.0-x86_64", built.into()),
        ("4.3.1-x86_64", undated.into()),
        ("4.3.0-aarch64", list.into()),
    ];
    let report = push_and_scrape(&registry, &pusher, items).await;
    let graph = assemble(report.releases).graph;
    let created = |version: &str| {
        let id = graph.find(&version.parse().unwrap()).unwrap();
        graph
            .release(id)
            .unwrap()
            .metadata
            .get(keys::CREATED)
            .map(str::to_owned)
    };
    assert_eq!(created("4.3.0+amd64").as_deref(), Some("2024-05-01T10:00:00Z"));
    assert_eq!(created("4.3.0+arm64").as_deref(), Some("2024-06-02T00:00:00Z"));
    assert_eq!(
        created("4.3.1+amd64"),
        None,
        "an image without `created` gets no key"
    );
}

#[tokio::test]
async fn bad_images_are_left_out_with_their_reason_and_the_rest_kept() {
    let registry = LocalRegistry::start().await.unwrap();
    let pusher = pusher_for(&registry);
    let good = Image::release(&release("4.2.0", &[]), "amd64");
    let no_metadata = Image::new("amd64").layer(Layer::files([("etc/os-release", "ID=rhel")]));
    let invalid_json = Image::new("amd64").layer(Layer::raw_release_metadata("{ not json"));
    let wrong_kind = Image::new("amd64").layer(Layer::raw_release_metadata(
        r#"{"kind":"something-else","version":"4.2.1"}"#,
    ));
    let bad_version = Image::new("amd64").layer(Layer::raw_release_metadata(
        r#"{"kind":"cincinnati-metadata-v0","version":"4.2"}"#,
    ));
    for (tag, item) in [
        ("good", good),
        ("no-metadata", no_metadata),
        ("invalid-json", invalid_json),
        ("wrong-kind", wrong_kind),
        ("bad-version", bad_version),
    ] {
        pusher.push(REPOSITORY, tag, item).await.unwrap();
    }
    let report = scraper_for(&registry, ScrapeSettings::default())
        .scrape()
        .await
        .unwrap()
        .changed();
    assert_eq!(versions(&report), ["4.2.0+amd64"]);
    let mut reasons: Vec<(String, &str)> = report
        .dropped
        .iter()
        .map(|d| (d.subject.clone(), d.reason.label()))
        .collect();
    reasons.sort();
    assert_eq!(
        reasons,
        [
            ("ocp/release:bad-version".to_owned(), "invalid_release_metadata"),
            ("ocp/release:invalid-json".to_owned(), "invalid_release_metadata"),
            ("ocp/release:no-metadata".to_owned(), "no_release_metadata"),
            ("ocp/release:wrong-kind".to_owned(), "invalid_release_metadata"),
        ]
    );
}

#[tokio::test]
async fn component_images_beside_the_releases_are_told_apart_by_their_config_and_no_layer_of_theirs_is_read()
{
    let registry = LocalRegistry::start().await.unwrap();
    let pusher = pusher_for(&registry);
    // As `oc adm release mirror` writes one repository: the releases
    // (labelled io.openshift.release), and their components, labelled as
    // every image OpenShift builds is, one of them for several
    // architectures.
    let component = |name: &str, arch: &str, seed: u64| {
        Image::new(arch)
            .label("io.openshift.build.name", name)
            .label("vendor", "Red Hat, Inc.")
            .layer(Layer::random(1, seed))
    };
    let multi_component = ImageList::new(ManifestFormat::Docker)
        .image(component("etcd", "amd64", 1))
        .image(component("etcd", "arm64", 2));
    // Another product's release, labelled its own way, is searched as
    // before.
    let another_product = Image::new("amd64")
        .label("maintainer", "releases@example.com")
        .layer(Layer::release_metadata(&release("4.18.53", &["4.18.52"])));
    let items: [(&str, Pushable); 4] = [
        (
            "4.18.52-x86_64",
            Image::release(&release("4.18.52", &[]), "amd64").into(),
        ),
        (
            "4.18.52-x86_64-installer",
            component("installer", "amd64", 3).into(),
        ),
        ("4.18.52-x86_64-etcd", multi_component.into()),
        ("4.18.53-x86_64", another_product.into()),
    ];
    let report = push_and_scrape(&registry, &pusher, items).await;
    assert_eq!(versions(&report), ["4.18.52+amd64", "4.18.53+amd64"]);
    let reasons: Vec<(&str, &str)> = report
        .dropped
        .iter()
        .map(|dropped| (dropped.subject.as_str(), dropped.reason.label()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("ocp/release:4.18.52-x86_64-etcd", "component_image"),
            ("ocp/release:4.18.52-x86_64-installer", "component_image"),
        ]
    );
    // Two releases (a config and a layer each), two components (a config
    // each, the list's through its first image).
    settle(&registry, RequestKind::Blob, 6).await;
    let read: Vec<String> = scraper_requests(&registry)
        .await
        .into_iter()
        .filter(|request| request.kind() == RequestKind::Blob)
        .map(|request| request.path)
        .collect();
    let client = client_for(&registry);
    let mut component_layers = Vec::new();
    for tag in ["4.18.52-x86_64-installer", "4.18.52-x86_64-etcd"] {
        let images = match client.manifest(tag).await.unwrap().0 {
            Manifest::Image(image) => vec![image],
            Manifest::List(entries) => {
                let mut images = Vec::new();
                for entry in entries {
                    let Manifest::Image(image) = client.manifest(&entry.digest).await.unwrap().0 else {
                        panic!("a list of images");
                    };
                    images.push(image);
                }
                images
            }
        };
        component_layers.extend(
            images
                .into_iter()
                .flat_map(|image| image.layers)
                .map(|layer| layer.digest),
        );
    }
    assert_eq!(component_layers.len(), 3);
    for layer in &component_layers {
        assert!(
            !read.iter().any(|path| path.contains(layer.as_str())),
            "component layer {layer} read: {read:?}"
        );
    }
    assert_eq!(read.len(), 6, "{read:?}");
}

#[tokio::test]
async fn cycles_and_duplicate_versions_do_not_fail_the_graph() {
    let registry = LocalRegistry::start().await.unwrap();
    let pusher = pusher_for(&registry);
    let items = [
        ("a", Image::release(&release("4.3.0", &["4.3.1"]), "amd64")),
        ("b", Image::release(&release("4.3.1", &["4.3.0"]), "amd64")),
        ("c", Image::release(&release("4.3.2", &["4.3.1"]), "amd64")),
        // Same version, different image (another metadata key makes another digest).
        (
            "d",
            Image::release(&release("4.3.2", &["4.3.1"]).metadata("url", "x"), "amd64"),
        ),
    ];
    for (tag, item) in items {
        pusher.push(REPOSITORY, tag, item).await.unwrap();
    }
    let report = scraper_for(&registry, ScrapeSettings::default())
        .scrape()
        .await
        .unwrap()
        .changed();
    let assembled = assemble(report.releases);
    let labels: Vec<_> = assembled.dropped.iter().map(|d| d.reason.label()).collect();
    assert_eq!(labels.iter().filter(|l| **l == "cycle").count(), 1, "{labels:?}");
    assert_eq!(
        labels.iter().filter(|l| **l == "duplicate_version").count(),
        2,
        "{labels:?}"
    );
    assert_eq!(
        assembled.graph.edge_count(),
        1,
        "4.3.0 <-> 4.3.1 keeps one direction"
    );
}

#[tokio::test]
async fn refreshes_download_only_what_is_new() {
    let registry = LocalRegistry::start().await.unwrap();
    let pusher = pusher_for(&registry);
    let items: Vec<(String, Pushable)> = (0..20)
        .map(|z| {
            let previous: Vec<String> = (0..z).map(|p| format!("4.5.{p}")).collect();
            let metadata = ReleaseMetadata::new(format!("4.5.{z}")).previous(previous);
            (
                format!("4.5.{z}-x86_64"),
                Image::release(&metadata, "amd64").into(),
            )
        })
        .collect();
    pusher.push_all(REPOSITORY, &items).await.unwrap();

    let mut scraper = scraper_for(&registry, ScrapeSettings::default());
    let cold = scraper.scrape().await.unwrap().changed();
    assert_eq!((cold.releases.len(), cold.downloaded), (20, 20));
    // The registry logs a request when it has written its answer; a layer we
    // stopped reading early can finish after the scrape. Let all 40 blob
    // requests (a config and a layer each) land before counting afresh.
    settle(&registry, RequestKind::Blob, 40).await;

    registry.clear_request_log();
    let warm = scraper.scrape().await.unwrap();
    assert!(
        matches!(warm, Scrape::Unchanged { tags: 20 }),
        "nothing to rebuild: {warm:?}"
    );
    assert_eq!(
        count(&registry, RequestKind::Blob).await,
        0,
        "no blob downloads without changes"
    );
    assert_eq!(
        count(&registry, RequestKind::Manifest).await,
        0,
        "known tags are not re-read"
    );
    assert_eq!(
        scraper_requests(&registry).await.len(),
        1,
        "one tag listing, and no authentication probe before it"
    );

    let newest = ReleaseMetadata::new("4.5.20").previous(["4.5.19"]);
    pusher
        .push(REPOSITORY, "4.5.20-x86_64", Image::release(&newest, "amd64"))
        .await
        .unwrap();
    registry.clear_request_log();
    let one_new = scraper.scrape().await.unwrap().changed();
    assert_eq!((one_new.releases.len(), one_new.downloaded), (21, 1));
    assert_eq!(count(&registry, RequestKind::Manifest).await, 1);
    settle(&registry, RequestKind::Blob, 2).await;
    assert_eq!(
        count(&registry, RequestKind::Blob).await,
        2,
        "one config and one layer"
    );
}

#[tokio::test]
async fn the_cache_survives_a_restart_and_notices_retags() {
    let registry = LocalRegistry::start().await.unwrap();
    let pusher = pusher_for(&registry);
    pusher
        .push(
            REPOSITORY,
            "stable",
            Image::release(&release("4.6.0", &[]), "amd64"),
        )
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let settings = ScrapeSettings {
        cache_path: Some(dir.path().join("scrape-cache.json")),
        ..ScrapeSettings::default()
    };
    let first = scraper_for(&registry, settings.clone())
        .scrape()
        .await
        .unwrap()
        .changed();
    assert_eq!(first.downloaded, 1);

    // A new process: the cache file spares every download, but the first
    // scrape re-checks digests with one HEAD per tag.
    pusher
        .push(
            REPOSITORY,
            "stable",
            Image::release(&release("4.6.1", &[]), "amd64"),
        )
        .await
        .unwrap();
    registry.clear_request_log();
    let restarted = scraper_for(&registry, settings).scrape().await.unwrap().changed();
    assert_eq!(versions(&restarted), ["4.6.1+amd64"], "the retag is noticed");
    assert_eq!(restarted.downloaded, 1);
}

#[tokio::test]
async fn a_corrupt_cache_file_is_ignored() {
    let registry = LocalRegistry::start().await.unwrap();
    pusher_for(&registry)
        .push(REPOSITORY, "x", Image::release(&release("4.7.0", &[]), "amd64"))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache_path = dir.path().join("scrape-cache.json");
    std::fs::write(&cache_path, b"\0garbage").unwrap();
    let settings = ScrapeSettings {
        cache_path: Some(cache_path.clone()),
        ..ScrapeSettings::default()
    };
    let report = scraper_for(&registry, settings).scrape().await.unwrap().changed();
    assert_eq!(versions(&report), ["4.7.0+amd64"]);
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(cache_path).unwrap()).unwrap();
    assert_eq!(
        saved["repository"], REPOSITORY,
        "a good cache replaced the corrupt one"
    );
}

#[tokio::test]
async fn a_large_non_release_layer_is_streamed_not_held() {
    let registry = LocalRegistry::start().await.unwrap();
    // The big layer is on top, so it is searched first and read to its end.
    let image = Image::new("amd64")
        .layer(Layer::release_metadata(&release("4.10.0", &[])))
        .layer(Layer::random(96, 7));
    pusher_for(&registry)
        .push(REPOSITORY, "big", image)
        .await
        .unwrap();
    let before = peak_rss_kib();
    let report = scraper_for(&registry, ScrapeSettings::default())
        .scrape()
        .await
        .unwrap()
        .changed();
    assert_eq!(versions(&report), ["4.10.0+amd64"]);
    let growth_mib = (peak_rss_kib() - before) / 1024;
    assert!(
        growth_mib < 48,
        "peak memory grew by {growth_mib} MiB while reading a 96 MiB layer"
    );
}

/// The process's peak resident set size (nextest runs each test in its own process).
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}
