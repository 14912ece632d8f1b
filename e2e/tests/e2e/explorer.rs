//! The explorer page in a real browser (headless Chromium) on engine A,
//! chained to a graph-builder: on the bundled demo data, what the page
//! draws, plans and explains is what the planning library answers on the
//! graph-builder's graph, laid out to be read on a desktop monitor and on a
//! phone; a channel or architecture that is not known is an error with the
//! nearest names, never another channel; a plan that needs risks accepted
//! is drawn apart from a safe one. On a graph the Graph API leaves to the
//! client's rules (an update listed both as recommended and as conditional,
//! versions out of string order), the page draws what the CVO makes of it;
//! on a graph where a release phases into the channel, its updates are drawn
//! apart, with their windows and the share of clusters offered them;
//! on the registry stack, a release published while the page is open shows
//! after a reload, and engine B, chained to engine A, answers the page's
//! questions as A does. An EUS-to-EUS plan shows its runbook, the steps the
//! library gives, readable on a desktop and a phone.
//!
//! [`fleet`]: the Fleet view, on the status port of an engine with a
//! fleet store.
//!
//! With `EXPLORER_SCREENSHOTS` set to a directory, the views are saved
//! there (scripts/screenshots.sh refreshes docs/ so).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cincinnati_client::document::{Document, Shape};
use cincinnati_client::explain::{ExplainQuery, explain};
use cincinnati_client::json::{ChannelGraphJson, ExplanationJson, PathJson};
use cincinnati_client::plan::{PathAnswer, PathQuery, Plan, plan};
use cincinnati_client::{Tier, UpdateGraph};
use cincinnati_core::Version;
use e2e::browser::{Browser, DESKTOP, PHONE, Viewport, keys};
use e2e::graph_builder::{GraphBuilderOptions, PATH_PREFIX};
use e2e::http;
use e2e::offline::OfflineStack;
use e2e::policy_engine::EngineChain;
use e2e::poll;
use e2e::scenario::CANDIDATE;
use e2e::stack::Stack;
use e2e::static_server::StaticServer;
use e2e::workdir::Workdir;
use jiff::{SignedDuration, Timestamp};
use release_set_generator::{demo_releases, testdata_graph_data};
use serde_json::{Value, json};

mod fleet;

const CHANNEL: &str = "stable-4.18";
const ARCH: &str = "amd64";
/// Waits for the drawing: the summary carries its counts once drawn.
const DRAWN: &str = "#summary[data-releases]";
/// The sizes every view of the page is checked at.
const VIEWPORTS: [Viewport; 2] = [DESKTOP, PHONE];

/// The page on engine A, with `query`.
fn page_url(stack: &OfflineStack, query: &str) -> String {
    stack.engines.engine_a.api_url(&format!("{PATH_PREFIX}/?{query}"))
}

/// The stack on the demo data, and the library's graph of [`ARCH`].
async fn demo_stack() -> (OfflineStack, UpdateGraph) {
    let stack = OfflineStack::start(&demo_releases(), &testdata_graph_data())
        .await
        .unwrap();
    let library = library_graph(&stack).await.unwrap();
    (stack, library)
}

