//! The explorer page in a real browser (headless Chromium) on engine A,
//! chained to a graph-builder: on the bundled demo data, what the page
//! draws, plans and explains is what the planning library answers on the
//! graph-builder's graph; on a graph the Graph API leaves to the client's
//! rules (an update listed both as recommended and as conditional, versions
//! out of string order), the page draws what the CVO makes of it; on the
//! registry stack, a release published while the page is open shows after
//! a reload, and engine B, chained to engine A, answers the page's
//! questions as A does.
//!
//! With `EXPLORER_SCREENSHOTS` set to a directory, the views are saved
//! there (scripts/screenshots.sh refreshes docs/ so).

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Context as _;
use cincinnati_client::document::{Document, Shape};
use cincinnati_client::explain::{ExplainQuery, explain};
use cincinnati_client::json::{ChannelGraphJson, ExplanationJson};
use cincinnati_client::plan::{PathAnswer, PathQuery, plan};
use cincinnati_client::{Tier, UpdateGraph};
use cincinnati_core::Version;
use e2e::browser::{Browser, keys};
use e2e::graph_builder::{GraphBuilderOptions, PATH_PREFIX};
use e2e::http;
use e2e::offline::OfflineStack;
use e2e::policy_engine::EngineChain;
use e2e::scenario::CANDIDATE;
use e2e::stack::Stack;
use e2e::static_server::StaticServer;
use e2e::workdir::Workdir;
use release_set_generator::{demo_releases, testdata_graph_data};
use serde_json::{Value, json};

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
    full_graph_of_arch(&body)
}

