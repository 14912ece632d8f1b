//! The explorer's Fleet view in a real browser: an engine with a SQLite
//! fleet store (a file in the test's directory), a rollout in its cluster
//! policy and rollout control (a token file: the fleet answers need a
//! bearer token), on a graph of the test's own, asked by simulated
//! clusters (real graph requests with ids, channels and versions), some of
//! which then take an update the engine offers them. The page on the
//! engine's status port asks for a token, refuses a wrong one, and with
//! the right one shows, in its Fleet view, what the test counted itself:
//! the rollout first, in the engine's words, a pause and a conflict as
//! warnings; a release nobody arrived at in one line; no cluster on its
//! channel's newest release as stuck. The page on its public port has no
//! Fleet view and asks nothing about the fleet. An engine without rollout
//! control, whose fleet runs thousands of versions on many channels, is
//! drawn bounded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use e2e::browser::{Browser, Viewport};
use e2e::client_graph::ClientGraph;
use e2e::fleet::{FleetAnswers, Recording, place_percent, start_engine};
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
/// A token the engine's file does not hold.
const WRONG_TOKEN: &str = "not-the-fleet-view-token";
/// fast-4.18's newest release, which no cluster reaches.
const UNREACHED: &str = "4.18.6";
/// The token form, shown.
const TOKEN_FORM: &str = "#fleet-token-form:not([hidden])";

/// The releases and the channels each is in.
const RELEASES: [(&str, &[&str]); 9] = [
    ("4.17.10", &["stable-4.17"]),
    ("4.17.11", &["stable-4.17"]),
    ("4.17.12", &["stable-4.17", "stable-4.18"]),
    ("4.18.1", &["stable-4.18", "fast-4.18"]),
    ("4.18.2", &["stable-4.18", "fast-4.18"]),
    ("4.18.3", &["stable-4.18", "fast-4.18"]),
    ("4.18.4", &["stable-4.18", "fast-4.18"]),
    ("4.18.5", &["stable-4.18", "fast-4.18"]),
    (UNREACHED, &["fast-4.18"]),
];