/// Opens the page on engine A with `query`, once it is ready.
async fn open_page(browser: &Browser, stack: &OfflineStack, query: &str) {
    browser.open(&page_url(stack, query)).await.unwrap();
    browser.wait_ready().await.unwrap();
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

/// Saves a screenshot of the page from its top as `name` where
/// scripts/screenshots.sh asks, else in the stack's directory (kept when a
/// test fails).
async fn screenshot(browser: &Browser, stack: &OfflineStack, name: &str) -> anyhow::Result<()> {
    screenshot_in(browser, stack.workdir(), name).await
}

/// [`screenshot`], else in `workdir`.
async fn screenshot_in(browser: &Browser, workdir: &Path, name: &str) -> anyhow::Result<()> {
    browser.run("window.scrollTo(0, 0);").await?;
    let directory =
        std::env::var_os("EXPLORER_SCREENSHOTS").map_or_else(|| workdir.to_owned(), PathBuf::from);
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

/// From `from` to `to` on the stable tier, no risk accepted.
fn stable_query(from: &str, to: &str) -> PathQuery {
    PathQuery {
        from: Version::parse(from).unwrap(),
        to: Version::parse(to).unwrap(),
        tier: Tier::Stable,
        accepted_risks: BTreeSet::new(),
        alternatives: 0,
    }
}

/// A plan's hops as the page lists them: from, to, the channel to be on.
fn listed_hops(plan: &Plan) -> Vec<[String; 3]> {
    plan.hops
        .iter()
        .map(|hop| {
            [
                hop.from.version.to_string(),
                hop.to.version.to_string(),
                hop.channel.to_owned(),
            ]
        })
        .collect()
}

/// The releases of [`CHANNEL`] in the library's graph.
fn channel_versions(library: &UpdateGraph) -> Vec<String> {
    library
        .channel(CHANNEL)
        .unwrap()
        .releases()
        .iter()
        .map(|&release| library.version(release).to_string())
        .collect()
}

/// What the page shows, measured in it: the page's and the panels' boxes,
/// how many lines the summary takes, boxes of text that overlap or text
/// wider than its box, the
/// smallest label's height, the labels in sight that something else covers
/// (an edge drawn over one is what the browser finds at its centre) and
/// those edges under them show through, and how much of its box the
/// drawing fills.
const MEASURE: &str = r##"
const box = (element) => {
  const r = element.getBoundingClientRect();
  return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height };
};
const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
  Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
const pairs = (named) => {
  const found = [];
  for (let i = 0; i < named.length; i++) {
    for (let j = i + 1; j < named.length; j++) {
      if (overlap(named[i][1], named[j][1])) found.push(`${named[i][0]} / ${named[j][0]}`);
    }
  }
  return found;
};
const shown = (element) => element && element.getClientRects().length > 0;
const shownBlocks = ["header", "#status", "#problem", "#summary", ".legend", "#canvas", "#plan", "#release"]
  .map((css) => [css, document.querySelector(css)])
  .filter(([, element]) => shown(element));
const blocks = shownBlocks.map(([css, element]) => [css, box(element)]);
// Text wider than its block runs over what is beside it (the drawing's
// box scrolls instead).
const overflowing = shownBlocks
  .filter(([css, element]) => css !== "#canvas" && element.scrollWidth > element.clientWidth + 1)
  .map(([css]) => css);
const canvas = document.getElementById("canvas");
const svg = canvas.querySelector("svg");
const summary = document.getElementById("summary");
const labels = svg ? [...svg.querySelectorAll(".node text, .band-label")] : [];
const sight = box(canvas);
sight.right = Math.min(sight.right, window.innerWidth, sight.left + canvas.clientWidth);
sight.bottom = Math.min(sight.bottom, window.innerHeight, sight.top + canvas.clientHeight);
// A label hides the edges under it: a halo (a stroke painted first) of
// its band's colour around its letters.
const unhaloed = labels.filter((label) => {
  const style = getComputedStyle(label);
  return !label.closest(".node") ? false :
    style.stroke === "none" || parseFloat(style.strokeWidth) < 2 || !style.paintOrder.startsWith("stroke");
}).map((label) => label.textContent);
const covered = [];
let inSight = 0;
for (const label of labels) {
  if (!label.closest(".node")) continue;
  const b = box(label);
  const [x, y] = [(b.left + b.right) / 2, (b.top + b.bottom) / 2];
  if (x < sight.left || x > sight.right || y < sight.top || y > sight.bottom) continue;
  inSight += 1;
  const found = document.elementFromPoint(x, y);
  if (!found || found.closest(".node") !== label.closest(".node")) {
    covered.push(`${label.textContent} under ${found ? `${found.tagName}.${found.getAttribute("class")}` : "nothing"}`);
  }
}
return {
  width: window.innerWidth,
  pageWidth: document.documentElement.scrollWidth,
  figure: box(document.getElementById("drawing")),
  aside: box(document.querySelector("aside")),
  summaryLines: Math.round(summary.getBoundingClientRect().height / parseFloat(getComputedStyle(summary).lineHeight)),
  summaryWidth: summary.getBoundingClientRect().width,
  overlappingBlocks: pairs(blocks),
  overflowing,
  overlappingLabels: pairs(labels.map((label) => [label.textContent, box(label)])),
  smallestLabel: Math.min(...labels.map((label) => box(label).height)),
  inSight,
  covered,
  unhaloed,
  canvas: { ...box(canvas), clientWidth: canvas.clientWidth },
  drawing: svg ? box(svg) : null,
  rightmostLabel: Math.max(...labels.map((label) => box(label).right)),
};
"##;

fn number(measured: &Value, key: &str) -> f64 {
    measured[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} not measured: {measured}"))
}

/// Checks what [`MEASURE`] finds on a drawn page at `viewport`: no wider
/// than the screen, no text over other text, the summary in lines, the
/// panels beside the drawing (desktop) or under it (phone), labels at least
/// 12 px high and over the edges, the drawing filling its box's width
/// (desktop) or reflowed to it (phone).
async fn assert_laid_out_to_be_read(browser: &Browser, viewport: Viewport) {
    let measured = browser.run(MEASURE).await.unwrap();
    let at = viewport.name;
    assert_eq!(
        number(&measured, "width"),
        f64::from(viewport.width),
        "{at}: the page's width"
    );
    assert!(
        number(&measured, "pageWidth") <= f64::from(viewport.width),
        "{at}: the page is wider than the screen: {measured}"
    );
    assert_eq!(measured["overlappingBlocks"], json!([]), "{at}: text over text");
    assert_eq!(measured["overflowing"], json!([]), "{at}: text out of its block");
    assert_eq!(
        measured["overlappingLabels"],
        json!([]),
        "{at}: labels over labels"
    );
    assert!(
        number(&measured, "summaryLines") <= 3.0 && number(&measured, "summaryWidth") >= 300.0,
        "{at}: the summary is squeezed: {measured}"
    );
    let (figure, aside) = (&measured["figure"], &measured["aside"]);
    if viewport.mobile {
        assert!(
            number(aside, "top") >= number(figure, "bottom") - 1.0,
            "{at}: the panels are not under the drawing: {measured}"
        );
    } else {
        assert!(
            number(aside, "left") >= number(figure, "right") - 1.0,
            "{at}: the panels are not beside the drawing: {measured}"
        );
    }
    assert!(
        number(&measured, "smallestLabel") >= 12.0,
        "{at}: labels smaller than 12 px: {measured}"
    );
    assert!(
        number(&measured, "inSight") >= 20.0,
        "{at}: no drawing in sight: {measured}"
    );
    assert_eq!(measured["covered"], json!([]), "{at}: labels under edges");
    assert_eq!(
        measured["unhaloed"],
        json!([]),
        "{at}: labels the edges show through"
    );
    let (canvas, drawing) = (&measured["canvas"], &measured["drawing"]);
    let room = number(canvas, "clientWidth");
    if viewport.mobile {
        assert!(
            number(drawing, "width") <= room,
            "{at}: the drawing is not reflowed to its box: {measured}"
        );
    } else {
        assert!(
            number(drawing, "width") >= 0.95 * room,
            "{at}: the drawing leaves its box's width unused: {measured}"
        );
        assert!(
            number(canvas, "left") + room - number(&measured, "rightmostLabel") <= 0.2 * room,
            "{at}: the right of the drawing is empty: {measured}"
        );
    }
}

#[tokio::test]
async fn the_page_draws_plans_and_explains_what_the_library_answers_on_a_desktop_and_a_phone() {
    let (stack, library) = demo_stack().await;
    for viewport in VIEWPORTS {
        draws_plans_and_explains(&stack, &library, viewport).await;
    }
}

async fn draws_plans_and_explains(stack: &OfflineStack, library: &UpdateGraph, viewport: Viewport) {
    let at = viewport.name;
    let browser = Browser::start(viewport).await.unwrap();

    // The channel, drawn: every release of it, nothing else, no error, and
    // nothing asked of anyone but the engine.
    open_page(&browser, stack, &format!("channel={CHANNEL}&arch={ARCH}")).await;
    let summary = browser.wait_for(DRAWN).await.unwrap();
    let expected: BTreeSet<String> = channel_versions(library).into_iter().collect();
    let drawn: BTreeSet<String> = browser
        .attributes(".node", "data-version")
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(drawn, expected, "{at}");
    assert_eq!(
        summary.attr("data-releases").await.unwrap(),
        Some(expected.len().to_string())
    );
    let status = browser
        .wait_for("#status")
        .await
        .unwrap()
        .prop("textContent")
        .await
        .unwrap();
    println!(
        "{CHANNEL} at {}x{}: {} releases, the drawing built in {} ms; the page's status: {}",
        viewport.width,
        viewport.height,
        expected.len(),
        summary.attr("data-draw-ms").await.unwrap().unwrap_or_default(),
        status.unwrap_or_default()
    );
    let origin = stack.engines.engine_a.api_url("/");
    for url in browser.requested_urls().await.unwrap() {
        assert!(url.starts_with(&origin), "the page asked {url}, not the engine");
    }
    assert_laid_out_to_be_read(&browser, viewport).await;
    if !viewport.mobile {
        screenshot(&browser, stack, "explorer-channel.png").await.unwrap();
    }

    // The keyboard: the drawing's one tab stop is the newest release; up
    // moves to the one before it, Enter selects it.
    let newest: Vec<String> = channel_versions(library).into_iter().rev().take(2).collect();
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
    let (from, to, risks) = a_conditional_update(library);
    browser
        .click_on(&format!(".node[data-version=\"{from}\"]"))
        .await
        .unwrap();
    let shown: BTreeSet<String> = browser
        .attributes(&format!("#updates li[data-to=\"{to}\"] .risk"), "data-risk")
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(shown, risks, "{at}: the risks of {from} → {to}");
    if !viewport.mobile {
        screenshot(&browser, stack, "explorer-release.png").await.unwrap();
    }

    // From → to, typed into the form: the library's hops, drawn as the
    // planned path, and why there is no direct update in the channel
    // drawn, as a note (a plan was found: nothing is wrong).
    let (from, to) = ("4.17.22", "4.18.40");
    let query = stable_query(from, to);
    let PathAnswer::Found { plan: planned, .. } = plan(library, &query) else {
        panic!("the library finds no path from {from} to {to}");
    };
    let hops = listed_hops(&planned);
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
    browser.click_on("#choice button").await.unwrap();
    browser.wait_ready().await.unwrap();
    assert_eq!(shown_hops(&browser, "#path-list").await.unwrap(), hops, "{at}");
    let explanation = explain(
        library,
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
    let path = drawn_path(&browser).await;
    assert_eq!(path.len(), hops.len(), "{at}: every hop drawn: {path:?}");
    for edge in &path {
        assert!(
            !edge.reddish && !edge.dashed,
            "{at}: a safe hop drawn as a risky one: {path:?}"
        );
    }
    assert_quiet(&browser, "#plan-body", at).await;
    assert_laid_out_to_be_read(&browser, viewport).await;
    screenshot(
        &browser,
        stack,
        if viewport.mobile {
            "explorer-phone.png"
        } else {
            "explorer-path.png"
        },
    )
    .await
    .unwrap();

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
    browser.wait_ready().await.unwrap();
    assert_eq!(shown_hops(&browser, "#path-list").await.unwrap(), hops, "{at}");
    let channel = browser
        .wait_for("#channel")
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap();
    assert_eq!(channel.as_deref(), Some(CHANNEL));

    assert_eq!(
        browser.console_errors().await.unwrap(),
        Vec::<String>::new(),
        "{at}"
    );
    browser.close().await.unwrap();
}

/// One planned hop as drawn: its ends, and whether its stroke is red (the
/// colour of a plan that needs risks accepted) or dashed.
#[derive(Debug)]
struct DrawnHop {
    from: String,
    to: String,
    reddish: bool,
    dashed: bool,
}

/// Whether a CSS colour is a red (the amber of conditional updates is not):
/// its green and blue both under a third of its red.
const REDDISH: &str = r"const reddish = (colour) => {
  const [r, g, b] = (colour.match(/[\d.]+/g) || [0, 0, 0]).map(Number);
  return r > 100 && Math.max(g, b) < r / 3;
};";

/// The edges the page draws as the plan, as the browser paints them.
async fn drawn_path(browser: &Browser) -> Vec<DrawnHop> {
    let script = format!(
        "{REDDISH}
        return [...document.querySelectorAll('path.edge.on-path')].map((edge) => {{
          const style = getComputedStyle(edge);
          return [edge.dataset.from, edge.dataset.to, reddish(style.stroke),
                  style.strokeDasharray !== 'none' && style.strokeDasharray !== ''];
        }});"
    );
    let drawn = browser.run(&script).await.unwrap();
    drawn
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| DrawnHop {
            from: edge[0].as_str().unwrap().to_owned(),
            to: edge[1].as_str().unwrap().to_owned(),
            reddish: edge[2] == true,
            dashed: edge[3] == true,
        })
        .collect()
}

