//! The graph-builder service scraping a real registry, with its graph-data
//! in an image in the same registry: the deployment shape of a disconnected
//! site. The registry going away must not blank the graph.

use std::path::Path;

use cincinnati_core::release::keys;
use graph_builder::Application;
use graph_builder::plan::Plan;
use graph_builder::settings::Settings;
use image_signature::store::path as store_path;
use image_signature::{Digest, MAX_SIGNATURE_BYTES};
use jiff::{SignedDuration, Timestamp};
use registry_testkit::{Body, FileServer, LocalRegistry};
use release_images::signature::SigningKey;
use release_images::{Image, PushOptions, Pushable, Pusher, ReleaseMetadata};

use crate::support::{Running, StatusExt as _};

const RELEASES: &str = "ocp/release";
const GRAPH_DATA: &str = "ocp/graph-data";

/// A small graph-data: one channel, one risk.
fn write_graph_data(dir: &Path) {
    write_channel(
        dir,
        "1.1.0",
        "name: stable-4.1\nversions:\n- 4.1.0\n- 4.1.1\n- 4.1.2\n",
    );
    std::fs::write(
        dir.join("blocked-edges/4.1.2-Example.yaml"),
        "to: 4.1.2\nfrom: 4[.]1[.]0\nurl: https://example.com/risk\nname: ExampleRisk\n\
         message: Example risk.\nmatchingRules:\n- type: Always\n",
    )
    .unwrap();
}

/// Graph-data of schema `version` with one channel, stable-4.1.
fn write_channel(dir: &Path, version: &str, channel: &str) {
    std::fs::create_dir_all(dir.join("channels")).unwrap();
    std::fs::create_dir_all(dir.join("blocked-edges")).unwrap();
    std::fs::create_dir_all(dir.join("raw")).unwrap();
    std::fs::write(dir.join("version"), format!("{version}\n")).unwrap();
    std::fs::write(dir.join("raw/metadata.json"), "{}").unwrap();
    std::fs::write(dir.join("channels/stable-4.1.yaml"), channel).unwrap();
}

async fn push_releases(pusher: &Pusher, versions: &[&str]) {
    let items: Vec<(String, Pushable)> = versions
        .iter()
        .enumerate()
        .map(|(position, version)| {
            let metadata = ReleaseMetadata::new(*version).previous(versions[..position].iter().copied());
            (
                format!("{version}-x86_64"),
                Image::release(&metadata, "amd64").into(),
            )
        })
        .collect();
    pusher.push_all(RELEASES, &items).await.unwrap();
}

fn settings(registry: &LocalRegistry) -> Settings {
    settings_with(registry, "")
}

/// [`settings`] with more keys for the graph-data image source.
fn settings_with(registry: &LocalRegistry, graph_data_keys: &str) -> Settings {
    settings_scheduled(registry, "pause_secs = 1\n", graph_data_keys)
}

/// Settings with `schedule` as the `[service]` keys of the refreshes.
fn settings_scheduled(registry: &LocalRegistry, schedule: &str, graph_data_keys: &str) -> Settings {
    let text = format!(
        "[service]\nport = 0\npublic_port = 0\n{schedule}[status]\nport = 0\n\
         [[plugin_settings]]\nname = \"release-scrape-dockerv2\"\nregistry = \"{url}\"\nrepository = \"{RELEASES}\"\n\
         request_timeout_secs = 2\n\
         [[plugin_settings]]\nname = \"dkrv2-secondary-metadata-scrape\"\nregistry = \"{url}\"\n\
         repository = \"{GRAPH_DATA}\"\ntag = \"latest\"\noutput_directory = \"/tmp/unused\"\n{graph_data_keys}\
         [[plugin_settings]]\nname = \"openshift-secondary-metadata-parse\"\n\
         [[plugin_settings]]\nname = \"edge-add-remove\"\n",
        url = registry.url()
    );
    toml::from_str(&text).unwrap()
}

async fn spawn(settings: &Settings) -> Running {
    crate::support::spawn(settings, "").await
}

/// The graph `app` serves.
async fn served_graph(app: &Running) -> serde_json::Value {
    app.get(&format!("{}/graph", app.api)).await.json().await.unwrap()
}