/// The updates (all recommended). 4.18.3 has none; the target has one in
/// fast-4.18 only.
const UPDATES: [(&str, &str); 9] = [
    ("4.17.10", "4.17.11"),
    ("4.17.10", "4.17.12"),
    ("4.17.11", "4.17.12"),
    ("4.17.12", "4.18.2"),
    ("4.18.1", "4.18.2"),
    ("4.18.1", "4.18.4"),
    ("4.18.2", "4.18.4"),
    ("4.18.4", TARGET),
    (TARGET, UNREACHED),
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
/// rest over decades (`duration_hours`): its progress stays between 50%
/// and 60% for years.
fn policy_file(duration_hours: u32) -> String {
    // The start as RFC 3339, from coreutils' `date` (the harness has no
    // calendar of its own).
    let date = std::process::Command::new("date")
        .args(["-u", "-d", "1 hour ago", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .expect("date runs");
    let start = String::from_utf8(date.stdout).unwrap();
    format!(
        "rollouts:\n  - target: {TARGET}\n    start: {}\n    \
         duration_hours: {duration_hours}\n    starting_percentage: 50\n",
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
    policy: std::path::PathBuf,
}

impl FleetEngine {
    async fn start(workdir: &Path) -> anyhow::Result<Self> {
        let upstream = StaticServer::start(serde_json::to_vec(&full_graph())?, "application/json")?;
        let policy = workdir.join("policy.yaml");
        std::fs::write(&policy, policy_file(800_000))?;
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
                "--cluster_policy.reload_secs",
                "1",
                "--rollouts.token_file",
                tokens.to_str().unwrap(),
            ],
        )
        .await?;
        Ok(Self {
            engine,
            _upstream: upstream,
            http: reqwest::Client::new(),
            policy,
        })
    }

    /// The engine's `{prefix}/v1/fleet/{route}`, asked with the token.
    async fn fleet_answer(&self, route: &str) -> Value {
        let url = self.engine.status_url(&format!("{PATH_PREFIX}{FLEET}{route}"));
        let answer = self.http.get(&url).bearer_auth(OPS_TOKEN).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{url}");
        answer.json().await.unwrap()
    }

    /// The rollout of [`TARGET`] as the engine's fleet answer has it.
    async fn rollout(&self) -> Value {
        let answer = self.fleet_answer("rollouts").await;
        answer["rollouts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|rollout| rollout["target"] == TARGET)
            .cloned()
            .unwrap_or_else(|| panic!("no rollout of {TARGET} in {answer}"))
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
    /// (channel, version, clusters, reason): no update to a newer release,
    /// not on the channel's newest release.
    no_update: BTreeSet<(String, String, u64, String)>,
    /// Clusters on their channel's newest release (not stuck).
    on_newest: u64,
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

    // A version that is no release of the engine's graph (4.16.9) is
    // recorded as `other`.
    let mut versions: BTreeMap<(String, String), u64> = BTreeMap::new();
    for cluster in &clusters {
        let version = if cluster.version == "4.16.9" {
            "other"
        } else {
            cluster.version
        };
        *versions
            .entry((cluster.channel.to_owned(), version.to_owned()))
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
    // Nowhere newer to go: 4.18.3; `other` is no release. The channels'
    // newest releases (4.17.12 in stable-4.17, the target in stable-4.18)
    // have nothing newer either, and are not stuck: not listed. (In
    // fast-4.18 the target has an update.)
    let newest = |channel: &str| match channel {
        "stable-4.17" => "4.17.12",
        "stable-4.18" => TARGET,
        _ => UNREACHED,
    };
    let on_newest = versions
        .iter()
        .filter(|((channel, version), _)| version == newest(channel))
        .map(|(_, count)| count)
        .sum();
    let no_update = versions
        .iter()
        .filter_map(|((channel, version), count)| {
            let reason = match version.as_str() {
                "other" => "not a release version",
                "4.18.3" => "no recommended update",
                _ => return None,
            };
            Some((channel.clone(), version.clone(), *count, reason.to_owned()))
        })
        .collect();
    Expected {
        versions,
        // The rollout's target, then the newest release of each channel
        // not already drawn, the busiest first (stable-4.18's is the
        // target): stable-4.17's, and fast-4.18's, which nobody reached.
        adoption: BTreeMap::from([
            (TARGET.to_owned(), arrived),
            ("4.17.12".to_owned(), arrivals["4.17.12"]),
            (UNREACHED.to_owned(), 0),
        ]),
        rollout: [waiting.len() as u64 + arrived, offered, arrived],
        no_update,
        on_newest,
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
        asks_for_a_token_and_keeps_it_for_the_tab(&engine, viewport).await;
        shows_the_fleet(&engine, &expected, viewport, workdir.path()).await;
        public_page_has_no_fleet(&engine, viewport).await;
    }
    shows_a_rollout_paused_at_run_time_and_a_conflict(&engine).await;
}

/// Types `token` into the Fleet view's token form, once it shows, and
/// sends it; waits until the page has answered.
async fn enter_token(browser: &Browser, token: &str) {
    let input = browser
        .wait_for(&format!("{TOKEN_FORM} #fleet-token-input"))
        .await
        .unwrap();
    input.send_keys(token).await.unwrap();
    browser.click_on("#fleet-token-use").await.unwrap();
    browser.wait_ready().await.unwrap();
}

/// What the page shows of the token: the form (why it is asked, if it is),
/// its field's type and label, the refusal, the line saying a token is
/// used, whether the panels show, and where the token is kept.
const MEASURE_TOKEN: &str = r##"
const shown = (element) => Boolean(element) && element.getClientRects().length > 0;
const form = document.getElementById("fleet-token-form");
const input = document.getElementById("fleet-token-input");
const problem = document.getElementById("fleet-token-problem");
return {
  form: shown(form) ? form.dataset.asked : null,
  type: input.type,
  name: input.getAttribute("name"),
  label: [...input.labels].map((label) => label.textContent).join(" "),
  focused: document.activeElement === input,
  problem: shown(problem) ? problem.textContent : null,
  kept: shown(document.getElementById("fleet-token-kept")),
  panels: shown(document.getElementById("fleet-panels")),
  status: document.getElementById("fleet-status").textContent,
  session: sessionStorage.getItem("cincinnati-fleet-token"),
  local: JSON.stringify(localStorage),
  cookie: document.cookie,
  url: location.href,
};
"##;

/// The console's errors, but for the fleet's requests refused (401, 403),
/// which the browser logs as errors, none of which may hold a token.
async fn console_errors_but_refusals(browser: &Browser) -> Vec<String> {
    let errors = browser.console_errors().await.unwrap();
    for error in &errors {
        assert!(
            !error.contains(OPS_TOKEN) && !error.contains(WRONG_TOKEN),
            "a token in the console: {error}"
        );
    }
    errors
        .into_iter()
        .filter(|error| {
            let refused = error.contains("status of 401") || error.contains("status of 403");
            !(refused && error.contains(FLEET))
        })
        .collect()
}

/// With rollout control, the Fleet view asks for a token (a form in the
/// view, no prompt), says when one is refused, shows the fleet with the
/// right one, keeps it for the tab (a reload asks nothing; never in the
/// URL, a cookie or localStorage), and lets it be replaced or forgotten.
async fn asks_for_a_token_and_keeps_it_for_the_tab(engine: &FleetEngine, viewport: Viewport) {
    let at = viewport.name;
    let browser = Browser::start(viewport).await.unwrap();
    browser.open(&engine.page(true, "view=fleet")).await.unwrap();
    browser.wait_ready().await.unwrap();

    // Asked for: a labelled password field, nothing of the fleet shown.
    browser.wait_for(TOKEN_FORM).await.unwrap();
    let token = browser.run(MEASURE_TOKEN).await.unwrap();
    assert_eq!(token["form"], "needed", "{at}: {token}");
    assert_eq!(token["type"], "password", "{at}: {token}");
    assert_eq!(
        token["name"],
        Value::Null,
        "{at}: a named field goes into a URL: {token}"
    );
    assert_eq!(token["label"], "Token", "{at}: {token}");
    assert_eq!(token["focused"], true, "{at}: {token}");
    assert_eq!(token["panels"], false, "{at}: {token}");
    assert!(
        token["status"].as_str().unwrap().contains("asks for a token"),
        "{at}: {token}"
    );
    assert_fleet_laid_out_without_panels(&browser, viewport).await;

    // A wrong token: refused, in the engine's words; still asked.
    enter_token(&browser, WRONG_TOKEN).await;
    browser
        .wait_for("#fleet-token-form[data-asked=\"refused\"]:not([hidden])")
        .await
        .unwrap();
    let token = browser.run(MEASURE_TOKEN).await.unwrap();
    let problem = token["problem"].as_str().unwrap_or_default();
    assert!(
        problem.starts_with("The token was refused: ")
            && problem.contains("not one of rollouts.token_file's"),
        "{at}: {token}"
    );
    assert_eq!(token["panels"], false, "{at}: {token}");
    assert_fleet_laid_out_without_panels(&browser, viewport).await;

    // The right one: the fleet, the token kept for this tab only.
    enter_token(&browser, OPS_TOKEN).await;
    browser.wait_for("#fleet-status[data-clusters]").await.unwrap();
    let token = browser.run(MEASURE_TOKEN).await.unwrap();
    assert_eq!(
        (
            &token["form"],
            &token["kept"],
            &token["panels"],
            &token["problem"]
        ),
        (&Value::Null, &json!(true), &json!(true), &Value::Null),
        "{at}: {token}"
    );
    assert_eq!(token["session"], OPS_TOKEN, "{at}: {token}");
    for place in ["local", "cookie", "url"] {
        assert!(
            !token[place].as_str().unwrap().contains(OPS_TOKEN),
            "{at}: the token in {place}: {token}"
        );
    }

    // A reload keeps it: nothing asked.
    browser.reload().await.unwrap();
    browser.wait_ready().await.unwrap();
    browser.wait_for("#fleet-status[data-clusters]").await.unwrap();
    let token = browser.run(MEASURE_TOKEN).await.unwrap();
    assert_eq!(
        (&token["form"], &token["panels"]),
        (&Value::Null, &json!(true)),
        "{at}: {token}"
    );

    // Replaced by a wrong one: refused, the fleet hidden; then forgotten:
    // asked for again, nothing kept.
    browser.click_on("#fleet-token-replace").await.unwrap();
    browser
        .wait_for("#fleet-token-form[data-asked=\"replace\"]:not([hidden])")
        .await
        .unwrap();
    enter_token(&browser, WRONG_TOKEN).await;
    browser
        .wait_for("#fleet-token-form[data-asked=\"refused\"]:not([hidden])")
        .await
        .unwrap();
    assert_eq!(browser.run(MEASURE_TOKEN).await.unwrap()["panels"], false, "{at}");
    browser.click_on("#fleet-token-forget-stored").await.unwrap();
    browser.wait_ready().await.unwrap();
    browser
        .wait_for("#fleet-token-form[data-asked=\"needed\"]:not([hidden])")
        .await
        .unwrap();
    let token = browser.run(MEASURE_TOKEN).await.unwrap();
    assert_eq!(
        (&token["session"], &token["panels"]),
        (&Value::Null, &json!(false)),
        "{at}: {token}"
    );

    // Never in a URL the page asked, never in the console.
    for url in browser.requested_urls().await.unwrap() {
        assert!(
            !url.contains(OPS_TOKEN) && !url.contains(WRONG_TOKEN),
            "{at}: the page asked {url}"
        );
    }
    assert_eq!(
        console_errors_but_refusals(&browser).await,
        Vec::<String>::new(),
        "{at}"
    );
    browser.close().await.unwrap();
}

/// The Fleet view asking for a token: laid out for the screen (the
/// panels hidden, so measured apart).
async fn assert_fleet_laid_out_without_panels(browser: &Browser, viewport: Viewport) {
    let at = viewport.name;
    let measured = browser.run(MEASURE_FLEET).await.unwrap();
    assert!(
        measured["pageWidth"].as_f64().unwrap() <= f64::from(viewport.width),
        "{at}: wider than the screen: {measured}"
    );
    assert_eq!(measured["outOfScreen"], json!([]), "{at}: out of the screen");
    assert_eq!(measured["overflowing"], json!([]), "{at}: out of its box");
}

/// Whether the elements `css` selects look like a warning (a background
/// and a left border) and are shown: their text, if so.
async fn warning_text(browser: &Browser, css: &str) -> Vec<String> {
    browser.wait_for(css).await.unwrap();
    let found = browser
        .run(&format!(
            "return [...document.querySelectorAll('{css}')].map((element) => {{
               const style = getComputedStyle(element);
               const warning = style.backgroundColor !== 'rgba(0, 0, 0, 0)' && parseFloat(style.borderLeftWidth) >= 2;
               return element.getClientRects().length > 0 && warning ? element.textContent : null;
             }});"
        ))
        .await
        .unwrap();
    serde_json::from_value::<Vec<Option<String>>>(found)
        .unwrap()
        .into_iter()
        .map(|text| text.unwrap_or_else(|| panic!("{css} is not shown as a warning")))
        .collect()
}

/// A time as the engine sends it, as the page shows it: to the second.
fn shown_time(time: &Value) -> String {
    let time = time.as_str().unwrap();
    assert!(
        time.ends_with('Z') && time.len() == 20,
        "not to the second in UTC: {time}"
    );
    format!("{} UTC", time.trim_end_matches('Z').replace('T', " "))
}

/// Paused through the status port's rollout control: the Fleet view says
/// by whom, since when (to the second) and why, as a warning; the
/// rollout's sentence says it is paused. The policy file edited
/// meanwhile: the conflict shows as a warning above the figures.
async fn shows_a_rollout_paused_at_run_time_and_a_conflict(engine: &FleetEngine) {
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
    let rollout = engine.rollout().await;
    assert_eq!(rollout["state"], "paused", "{rollout}");
    let since = shown_time(&rollout["control"]["paused"]["since"]);
    let browser = Browser::start(VIEWPORTS[0]).await.unwrap();
    browser.open(&engine.page(true, "view=fleet")).await.unwrap();
    enter_token(&browser, OPS_TOKEN).await;
    let shown = warning_text(
        &browser,
        &format!(".rollout[data-target=\"{TARGET}\"][data-state=\"paused\"] .rollout-control[data-state=\"paused\"]"),
    )
    .await;
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].starts_with(&format!("Paused by ops since {since}, keeping "))
            && shown[0].contains("%: storage alarms. "),
        "{shown:?}, paused since {since}"
    );
    let said = text(&browser, ".rollout .rollout-said").await;
    assert_eq!(said, sentence(&rollout["said"]), "{rollout}");

    // The file's schedule edited while paused: a conflict, shown.
    std::fs::write(&engine.policy, policy_file(700_000)).unwrap();
    let (conflict, _) = e2e::poll::until(
        "the engine to see the conflict",
        e2e::poll::CHANGE_TIMEOUT,
        async || {
            let rollout = engine.rollout().await;
            rollout["conflict"]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| anyhow::anyhow!("no conflict yet: {rollout}"))
        },
    )
    .await
    .unwrap();
    browser.reload().await.unwrap();
    browser.wait_ready().await.unwrap();
    let shown = warning_text(&browser, ".rollout .rollout-conflict").await;
    assert_eq!(
        shown,
        [format!(
            "The policy file and the run-time state disagree: {conflict}"
        )]
    );
    let above = browser
        .run(
            "const top = (css) => document.querySelector(`.rollout ${css}`).getBoundingClientRect().top;
             return top('.rollout-conflict') < top('.rollout-figures');",
        )
        .await
        .unwrap();
    assert_eq!(above, true, "the conflict is not above the figures");
    assert_eq!(console_errors_but_refusals(&browser).await, Vec::<String>::new());
    browser.close().await.unwrap();
}