/// Nothing shown in `css` looks like an error: no red text, border or
/// background.
async fn assert_quiet(browser: &Browser, css: &str, at: &str) {
    let script = format!(
        "{REDDISH}
        return [...document.querySelectorAll('{css}, {css} *')].filter((element) => {{
          if (!element.getClientRects().length) return false;
          const style = getComputedStyle(element);
          const background = style.backgroundColor !== 'rgba(0, 0, 0, 0)' && reddish(style.backgroundColor);
          const border = parseFloat(style.borderLeftWidth) > 0 && reddish(style.borderLeftColor);
          return reddish(style.color) || border || background;
        }}).map((element) => element.outerHTML.slice(0, 120));"
    );
    let red = browser.run(&script).await.unwrap();
    assert_eq!(red, json!([]), "{at}: something in {css} looks like an error");
}

/// A plan the library finds in [`CHANNEL`]'s releases only by taking
/// conditional updates, with recommended hops too: its ends and hops.
fn a_plan_that_needs_risks_accepted(library: &UpdateGraph) -> (String, String, Vec<[String; 3]>, Vec<bool>) {
    let versions = channel_versions(library);
    for (index, from) in versions.iter().enumerate() {
        for to in &versions[index + 1..] {
            let PathAnswer::NoPath {
                with_risks: Some(risky),
                ..
            } = plan(library, &stable_query(from, to))
            else {
                continue;
            };
            let with_risks: Vec<bool> = risky.plan.hops.iter().map(|hop| hop.risks.is_some()).collect();
            if with_risks.contains(&true) && with_risks.contains(&false) {
                return (from.clone(), to.clone(), listed_hops(&risky.plan), with_risks);
            }
        }
    }
    panic!("no plan in {CHANNEL} needs risks accepted");
}

