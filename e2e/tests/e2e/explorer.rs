//! The explorer page in a real browser (headless Chromium) on engine A,
//! chained to a graph-builder serving the bundled demo data: what the page
//! draws, plans and explains is what the planning library answers on the
//! graph-builder's graph, and what it shows follows the graph.
//!
//! With `EXPLORER_SCREENSHOTS` set to a directory, the views are saved
//! there (scripts/screenshots.sh refreshes docs/ so).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, ensure};
use cincinnati_client::document::{Document, Shape};
use cincinnati_client::explain::{ExplainQuery, explain};
use cincinnati_client::json::ExplanationJson;
use cincinnati_client::plan::{PathAnswer, PathQuery, plan};
use cincinnati_client::{Tier, UpdateGraph};
use cincinnati_core::Version;
use e2e::browser::Browser;
use e2e::graph_builder::PATH_PREFIX;
use e2e::offline::OfflineStack;
use e2e::{policy_engine, poll};
use fantoccini::key::Key;
use release_set_generator::{demo_releases, testdata_graph_data};

const CHANNEL: &str = "stable-4.18";
const ARCH: &str = "amd64";
/// Waits for the drawing: the summary carries its counts once drawn.
const DRAWN: &str = "#summary[data-releases]";

/// The page on engine A, with `query`.
fn page_url(stack: &OfflineStack, query: &str) -> String {
    stack.engines.engine_a.api_url(&format!("{PATH_PREFIX}/?{query}"))
}

/// The library's graph of [`ARCH`], built from the graph-builder's graph.
async fn library_graph(stack: &OfflineStack) -> anyhow::Result<UpdateGraph> {
    let body = reqwest::get(stack.full_graph_url()).await?.bytes().await?;
    let graph = cincinnati_core::wire::parse(&body)?.graph;
    Ok(UpdateGraph::build(
        ARCH,
        &[Document {
            graph,
            shape: Shape::Full,
        }],
    ))
}

/// Saves a screenshot as `name` where scripts/screenshots.sh asks, else in
/// the stack's directory (kept when a test fails).
async fn screenshot(browser: &Browser, stack: &OfflineStack, name: &str) -> anyhow::Result<()> {
    let directory =
        std::env::var_os("EXPLORER_SCREENSHOTS").map_or_else(|| stack.workdir().to_owned(), PathBuf::from);
    let path = directory.join(name);
    std::fs::write(&path, browser.screenshot().await?).with_context(|| format!("writing {}", path.display()))
}

/// The first update of [`CHANNEL`] with risks: its ends and risk names.
fn a_conditional_update(graph: &UpdateGraph) -> (String, String, BTreeSet<String>) {
    let channel = graph.channel(CHANNEL).unwrap();
    let update = channel
        .updates()
        .find(|update| update.risks.is_some())
        .expect("the demo channel has conditional updates");
    let risks = update
        .risks
        .unwrap()
        .iter()
        .map(|risk| risk.name.clone())
        .collect();
    (
        graph.version(update.from).to_string(),
        graph.version(update.to).to_string(),
        risks,
    )
}