/// A registry with releases 4.1.0 to 4.1.2 and the small graph-data image,
/// and the image's digest.
async fn registry_with_releases_and_graph_data() -> (LocalRegistry, Pusher, String) {
    let registry = LocalRegistry::start().await.unwrap();
    let pusher = Pusher::new(&registry.url(), PushOptions::default()).unwrap();
    push_releases(&pusher, &["4.1.0", "4.1.1", "4.1.2"]).await;
    let graph_data = tempfile::tempdir().unwrap();
    write_graph_data(graph_data.path());
    let image = Image::graph_data(graph_data.path()).unwrap();
    let digest = pusher.push(GRAPH_DATA, "latest", image).await.unwrap();
    (registry, pusher, digest)
}

#[tokio::test]
async fn scrapes_applies_graph_data_from_an_image_and_survives_the_registry_going_away() {
    let (mut registry, pusher, _) = registry_with_releases_and_graph_data().await;

    let app = spawn(&settings(&registry)).await;
    let status = app.wait_until_ready().await;
    let image_digest = status
        .graph_data
        .as_ref()
        .unwrap()
        .image_digest
        .as_deref()
        .unwrap();
    assert!(image_digest.starts_with("sha256:"), "{status:#?}");
    assert_eq!(
        Some(&status.graph_data.as_ref().unwrap().revision),
        status.graph().graph_data_revision.as_ref()
    );
    let graph = served_graph(&app).await;
    let nodes = graph["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3);
    assert!(
        nodes
            .iter()
            .all(|node| node["metadata"]["io.openshift.upgrades.graph.release.channels"] == "stable-4.1")
    );
    let conditional = &graph["conditionalEdges"];
    assert_eq!(conditional[0]["edges"][0]["from"], "4.1.0+amd64");
    assert_eq!(conditional[0]["edges"][0]["to"], "4.1.2+amd64");
    assert_eq!(conditional[0]["risks"][0]["name"], "ExampleRisk");
    assert_eq!(
        graph["edges"].as_array().unwrap().len(),
        2,
        "4.1.0->4.1.2 became conditional"
    );

    // A new release reaches clients within a refresh.
    push_releases(&pusher, &["4.1.0", "4.1.1", "4.1.2", "4.1.3"]).await;
    app.wait_for("the new release", |status| {
        status.graph.as_ref().is_some_and(|graph| graph.releases == 4)
    })
    .await;

    registry.stop().unwrap();
    let status = app
        .wait_for("the registry error", |status| {
            status.sources.releases.freshness.is_stale()
        })
        .await;
    assert_eq!(status.graph().releases, 4, "the last good graph is kept");
    assert_eq!(served_graph(&app).await["nodes"].as_array().unwrap().len(), 4);

    registry.restart().await.unwrap();
    app.wait_for("recovery", |status| !status.sources.releases.freshness.is_stale())
        .await;
}

/// The revision of the graph-data the served graph was built with.
fn served_revision(status: &graph_builder::state::Status) -> Option<String> {
    status.graph.as_ref()?.graph_data_revision.clone()
}

#[tokio::test]
async fn between_scrapes_the_change_checks_find_a_new_tag_and_a_new_graph_data_image() {
    let (mut registry, pusher, _) = registry_with_releases_and_graph_data().await;
    // The scrapes and graph-data refreshes would not run again within the test.
    let schedule = "pause_secs = 3600\nrelease_check_secs = 1\ngraph_data_check_secs = 1\n";
    let app = spawn(&settings_scheduled(&registry, schedule, "")).await;
    let first = app.wait_until_ready().await;
    assert_eq!(first.graph().releases, 3);
    let first_revision = served_revision(&first);

    push_releases(&pusher, &["4.1.0", "4.1.1", "4.1.2", "4.1.3"]).await;
    let status = app
        .wait_for("the new release, found by the tag list check", |status| {
            status.graph.as_ref().is_some_and(|graph| graph.releases == 4)
        })
        .await;
    let releases = &status.sources.releases;
    assert!(releases.last_change.is_some(), "{releases:?}");
    assert!(
        releases
            .change_check
            .as_ref()
            .unwrap()
            .freshness
            .last_success()
            .is_some()
    );

    let graph_data = tempfile::tempdir().unwrap();
    write_graph_data(graph_data.path());
    std::fs::remove_file(graph_data.path().join("blocked-edges/4.1.2-Example.yaml")).unwrap();
    let image = Image::graph_data(graph_data.path()).unwrap();
    pusher.push(GRAPH_DATA, "latest", image).await.unwrap();
    let status = app
        .wait_for("the new graph-data image, found by its digest", |status| {
            served_revision(status) != first_revision
                && status
                    .sources
                    .graph_data
                    .as_ref()
                    .is_some_and(|source| source.last_change_served.is_some())
        })
        .await;
    assert_eq!(status.graph().conditional_edges, 0, "the risk was removed");

    // A check that fails shows in status and changes nothing served.
    registry.stop().unwrap();
    let status = app
        .wait_for("the failing release check", |status| {
            let check = status.sources.releases.change_check.as_ref().unwrap();
            check.freshness.is_stale()
        })
        .await;
    assert_eq!(status.graph().releases, 4, "the last good graph is kept");
    assert_eq!(status.graph().conditional_edges, 0);
    registry.restart().await.unwrap();
    app.wait_for("the check working again", |status| {
        !status
            .sources
            .releases
            .change_check
            .as_ref()
            .unwrap()
            .freshness
            .is_stale()
    })
    .await;
    let metrics = app
        .get(&format!("{}/metrics", app.status))
        .await
        .text()
        .await
        .unwrap();
    for wanted in [
        "cincinnati_gb_graph_change_check_errors_total{source=\"releases\"}",
        "cincinnati_gb_graph_change_to_serve_seconds_count{source=\"graph_data\"}",
    ] {
        assert!(metrics.contains(wanted), "{wanted} in {metrics}");
    }
}

#[tokio::test]
async fn one_graph_builder_feeds_another_its_graph_data() {
    let (registry, _pusher, _) = registry_with_releases_and_graph_data().await;
    let first = spawn(&settings(&registry)).await;
    let public = format!("{}/graph-data", first.public);
    first.wait_until_ready().await;

    let text = format!(
        "[service]\nport = 0\npublic_port = 0\npause_secs = 1\n[status]\nport = 0\n\
         [[plugin_settings]]\nname = \"release-scrape-dockerv2\"\nregistry = \"{url}\"\nrepository = \"{RELEASES}\"\n\
         [[plugin_settings]]\nname = \"graph-data-tarball\"\nurl = \"{public}\"\n\
         [[plugin_settings]]\nname = \"openshift-secondary-metadata-parse\"\n\
         [[plugin_settings]]\nname = \"edge-add-remove\"\n",
        url = registry.url()
    );
    let second = spawn(&toml::from_str(&text).unwrap()).await;
    second.wait_for("the second graph", |status| status.ready).await;
    assert_eq!(served_graph(&first).await, served_graph(&second).await);
}

#[tokio::test]
async fn signature_verification_without_keys_is_refused_at_start_up() {
    let registry = LocalRegistry::start().await.unwrap();
    let keys = tempfile::tempdir().unwrap();
    let text = format!(
        "[service]\nport = 0\npublic_port = 0\n[status]\nport = 0\n\
         [[plugin_settings]]\nname = \"release-scrape-dockerv2\"\nregistry = \"{url}\"\nrepository = \"{RELEASES}\"\n\
         [[plugin_settings]]\nname = \"dkrv2-secondary-metadata-scrape\"\nregistry = \"{url}\"\n\
         repository = \"{GRAPH_DATA}\"\noutput_directory = \"/tmp/unused\"\nverify_signature = true\n\
         public_keys_path = {keys:?}\n",
        url = registry.url(),
        keys = keys.path().display().to_string(),
    );
    let settings: Settings = toml::from_str(&text).unwrap();
    let error = Application::build(&settings)
        .err()
        .expect("no keys to verify with")
        .to_string();
    assert!(error.contains("dkrv2-secondary-metadata-scrape"), "{error}");
    assert!(error.contains(&keys.path().display().to_string()), "{error}");
}

#[test]
fn both_registry_plugins_read_a_credentials_file_by_one_rule() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{ not json").unwrap();
    let absent = dir.path().join("absent.json");
    let plan = |releases_credentials: &Path, graph_data_credentials: &Path| {
        let text = format!(
            "[[plugin_settings]]\nname = \"release-scrape-dockerv2\"\nregistry = \"http://127.0.0.1:1\"\n\
             repository = \"{RELEASES}\"\ncredentials_path = {releases:?}\n\
             [[plugin_settings]]\nname = \"dkrv2-secondary-metadata-scrape\"\nregistry = \"http://127.0.0.1:1\"\n\
             repository = \"{GRAPH_DATA}\"\ncredentials_path = {graph_data:?}\n",
            releases = releases_credentials.display().to_string(),
            graph_data = graph_data_credentials.display().to_string(),
        );
        Plan::from_settings(&toml::from_str(&text).unwrap())
    };
    // Absent (an optional Secret that is not there): anonymous, in both.
    assert!(plan(&absent, &absent).is_ok());
    // Broken: refused at start-up, naming the plugin and the file, in both.
    for (releases, graph_data, plugin) in [
        (&broken, &absent, "release-scrape-dockerv2"),
        (&absent, &broken, "dkrv2-secondary-metadata-scrape"),
    ] {
        let error = plan(releases, graph_data)
            .err()
            .expect("a broken file is refused")
            .to_string();
        assert!(
            error.contains(plugin) && error.contains(&broken.display().to_string()),
            "{error}"
        );
    }
}

/// A signature store on 127.0.0.1 holding `signature` as signature 1 of
/// `digest`, and its `signature_baseurl`.
fn signature_store(digest: &str, signature: Body) -> (FileServer, String) {
    let store = FileServer::start().unwrap();
    store.serve(
        &format!("/signatures/{}", store_path(&Digest::parse(digest).unwrap(), 1)),
        signature,
    );
    let base_url = format!("{}/signatures/", store.url());
    (store, base_url)
}

/// [`settings`] verifying graph-data signatures from `base_url` with the
/// public key of `trusted`, written into `keys`.
fn verifying(registry: &LocalRegistry, keys: &Path, trusted: &SigningKey, base_url: &str) -> Settings {
    std::fs::write(keys.join("release.asc"), trusted.public_key_armored()).unwrap();
    settings_with(
        registry,
        &format!(
            "verify_signature = true\npublic_keys_path = {keys:?}\nsignature_baseurl = {base_url:?}\n",
            keys = keys.display().to_string(),
        ),
    )
}

#[tokio::test]
async fn a_graph_data_image_is_used_only_with_a_signature_by_a_trusted_key() {
    let (registry, _pusher, digest) = registry_with_releases_and_graph_data().await;
    let trusted = SigningKey::from_seed(1);
    let keys = tempfile::tempdir().unwrap();
    let reference = format!("{}/{GRAPH_DATA}:latest", registry.host_port());
    let signed_by = |key: &SigningKey| signature_store(&digest, Body::Bytes(key.sign(&reference, &digest)));

    let (_untrusted_store, untrusted_url) = signed_by(&SigningKey::from_seed(2));
    let refused = spawn(&verifying(&registry, keys.path(), &trusted, &untrusted_url)).await;
    let status = refused
        .wait_for("the graph-data refused", |status| {
            status.graph_data_error().is_some()
        })
        .await;
    let error = status.graph_data_error().unwrap();
    assert!(
        error.contains(&digest) && error.contains("not signed by a trusted key"),
        "{error}"
    );
    assert!(!status.ready, "no graph without its graph-data");

    let (_trusted_store, trusted_url) = signed_by(&trusted);
    let accepted = spawn(&verifying(&registry, keys.path(), &trusted, &trusted_url)).await;
    let status = accepted.wait_until_ready().await;
    assert_eq!(
        status.graph_data.as_ref().unwrap().image_digest.as_deref(),
        Some(digest.as_str())
    );
    assert!(status.graph_data_error().is_none(), "{status:#?}");
}

#[tokio::test]
async fn an_oversized_signature_is_refused_naming_the_limit_and_the_last_good_graph_data_stays() {
    let (registry, pusher, digest) = registry_with_releases_and_graph_data().await;
    let key = SigningKey::from_seed(1);
    let keys = tempfile::tempdir().unwrap();
    let reference = format!("{}/{GRAPH_DATA}:latest", registry.host_port());
    let (store, base_url) = signature_store(&digest, Body::Bytes(key.sign(&reference, &digest)));
    let app = spawn(&verifying(&registry, keys.path(), &key, &base_url)).await;
    let ready = app.wait_until_ready().await;
    assert_eq!(
        ready.graph_data.as_ref().unwrap().image_digest.as_deref(),
        Some(digest.as_str())
    );

    // New graph-data, whose signature is far too large.
    let graph_data = tempfile::tempdir().unwrap();
    write_graph_data(graph_data.path());
    std::fs::write(
        graph_data.path().join("channels/fast-4.1.yaml"),
        "name: fast-4.1\nversions:\n- 4.1.0\n",
    )
    .unwrap();
    let image = Image::graph_data(graph_data.path()).unwrap();
    let new_digest = pusher.push(GRAPH_DATA, "latest", image).await.unwrap();
    store.serve(
        &format!(
            "/signatures/{}",
            store_path(&Digest::parse(&new_digest).unwrap(), 1)
        ),
        Body::Streamed(4 * MAX_SIGNATURE_BYTES as u64),
    );
    let status = app
        .wait_for("the signature error", |status| {
            status.graph_data_error().is_some()
        })
        .await;
    let error = status.graph_data_error().unwrap();
    assert!(
        error.contains(&new_digest)
            && error.contains(&format!("sent more than the {MAX_SIGNATURE_BYTES} bytes allowed")),
        "{error}"
    );
    assert_eq!(
        status.graph_data.as_ref().unwrap().image_digest.as_deref(),
        Some(digest.as_str()),
        "the last good graph-data stays"
    );
    assert_eq!(status.graph().etag, ready.graph().etag);
}

/// A graph-builder whose graph-data phases 4.1.2 into stable-4.1 serves
/// 4.1.2 outside the channel's `release.channels` (with its rollout in
/// `release.phased_rollouts`) until the window ends, then lists it there:
/// rebuilt at that moment with nothing refreshed (the scrape and graph-data
/// pauses are an hour, their checks off).
#[tokio::test]
async fn a_phased_release_is_listed_when_its_window_ends_with_nothing_refreshed() {
    let registry = LocalRegistry::start().await.unwrap();
    let pusher = Pusher::new(&registry.url(), PushOptions::default()).unwrap();
    push_releases(&pusher, &["4.1.0", "4.1.1", "4.1.2"]).await;
    let schedule = "pause_secs = 3600\nrelease_check_secs = 0\ngraph_data_check_secs = 0\n";
    let release = |graph: &serde_json::Value, version: &str| {
        let nodes = graph["nodes"].as_array().unwrap();
        let node = nodes.iter().find(|node| node["version"] == version).unwrap();
        let metadata = |key: &str| node["metadata"][key].as_str().map(str::to_owned);
        (metadata(keys::CHANNELS), metadata(keys::PHASED_ROLLOUTS))
    };
    // The window ends `lead` after the test starts. A graph-builder first
    // built after that shows nothing of the window: the test starts again
    // with a longer lead (a slow machine costs time, not a failure).
    let mut lead = SignedDuration::from_secs(5);
    loop {
        let start = Timestamp::now()
            .round(jiff::Unit::Second)
            .unwrap()
            .checked_sub(SignedDuration::from_hours(1))
            .unwrap();
        let duration = format!("PT{}S", 3600 + lead.as_secs());
        let window_end = start + SignedDuration::from_secs(3600 + lead.as_secs());
        let graph_data = tempfile::tempdir().unwrap();
        write_channel(
            graph_data.path(),
            "2.0.0",
            &format!(
                "name: stable-4.1\nversions:\n- 4.1.0\n- 4.1.1\n- {{name: 4.1.2, start: {start}}}\n\
                 phasedRollouts:\n- {{duration: {duration}, fromVersion: patch}}\n"
            ),
        );
        let image = Image::graph_data(graph_data.path()).unwrap();
        pusher.push(GRAPH_DATA, "latest", image).await.unwrap();

        let app = spawn(&settings_scheduled(&registry, schedule, "")).await;
        let first = app.wait_until_ready().await;
        if built_at(&first) >= window_end {
            lead *= 4;
            continue;
        }
        let graph = served_graph(&app).await;
        assert_eq!(release(&graph, "4.1.1+amd64").0.as_deref(), Some("stable-4.1"));
        let rollout = format!(r#"{{"stable-4.1":{{"start":"{start}","patch":"{duration}"}}}}"#);
        assert_eq!(release(&graph, "4.1.2+amd64"), (None, Some(rollout)));

        let listed = app
            .wait_for("the graph rebuilt at the window's end", |status| {
                status.graph().etag != first.graph().etag
            })
            .await;
        assert!(built_at(&listed) >= window_end, "{listed:#?}");
        assert_eq!(served_revision(&listed), served_revision(&first));
        let graph = served_graph(&app).await;
        assert_eq!(
            release(&graph, "4.1.2+amd64"),
            (Some("stable-4.1".to_owned()), None)
        );
        return;
    }
}

/// When the graph `status` describes was built.
fn built_at(status: &graph_builder::state::Status) -> Timestamp {
    status.graph().built_at.parse().unwrap()
}