#[tokio::test]
async fn a_plan_that_needs_risks_accepted_is_drawn_apart_from_a_safe_one() {
    let (stack, library) = demo_stack().await;
    let (from, to, hops, with_risks) = a_plan_that_needs_risks_accepted(&library);
    for viewport in VIEWPORTS {
        let at = viewport.name;
        let browser = Browser::start(viewport).await.unwrap();
        open_page(
            &browser,
            &stack,
            &format!("channel={CHANNEL}&arch={ARCH}&from={from}&to={to}"),
        )
        .await;

        // Listed as the plan accepting risks gives, hop by hop.
        assert_eq!(
            browser
                .wait_for("#plan-body")
                .await
                .unwrap()
                .attr("data-plan")
                .await
                .unwrap()
                .as_deref(),
            Some("risky"),
            "{at}"
        );
        assert_eq!(
            shown_hops(&browser, "#risky-path-list").await.unwrap(),
            hops,
            "{at}: {from} → {to}"
        );
        assert!(browser.all("#path-list").await.unwrap().is_empty(), "{at}");

        // Drawn in red, its hops with risks dashed and the others not.
        let path = drawn_path(&browser).await;
        assert_eq!(path.len(), hops.len(), "{at}: every hop drawn: {path:?}");
        for (hop, risky) in hops.iter().zip(&with_risks) {
            let edge = path
                .iter()
                .find(|edge| edge.from == hop[0] && edge.to == hop[1])
                .unwrap_or_else(|| panic!("{at}: {hop:?} is not drawn: {path:?}"));
            assert!(edge.reddish, "{at}: {hop:?} drawn as a safe hop");
            assert_eq!(edge.dashed, *risky, "{at}: {hop:?} (with risks: {risky})");
        }

        // The legend says what red and dashed red are, in sight.
        let legend = browser
            .run(&format!(
                "{REDDISH}
                const screen = {{ width: window.innerWidth, height: window.innerHeight }};
                return [...document.querySelectorAll('.legend .key')].map((key) => {{
                  const box = key.getBoundingClientRect();
                  const line = getComputedStyle(key, '::before');
                  return [key.textContent, reddish(line.borderTopColor), line.borderTopStyle,
                          box.width > 0 && box.left >= 0 && box.right <= screen.width && box.bottom <= screen.height];
                }});"
            ))
            .await
            .unwrap();
        let keys = legend.as_array().unwrap();
        for (style, meaning) in [("solid", "risks are accepted"), ("dashed", "with risks")] {
            let key = keys
                .iter()
                .find(|key| key[1] == true && key[2] == style)
                .unwrap_or_else(|| panic!("{at}: no {style} red key in the legend: {legend}"));
            assert!(
                key[0].as_str().unwrap().contains(meaning),
                "{at}: the {style} red key says {}",
                key[0]
            );
            assert_eq!(key[3], true, "{at}: the {style} red key is not in sight");
        }
        assert_laid_out_to_be_read(&browser, viewport).await;

        // A safe plan, asked next: drawn in the path's colour, solid, and no
        // error beside it.
        open_page(
            &browser,
            &stack,
            &format!("channel={CHANNEL}&arch={ARCH}&from=4.17.22&to=4.18.40"),
        )
        .await;
        let path = drawn_path(&browser).await;
        assert!(!path.is_empty(), "{at}");
        for edge in &path {
            assert!(!edge.reddish && !edge.dashed, "{at}: {edge:?}");
        }
        browser.wait_for("#why-not").await.unwrap();
        assert_quiet(&browser, "#plan-body", at).await;
        assert_eq!(
            browser.console_errors().await.unwrap(),
            Vec::<String>::new(),
            "{at}"
        );
        browser.close().await.unwrap();
    }
}

