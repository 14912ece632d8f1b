//! The explorer's Fleet view in a real browser: an engine with a SQLite
//! fleet store (a file in the test's directory) and a rollout in its
//! cluster policy, on a graph of the test's own, asked by simulated
//! clusters (real graph requests with ids, channels and versions), some of
//! which then take an update the engine offers them. The page on the
//! engine's status port shows, in its Fleet view, what the test counted
//! itself; the page on its public port has no Fleet view and asks nothing
//! about the fleet.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use e2e::browser::{Browser, Viewport};
use e2e::client_graph::ClientGraph;
use e2e::fleet::place_percent;
use e2e::graph_builder::PATH_PREFIX;
use e2e::http;
use e2e::policy_engine;
use e2e::process::ServiceProcess;
use e2e::static_server::StaticServer;
use e2e::workdir::Workdir;
use serde_json::{Value, json};

use super::{DRAWN, VIEWPORTS, screenshot_in};

const ARCH: &str = "amd64";
/// The fleet's answers, relative to the page.
const FLEET: &str = "/v1/fleet/";
/// The rollout's target.
const TARGET: &str = "4.18.5";
/// The token of the engine's rollout control.
const OPS_TOKEN: &str = "ops-fleet-view-token";

/// The releases and the channels each is in.
const RELEASES: [(&str, &[&str]); 8] = [
    ("4.17.10", &["stable-4.17"]),
    ("4.17.11", &["stable-4.17"]),
    ("4.17.12", &["stable-4.17", "stable-4.18"]),
    ("4.18.1", &["stable-4.18", "fast-4.18"]),
    ("4.18.2", &["stable-4.18", "fast-4.18"]),
    ("4.18.3", &["stable-4.18", "fast-4.18"]),
    ("4.18.4", &["stable-4.18", "fast-4.18"]),
    ("4.18.5", &["stable-4.18", "fast-4.18"]),
];

/// The updates (all recommended). 4.18.3 has none.
const UPDATES: [(&str, &str); 8] = [
    ("4.17.10", "4.17.11"),
    ("4.17.10", "4.17.12"),
    ("4.17.11", "4.17.12"),
    ("4.17.12", "4.18.2"),
    ("4.18.1", "4.18.2"),
    ("4.18.1", "4.18.4"),
    ("4.18.2", "4.18.4"),
    ("4.18.4", TARGET),
];

/// A graph-builder's full graph of [`RELEASES`] and [`UPDATES`].
fn full_graph() -> Value {
    let index = |version: &str| {
        RELEASES
            .iter()
            .position(|(release, _)| *release == version)
            .unwrap()
    };
    json!({
        "nodes": RELEASES.iter().map(|(version, channels)| json!({
            "version": format!("{version}+{ARCH}"),
            "payload": format!("example.com/ocp-release:{version}"),
            "metadata": {
                "io.openshift.upgrades.graph.release.arch": ARCH,
                "io.openshift.upgrades.graph.release.channels": channels.join(","),
            },
        })).collect::<Vec<_>>(),
        "edges": UPDATES.iter().map(|(from, to)| [index(from), index(to)]).collect::<Vec<_>>(),
        "conditionalEdges": [],
    })
}

