//! Scrape benchmark: a present-day-sized OpenShift release set (every version
//! of testdata/graph-data's channels, for each architecture that shipped it:
//! about 5,700 release images) pushed to a local docker-registry, then
//! scraped by the real graph-builder with testdata/graph-data applied.
//!
//! Measures the cold scrape (to a served graph) beside the registry's floor
//! (the same manifest and blob requests sent again by a client that only
//! reads the answers), a refresh with no change and one with one new tag
//! (duration, registry requests), and peak RSS.
//!
//!     scripts/bench-graph-builder.sh

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use benchmarks::{GRAPH_BUILDER_GLIBC_TUNING, Service, metric, poll};
use clap::Parser;
use futures::StreamExt as _;
use registry_testkit::{LocalRegistry, RequestKind};
use release_images::{
    Image, ImageList, Layer, ManifestFormat, PushOptions, Pushable, Pusher, ReleaseMetadata,
};
use release_set_generator::Settings as ReleaseSetSettings;

#[derive(Parser)]
struct Args {
    /// The graph-builder binary (a release build).
    #[arg(long, default_value = "target/release/graph-builder")]
    graph_builder: PathBuf,
    /// Images read at the same time.
    #[arg(long, default_value_t = 16)]
    fetch_concurrency: usize,
    /// Requests at a time of each measure of the registry's floor: as many
    /// as the graph-builder, and as many as wrk's connections in earlier
    /// measures.
    #[arg(long, value_delimiter = ',', default_values_t = [16, 64])]
    floor_concurrency: Vec<usize>,
    /// Run the graph-builder with glibc's malloc defaults instead of the
    /// settings its container image sets (see `GRAPH_BUILDER_GLIBC_TUNING`).
    #[arg(long)]
    glibc_defaults: bool,
    /// Component images to push beside the releases, as `oc adm release
    /// mirror` writes one repository (`<version>-<arch>-<component>`,
    /// labelled as OpenShift's images are, a shared base layer and a small
    /// one of their own); with some, the cold scrape is measured on the
    /// releases alone first, then on the repository with them.
    #[arg(long, default_value_t = 0)]
    components: usize,
    /// Push the release set, print the graph-builder configuration for it and
    /// wait until interrupted, instead of measuring: for profiling the
    /// graph-builder by hand against a registry pushed once.
    #[arg(long)]
    hold: bool,
}