/// The problem the page shows, if it shows one: its text and the names it
/// links to.
async fn shown_problem(browser: &Browser) -> Option<(String, Vec<String>)> {
    let problem = browser
        .run(
            "const problem = document.getElementById('problem');
            if (!problem || !problem.getClientRects().length) return null;
            const box = problem.getBoundingClientRect();
            if (box.right > window.innerWidth || box.width === 0) return ['not in sight', []];
            return [problem.textContent, [...problem.querySelectorAll('a')].map((a) => a.dataset.name)];",
        )
        .await
        .unwrap();
    serde_json::from_value(problem).unwrap()
}

/// Nothing is drawn and the summary names no channel.
async fn assert_nothing_drawn(browser: &Browser, at: &str) {
    assert!(browser.all(".node").await.unwrap().is_empty(), "{at}");
    let summary = browser.wait_for("#summary").await.unwrap();
    assert_eq!(
        summary.prop("textContent").await.unwrap().as_deref(),
        Some(""),
        "{at}"
    );
}

#[tokio::test]
async fn an_unknown_channel_or_architecture_is_an_error_with_the_nearest_names_never_another_channel() {
    let (stack, _) = demo_stack().await;
    for viewport in VIEWPORTS {
        let at = viewport.name;
        let browser = Browser::start(viewport).await.unwrap();

        // A misspelt channel in the URL: an error naming the channel meant,
        // nothing drawn, the picker and the URL still saying what was asked.
        open_page(&browser, &stack, &format!("channel=stabel-4.18&arch={ARCH}")).await;
        let (text, nearest) = shown_problem(&browser).await.expect("an error is shown");
        assert!(text.contains("stabel-4.18"), "{at}: {text}");
        assert_eq!(nearest, [CHANNEL], "{at}: {text}");
        assert_nothing_drawn(&browser, at).await;
        let picker = browser.wait_for("#channel").await.unwrap();
        assert_eq!(
            picker.prop("value").await.unwrap().as_deref(),
            Some("stabel-4.18")
        );
        assert!(
            browser
                .current_url()
                .await
                .unwrap()
                .contains("channel=stabel-4.18")
        );
        assert_laid_out_as_an_error(&browser, viewport).await;

        // The name offered leads to that channel, drawn.
        browser
            .click_on(&format!("#problem a[data-name=\"{CHANNEL}\"]"))
            .await
            .unwrap();
        browser.wait_for(DRAWN).await.unwrap();
        browser.wait_ready().await.unwrap();
        assert_eq!(shown_problem(&browser).await, None, "{at}");
        assert!(
            browser
                .current_url()
                .await
                .unwrap()
                .contains(&format!("channel={CHANNEL}"))
        );

        // A misspelt architecture.
        open_page(&browser, &stack, &format!("channel={CHANNEL}&arch=amd46")).await;
        let (text, nearest) = shown_problem(&browser).await.expect("an error is shown");
        assert!(text.contains("amd46"), "{at}: {text}");
        assert_eq!(nearest, [ARCH], "{at}: {text}");
        assert_nothing_drawn(&browser, at).await;
        assert_laid_out_as_an_error(&browser, viewport).await;

        // Another architecture picked, on which the channel has no release
        // (arm64 releases start at 4.9): an error with that architecture's
        // nearest channel, not its default one.
        open_page(&browser, &stack, &format!("channel=stable-4.8&arch={ARCH}")).await;
        browser.wait_for(DRAWN).await.unwrap();
        browser.click_on("#arch option[value=\"arm64\"]").await.unwrap();
        browser.wait_ready().await.unwrap();
        let (text, nearest) = shown_problem(&browser).await.expect("an error is shown");
        assert!(
            text.contains("stable-4.8") && text.contains("arm64"),
            "{at}: {text}"
        );
        assert!(
            nearest.contains(&"stable-4.9".to_owned())
                && nearest.iter().all(|name| name.starts_with("stable-")),
            "{at}: {text}"
        );
        assert_nothing_drawn(&browser, at).await;
        let picker = browser.wait_for("#channel").await.unwrap();
        assert_eq!(picker.prop("value").await.unwrap().as_deref(), Some("stable-4.8"));
        assert_eq!(
            browser.console_errors().await.unwrap(),
            Vec::<String>::new(),
            "{at}"
        );
        browser.close().await.unwrap();
    }
}