/// A rollout of [`TARGET`] to half the fleet from an hour ago, then the
/// rest over decades: its progress stays between 50% and 60% for years.
fn policy_file() -> String {
    // The start as RFC 3339, from coreutils' `date` (the harness has no
    // calendar of its own).
    let date = std::process::Command::new("date")
        .args(["-u", "-d", "1 hour ago", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .expect("date runs");
    let start = String::from_utf8(date.stdout).unwrap();
    format!(
        "rollouts:\n  - target: {TARGET}\n    start: {}\n    \
         duration_hours: 800000\n    starting_percentage: 50\n",
        start.trim()
    )
}

/// Cluster ids well inside the rollout (placed below 45%, offered the
/// target) or well outside it (above 60%).
struct Ids {
    next: u32,
}

impl Ids {
    fn take(&mut self, inside: bool) -> String {
        loop {
            let id = format!("{:08x}-f1ee-4d00-8a11-000000000000", self.next);
            self.next += 1;
            let place = place_percent(&id);
            if (inside && place < 45.0) || (!inside && place > 60.0) {
                return id;
            }
        }
    }
}

/// One simulated cluster, as the test keeps track of it.
#[derive(Clone, Debug)]
struct Cluster {
    id: String,
    channel: &'static str,
    version: &'static str,
    inside: bool,
}

/// The fleet: each group of clusters (channel, version, how many, how
/// many of them inside the rollout).
const FLEET_PLAN: [(&str, &str, usize, usize); 10] = [
    ("stable-4.17", "4.17.10", 7, 4),
    ("stable-4.17", "4.17.11", 3, 1),
    ("stable-4.18", "4.18.1", 12, 5),
    ("stable-4.18", "4.18.2", 8, 4),
    ("stable-4.18", "4.18.3", 5, 2),
    ("stable-4.18", "4.18.4", 6, 4),
    // Not in the channel: clusters that strayed.
    ("stable-4.18", "4.16.9", 2, 1),
    ("fast-4.18", "4.18.4", 4, 2),
    ("fast-4.18", "4.18.1", 1, 0),
    ("fast-4.18", "4.18.2", 1, 1),
];

/// The moves: (channel, from, to, how many), inside the rollout first.
const MOVES: [(&str, &str, &str, usize); 4] = [
    ("stable-4.17", "4.17.10", "4.17.12", 4),
    ("stable-4.18", "4.18.2", "4.18.4", 3),
    ("stable-4.18", "4.18.4", TARGET, 3),
    ("fast-4.18", "4.18.4", TARGET, 2),
];

/// The engine with a fleet store, and the server of its upstream graph.
struct FleetEngine {
    engine: ServiceProcess,
    _upstream: StaticServer,
    http: reqwest::Client,
}

impl FleetEngine {
    async fn start(workdir: &Path) -> anyhow::Result<Self> {
        let upstream = StaticServer::start(serde_json::to_vec(&full_graph())?, "application/json")?;
        let policy = workdir.join("policy.yaml");
        std::fs::write(&policy, policy_file())?;
        let store = format!("sqlite://{}", workdir.join("fleet.db").display());
        let tokens = workdir.join("tokens");
        std::fs::write(&tokens, format!("ops {OPS_TOKEN}\n"))?;
        let engine = policy_engine::start_with(
            workdir,
            "fleet",
            &format!("{}{PATH_PREFIX}/graph", upstream.url()),
            &[
                "--fleet.store",
                &store,
                "--fleet.flush_interval_ms",
                "50",
                "--fleet.count_interval_secs",
                "0",
                "--cluster_policy.file",
                policy.to_str().unwrap(),
                "--rollouts.token_file",
                tokens.to_str().unwrap(),
            ],
        )
        .await?;
        Ok(Self {
            engine,
            _upstream: upstream,
            http: reqwest::Client::new(),
        })
    }

    /// Asks for updates as `cluster` does; what the engine offers it.
    async fn check(&self, cluster: &Cluster) -> anyhow::Result<ClientGraph> {
        let url = self.engine.api_url(&format!(
            "{PATH_PREFIX}/graph?channel={}&arch={ARCH}&id={}&version={}",
            cluster.channel, cluster.id, cluster.version
        ));
        let answer = http::get(&self.http, &url, Some("application/json")).await?;
        ClientGraph::from_served(&answer.json()?)
    }

    /// Waits until the store holds `checks` update checks.
    async fn await_written(&self, checks: usize) -> anyhow::Result<()> {
        self.engine
            .await_status(&format!("{checks} checks written"), |status| {
                status["fleet"]["recorder"]["written"] == checks
            })
            .await?;
        Ok(())
    }

    fn page(&self, status_port: bool, query: &str) -> String {
        let path = format!("{PATH_PREFIX}/?{query}");
        if status_port {
            self.engine.status_url(&path)
        } else {
            self.engine.api_url(&path)
        }
    }
}

/// What the test expects the Fleet view to show, counted from what its
/// clusters said.
#[derive(Debug)]
struct Expected {
    /// (channel, version) → clusters.
    versions: BTreeMap<(String, String), u64>,
    /// Arrivals at each release drawn.
    adoption: BTreeMap<String, u64>,
    /// The rollout of [`TARGET`]: in scope, offered, arrived.
    rollout: [u64; 3],
    /// (channel, version, clusters, reason): no update to a newer release.
    no_update: BTreeSet<(String, String, u64, String)>,
}

/// Starts the fleet, moves some of it, and counts.
async fn simulate(engine: &FleetEngine) -> Expected {
    let mut ids = Ids { next: 0 };
    let mut clusters = Vec::new();
    for (channel, version, count, inside) in FLEET_PLAN {
        for n in 0..count {
            clusters.push(Cluster {
                id: ids.take(n < inside),
                channel,
                version,
                inside: n < inside,
            });
        }
    }
    for cluster in &clusters {
        engine.check(cluster).await.unwrap();
    }
    let mut checks = clusters.len();
    engine.await_written(checks).await.unwrap();

    // Each move is an update the engine offers the cluster, taken: the
    // cluster then asks from its new version.
    let mut arrivals: BTreeMap<String, u64> = BTreeMap::new();
    for (channel, from, to, count) in MOVES {
        let mut movers: Vec<&mut Cluster> = clusters
            .iter_mut()
            .filter(|cluster| cluster.channel == channel && cluster.version == from)
            .collect();
        movers.sort_by_key(|cluster| !cluster.inside);
        for cluster in movers.into_iter().take(count) {
            let offered = engine.check(cluster).await.unwrap();
            let updates = offered
                .updates_from(from)
                .or_else(|| offered.updates_from(&format!("{from}+{ARCH}")))
                .unwrap_or_else(|| panic!("{from} is not in {channel}'s answer"));
            assert!(
                updates
                    .available
                    .iter()
                    .any(|version| version.split('+').next() == Some(to)),
                "{} on {from} is not offered {to}: {updates:?}",
                cluster.id
            );
            cluster.version = to;
            engine.check(cluster).await.unwrap();
            *arrivals.entry(to.to_owned()).or_default() += 1;
            checks += 2;
        }
    }
    engine.await_written(checks).await.unwrap();

    let mut versions: BTreeMap<(String, String), u64> = BTreeMap::new();
    for cluster in &clusters {
        *versions
            .entry((cluster.channel.to_owned(), cluster.version.to_owned()))
            .or_default() += 1;
    }
    // The rollout's scope: clusters with an update to the target in their
    // channel (on 4.18.4), and those that arrived; offered: those inside.
    let waiting: Vec<&Cluster> = clusters
        .iter()
        .filter(|cluster| cluster.version == "4.18.4")
        .collect();
    let arrived = arrivals[TARGET];
    let offered = waiting.iter().filter(|cluster| cluster.inside).count() as u64 + arrived;
    // Nowhere newer to go: 4.18.3 and the channels' newest releases
    // (4.17.12 has no update within stable-4.17); 4.16.9 is in no channel.
    let no_update = versions
        .iter()
        .filter_map(|((channel, version), count)| {
            let reason = match version.as_str() {
                "4.16.9" => "version not in its channel",
                "4.18.3" | "4.17.12" | TARGET => "no recommended update",
                _ => return None,
            };
            Some((channel.clone(), version.clone(), *count, reason.to_owned()))
        })
        .collect();
    Expected {
        versions,
        // The rollout's target, then the newest release of the busiest
        // channel not already drawn (stable-4.18's and fast-4.18's is the
        // target): stable-4.17's.
        adoption: BTreeMap::from([
            (TARGET.to_owned(), arrived),
            ("4.17.12".to_owned(), arrivals["4.17.12"]),
        ]),
        rollout: [waiting.len() as u64 + arrived, offered, arrived],
        no_update,
    }
}

/// What the page measures of the Fleet view: wider than the screen, any
/// element of it out of the screen or its text out of its box, panels
/// over panels, charts wider than their panel.
const MEASURE_FLEET: &str = r##"
const box = (element) => element.getBoundingClientRect();
const shown = (element) => element.getClientRects().length > 0;
const fleet = document.getElementById("fleet");
const inside = [...fleet.querySelectorAll("*")].filter(shown);
const name = (element) => `${element.tagName}#${element.id}.${element.getAttribute("class")}`;
const panels = [...fleet.querySelectorAll("section")];
const overlapping = [];
panels.forEach((a, i) => panels.slice(i + 1).forEach((b) => {
  const [p, q] = [box(a), box(b)];
  if (Math.min(p.right, q.right) - Math.max(p.left, q.left) > 1 && Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top) > 1) {
    overlapping.push(`${a.id} / ${b.id}`);
  }
}));
return {
  width: window.innerWidth,
  pageWidth: document.documentElement.scrollWidth,
  fleetShown: shown(fleet),
  graphShown: shown(document.getElementById("graph-view")),
  outOfScreen: inside.filter((element) => box(element).right > window.innerWidth + 0.5 || box(element).left < -0.5).map(name),
  overflowing: inside.filter((element) => element.clientWidth > 0 && element.scrollWidth > element.clientWidth + 1).map(name),
  chartsWiderThanPanel: [...fleet.querySelectorAll("svg")].filter((svg) => box(svg).right > box(svg.closest("section")).right + 0.5).length,
  overlapping,
  columns: new Set(panels.map((panel) => Math.round(box(panel).left))).size,
};
"##;

/// The numbers of `attribute` of the elements `css` selects, by the
/// values of `keys`.
async fn counted(browser: &Browser, css: &str, keys: &[&str], attribute: &str) -> BTreeMap<Vec<String>, u64> {
    let mut found = BTreeMap::new();
    for element in browser.all(css).await.unwrap() {
        let mut key = Vec::new();
        for name in keys {
            key.push(element.attr(name).await.unwrap().unwrap_or_default());
        }
        let value = element.attr(attribute).await.unwrap().unwrap_or_default();
        let previous = found.insert(key.clone(), value.parse().unwrap());
        assert_eq!(previous, None, "{css} {key:?} is shown twice");
    }
    found
}

async fn text(browser: &Browser, css: &str) -> String {
    let element = browser.wait_for(css).await.unwrap();
    element.prop("textContent").await.unwrap().unwrap_or_default()
}

#[tokio::test]
async fn the_fleet_view_on_the_status_port_shows_what_the_clusters_said_and_the_public_page_knows_no_fleet() {
    let workdir = Workdir::new().unwrap();
    let engine = FleetEngine::start(workdir.path()).await.unwrap();
    let expected = simulate(&engine).await;
    for viewport in VIEWPORTS {
        shows_the_fleet(&engine, &expected, viewport, workdir.path()).await;
        public_page_has_no_fleet(&engine, viewport).await;
    }
    shows_a_rollout_paused_at_run_time(&engine).await;
}

/// Paused through the status port's rollout control: the Fleet view says
/// by whom, when and why, and that the file's schedule waits.
async fn shows_a_rollout_paused_at_run_time(engine: &FleetEngine) {
    let pause = engine.engine.status_url(&format!(
        "{PATH_PREFIX}/v1/rollouts/{TARGET}/pause?reason=storage+alarms"
    ));
    let answer = engine
        .http
        .post(&pause)
        .bearer_auth(OPS_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let browser = Browser::start(VIEWPORTS[0]).await.unwrap();
    browser.open(&engine.page(true, "view=fleet")).await.unwrap();
    let shown = text(&browser, ".rollout .rollout-control[data-state=\"paused\"]").await;
    assert!(
        shown.starts_with("Paused at run time by ops at ") && shown.contains(": storage alarms. "),
        "{shown}"
    );
}

async fn shows_the_fleet(engine: &FleetEngine, expected: &Expected, viewport: Viewport, workdir: &Path) {
    let at = viewport.name;
    let browser = Browser::start(viewport).await.unwrap();
    browser.open(&engine.page(true, "view=fleet")).await.unwrap();
    browser.wait_ready().await.unwrap();

    // The switcher, on the Fleet view; the update graph's parts hidden.
    assert_eq!(
        browser
            .attributes("#views a[aria-current=\"page\"]", "data-view")
            .await
            .unwrap(),
        ["fleet"],
        "{at}"
    );
    let total: u64 = expected.versions.values().sum();
    let status = browser.wait_for("#fleet-status").await.unwrap();
    assert_eq!(
        status.attr("data-clusters").await.unwrap(),
        Some(total.to_string()),
        "{at}"
    );
    assert!(
        text(&browser, "#fleet-status")
            .await
            .starts_with(&format!("{total} clusters active")),
        "{at}"
    );

    // Clusters per version, per channel: each version listed with its
    // count, a segment of its channel's bar each, the bars' totals.
    let listed = counted(
        &browser,
        "li.fleet-version",
        &["data-channel", "data-arch", "data-version"],
        "data-clusters",
    )
    .await;
    let want: BTreeMap<Vec<String>, u64> = expected
        .versions
        .iter()
        .map(|((channel, version), count)| (vec![channel.clone(), ARCH.to_owned(), version.clone()], *count))
        .collect();
    assert_eq!(listed, want, "{at}");
    for ((channel, version), count) in &expected.versions {
        let item = format!("li.fleet-version[data-channel=\"{channel}\"][data-version=\"{version}\"]");
        assert!(
            text(&browser, &item)
                .await
                .contains(&format!("{version}: {count}")),
            "{at}: {item}"
        );
        let segment = format!(
            ".fleet-group[data-channel=\"{channel}\"] rect.segment[data-version=\"{version}\"][data-clusters=\"{count}\"]"
        );
        assert_eq!(browser.all(&segment).await.unwrap().len(), 1, "{at}: {segment}");
    }
    let mut per_channel: BTreeMap<Vec<String>, u64> = BTreeMap::new();
    for ((channel, _), count) in &expected.versions {
        *per_channel
            .entry(vec![channel.clone(), ARCH.to_owned()])
            .or_default() += count;
    }
    assert_eq!(
        counted(
            &browser,
            ".fleet-group",
            &["data-channel", "data-arch"],
            "data-clusters"
        )
        .await,
        per_channel,
        "{at}"
    );
    // The bars are as long as their clusters: the busiest the longest.
    let widths = browser
        .run(
            "return [...document.querySelectorAll('.fleet-group')].map((group) =>
               [group.dataset.clusters, [...group.querySelectorAll('rect.segment')]
                 .reduce((sum, rect) => sum + rect.getBoundingClientRect().width, 0)]);",
        )
        .await
        .unwrap();
    let widths: Vec<(f64, f64)> = widths
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            (
                pair[0].as_str().unwrap().parse().unwrap(),
                pair[1].as_f64().unwrap(),
            )
        })
        .collect();
    let (most, widest) = widths[0];
    for (clusters, width) in &widths {
        assert!(
            (width / widest - clusters / most).abs() < 0.02,
            "{at}: bars not to scale: {widths:?}"
        );
    }

    // Arrivals at the rollout's target and at the newest release of the
    // other channel, as many as moved there.
    let drawn = counted(&browser, ".adoption", &["data-version"], "data-clusters").await;
    let want: BTreeMap<Vec<String>, u64> = expected
        .adoption
        .iter()
        .map(|(version, count)| (vec![version.clone()], *count))
        .collect();
    assert_eq!(drawn, want, "{at}");
    for (version, count) in &expected.adoption {
        let heading = text(&browser, &format!(".adoption[data-version=\"{version}\"] h3")).await;
        assert!(
            heading.contains(&format!("{count} clusters arrived")),
            "{at}: {heading}"
        );
        assert_eq!(
            browser
                .all(&format!(".adoption[data-version=\"{version}\"] path.area"))
                .await
                .unwrap()
                .len(),
            1,
            "{at}"
        );
    }

    // The rollout: in scope, offered, arrived; its progress between the
    // places of the clusters inside and outside it.
    let rollout = browser
        .wait_for(&format!(".rollout[data-target=\"{TARGET}\"]"))
        .await
        .unwrap();
    let mut figures = Vec::new();
    for attribute in ["data-in-scope", "data-offered", "data-arrived"] {
        figures.push(
            rollout
                .attr(attribute)
                .await
                .unwrap()
                .unwrap()
                .parse::<u64>()
                .unwrap(),
        );
    }
    assert_eq!(figures, expected.rollout, "{at}: in scope, offered, arrived");
    let progress: f64 = rollout
        .attr("data-progress")
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    assert!((45.0..60.0).contains(&progress), "{at}: {progress}");
    let [in_scope, offered, arrived] = expected.rollout;
    assert_eq!(
        text(&browser, ".rollout .rollout-figures").await,
        format!("{arrived} arrived · {offered} offered · {in_scope} clusters in scope"),
        "{at}"
    );
    let bars = browser
        .run(
            "const width = (css) => document.querySelector(`.rollout ${css}`).getBoundingClientRect().width;
             return [width('rect.in-scope'), width('rect.offered'), width('rect.arrived')];",
        )
        .await
        .unwrap();
    let bars: Vec<f64> = bars
        .as_array()
        .unwrap()
        .iter()
        .map(|width| width.as_f64().unwrap())
        .collect();
    for (bar, count) in bars.iter().zip(expected.rollout) {
        let share = count as f64 / in_scope as f64;
        assert!(
            (bar / bars[0] - share).abs() < 0.02,
            "{at}: {bars:?} for {:?}",
            expected.rollout
        );
    }

    // Stuck: the versions with nowhere newer to go, as counted; nobody
    // has waited the stuck window (days) yet.
    let mut nowhere = BTreeSet::new();
    for item in browser.all("#stuck-nowhere > li").await.unwrap() {
        let attribute = async |name| item.attr(name).await.unwrap().unwrap_or_default();
        nowhere.insert((
            attribute("data-channel").await,
            attribute("data-version").await,
            attribute("data-clusters").await.parse().unwrap(),
            attribute("data-reason").await,
        ));
    }
    assert_eq!(nowhere, expected.no_update, "{at}");
    assert!(browser.all("#stuck-not-moving").await.unwrap().is_empty(), "{at}");
    assert_eq!(
        browser.all("#stuck-nowhere > li .badge").await.unwrap().len(),
        3,
        "{at}: the channels' newest releases marked (4.17.12, and {TARGET} twice)"
    );

    // Laid out for the screen: nothing wider than it, nothing out of its
    // box, panels side by side on a desktop, one under the other on a phone.
    let measured = browser.run(MEASURE_FLEET).await.unwrap();
    assert_fleet_laid_out(&measured, viewport);
    screenshot_in(
        &browser,
        workdir,
        if viewport.mobile {
            "explorer-fleet-phone.png"
        } else {
            "explorer-fleet.png"
        },
    )
    .await
    .unwrap();

    // The update graph, a click away, on the same port; and back.
    browser.click_on("#views a[data-view=\"\"]").await.unwrap();
    browser.wait_for(DRAWN).await.unwrap();
    browser.wait_ready().await.unwrap();
    let measured = browser.run(MEASURE_FLEET).await.unwrap();
    assert_eq!(
        (&measured["fleetShown"], &measured["graphShown"]),
        (&json!(false), &json!(true)),
        "{at}"
    );
    assert!(
        !browser.current_url().await.unwrap().contains("view=fleet"),
        "{at}"
    );
    browser.click_on("#views a[data-view=\"fleet\"]").await.unwrap();
    browser.wait_ready().await.unwrap();
    browser.wait_for("#fleet-status[data-clusters]").await.unwrap();
    assert!(
        browser.current_url().await.unwrap().contains("view=fleet"),
        "{at}"
    );
    assert_fleet_laid_out(&browser.run(MEASURE_FLEET).await.unwrap(), viewport);

    let origin = engine.engine.status_url("/");
    for url in browser.requested_urls().await.unwrap() {
        assert!(
            url.starts_with(&origin),
            "{at}: the page asked {url}, not its own port"
        );
    }
    assert_eq!(
        browser.console_errors().await.unwrap(),
        Vec::<String>::new(),
        "{at}"
    );
    browser.close().await.unwrap();
}