/// The library's graph of [`ARCH`] in a full graph's JSON.
fn full_graph_of_arch(body: &[u8]) -> anyhow::Result<UpdateGraph> {
    let graph = cincinnati_core::wire::parse(body)?.graph;
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
    stop.send_keys(keys::ARROW_UP).await.unwrap();
    let focused = browser.focused().await.unwrap();
    assert_eq!(
        focused.attr("data-version").await.unwrap().as_ref(),
        Some(&newest[1])
    );
    focused.send_keys(keys::ENTER).await.unwrap();
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
    for (field, version) in [("#from", from), ("#to", to)] {
        browser
            .wait_for(field)
            .await
            .unwrap()
            .send_keys(version)
            .await
            .unwrap();
    }
    browser
        .wait_for("#choice button")
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
    let url = browser.current_url().await.unwrap();
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

/// The channel of [`cvo_graph`].
const CVO_CHANNEL: &str = "candidate-4.18";

/// [`CVO_CHANNEL`]'s releases in version order: not their string order
/// (4.18.10 after 4.18.9, rc.10 after rc.2, release candidates before the
/// release).
const IN_VERSION_ORDER: [&str; 6] = [
    "4.18.0-rc.2",
    "4.18.0-rc.10",
    "4.18.0",
    "4.18.2",
    "4.18.9",
    "4.18.10",
];

/// A graph-builder's full graph (listed out of order) where 4.18.9 →
/// 4.18.10 is both an edge and a conditional edge (the CVO: conditional
/// only), and 4.18.0 → 4.18.10 a conditional edge whose risk has no rule
/// clusters can evaluate (the CVO: dropped).
fn cvo_graph() -> Value {
    let order = [5, 1, 4, 2, 3, 0];
    let nodes: Vec<Value> = order
        .iter()
        .map(|&position| {
            let version = IN_VERSION_ORDER[position];
            json!({
                "version": format!("{version}+{ARCH}"),
                "payload": format!("example.com/ocp-release:{version}"),
                "metadata": {
                    "io.openshift.upgrades.graph.release.arch": ARCH,
                    "io.openshift.upgrades.graph.release.channels": CVO_CHANNEL,
                },
            })
        })
        .collect();
    let index = |version: &str| {
        order
            .iter()
            .position(|&position| IN_VERSION_ORDER[position] == version)
            .unwrap()
    };
    let edges: Vec<[usize; 2]> = [
        ("4.18.0-rc.2", "4.18.0-rc.10"),
        ("4.18.0-rc.10", "4.18.0"),
        ("4.18.0", "4.18.2"),
        ("4.18.2", "4.18.9"),
        ("4.18.2", "4.18.10"),
        ("4.18.9", "4.18.10"),
    ]
    .into_iter()
    .map(|(from, to)| [index(from), index(to)])
    .collect();
    let conditional = |from: &str, to: &str, risk: &str, rules: Value| {
        json!({
            "edges": [{"from": format!("{from}+{ARCH}"), "to": format!("{to}+{ARCH}")}],
            "risks": [{"url": format!("https://example.com/{risk}"), "name": risk,
                       "message": format!("{risk} applies."), "matchingRules": rules}],
        })
    };
    json!({
        "nodes": nodes,
        "edges": edges,
        "conditionalEdges": [
            conditional("4.18.9", "4.18.10", "ListedTwice", json!([{"type": "Always"}])),
            conditional("4.18.0", "4.18.10", "Unevaluable", json!([{"type": "Future"}])),
        ],
    })
}

#[tokio::test]
async fn the_page_draws_what_the_cvo_offers_not_what_the_graph_lists() {
    let upstream = serde_json::to_vec(&cvo_graph()).unwrap();
    let library = full_graph_of_arch(&upstream).unwrap();
    let server = StaticServer::start(upstream, "application/json").unwrap();
    let workdir = Workdir::new().unwrap();
    let engines = EngineChain::start(workdir.path(), &format!("{}{PATH_PREFIX}/graph", server.url()))
        .await
        .unwrap();

    // What clusters are sent lists 4.18.9 → 4.18.10 both ways: reading it
    // is the client's business.
    let served = engines
        .answer(CVO_CHANNEL, ARCH, Some("application/json"))
        .await
        .unwrap();
    let served = served.json().unwrap();
    let index = |version: &str| {
        served["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .position(|node| node["version"] == version)
            .unwrap()
    };
    assert!(
        served["edges"]
            .as_array()
            .unwrap()
            .contains(&json!([index("4.18.9"), index("4.18.10")])),
        "{served}"
    );
    assert!(
        served["conditionalEdges"].to_string().contains("ListedTwice"),
        "{served}"
    );

    // Both engines answer the channel as the library reads it.
    let question = format!("{PATH_PREFIX}/v1/channel?channel={CVO_CHANNEL}&arch={ARCH}");
    let expected = serde_json::to_value(ChannelGraphJson::new(&library, CVO_CHANNEL)).unwrap();
    let client = reqwest::Client::new();
    for engine in [&engines.engine_a, &engines.engine_b] {
        let answer = http::get(&client, &engine.api_url(&question), None)
            .await
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(answer, expected, "{}", engine.name());
    }
    let versions: Vec<&str> = expected["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|release| release["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, IN_VERSION_ORDER);

    // The page on B (which forwards to A): releases in that order, the
    // update listed twice drawn once, conditional, the dropped one not at
    // all, and the counts of what is offered.
    let browser = Browser::start().await.unwrap();
    browser
        .open(
            &engines
                .engine_b
                .api_url(&format!("{PATH_PREFIX}/?channel={CVO_CHANNEL}&arch={ARCH}")),
        )
        .await
        .unwrap();
    let summary = browser.wait_for(DRAWN).await.unwrap();
    assert_eq!(
        browser.attributes(".node", "data-version").await.unwrap(),
        IN_VERSION_ORDER
    );
    let edge = |from: &str, to: &str| format!("path.edge[data-from=\"{from}\"][data-to=\"{to}\"]");
    let twice = browser.all(&edge("4.18.9", "4.18.10")).await.unwrap();
    assert_eq!(twice.len(), 1, "4.18.9 → 4.18.10 is drawn once");
    assert_eq!(
        twice[0].attr("class").await.unwrap().as_deref(),
        Some("edge conditional")
    );
    assert_eq!(
        browser
            .all(&format!("{}.conditional", edge("4.18.2", "4.18.10")))
            .await
            .unwrap()
            .len(),
        0,
        "a recommended update is drawn as one"
    );
    assert_eq!(browser.all(&edge("4.18.2", "4.18.10")).await.unwrap().len(), 1);
    assert!(browser.all(&edge("4.18.0", "4.18.10")).await.unwrap().is_empty());
    assert_eq!(browser.all("path.edge").await.unwrap().len(), 6);
    for (attribute, count) in [("data-recommended", "5"), ("data-conditional", "1")] {
        assert_eq!(
            summary.attr(attribute).await.unwrap().as_deref(),
            Some(count),
            "{attribute}"
        );
    }

    // Selected, 4.18.9 lists the update as conditional, with its risk.
    browser
        .wait_for(".node[data-version=\"4.18.9\"]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let badge = browser
        .wait_for("#updates li[data-to=\"4.18.10\"] .badge")
        .await
        .unwrap();
    assert_eq!(
        badge.attr("class").await.unwrap().as_deref(),
        Some("badge conditional")
    );
    assert_eq!(
        browser
            .attributes("#updates li[data-to=\"4.18.10\"] .risk", "data-risk")
            .await
            .unwrap(),
        ["ListedTwice"]
    );
    // 4.18.2's updates, newest first as the engine lists them.
    browser
        .wait_for(".node[data-version=\"4.18.2\"]")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .wait_for("#release-body[data-version=\"4.18.2\"]")
        .await
        .unwrap();
    assert_eq!(
        browser.attributes("#updates li", "data-to").await.unwrap(),
        ["4.18.10", "4.18.9"]
    );
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

/// A release the standard scenario's candidate channel lists before it is
/// published.
const NEW_RELEASE: &str = "4.17.2";

/// On the registry stack's standard scenario (small: a change is rebuilt in
/// moments, where the demo data takes a debug graph-builder many seconds).
#[tokio::test]
async fn a_release_published_underneath_shows_after_a_reload() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    let browser = Browser::start().await.unwrap();
    let page = stack
        .engines
        .engine_a
        .api_url(&format!("{PATH_PREFIX}/?channel={CANDIDATE}&arch={ARCH}"));
    let new_node = format!(".node[data-version=\"{NEW_RELEASE}\"]");

    browser.open(&page).await.unwrap();
    browser.wait_for(DRAWN).await.unwrap();
    assert!(browser.all(&new_node).await.unwrap().is_empty());

    // Once it has travelled the chain (A serves it before B), one reload shows it.
    stack.assert_a_new_release_arrives(NEW_RELEASE).await.unwrap();
    browser.reload().await.unwrap();
    browser.wait_for(DRAWN).await.unwrap();
    assert_eq!(browser.all(&new_node).await.unwrap().len(), 1);
    assert_eq!(browser.console_errors().await.unwrap(), Vec::<String>::new());
    browser.close().await.unwrap();
}

/// B has no full graph (its upstream, A, answers a channel at a time): its
/// explorer answers are A's, errors included.
#[tokio::test]
async fn an_engine_chained_to_an_engine_answers_as_its_upstream_engine() {
    let stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    let versions = &stack.published().graph_data.channels[CANDIDATE];
    let (oldest, newest) = (versions.first().unwrap(), versions.last().unwrap());
    let questions = [
        "v1/architectures".to_owned(),
        format!("v1/channels?arch={ARCH}"),
        format!("v1/channel?channel={CANDIDATE}&arch={ARCH}"),
        format!("v1/channel?channel=Not-Valid&arch={ARCH}"),
        format!("v1/path?from={oldest}&to={newest}&arch={ARCH}"),
        format!("v1/explain?channel={CANDIDATE}&from={oldest}&to={newest}&arch={ARCH}"),
        format!("v1/path?from={oldest}&to=4.x&arch={ARCH}"),
    ];
    let client = reqwest::Client::new();
    for question in questions {
        let ask = |engine: &e2e::process::ServiceProcess| {
            let url = engine.api_url(&format!("{PATH_PREFIX}/{question}"));
            let client = client.clone();
            async move { http::get(&client, &url, None).await.unwrap() }
        };
        let (from_a, from_b) = (
            ask(&stack.engines.engine_a).await,
            ask(&stack.engines.engine_b).await,
        );
        assert_eq!(from_b.status, from_a.status, "{question}");
        assert_eq!(from_b.content_type, from_a.content_type, "{question}");
        assert_eq!(
            String::from_utf8_lossy(&from_b.body),
            String::from_utf8_lossy(&from_a.body),
            "{question}"
        );
    }
}