const REPOSITORY: &str = "openshift-release-dev/ocp-release";
const ARCHITECTURES: [&str; 4] = ["amd64", "arm64", "ppc64le", "s390x"];

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let graph_data = release_set_generator::testdata_graph_data();
    let versions = release_set_generator::channel_versions(&graph_data)?;
    let releases = release_set_generator::generate(&versions, &ReleaseSetSettings::default());
    println!("release images: {}", releases.len());

    let registry = LocalRegistry::start().await?;
    let pusher = Pusher::new(&registry.url(), PushOptions::default())?;
    let items: Vec<(String, Pushable)> = releases
        .iter()
        .map(|release| {
            let document = &release.document;
            let mut metadata = ReleaseMetadata::new(document.version.to_string())
                .previous(document.previous.iter().map(ToString::to_string))
                .next(document.next.iter().map(ToString::to_string));
            for (key, value) in &document.metadata {
                metadata = metadata.metadata(key, value);
            }
            let image: Pushable = if release.arch.is_multi() {
                ImageList::multi_release(&metadata, ARCHITECTURES, ManifestFormat::Docker).into()
            } else {
                Image::release(&metadata, release.arch.as_str()).into()
            };
            (format!("{}-{}", document.version, release.arch), image)
        })
        .collect();
    let started = Instant::now();
    pusher
        .push_all(REPOSITORY, &items)
        .await
        .context("pushing the release set")?;
    println!("pushed in {:.1} s", started.elapsed().as_secs_f64());

    let work = tempfile::tempdir()?;
    let config = work.path().join("gb.toml");
    std::fs::write(
        &config,
        format!(
            "[service]\nport = 18080\npublic_port = 18090\npause_secs = 5\n[status]\nport = 19080\n\
             [[plugin_settings]]\nname = \"release-scrape-dockerv2\"\nregistry = \"{url}\"\n\
             repository = \"{REPOSITORY}\"\nfetch_concurrency = {concurrency}\n\
             [[plugin_settings]]\nname = \"openshift-secondary-metadata-parse\"\ndata_directory = {data:?}\n\
             [[plugin_settings]]\nname = \"edge-add-remove\"\n",
            url = registry.url(),
            concurrency = args.fetch_concurrency,
            data = graph_data.display().to_string(),
        ),
    )?;
    if args.hold {
        println!("graph-builder configuration: {}", config.display());
        println!("holding the registry until interrupted");
        tokio::signal::ctrl_c().await?;
        return Ok(());
    }
    let tuning: &[(&str, &str)] = if args.glibc_defaults {
        &[]
    } else {
        &GRAPH_BUILDER_GLIBC_TUNING
    };
    let start = || {
        Service::start_with_env(
            &args.graph_builder,
            &["-c", config.to_str().unwrap_or_default()],
            tuning,
        )
    };
    let metrics_url = "http://127.0.0.1:19080/metrics";
    let service = if args.components == 0 {
        let (service, cold) = cold_scrape("releases", &registry, start, metrics_url).await?;
        let paths = scrape_paths(&registry).await?;
        for &concurrency in &args.floor_concurrency {
            let floor = registry_floor(&registry, &paths, concurrency).await?;
            println!(
                "  against the registry's floor: {:.2} s for the same manifests and blobs, \
                 {concurrency} at a time: the cold scrape at {:.2}x of it",
                floor.as_secs_f64(),
                floor.as_secs_f64() / cold.as_secs_f64()
            );
        }
        service
    } else {
        drop(
            cold_scrape("releases alone", &registry, start, metrics_url)
                .await?
                .0,
        );
        let base_layer = push_components(&registry, &pusher, &items, args.components).await?;
        let (service, _) = cold_scrape(
            &format!("releases and {} component images", args.components),
            &registry,
            start,
            metrics_url,
        )
        .await?;
        let read = registry
            .request_log()
            .await?
            .iter()
            .filter(|request| request.kind() == RequestKind::Blob && request.path.contains(&base_layer))
            .count();
        println!("  reads of the components' shared base layer: {read}");
        service
    };

    for (label, new_tag) in [("no change", false), ("one new tag", true)] {
        let before = poll(metrics_url, Duration::from_secs(5), |_| true).await?;
        let scrapes = metric(&before, "cincinnati_gb_graph_upstream_scrapes_duration_count");
        let seconds = metric(&before, "cincinnati_gb_graph_upstream_scrapes_duration_sum");
        let misses = metric(&before, "cincinnati_gb_graph_scrape_cache_misses_total");
        registry.clear_request_log();
        if new_tag {
            let metadata = ReleaseMetadata::new("4.99.0").previous(["4.18.1"]);
            pusher
                .push(REPOSITORY, "4.99.0-amd64", Image::release(&metadata, "amd64"))
                .await?;
        }
        // The window ends with the first scrape that saw the change (or any
        // scrape, without one); a scrape that began before the push may fall
        // in it too, so the duration is the mean over the window.
        let after = poll(metrics_url, Duration::from_secs(60), |text| {
            metric(text, "cincinnati_gb_graph_upstream_scrapes_duration_count") > scrapes
                && (!new_tag || metric(text, "cincinnati_gb_graph_scrape_cache_misses_total") > misses)
        })
        .await?;
        let window = metric(&after, "cincinnati_gb_graph_upstream_scrapes_duration_count") - scrapes;
        let duration =
            (metric(&after, "cincinnati_gb_graph_upstream_scrapes_duration_sum") - seconds) / window;
        let requests: Vec<_> = registry
            .request_log()
            .await?
            .into_iter()
            .filter(|request| request.user_agent.starts_with("cincinnati-rs-graph-builder"))
            .collect();
        let count = |kind| requests.iter().filter(|request| request.kind() == kind).count();
        println!(
            "refresh with {label}: {duration:.3} s per scrape over {window} scrape(s), \
             {} graph-builder requests ({} manifests, {} blobs)",
            requests.len(),
            count(RequestKind::Manifest),
            count(RequestKind::Blob)
        );
    }
    println!(
        "graph-builder RSS: peak {:.1} MiB, now {:.1} MiB ({})",
        service.peak_rss_mib()?,
        service.rss_mib()?,
        if args.glibc_defaults {
            "glibc malloc defaults"
        } else {
            "the image's malloc settings"
        }
    );
    Ok(())
}

/// Starts a graph-builder (`start`) on a registry whose request log is
/// cleared, waits for its first served graph, prints what that took; the
/// running service and the time to its graph.
async fn cold_scrape(
    label: &str,
    registry: &LocalRegistry,
    start: impl FnOnce() -> anyhow::Result<Service>,
    metrics_url: &str,
) -> anyhow::Result<(Service, Duration)> {
    registry.clear_request_log();
    let started = Instant::now();
    let service = start()?;
    let ready = |text: &str| metric(text, "cincinnati_gb_graph_final_releases") > 0.0;
    let text = poll(metrics_url, Duration::from_secs(600), ready).await?;
    let cold = started.elapsed();
    let requests = registry.request_log().await?;
    let count = |kind| requests.iter().filter(|request| request.kind() == kind).count();
    println!(
        "cold scrape to a served graph, {label}: {:.2} s ({} releases, {} edges, {} conditional edges in the graph)",
        cold.as_secs_f64(),
        metric(&text, "cincinnati_gb_graph_final_releases"),
        metric(&text, "cincinnati_gb_graph_final_edges"),
        metric(&text, "cincinnati_gb_graph_final_conditional_edges"),
    );
    println!(
        "  registry requests: {} ({} tag pages, {} manifests, {} blobs)",
        requests.len(),
        count(RequestKind::TagList),
        count(RequestKind::Manifest),
        count(RequestKind::Blob)
    );
    println!(
        "  graph-builder peak RSS so far: {:.1} MiB",
        service.peak_rss_mib()?
    );
    Ok((service, cold))
}