/// The page with an error: no wider than the screen, the error in sight
/// at the top, no text over other text.
async fn assert_laid_out_as_an_error(browser: &Browser, viewport: Viewport) {
    let measured = browser
        .run(
            "const problem = document.getElementById('problem').getBoundingClientRect();
            return [document.documentElement.scrollWidth, problem.top, problem.bottom];",
        )
        .await
        .unwrap();
    let at = viewport.name;
    assert!(
        measured[0].as_f64().unwrap() <= f64::from(viewport.width),
        "{at}: wider than the screen: {measured}"
    );
    assert!(
        measured[2].as_f64().unwrap() <= f64::from(viewport.height) && measured[1].as_f64().unwrap() > 0.0,
        "{at}: the error is not in sight: {measured}"
    );
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
    let expected =
        serde_json::to_value(ChannelGraphJson::new(&library.channel_as_listed(CVO_CHANNEL))).unwrap();
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
    let browser = Browser::start(DESKTOP).await.unwrap();
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
    assert_eq!(
        browser
            .attributes(&edge("4.18.9", "4.18.10"), "class")
            .await
            .unwrap(),
        ["edge conditional"],
        "4.18.9 → 4.18.10 is drawn once, as a conditional update"
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
    browser.click_on(".node[data-version=\"4.18.9\"]").await.unwrap();
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
    browser.click_on(".node[data-version=\"4.18.2\"]").await.unwrap();
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

const PHASED_CHANNEL: &str = "stable-4.18";

/// A graph-builder's full graph at `now`: stable-4.18 lists 4.17.9, 4.18.0
/// and 4.18.1 (4.17.9 → 4.18.0 conditional); 4.18.2 phases into it from
/// `start`, patch updates over P20D, the others over P40D; 4.18.3 phases
/// into it from a day ahead. As the graph-builder publishes a phasing
/// release: listed in fast-4.18 only, the rollout in its metadata.
fn phased_graph(start: Timestamp, now: Timestamp) -> Value {
    let node = |version: &str, rollout: Option<Value>| {
        let channels = if rollout.is_some() {
            "fast-4.18"
        } else {
            "fast-4.18,stable-4.18"
        };
        let mut node = json!({
            "version": format!("{version}+{ARCH}"),
            "payload": format!("example.com/ocp-release:{version}"),
            "metadata": {
                "io.openshift.upgrades.graph.release.arch": ARCH,
                "io.openshift.upgrades.graph.release.channels": channels,
            },
        });
        if let Some(rollout) = rollout {
            node["metadata"]["io.openshift.upgrades.graph.release.phased_rollouts"] =
                json!(json!({PHASED_CHANNEL: rollout}).to_string());
        }
        node
    };
    let rollout = |start: Timestamp| json!({"start": start.to_string(), "patch": "P20D", "default": "P40D"});
    json!({
        "nodes": [
            node("4.17.9", None),
            node("4.18.0", None),
            node("4.18.1", None),
            node("4.18.2", Some(rollout(start))),
            node("4.18.3", Some(rollout(now + SignedDuration::from_hours(24)))),
        ],
        "edges": [[0, 2], [1, 2], [0, 3], [2, 3], [2, 4], [3, 4]],
        "conditionalEdges": [{
            "edges": [{"from": format!("4.17.9+{ARCH}"), "to": format!("4.18.0+{ARCH}")}],
            "risks": [{"url": "https://example.com/Flaky", "name": "Flaky",
                       "message": "Flaky applies.", "matchingRules": [{"type": "Always"}]}],
        }],
    })
}

/// What the page says of a phased update: the share of clusters its
/// window has reached at `now`, in whole percent, and the window.
fn phased_text(start: Timestamp, days: i64, now: Timestamp) -> String {
    let end = start + SignedDuration::from_hours(24 * days);
    let share = now
        .duration_since(start)
        .div_duration_f64(end.duration_since(start));
    let second = |at: Timestamp| at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    format!(
        "offered to {}% of clusters now, window {} → {}",
        (share * 100.0).floor(),
        second(start),
        second(end)
    )
}

/// The computed stroke and dashes of the first element `css` selects, and
/// the colour of the phased legend key's line.
const EDGE_STYLES: &str = r#"
const style = (css) => {
  const computed = getComputedStyle(document.querySelector(css));
  return [computed.stroke, computed.strokeDasharray];
};
return {
  phased: style('path.edge.phased'),
  recommended: style('path.edge:not(.conditional):not(.phased)'),
  conditional: style('path.edge.conditional:not(.phased)'),
  key: getComputedStyle(document.querySelector('.key.phased'), '::before').borderTopColor,
};
"#;

/// 4.18.2 phased into stable-4.18 from 218.4 hours ago: the page (on B,
/// which forwards to A) draws it in the channel, marked phasing, and the
/// updates into it in their own style, the legend and each edge's tooltip
/// naming the window and the share offered it now (45% of P20D, 22% of
/// P40D); a release's panel says the same. 4.18.3, whose start is ahead, is
/// not drawn. Laid out to be read on a desktop and on a phone.
#[tokio::test]
async fn a_phased_update_is_drawn_apart_from_an_offered_one() {
    let now = Timestamp::now();
    let start = now - SignedDuration::from_secs(786_240);
    let upstream = serde_json::to_vec(&phased_graph(start, now)).unwrap();
    let server = StaticServer::start(upstream, "application/json").unwrap();
    let workdir = Workdir::new().unwrap();
    let engines = EngineChain::start(workdir.path(), &format!("{}{PATH_PREFIX}/graph", server.url()))
        .await
        .unwrap();
    let page = engines
        .engine_b
        .api_url(&format!("{PATH_PREFIX}/?channel={PHASED_CHANNEL}&arch={ARCH}"));
    let (patch, other) = (phased_text(start, 20, now), phased_text(start, 40, now));
    for viewport in VIEWPORTS {
        let browser = Browser::start(viewport).await.unwrap();
        browser.open(&page).await.unwrap();
        browser.wait_ready().await.unwrap();
        let at = viewport.name;
        assert_eq!(
            browser.attributes(".node", "data-version").await.unwrap(),
            ["4.17.9", "4.18.0", "4.18.1", "4.18.2"],
            "{at}: 4.18.3's start is ahead"
        );
        assert_eq!(
            browser.attributes(".node.phasing", "data-version").await.unwrap(),
            ["4.18.2"],
            "{at}"
        );
        let label = browser
            .attributes(".node.phasing", "aria-label")
            .await
            .unwrap()
            .concat();
        assert!(
            label.contains(&format!("phasing into {PHASED_CHANNEL} since")),
            "{at}: {label}"
        );
        assert_eq!(
            browser.attributes("path.edge.phased", "data-from").await.unwrap(),
            ["4.17.9", "4.18.1"],
            "{at}: the updates into 4.18.2"
        );

        // Its own colour and dashes, the legend's in the same colour.
        let styles = browser.run(EDGE_STYLES).await.unwrap();
        let (phased, recommended, conditional) =
            (&styles["phased"], &styles["recommended"], &styles["conditional"]);
        assert_ne!(phased[0], recommended[0], "{at}: {styles}");
        assert_ne!(phased[0], conditional[0], "{at}: {styles}");
        assert_ne!(phased[1], json!("none"), "{at}: {styles}");
        assert_ne!(phased[1], conditional[1], "{at}: {styles}");
        assert_eq!(styles["key"], phased[0], "{at}: {styles}");
        assert_eq!(
            browser.texts(".key.phased").await.unwrap(),
            [format!("phased: {other}"), format!("phased: {patch}")],
            "{at}: a legend entry per window"
        );
        assert_eq!(
            browser
                .texts(r#"path.edge.phased[data-from="4.18.1"] > title"#)
                .await
                .unwrap(),
            [format!("4.18.1 → 4.18.2 phased: {patch}")]
        );
        let summary = browser.wait_for(DRAWN).await.unwrap();
        assert_eq!(summary.attr("data-phased").await.unwrap().as_deref(), Some("2"));

        // The panels say it in words.
        browser.click_on(r#".node[data-version="4.18.2"]"#).await.unwrap();
        let note = browser.wait_for("#release-body .phasing-note").await.unwrap();
        let note = note.prop("textContent").await.unwrap().unwrap_or_default();
        assert!(
            note.contains(&format!("phasing into {PHASED_CHANNEL} since")),
            "{at}: {note}"
        );
        browser.click_on(r#".node[data-version="4.18.1"]"#).await.unwrap();
        let window = browser
            .wait_for(r#"#updates li[data-to="4.18.2"] .phased-window"#)
            .await
            .unwrap();
        assert_eq!(
            window.prop("textContent").await.unwrap().as_deref(),
            Some(format!("Phased: {patch} (P20D).").as_str())
        );
        assert_eq!(
            browser
                .all(r#"#updates li[data-to="4.18.2"] .badge.phased"#)
                .await
                .unwrap()
                .len(),
            1
        );

        let measured = browser.run(MEASURE).await.unwrap();
        assert_eq!(measured["overlappingBlocks"], json!([]), "{at}: text over text");
        assert_eq!(measured["overflowing"], json!([]), "{at}: text out of its block");
        if !viewport.mobile {
            screenshot_in(&browser, workdir.path(), "explorer-phased.png")
                .await
                .unwrap();
        }
        assert_eq!(browser.console_errors().await.unwrap(), Vec::<String>::new());
        browser.close().await.unwrap();
    }
}

/// The hops of the plan the page lists in `list`, once it lists one.
async fn shown_hops(browser: &Browser, list: &str) -> anyhow::Result<Vec<[String; 3]>> {
    browser.wait_for(&format!("{list} > li")).await?;
    let items = format!("{list} > li");
    let from = browser.attributes(&items, "data-from").await?;
    let to = browser.attributes(&items, "data-to").await?;
    let channel = browser.attributes(&items, "data-channel").await?;
    anyhow::ensure!(
        from.len() == to.len() && to.len() == channel.len(),
        "{list} changed while it was read"
    );
    Ok(from
        .into_iter()
        .zip(to)
        .zip(channel)
        .map(|((from, to), channel)| [from, to, channel])
        .collect())
}

/// A release the standard scenario's candidate channel lists before it is
/// published.
const NEW_RELEASE: &str = "4.17.2";

/// On the registry stack's standard scenario (small: a change is rebuilt in
/// moments, where the demo data takes a debug graph-builder many seconds).
#[tokio::test]
async fn a_release_published_underneath_shows_after_a_reload() {
    let mut stack = Stack::start(GraphBuilderOptions::default()).await.unwrap();
    let browser = Browser::start(DESKTOP).await.unwrap();
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

/// A browser dropped without closing its session, as a failing test drops
/// it, takes chromedriver and every Chromium process with it (killing
/// chromedriver alone left Chromium running after the suite).
#[tokio::test]
async fn a_browser_dropped_mid_session_leaves_no_chromium_running() {
    let browser = Browser::start(DESKTOP).await.unwrap();
    browser.open("data:text/html,<p>open</p>").await.unwrap();
    let group = browser.process_group();
    let running = process_testkit::processes::running_in_group(group);
    assert!(
        running.iter().any(|process| process.name.starts_with("chrom")),
        "no Chromium in the driver's group: {running:?}"
    );

    drop(browser);
    poll::until(
        "the driver's process group to be gone",
        poll::CHANGE_TIMEOUT,
        async || {
            let running = process_testkit::processes::running_in_group(group);
            anyhow::ensure!(running.is_empty(), "still running: {running:?}");
            Ok(())
        },
    )
    .await
    .unwrap();
}

/// The releases of [`eus_graph`] and their channels, shaped like
/// OpenShift's: a minor's releases in its stable channel and the next, EUS
/// channels on even minors holding the odd minor before them.
const EUS_RELEASES: [(&str, &[&str]); 4] = [
    ("4.16.10", &["stable-4.16", "stable-4.17", "eus-4.16", "eus-4.18"]),
    ("4.16.20", &["stable-4.16", "stable-4.17", "eus-4.16", "eus-4.18"]),
    ("4.17.5", &["stable-4.17", "stable-4.18", "eus-4.18"]),
    ("4.18.3", &["stable-4.18", "eus-4.18"]),
];

/// A full graph of [`EUS_RELEASES`], each updating to the next, their
/// images by digest.
fn eus_graph() -> Value {
    let nodes: Vec<Value> = EUS_RELEASES
        .iter()
        .enumerate()
        .map(|(index, (version, channels))| {
            json!({
                "version": format!("{version}+{ARCH}"),
                "payload": format!("example.com/ocp-release@sha256:{index:064x}"),
                "metadata": {
                    "io.openshift.upgrades.graph.release.arch": ARCH,
                    "io.openshift.upgrades.graph.release.channels": channels.join(","),
                },
            })
        })
        .collect();
    json!({
        "nodes": nodes,
        "edges": (1..EUS_RELEASES.len()).map(|to| [to - 1, to]).collect::<Vec<_>>(),
        "conditionalEdges": [],
    })
}

/// What the page shows of a plan's runbook: its steps (action, sentence,
/// commands), what the workers do at each hop, and whether the plan's
/// panel and the page fit the screen.
const MEASURE_RUNBOOK: &str = r##"
const plan = document.getElementById("plan");
const runbook = document.getElementById("runbook");
return {
  heading: runbook ? document.getElementById("runbook-heading").textContent : null,
  labelled: runbook ? runbook.closest("[aria-labelledby]").getAttribute("aria-labelledby") : null,
  steps: runbook ? [...runbook.children].map((step) => [step.dataset.action, step.querySelector(".step").textContent,
    step.querySelector("pre") ? step.querySelector("pre").textContent : ""]) : [],
  workers: [...document.querySelectorAll("#path-list > li")].map((hop) => hop.dataset.workers || null),
  pageWidth: document.documentElement.scrollWidth,
  overflowing: [plan, ...plan.querySelectorAll("*")].filter((element) => element.clientWidth > 0 &&
    element.scrollWidth > element.clientWidth + 1).map((element) => element.tagName),
};
"##;

/// The runbook's sentence as the page writes it: the commands in
/// backquotes as code (the backquotes gone), a full stop at the end.
fn written(text: &str) -> String {
    let text = text.replace('`', "");
    if text.ends_with('.') {
        text
    } else {
        format!("{text}.")
    }
}

#[tokio::test]
async fn an_eus_to_eus_plan_shows_its_runbook_and_another_plan_none() {
    let upstream = serde_json::to_vec(&eus_graph()).unwrap();
    let library = full_graph_of_arch(&upstream).unwrap();
    let server = StaticServer::start(upstream, "application/json").unwrap();
    let workdir = Workdir::new().unwrap();
    let engine = e2e::policy_engine::start(
        workdir.path(),
        "eus",
        &format!("{}{PATH_PREFIX}/graph", server.url()),
    )
    .await
    .unwrap();
    let (from, to) = ("4.16.10", "4.18.3");

    // What the library answers (as `cincinnati path -o json`): a plan on
    // the EUS tier with its runbook.
    let query = PathQuery {
        tier: Tier::Eus,
        ..stable_query(from, to)
    };
    let answer = plan(&library, &query);
    let expected = serde_json::to_value(PathJson::new(ARCH, &query, &answer)).unwrap();
    let steps: Vec<Value> = expected["runbook"]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no runbook: {expected}"))
        .iter()
        .map(|step| {
            let commands: Vec<&str> = step["commands"]
                .as_array()
                .unwrap()
                .iter()
                .map(|command| command.as_str().unwrap())
                .collect();
            json!([
                step["action"],
                written(step["text"].as_str().unwrap()),
                commands.join("\n")
            ])
        })
        .collect();
    let workers: Vec<Value> = expected["plan"]["hops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hop| match hop["workers"].as_str() {
            Some("update") | None => Value::Null,
            Some(other) => json!(other),
        })
        .collect();
    assert!(workers.contains(&json!("catchUp")), "{expected}");

    for viewport in VIEWPORTS {
        let at = viewport.name;
        let browser = Browser::start(viewport).await.unwrap();
        let page = |tier: &str| {
            engine.api_url(&format!(
                "{PATH_PREFIX}/?channel=eus-4.18&arch={ARCH}&from={from}&to={to}&tier={tier}"
            ))
        };
        browser.open(&page("eus")).await.unwrap();
        browser.wait_ready().await.unwrap();
        browser.wait_for("#runbook > li").await.unwrap();
        let shown = browser.run(MEASURE_RUNBOOK).await.unwrap();
        assert_eq!(shown["steps"], json!(steps), "{at}");
        assert_eq!(shown["workers"], json!(workers), "{at}");
        assert_eq!(shown["labelled"], "runbook-heading", "{at}: {shown}");
        assert!(
            shown["heading"].as_str().unwrap().contains("Control Plane Only"),
            "{at}: {shown}"
        );
        assert!(
            shown["pageWidth"].as_f64().unwrap() <= f64::from(viewport.width),
            "{at}: wider than the screen: {shown}"
        );
        assert_eq!(shown["overflowing"], json!([]), "{at}: out of its box: {shown}");
        if !viewport.mobile {
            screenshot_in(&browser, workdir.path(), "explorer-runbook.png")
                .await
                .unwrap();
        }

        // The same releases on the stable tier: a plan, no runbook.
        browser.open(&page("stable")).await.unwrap();
        browser.wait_ready().await.unwrap();
        browser.wait_for("#path-list > li").await.unwrap();
        assert!(
            browser
                .all("#runbook, #runbook-section")
                .await
                .unwrap()
                .is_empty(),
            "{at}"
        );
        assert_eq!(
            browser.console_errors().await.unwrap(),
            Vec::<String>::new(),
            "{at}"
        );
        browser.close().await.unwrap();
    }
}
