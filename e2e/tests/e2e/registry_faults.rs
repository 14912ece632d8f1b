//! Faults at the registry: it stops while the graph-builder serves, it stops
//! in the middle of a scrape, and a bad image sits among the releases.
//! Clusters keep being served a whole, consistent graph; the graph-builder's
//! status says what is wrong; everything recovers by itself.

use std::collections::BTreeSet;

use e2e::expected::client_graph;
use e2e::graph_builder::GraphBuilderOptions;
use e2e::poll;
use e2e::releases::Release;
use e2e::scenario::{self, ARCHITECTURES, CANDIDATE, WATCHED};
use e2e::stack::{ONE_REFRESH_PER_HOP, Stack};
use release_images::{Image, Layer, ManifestFormat};
use serde_json::Value;

fn both_sources_failing(status: &Value) -> bool {
    let sources = &status["sources"];
    sources["releases"]["stale"] == true && sources["graph_data"]["stale"] == true
}

fn both_sources_healthy(status: &Value) -> bool {
    let sources = &status["sources"];
    sources["releases"]["stale"] == false && sources["graph_data"]["stale"] == false
}

#[tokio::test]
async fn the_registry_stopping_while_serving_keeps_the_last_graph_until_it_returns() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    stack.await_all_expected(&WATCHED).await.unwrap();

    stack.registry.stop().unwrap();
    let status = stack
        .graph_builder
        .await_status("both sources failing", both_sources_failing)
        .await
        .unwrap();
    assert_eq!(status["ready"], true, "the last graph is still served");
    stack.assert_steady(&WATCHED, ONE_REFRESH_PER_HOP).await.unwrap();

    stack.registry.restart().await.unwrap();
    stack
        .graph_builder
        .await_status("both sources healthy", both_sources_healthy)
        .await
        .unwrap();
    stack.assert_a_new_release_arrives("4.17.2").await.unwrap();
}

const NEW_VERSION: &str = "4.17.2";

/// A layer on top of each new release, read before its metadata: it makes
/// a scrape of the new releases long enough to stop the registry in it.
const BULK_MIB: u64 = 8;

#[tokio::test]
async fn the_registry_stopping_mid_scrape_never_shows_clusters_a_broken_graph() {
    let options = GraphBuilderOptions {
        fetch_concurrency: 1,
        ..GraphBuilderOptions::default()
    };
    let mut stack = Stack::start(options).await.unwrap();
    let candidate_views = ARCHITECTURES.map(|arch| (CANDIDATE, arch));
    stack.await_all_expected(&candidate_views).await.unwrap();

    let mut new = scenario::new_releases(NEW_VERSION, &["4.17.0", "4.17.1"]);
    for release in &mut new {
        release.bulk = Some(Layer::random(BULK_MIB, 1));
    }
    stack.push_releases(&new).await.unwrap();
    let new_manifests: Vec<String> = new
        .iter()
        .map(|release| format!("/manifests/{}", release.tag()))
        .collect();
    let (asked_for, _) = poll::until(
        "the graph-builder to read the new releases",
        poll::CHANGE_TIMEOUT,
        || async {
            let log = stack.registry.request_log().await?;
            let asked_for = log
                .iter()
                .filter(|request| request.method == "GET")
                .filter(|request| {
                    new_manifests
                        .iter()
                        .any(|manifest| request.path.ends_with(manifest))
                })
                .count();
            anyhow::ensure!(asked_for > 0, "no new release asked for yet");
            Ok(asked_for)
        },
    )
    .await
    .unwrap();
    stack.registry.stop().unwrap();
    println!(
        "e2e: stopped the registry when the graph-builder had asked for {asked_for} of {} new releases",
        new.len()
    );

    stack
        .graph_builder
        .await_status("the scrape failing", |status| {
            status["sources"]["releases"]["stale"] == true
        })
        .await
        .unwrap();
    // Whatever the interrupted scrape got, clusters see every old release and
    // a graph consistent with the new releases they see.
    poll::throughout("a consistent graph", ONE_REFRESH_PER_HOP, || async {
        for arch in ARCHITECTURES {
            let served = stack.engines.served(CANDIDATE, arch).await?;
            let shown: BTreeSet<&String> = served.nodes.keys().collect();
            let old_and_shown = stack.published().only(|pushed| {
                pushed.release.version != NEW_VERSION || shown.contains(&pushed.release.version)
            });
            let consistent = client_graph(&old_and_shown, CANDIDATE, arch);
            anyhow::ensure!(
                served == consistent,
                "{arch}: {}",
                served.difference_from(&consistent)
            );
        }
        Ok(())
    })
    .await
    .unwrap();

    stack.registry.restart().await.unwrap();
    stack.await_all_expected(&candidate_views).await.unwrap();
}

#[tokio::test]
async fn a_bad_image_is_left_out_and_reported_and_the_rest_still_served() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    let truncated_metadata =
        Layer::raw_release_metadata(r#"{"kind": "cincinnati-metadata-v0", "version": "4.17.2""#);
    stack
        .push_non_release("4.17.2-amd64", Image::new("amd64").layer(truncated_metadata))
        .await
        .unwrap();
    let no_metadata = Layer::files([("etc/motd", "not a release")]);
    stack
        .push_non_release("tools", Image::new("amd64").layer(no_metadata))
        .await
        .unwrap();
    // Pushed last: once it is served, the graph-builder has seen the bad images too.
    let mut good = Release::new("4.17.2", "arm64", ManifestFormat::Oci);
    good.previous = vec!["4.17.1".to_owned()];
    stack.push_releases(&[good]).await.unwrap();

    let views = ARCHITECTURES.map(|arch| (CANDIDATE, arch));
    stack.await_all_expected(&views).await.unwrap();
    stack.assert_steady(&views, ONE_REFRESH_PER_HOP).await.unwrap();
    let status = stack
        .graph_builder
        .await_status("the bad images", |status| {
            status["sources"]["dropped"]
                .as_array()
                .is_some_and(|dropped| dropped.len() >= 2)
        })
        .await
        .unwrap();
    let dropped: BTreeSet<(&str, &str)> = status["sources"]["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["subject"].as_str().unwrap(),
                entry["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        dropped,
        BTreeSet::from([
            ("ocp/release:4.17.2-amd64", "invalid_release_metadata"),
            ("ocp/release:tools", "no_release_metadata"),
        ])
    );
}