/// The manifests and blobs the registry has served since its log was last
/// cleared (a cold scrape's).
async fn scrape_paths(registry: &LocalRegistry) -> anyhow::Result<Vec<String>> {
    Ok(registry
        .request_log()
        .await?
        .into_iter()
        .filter(|request| matches!(request.kind(), RequestKind::Manifest | RequestKind::Blob))
        .map(|request| request.path)
        .collect())
}

/// `paths` asked again `concurrency` at a time by a client that only reads
/// the answers: how fast the registry itself serves a cold scrape's
/// requests on this machine, the floor of any scraper. How long that took.
async fn registry_floor(
    registry: &LocalRegistry,
    paths: &[String],
    concurrency: usize,
) -> anyhow::Result<Duration> {
    let client = &reqwest::Client::new();
    let base = &registry.url();
    let started = Instant::now();
    let mut read = futures::stream::iter(paths)
        .map(|path| async move {
            let mut answer = client
                .get(format!("{base}{path}"))
                .header(reqwest::header::ACCEPT, MANIFEST_TYPES)
                .send()
                .await?
                .error_for_status()?;
            while answer.chunk().await?.is_some() {}
            anyhow::Ok(())
        })
        .buffer_unordered(concurrency);
    while let Some(answer) = read.next().await {
        answer?;
    }
    Ok(started.elapsed())
}

/// Every manifest media type a release can be pushed as.
const MANIFEST_TYPES: &str = "application/vnd.oci.image.index.v1+json, \
application/vnd.docker.distribution.manifest.list.v2+json, \
application/vnd.oci.image.manifest.v1+json, \
application/vnd.docker.distribution.manifest.v2+json";

/// Some of the components a release names (`oc adm release info`).
const COMPONENTS: [&str; 12] = [
    "cli",
    "installer",
    "etcd",
    "hyperkube",
    "machine-config-operator",
    "cluster-version-operator",
    "console",
    "oauth-server",
    "haproxy-router",
    "ovn-kubernetes",
    "prometheus",
    "must-gather",
];

/// Pushes `count` component images of the releases `items` (their tags
/// with `-<component>`), each labelled as OpenShift builds them, on one
/// shared 1 MiB base layer with a small layer of its own on top; the base
/// layer's digest.
async fn push_components(
    registry: &LocalRegistry,
    pusher: &Pusher,
    items: &[(String, Pushable)],
    count: usize,
) -> anyhow::Result<String> {
    let base = Layer::random(1, 7);
    let components: Vec<(String, Pushable)> = items
        .iter()
        .flat_map(|(tag, _)| COMPONENTS.iter().map(move |component| (tag, *component)))
        .take(count)
        .map(|(tag, component)| {
            // A multi release's components are lists; one image stands for them.
            let arch = match tag.rsplit('-').next() {
                Some("multi") | None => "amd64",
                Some(arch) => arch,
            };
            let image = Image::new(arch)
                .label("io.openshift.build.name", component)
                .label(
                    "io.openshift.build.source-location",
                    format!("https://github.com/openshift/{component}"),
                )
                .label("vendor", "Red Hat, Inc.")
                .layer(base.clone())
                .layer(Layer::files([(
                    format!("usr/bin/{component}"),
                    format!("{tag} {component}"),
                )]));
            (format!("{tag}-{component}"), image.into())
        })
        .collect();
    let started = Instant::now();
    pusher
        .push_all(REPOSITORY, &components)
        .await
        .context("pushing the component images")?;
    println!(
        "pushed {} component images in {:.1} s",
        components.len(),
        started.elapsed().as_secs_f64()
    );
    let (tag, _) = components.first().context("no component pushed")?;
    let manifest: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/v2/{REPOSITORY}/manifests/{tag}", registry.url()))
        .header("Accept", "application/vnd.docker.distribution.manifest.v2+json")
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    manifest["layers"][0]["digest"]
        .as_str()
        .map(str::to_owned)
        .context("a component manifest without layers")
}