/// The engine's `said`, as the page writes it: a sentence.
fn sentence(said: &Value) -> String {
    let said = said.as_str().unwrap();
    let mut letters = said.chars();
    let first = letters
        .next()
        .map(|letter| letter.to_uppercase().to_string())
        .unwrap_or_default();
    let written = format!("{first}{}", letters.as_str());
    if written.ends_with('.') {
        written
    } else {
        format!("{written}.")
    }
}

async fn shows_the_fleet(engine: &FleetEngine, expected: &Expected, viewport: Viewport, workdir: &Path) {
    let at = viewport.name;
    let browser = Browser::start(viewport).await.unwrap();
    browser.open(&engine.page(true, "view=fleet")).await.unwrap();
    browser.wait_ready().await.unwrap();
    enter_token(&browser, OPS_TOKEN).await;

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
    // other channels, as many as moved there; a release nobody arrived at
    // in one line, not an empty chart.
    let drawn = counted(&browser, ".adoption", &["data-version"], "data-clusters").await;
    let want: BTreeMap<Vec<String>, u64> = expected
        .adoption
        .iter()
        .map(|(version, count)| (vec![version.clone()], *count))
        .collect();
    assert_eq!(drawn, want, "{at}");
    for (version, count) in &expected.adoption {
        let css = format!(".adoption[data-version=\"{version}\"]");
        if *count == 0 {
            assert_eq!(
                text(&browser, &css).await,
                format!("No cluster arrived at {version} in the last 7 days."),
                "{at}"
            );
            assert!(
                browser
                    .all(&format!("{css} svg, {css} h3"))
                    .await
                    .unwrap()
                    .is_empty(),
                "{at}: an empty chart of {version}"
            );
            continue;
        }
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

    // The rollouts panel first (the top, across the width).
    let panels = browser
        .run(
            "return [...document.querySelectorAll('#fleet-panels > section')].map((panel) =>
               [panel.id, panel.getBoundingClientRect().top]);",
        )
        .await
        .unwrap();
    let panels: Vec<(String, f64)> = serde_json::from_value(panels).unwrap();
    assert_eq!(panels[0].0, "fleet-rollouts", "{at}: {panels:?}");
    assert!(
        panels.iter().all(|(_, top)| *top >= panels[0].1),
        "{at}: a panel above the rollouts: {panels:?}"
    );

    // The rollout, in the engine's words (its sentence; no key names).
    let engines = engine.rollout().await;
    assert_eq!(
        text(
            &browser,
            &format!(".rollout[data-target=\"{TARGET}\"] .rollout-said")
        )
        .await,
        sentence(&engines["said"]),
        "{at}: {engines}"
    );
    let words = text(&browser, "#fleet-rollouts").await;
    let state = engines["state"].as_str().unwrap();
    for key in [
        state,
        "inScope",
        "declaredProgress",
        "offered:",
        "null",
        "undefined",
    ] {
        assert!(!words.contains(key), "{at}: {key} in {words}");
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
        format!("{offered} offered and {arrived} arrived of {in_scope} clusters in scope"),
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

    // Stuck: the versions with nowhere newer to go, as counted, but those
    // on their channel's newest release (said apart); nobody has waited
    // the stuck window (days) yet.
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
    for version in ["4.17.12", TARGET] {
        assert!(
            browser
                .all(&format!("#fleet-stuck li[data-version=\"{version}\"]"))
                .await
                .unwrap()
                .is_empty(),
            "{at}: {version}, a channel's newest, listed as stuck"
        );
    }
    let on_newest = browser.wait_for("#stuck-on-newest").await.unwrap();
    assert_eq!(
        on_newest.attr("data-clusters").await.unwrap(),
        Some(expected.on_newest.to_string()),
        "{at}"
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
        console_errors_but_refusals(&browser).await,
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

/// Channels of the large fleet: the first runs thousands of versions, the
/// others a few each.
const MANY_CHANNELS: usize = 16;
/// Releases in no channel (4.17.0 to 4.17.1999, before the channels'
/// in any order), each run by one cluster of the first channel (releases
/// of the graph, so the engine records each as it is).
const MANY_VERSIONS: usize = 2_000;
/// The releases every channel of the large fleet holds, 4.18.0 → … → 4.18.4.
const CHANNEL_RELEASES: usize = 5;
/// What the page draws at most, as docs/policy-engine.md says: channels,
/// versions a channel (the most common, and its newest), versions listed a
/// stuck list.
const TOP_CHANNELS: usize = 12;
const TOP_VERSIONS: usize = 8;
const STUCK_LISTED: usize = 20;
/// Elements the Fleet view may have, whatever the fleet's size.
const MOST_ELEMENTS: u64 = 1_500;

fn many_channel(number: usize) -> String {
    format!("fleet-{number:02}")
}

/// A graph of [`CHANNEL_RELEASES`] releases in every channel and
/// [`MANY_VERSIONS`] in none.
fn large_graph() -> Value {
    let channels: Vec<String> = (0..MANY_CHANNELS).map(many_channel).collect();
    let node = |version: String, channels: Option<String>| {
        let mut metadata = json!({"io.openshift.upgrades.graph.release.arch": ARCH});
        if let Some(channels) = channels {
            metadata["io.openshift.upgrades.graph.release.channels"] = json!(channels);
        }
        json!({
            "version": format!("{version}+{ARCH}"),
            "payload": format!("example.com/ocp-release:{version}"),
            "metadata": metadata,
        })
    };
    let mut nodes: Vec<Value> = (0..CHANNEL_RELEASES)
        .map(|patch| node(format!("4.18.{patch}"), Some(channels.join(","))))
        .collect();
    nodes.extend((0..MANY_VERSIONS).map(|patch| node(format!("4.17.{patch}"), None)));
    json!({
        "nodes": nodes,
        "edges": (1..CHANNEL_RELEASES).map(|to| [to - 1, to]).collect::<Vec<_>>(),
        "conditionalEdges": [],
    })
}

/// The large fleet: (channel, version) of each cluster. The first channel:
/// 30, 20 and 10 clusters on 4.18.0–2, one on its newest release (4.18.4),
/// one on each release of no channel; channel n of the others: 16 − n
/// clusters on 4.18.0 and one on 4.18.3.
fn large_fleet() -> Vec<(String, String)> {
    let mut fleet = Vec::new();
    let first = many_channel(0);
    for (version, count) in [("4.18.0", 30), ("4.18.1", 20), ("4.18.2", 10), ("4.18.4", 1)] {
        fleet.extend((0..count).map(|_| (first.clone(), version.to_owned())));
    }
    fleet.extend((0..MANY_VERSIONS).map(|patch| (first.clone(), format!("4.17.{patch}"))));
    for number in 1..MANY_CHANNELS {
        let channel = many_channel(number);
        fleet.extend((0..MANY_CHANNELS - number).map(|_| (channel.clone(), "4.18.0".to_owned())));
        fleet.push((channel, "4.18.3".to_owned()));
    }
    fleet
}

/// What the page measures of the versions panel and the DOM: each
/// channel's bar (its clusters and versions, the segments' versions and
/// clusters, the others'), the line of channels not drawn, the stuck
/// lists, the elements of the Fleet view.
const MEASURE_BOUNDS: &str = r##"
const numbers = (element, name) => Number(element.getAttribute(name));
const groups = [...document.querySelectorAll(".fleet-group")].map((group) => ({
  channel: group.dataset.channel,
  clusters: numbers(group, "data-clusters"),
  versions: numbers(group, "data-versions"),
  segments: [...group.querySelectorAll("rect.segment[data-version]")].map((rect) => [rect.dataset.version, numbers(rect, "data-clusters")]),
  others: [...group.querySelectorAll("rect.segment.others")].map((rect) => [numbers(rect, "data-others"), numbers(rect, "data-clusters")]),
  listed: group.querySelectorAll("li.fleet-version").length,
  newest: [...group.querySelectorAll("li.fleet-version .badge")].map((badge) => badge.closest("li").dataset.version),
}));
const more = document.querySelector(".fleet-more");
const stuckMore = document.getElementById("stuck-nowhere-more");
return {
  groups,
  more: more ? [numbers(more, "data-channels"), numbers(more, "data-clusters")] : null,
  stuckListed: document.querySelectorAll("#stuck-nowhere > li").length,
  stuckMore: stuckMore ? [numbers(stuckMore, "data-versions"), numbers(stuckMore, "data-clusters")] : null,
  elements: document.querySelectorAll("#fleet *").length,
  tokenAsked: document.getElementById("fleet-token-form").getClientRects().length > 0,
};
"##;

/// Thousands of versions (and more channels than are drawn) on an engine
/// without rollout control (its fleet answers open, no token asked): the
/// Fleet view draws the busiest channels, each with its most common
/// versions and its newest, the rest summed (nothing lost), lists so many
/// stuck versions and sums the rest; its DOM stays the same size whatever
/// the fleet's.
#[tokio::test]
async fn a_fleet_of_thousands_of_versions_is_drawn_bounded() {
    let workdir = Workdir::new().unwrap();
    let upstream =
        StaticServer::start(serde_json::to_vec(&large_graph()).unwrap(), "application/json").unwrap();
    let store = format!("sqlite://{}", workdir.path().join("fleet.db").display());
    let engine = start_engine(
        workdir.path(),
        "many",
        &format!("{}{PATH_PREFIX}/graph", upstream.url()),
        &Recording::to(store),
        &[],
    )
    .await
    .unwrap();

    // Every cluster asks once, sixteen at a time.
    let fleet = large_fleet();
    let http = reqwest::Client::new();
    let graph = e2e::policy_engine::graph_url(&engine);
    for (batch, clusters) in fleet.chunks(16).enumerate() {
        let mut asking = tokio::task::JoinSet::new();
        for (index, (channel, version)) in clusters.iter().enumerate() {
            let url = format!(
                "{graph}?channel={channel}&arch={ARCH}&version={version}&id={:08x}-b16f-4eee-8a11-000000000000",
                batch * 16 + index
            );
            let http = http.clone();
            asking.spawn(async move {
                http::get(&http, &url, Some("application/json"))
                    .await
                    .map(|answer| (url, answer.status))
            });
        }
        while let Some(asked) = asking.join_next().await {
            let (url, status) = asked.unwrap().unwrap();
            assert_eq!(status, 200, "{url}");
        }
    }
    let answers = FleetAnswers::of(&engine, &http);
    answers.await_written(fleet.len() as u64).await.unwrap();
    let versions = answers.versions().await.unwrap();
    assert_eq!(versions.clusters, fleet.len() as u64);
    assert!(
        versions.versions.len() > MANY_VERSIONS,
        "{}",
        versions.versions.len()
    );

    // The test's count: clusters per channel, the busiest first; the
    // stuck versions (the releases of no channel: one cluster each).
    let mut per_channel: BTreeMap<&str, (u64, BTreeSet<&str>)> = BTreeMap::new();
    for (channel, version) in &fleet {
        let entry = per_channel.entry(channel.as_str()).or_default();
        entry.0 += 1;
        entry.1.insert(version.as_str());
    }
    let mut busiest: Vec<(&str, u64, usize)> = per_channel
        .iter()
        .map(|(channel, (clusters, versions))| (*channel, *clusters, versions.len()))
        .collect();
    busiest.sort_by_key(|(_, clusters, _)| std::cmp::Reverse(*clusters));
    let not_drawn = &busiest[TOP_CHANNELS..];

    for viewport in VIEWPORTS {
        let at = viewport.name;
        let browser = Browser::start(viewport).await.unwrap();
        browser
            .open(&engine.status_url(&format!("{PATH_PREFIX}/?view=fleet")))
            .await
            .unwrap();
        browser.wait_ready().await.unwrap();
        let status = browser.wait_for("#fleet-status[data-clusters]").await.unwrap();
        assert_eq!(
            status.attr("data-clusters").await.unwrap(),
            Some(fleet.len().to_string()),
            "{at}"
        );
        let measured = browser.run(MEASURE_BOUNDS).await.unwrap();
        println!(
            "{at}: {} versions of {} clusters on {MANY_CHANNELS} channels drawn with {} elements",
            versions.versions.len(),
            fleet.len(),
            measured["elements"]
        );
        assert_eq!(
            measured["tokenAsked"], false,
            "{at}: no rollout control, no token"
        );

        // The busiest channels, each with its most common versions and its
        // newest; the rest of its versions summed; nothing lost.
        let groups = measured["groups"].as_array().unwrap();
        let drawn: Vec<(&str, u64, usize)> = groups
            .iter()
            .map(|group| {
                (
                    group["channel"].as_str().unwrap(),
                    group["clusters"].as_u64().unwrap(),
                    group["versions"].as_u64().unwrap() as usize,
                )
            })
            .collect();
        assert_eq!(drawn, busiest[..TOP_CHANNELS].to_vec(), "{at}");
        for group in groups {
            let channel = &group["channel"];
            let segments: Vec<(String, u64)> = serde_json::from_value(group["segments"].clone()).unwrap();
            let others: Vec<(usize, u64)> = serde_json::from_value(group["others"].clone()).unwrap();
            assert!(
                segments.len() <= TOP_VERSIONS + 1,
                "{at}: {channel}: {segments:?}"
            );
            assert_eq!(
                group["listed"].as_u64().unwrap() as usize,
                segments.len(),
                "{at}: {channel}"
            );
            let (other_versions, other_clusters) = others.first().copied().unwrap_or_default();
            assert!(others.len() <= 1, "{at}: {channel}: {others:?}");
            assert_eq!(
                segments.len() + other_versions,
                group["versions"].as_u64().unwrap() as usize,
                "{at}: {channel}: versions lost"
            );
            assert_eq!(
                segments.iter().map(|(_, clusters)| clusters).sum::<u64>() + other_clusters,
                group["clusters"].as_u64().unwrap(),
                "{at}: {channel}: clusters lost"
            );
        }
        // The first channel's newest release is drawn, though as rare as
        // thousands of others (which come before it in the answer).
        let first = &groups[0];
        assert_eq!(first["newest"], json!(["4.18.4"]), "{at}: {first}");
        assert_eq!(
            first["segments"].as_array().unwrap().len(),
            TOP_VERSIONS + 1,
            "{at}: {first}"
        );
        assert_eq!(
            first["segments"][0],
            json!(["4.18.0", 30]),
            "{at}: the most common first"
        );
        assert_eq!(
            first["others"][0][0].as_u64().unwrap() as usize,
            CHANNEL_RELEASES - 1 + MANY_VERSIONS - (TOP_VERSIONS + 1),
            "{at}: {first}"
        );
        assert_eq!(
            measured["more"],
            json!([
                not_drawn.len(),
                not_drawn.iter().map(|(_, clusters, _)| clusters).sum::<u64>()
            ]),
            "{at}"
        );

        // Stuck: the releases of no channel, so many listed, the rest summed.
        assert_eq!(measured["stuckListed"], STUCK_LISTED, "{at}");
        assert_eq!(
            measured["stuckMore"],
            json!([MANY_VERSIONS - STUCK_LISTED, MANY_VERSIONS - STUCK_LISTED]),
            "{at}"
        );

        // Bounded: far fewer elements than versions.
        let elements = measured["elements"].as_u64().unwrap();
        assert!(
            elements <= MOST_ELEMENTS,
            "{at}: {elements} elements for {} versions",
            versions.versions.len()
        );
        assert_fleet_laid_out(&browser.run(MEASURE_FLEET).await.unwrap(), viewport);
        assert_eq!(
            browser.console_errors().await.unwrap(),
            Vec::<String>::new(),
            "{at}"
        );
        browser.close().await.unwrap();
    }
}