#[tokio::test]
async fn the_page_draws_plans_and_explains_what_the_library_answers() {
    let stack = OfflineStack::start(&demo_releases(), &testdata_graph_data())
        .await
        .unwrap();
    let library = library_graph(&stack).await.unwrap();
    let browser = Browser::start().await.unwrap();

    // The channel, drawn: every release of it, nothing else, no error, and
    // nothing asked of anyone but the engine.
    browser
        .open(&page_url(&stack, &format!("channel={CHANNEL}&arch={ARCH}")))
        .await
        .unwrap();
    let summary = browser.wait_for(DRAWN).await.unwrap();
    let expected: BTreeSet<String> = library
        .channel(CHANNEL)
        .unwrap()
        .releases()
        .iter()
        .map(|&release| library.version(release).to_string())
        .collect();
    let drawn: BTreeSet<String> = browser
        .attributes(".node", "data-version")
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(drawn, expected);
    assert_eq!(
        summary.attr("data-releases").await.unwrap(),
        Some(expected.len().to_string())
    );
    println!(
        "{CHANNEL}: {} releases drawn in {} ms",
        expected.len(),
        summary.attr("data-draw-ms").await.unwrap().unwrap_or_default()
    );
    let origin = stack.engines.engine_a.api_url("/");
    for url in browser.requested_urls().await.unwrap() {
        assert!(url.starts_with(&origin), "the page asked {url}, not the engine");
    }
    screenshot(&browser, &stack, "explorer-channel.png")
        .await
        .unwrap();

    // The keyboard: the drawing's one tab stop is the newest release; up
    // moves to the one before it, Enter selects it.
    let newest: Vec<String> = library.channel(CHANNEL).unwrap().releases()[..]
        .iter()
        .rev()
        .take(2)
        .map(|&release| library.version(release).to_string())
        .collect();
    let stop = browser.wait_for(".node[tabindex=\"0\"]").await.unwrap();
    assert_eq!(
        stop.attr("data-version").await.unwrap().as_ref(),
        Some(&newest[0])
    );
    let press = |key: Key| char::from(key).to_string();
    stop.send_keys(&press(Key::Up)).await.unwrap();
    let focused = browser.client().active_element().await.unwrap();
    assert_eq!(
        focused.attr("data-version").await.unwrap().as_ref(),
        Some(&newest[1])
    );
    focused.send_keys(&press(Key::Enter)).await.unwrap();
    let selected = browser.wait_for("#release-body[data-version]").await.unwrap();
    assert_eq!(
        selected.attr("data-version").await.unwrap().as_ref(),
        Some(&newest[1])
    );

    // A conditional update, selected: its risks by name.
    let (from, to, risks) = a_conditional_update(&library);
    browser
        .wait_for(&format!(".node[data-version=\"{from}\"]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let shown: BTreeSet<String> = browser
        .attributes(&format!("#updates li[data-to=\"{to}\"] .risk"), "data-risk")
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(shown, risks, "the risks of {from} → {to}");
    screenshot(&browser, &stack, "explorer-release.png")
        .await
        .unwrap();

    // From → to, typed into the form: the library's hops, and why there is
    // no direct update in the channel drawn.
    let (from, to) = ("4.17.22", "4.18.40");
    let query = PathQuery {
        from: Version::parse(from).unwrap(),
        to: Version::parse(to).unwrap(),
        tier: Tier::Stable,
        accepted_risks: BTreeSet::new(),
        alternatives: 0,
    };
    let PathAnswer::Found { plan: planned, .. } = plan(&library, &query) else {
        panic!("the library finds no path from {from} to {to}");
    };
    let hops: Vec<[String; 3]> = planned
        .hops
        .iter()
        .map(|hop| {
            [
                hop.from.version.to_string(),
                hop.to.version.to_string(),
                hop.channel.to_owned(),
            ]
        })
        .collect();
    assert!(!hops.is_empty());
    let client = browser.client();
    for (field, version) in [("#from", from), ("#to", to)] {
        client
            .find(fantoccini::Locator::Css(field))
            .await
            .unwrap()
            .send_keys(version)
            .await
            .unwrap();
    }
    client
        .find(fantoccini::Locator::Css("#choice button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert_eq!(shown_hops(&browser).await.unwrap(), hops);
    let explanation = explain(
        &library,
        &ExplainQuery {
            channel: CHANNEL.to_owned(),
            from: query.from.clone(),
            to: query.to.clone(),
        },
        None,
    );
    let verdict = serde_json::to_value(ExplanationJson::new(&explanation)).unwrap()["verdict"].clone();
    let why = browser.wait_for("#why-not").await.unwrap();
    assert_eq!(
        why.attr("data-verdict").await.unwrap().as_deref(),
        verdict.as_str()
    );
    screenshot(&browser, &stack, "explorer-path.png").await.unwrap();

    // The state is in the URL: opened again, the page shows the same.
    let url = client.current_url().await.unwrap().to_string();
    for part in [
        format!("channel={CHANNEL}"),
        format!("arch={ARCH}"),
        format!("from={from}"),
        format!("to={to}"),
    ] {
        assert!(url.contains(&part), "{url} lacks {part}");
    }
    browser.open("about:blank").await.unwrap();
    browser.open(&url).await.unwrap();
    browser.wait_for(DRAWN).await.unwrap();
    assert_eq!(shown_hops(&browser).await.unwrap(), hops);
    let channel = browser
        .wait_for("#channel")
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap();
    assert_eq!(channel.as_deref(), Some(CHANNEL));

    assert_eq!(browser.console_errors().await.unwrap(), Vec::<String>::new());
    browser.close().await.unwrap();
}

/// The hops of the path the page shows, once it shows one.
async fn shown_hops(browser: &Browser) -> anyhow::Result<Vec<[String; 3]>> {
    browser.wait_for("#path-list li").await?;
    let mut hops = Vec::new();
    for item in browser.all("#path-list li").await? {
        let attribute = async |name| anyhow::Ok(item.attr(name).await?.unwrap_or_default());
        hops.push([
            attribute("data-from").await?,
            attribute("data-to").await?,
            attribute("data-channel").await?,
        ]);
    }
    Ok(hops)
}

/// A release the demo data does not have, added to [`CHANNEL`].
const NEW_RELEASE: &str = "4.18.99";

#[tokio::test]
async fn a_release_added_underneath_shows_after_a_reload() {
    let data = tempfile::tempdir().unwrap();
    let (releases, graph_data) = (
        data.path().join("releases.json.gz"),
        data.path().join("graph-data"),
    );
    std::fs::copy(demo_releases(), &releases).unwrap();
    copy_tree(&testdata_graph_data(), &graph_data).unwrap();
    let stack = OfflineStack::start(&releases, &graph_data).await.unwrap();
    let browser = Browser::start().await.unwrap();
    let new_node = format!(".node[data-version=\"{NEW_RELEASE}\"]");

    browser
        .open(&page_url(&stack, &format!("channel={CHANNEL}&arch={ARCH}")))
        .await
        .unwrap();
    browser.wait_for(DRAWN).await.unwrap();
    assert!(browser.all(&new_node).await.unwrap().is_empty());

    add_release(&releases, &graph_data).unwrap();
    // Once engine A serves it (asked as a cluster would, not by reloading
    // the page again and again), one reload shows it.
    let graph_url = format!(
        "{}?channel={CHANNEL}&arch={ARCH}",
        policy_engine::graph_url(&stack.engines.engine_a)
    );
    let listed = format!("\"version\":\"{NEW_RELEASE}\"");
    poll::until(
        &format!("engine A to serve {NEW_RELEASE}"),
        poll::CHANGE_TIMEOUT,
        async || {
            let body = reqwest::get(&graph_url).await?.text().await?;
            ensure!(body.contains(&listed), "not served yet");
            Ok(())
        },
    )
    .await
    .unwrap();
    browser.client().refresh().await.unwrap();
    browser.wait_for(DRAWN).await.unwrap();
    assert_eq!(browser.all(&new_node).await.unwrap().len(), 1);
    assert_eq!(browser.console_errors().await.unwrap(), Vec::<String>::new());
    browser.close().await.unwrap();
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// Adds [`NEW_RELEASE`] for [`ARCH`] to the release file, and to
/// [`CHANNEL`] in the graph-data, as a new release is published.
fn add_release(releases: &Path, graph_data: &Path) -> anyhow::Result<()> {
    use std::io::Write as _;

    let mut graph: serde_json::Value =
        serde_json::from_reader(flate2::read::GzDecoder::new(std::fs::File::open(releases)?))?;
    let digest = format!("sha256:{}", "5e".repeat(32));
    graph["nodes"]
        .as_array_mut()
        .context("the release file has nodes")?
        .push(serde_json::json!({
            "version": format!("{NEW_RELEASE}+{ARCH}"),
            "payload": format!("quay.io/openshift-release-dev/ocp-release@{digest}"),
            "metadata": {
                "io.openshift.upgrades.graph.release.arch": ARCH,
                "io.openshift.upgrades.graph.release.manifestref": digest,
            },
        }));
    let written = releases.with_extension("new");
    let mut encoder =
        flate2::write::GzEncoder::new(std::fs::File::create(&written)?, flate2::Compression::fast());
    serde_json::to_writer(&mut encoder, &graph)?;
    encoder.finish()?.flush()?;
    std::fs::rename(&written, releases)?;
    let channel = graph_data.join(format!("channels/{CHANNEL}.yaml"));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&channel)?
        .write_all(format!("- {NEW_RELEASE}\n").as_bytes())?;
    Ok(())
}