fn assert_fleet_laid_out(measured: &Value, viewport: Viewport) {
    let at = viewport.name;
    assert_eq!(measured["width"], viewport.width, "{at}: the page's width");
    assert!(
        measured["pageWidth"].as_f64().unwrap() <= f64::from(viewport.width),
        "{at}: wider than the screen: {measured}"
    );
    assert_eq!(
        (&measured["fleetShown"], &measured["graphShown"]),
        (&json!(true), &json!(false)),
        "{at}"
    );
    assert_eq!(measured["outOfScreen"], json!([]), "{at}: out of the screen");
    assert_eq!(measured["overflowing"], json!([]), "{at}: out of its box");
    assert_eq!(measured["chartsWiderThanPanel"], 0, "{at}: {measured}");
    assert_eq!(measured["overlapping"], json!([]), "{at}: panels over panels");
    let columns = measured["columns"].as_u64().unwrap();
    if viewport.mobile {
        assert_eq!(columns, 1, "{at}: {measured}");
    } else {
        assert!(columns >= 2, "{at}: {measured}");
    }
}

async fn public_page_has_no_fleet(engine: &FleetEngine, viewport: Viewport) {
    let at = viewport.name;
    let browser = Browser::start(viewport).await.unwrap();
    // Asked for by its URL even: the public page has no Fleet view.
    browser.open(&engine.page(false, "view=fleet")).await.unwrap();
    browser.wait_for(DRAWN).await.unwrap();
    browser.wait_ready().await.unwrap();
    for css in ["#views", "#fleet", "body[data-fleet]"] {
        assert!(
            browser.all(css).await.unwrap().is_empty(),
            "{at}: {css} on the public page"
        );
    }
    let page_text = text(&browser, "body").await;
    assert!(
        !page_text.contains("Fleet") && !page_text.contains("cluster"),
        "{at}: {page_text}"
    );
    assert!(!browser.current_url().await.unwrap().contains("view="), "{at}");
    let origin = engine.engine.api_url("/");
    for url in browser.requested_urls().await.unwrap() {
        assert!(url.starts_with(&origin), "{at}: the page asked {url}");
        assert!(!url.contains("fleet"), "{at}: the public page asked {url}");
    }
    // The fleet answers are not on the public port at all.
    let fleet = engine.engine.api_url(&format!("{PATH_PREFIX}{FLEET}versions"));
    assert_eq!(http::get(&engine.http, &fleet, None).await.unwrap().status, 404);
    assert_eq!(
        browser.console_errors().await.unwrap(),
        Vec::<String>::new(),
        "{at}"
    );
    browser.close().await.unwrap();
}
