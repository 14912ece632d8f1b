// The update graph explorer: draws one channel's releases and updates as a
// layered graph (one band per minor version, newest to the right), shows a
// selected release's updates and risks, and asks the engine for a plan from
// one release to another and for why an update is not offered.
//
// Plain JavaScript and hand-written SVG: no dependency, no build step. Every
// request goes to the engine that served the page (paths relative to it).
// What is drawn is what the engine answers: the order of releases and which
// updates are recommended or conditional come from the library behind
// /v1/channel (the CVO's rules), never from a rule or version order here.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const ROWS = 24; // releases per sub-column of a band
const CELL_W = 78;
const CELL_H = 18;
const TOP = 28; // room for the band labels
const TIERS = ["stable", "fast", "candidate", "eus"];

const $ = (id) => document.getElementById(id);
const state = { arch: "", channel: "", from: "", to: "", tier: "" };
let view = null; // the drawn channel: releases, updates, nodes by version
let archsLoaded = "";

// The band a release is drawn in: its major.minor.
const minorOf = (version) => version.split(".").slice(0, 2).join(".");

// ---- data -----------------------------------------------------------------

async function getJson(path, params) {
  const query = new URLSearchParams(params).toString();
  // no-cache: revalidate every time (a 304 when the ETag still matches), so
  // a reload shows a graph that changed within its max-age.
  const response = await fetch(query ? `${path}?${query}` : path, { headers: { Accept: "application/json" }, cache: "no-cache" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.value || `${path}: HTTP ${response.status}`);
  return body;
}

// The engine's /v1/channel answer, as it is: releases in version order, each
// with its updates newest first ({to, recommended, risks}), and the counts.
// Indexed here only to be drawn: releases by version, and the releases that
// update to each.
function indexChannel(answer) {
  const releases = answer.releases.map((release) => ({ ...release, updaters: [] }));
  const byVersion = new Map(releases.map((release) => [release.version, release]));
  for (const release of releases) {
    for (const update of release.updates) byVersion.get(update.to).updaters.push(release.version);
  }
  return { releases, byVersion, recommended: answer.recommendedCount, conditional: answer.conditionalCount };
}

// ---- URL state ------------------------------------------------------------

function readUrl() {
  const params = new URLSearchParams(location.search);
  for (const key of Object.keys(state)) state[key] = params.get(key) || "";
}

function writeUrl() {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(state)) if (value) params.set(key, value);
  history.replaceState(null, "", `${location.pathname}?${params}`);
}

// ---- pickers --------------------------------------------------------------

function fillSelect(select, values, chosen) {
  select.replaceChildren(...values.map((value) => new Option(value, value, false, value === chosen)));
  select.value = chosen;
}

// The newest stable channel with releases (the engine lists channels in
// reading order, oldest minor first), else the first with releases.
function defaultChannel(channels) {
  const stable = channels.filter((channel) => channel.releases && /^stable-\d+\.\d+$/.test(channel.name));
  const any = channels.find((channel) => channel.releases);
  return (stable.pop() || any || { name: "" }).name;
}

async function loadArchitectures() {
  const { architectures } = await getJson("v1/architectures");
  if (!architectures.includes(state.arch)) state.arch = architectures.includes("amd64") ? "amd64" : architectures[0];
  fillSelect($("arch"), architectures, state.arch);
}

async function loadChannels() {
  const { channels } = await getJson("v1/channels", { arch: state.arch });
  const names = channels.filter((channel) => channel.releases).map((channel) => channel.name);
  if (!names.includes(state.channel)) state.channel = defaultChannel(channels);
  fillSelect($("channel"), names, state.channel);
  archsLoaded = state.arch;
}

// ---- drawing --------------------------------------------------------------

function element(name, attributes, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

// Places releases: bands by minor, left to right; in a band, sub-columns of
// ROWS releases, oldest first.
function layout(releases) {
  const bands = [];
  for (const release of releases) {
    const minor = minorOf(release.version);
    if (!bands.length || bands[bands.length - 1].minor !== minor) bands.push({ minor, releases: [] });
    bands[bands.length - 1].releases.push(release);
  }
  let x = 0;
  for (const band of bands) {
    band.x = x;
    band.releases.forEach((release, index) => {
      release.x = x + 12 + Math.floor(index / ROWS) * CELL_W;
      release.y = TOP + 12 + (index % ROWS) * CELL_H;
      release.band = band;
    });
    band.width = Math.ceil(band.releases.length / ROWS) * CELL_W + 16;
    x += band.width;
  }
  const rows = Math.min(ROWS, Math.max(0, ...bands.map((band) => band.releases.length)));
  return { bands, width: x, height: TOP + 12 + rows * CELL_H };
}

function edgePath(from, to) {
  const bend = Math.max(30, Math.abs(to.x - from.x) / 2);
  return `M${from.x + 5},${from.y}C${from.x + bend},${from.y} ${to.x - bend},${to.y} ${to.x - 5},${to.y}`;
}

function draw() {
  const started = performance.now();
  const { bands, width, height } = layout(view.releases);
  const svg = element("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "group",
    "aria-label": `${state.channel} on ${state.arch}: ${view.releases.length} releases in bands by minor version, oldest left`,
  });
  bands.forEach((band, index) => {
    element("rect", { class: index % 2 ? "band alt" : "band", x: band.x, y: 0, width: band.width, height }, svg);
    element("text", { class: "band-label", x: band.x + 8, y: 18 }, svg).textContent = band.minor;
  });
  const edges = element("g", { "aria-hidden": "true" }, svg);
  view.edges = new Map();
  for (const release of view.releases) {
    for (const update of release.updates) {
      const to = view.byVersion.get(update.to);
      const path = element("path", {
        class: update.recommended ? "edge" : "edge conditional",
        "data-from": release.version,
        "data-to": update.to,
        d: edgePath(release, to),
      }, edges);
      view.edges.set(`${release.version} ${update.to}`, path);
    }
  }
  const nodes = element("g", {}, svg);
  for (const release of view.releases) {
    const node = element("g", {
      class: "node",
      tabindex: "-1",
      role: "button",
      "data-version": release.version,
      "aria-label": `${release.version}: ${release.updates.length} updates`,
      transform: `translate(${release.x},${release.y})`,
    }, nodes);
    element("circle", { r: 5 }, node);
    element("text", { x: 8, y: 3.5 }, node).textContent = release.version;
    release.node = node;
  }
  const first = view.releases[view.releases.length - 1];
  if (first) first.node.setAttribute("tabindex", "0");
  svg.addEventListener("click", (event) => {
    const node = event.target.closest(".node");
    if (node) select(node.dataset.version, true);
  });
  svg.addEventListener("keydown", onKey);
  $("canvas").replaceChildren(svg);
  view.svg = svg;
  const summary = $("summary");
  summary.textContent = `${state.channel} (${state.arch}): ${view.releases.length} releases, ` +
    `${view.recommended} recommended and ${view.conditional} conditional updates`;
  summary.dataset.releases = view.releases.length;
  summary.dataset.recommended = view.recommended;
  summary.dataset.conditional = view.conditional;
  summary.dataset.drawMs = (performance.now() - started).toFixed(1);
}

// Arrows: up and down within a band, left and right to the neighbouring
// band (same position, or its last release); Home and End: oldest, newest.
function onKey(event) {
  const node = event.target.closest(".node");
  if (!node) return;
  const release = view.byVersion.get(node.dataset.version);
  const { releases } = release.band;
  const index = releases.indexOf(release);
  const bands = [...new Set(view.releases.map((r) => r.band))];
  const band = bands.indexOf(release.band);
  const neighbour = (offset) => {
    const other = bands[band + offset];
    return other && other.releases[Math.min(index, other.releases.length - 1)];
  };
  const next = {
    ArrowUp: releases[index - 1],
    ArrowDown: releases[index + 1],
    ArrowLeft: neighbour(-1),
    ArrowRight: neighbour(1),
    Home: view.releases[0],
    End: view.releases[view.releases.length - 1],
  }[event.key];
  if (next) {
    event.preventDefault();
    moveFocus(next);
  } else if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    select(release.version, true);
  }
}

function moveFocus(release) {
  for (const node of view.svg.querySelectorAll('.node[tabindex="0"]')) node.setAttribute("tabindex", "-1");
  release.node.setAttribute("tabindex", "0");
  release.node.focus();
}

// ---- a selected release ---------------------------------------------------

function html(tag, text, attributes = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  return node;
}

// Links come from the graph (errata, risks): only http(s) ones are links,
// anything else (a javascript: URL, say) is shown as text.
function link(url, text) {
  if (!url) return html("span", "none");
  let protocol = "";
  try {
    protocol = new URL(url, location.href).protocol;
  } catch {
    // Not a URL at all: text.
  }
  const web = protocol === "http:" || protocol === "https:";
  return web ? html("a", text || url, { href: url, rel: "noreferrer" }) : html("span", text || url);
}

// A risk as clusters receive it: name, message, link, matching rules.
function riskBlock(risk) {
  const block = html("div", undefined, { class: "risk", "data-risk": risk.name });
  block.append(html("strong", risk.name), html("p", risk.message));
  block.append(link(risk.url));
  const rules = html("ul");
  for (const rule of risk.matchingRules || []) {
    const item = html("li", `${rule.type} `);
    if (rule.promql) item.append(html("code", rule.promql.promql || ""));
    rules.append(item);
  }
  block.append(rules);
  return block;
}

function select(version, focus) {
  const release = view && view.byVersion.get(version);
  if (!release) return;
  for (const node of view.svg.querySelectorAll(".node.selected")) node.classList.remove("selected");
  for (const path of view.svg.querySelectorAll(".edge.touching")) path.classList.remove("touching");
  release.node.classList.add("selected");
  view.svg.classList.add("focused");
  for (const update of release.updates) view.edges.get(`${version} ${update.to}`).classList.add("touching");
  for (const from of release.updaters) view.edges.get(`${from} ${version}`).classList.add("touching");
  if (focus) moveFocus(release);

  const body = $("release-body");
  body.replaceChildren();
  body.dataset.version = version;
  body.append(html("h3", version));
  const errata = html("p", "Errata: ");
  errata.append(link(release.url));
  body.append(errata, html("p", `Channels: ${release.channels.join(", ") || "none"}`));
  const buttons = html("p");
  const planFrom = html("button", "Plan from here", { type: "button", class: "secondary" });
  const planTo = html("button", "Plan to here", { type: "button", class: "secondary" });
  planFrom.addEventListener("click", () => choosePlan(version, state.to));
  planTo.addEventListener("click", () => choosePlan(state.from, version));
  buttons.append(planFrom, " ", planTo);
  body.append(buttons);
  const { updates } = release; // newest first, as the engine lists them
  body.append(html("h4", `${updates.length} updates in ${state.channel}`));
  const list = html("ul", undefined, { id: "updates" });
  for (const update of updates) {
    const item = html("li", `${update.to} `, { "data-to": update.to });
    item.append(html("span", update.recommended ? "recommended" : "conditional", { class: update.recommended ? "badge" : "badge conditional" }));
    for (const risk of update.risks) item.append(riskBlock(risk));
    list.append(item);
  }
  body.append(list);
}

// ---- from → to ------------------------------------------------------------

function choosePlan(from, to) {
  state.from = from || "";
  state.to = to || "";
  $("from").value = state.from;
  $("to").value = state.to;
  writeUrl();
  plan();
}

// The tier of the plan: the one chosen, else the channel's.
function tier() {
  if (state.tier) return state.tier;
  const prefix = state.channel.split("-")[0];
  return TIERS.includes(prefix) ? prefix : "stable";
}

function hopList(hops, id) {
  const list = html("ol", undefined, { id });
  for (const hop of hops) {
    const item = html("li", `${hop.from} → ${hop.to} on ${hop.channel} `, {
      "data-from": hop.from,
      "data-to": hop.to,
      "data-channel": hop.channel,
    });
    item.append(html("span", hop.recommended ? "recommended" : "conditional", { class: hop.recommended ? "badge" : "badge conditional" }));
    for (const risk of hop.risks) item.append(riskBlock(risk));
    list.append(item);
  }
  return list;
}

function showOnDrawing(hops) {
  for (const marked of view.svg.querySelectorAll(".on-path")) marked.classList.remove("on-path");
  for (const node of view.svg.querySelectorAll(".node.target")) node.classList.remove("target");
  for (const hop of hops) {
    const edge = view.edges.get(`${hop.from} ${hop.to}`);
    if (edge) {
      edge.classList.add("on-path");
      edge.parentNode.appendChild(edge); // drawn last: on top
    }
    for (const version of [hop.from, hop.to]) {
      const release = view.byVersion.get(version);
      if (release) release.node.classList.add("on-path");
    }
  }
  const target = view.byVersion.get(state.to);
  if (target) target.node.classList.add("target");
}

async function plan() {
  const body = $("plan-body");
  if (!state.from || !state.to) {
    body.replaceChildren(html("p", "Choose a release to start from and one to reach."));
    if (view) showOnDrawing([]);
    return;
  }
  body.replaceChildren(html("p", "Planning…"));
  try {
    const answer = await getJson("v1/path", { from: state.from, to: state.to, arch: state.arch, tier: tier() });
    body.replaceChildren();
    body.dataset.found = answer.found;
    if (answer.found) {
      const count = answer.plan.hops.length;
      body.append(html("p", count ? `${count} update${count > 1 ? "s" : ""} on the ${answer.tier} tier:` : "Already there."));
      body.append(hopList(answer.plan.hops, "path-list"));
    } else {
      body.append(html("p", `No path on the ${answer.tier} tier: ${answer.break.reason}`, { class: "why", id: "no-path" }));
      if (answer.planWithRisks) {
        body.append(html("p", `Accepting ${answer.planWithRisks.risks.join(", ")} gives this plan:`));
        body.append(hopList(answer.planWithRisks.hops, "risky-path-list"));
      }
    }
    showOnDrawing(answer.found ? answer.plan.hops : (answer.planWithRisks || { hops: [] }).hops);
    await whyNot(body);
  } catch (error) {
    body.replaceChildren(html("p", error.message, { class: "why" }));
  }
}

// When the channel drawn has no update from → to, says why (as `cincinnati
// explain` does).
async function whyNot(body) {
  const from = view && view.byVersion.get(state.from);
  if (from && from.updates.some((update) => update.to === state.to)) return;
  const answer = await getJson("v1/explain", { channel: state.channel, from: state.from, to: state.to, arch: state.arch });
  const why = html("p", `No direct update in ${state.channel}: ${answer.summary}`, { class: "why", id: "why-not" });
  why.dataset.verdict = answer.verdict;
  body.append(why);
}

// ---- putting it together --------------------------------------------------

async function showChannel() {
  const started = performance.now();
  $("status").textContent = `Loading ${state.channel}…`;
  view = indexChannel(await getJson("v1/channel", { channel: state.channel, arch: state.arch }));
  draw();
  $("versions").replaceChildren(...view.releases.map((release) => new Option(release.version)));
  $("status").textContent = `Drawn in ${Math.round(performance.now() - started)} ms.`;
  $("status").classList.remove("error");
}

async function refresh() {
  try {
    if (archsLoaded !== state.arch) await loadChannels();
    writeUrl();
    await showChannel();
    await plan();
  } catch (error) {
    $("status").textContent = error.message;
    $("status").classList.add("error");
  }
}

async function start() {
  readUrl();
  $("from").value = state.from;
  $("to").value = state.to;
  if (state.tier) $("tier").value = state.tier;
  try {
    await loadArchitectures();
  } catch (error) {
    $("status").textContent = error.message;
    $("status").classList.add("error");
    return;
  }
  $("arch").addEventListener("change", () => {
    state.arch = $("arch").value;
    refresh();
  });
  $("channel").addEventListener("change", () => {
    state.channel = $("channel").value;
    refresh();
  });
  $("tier").addEventListener("change", () => {
    state.tier = $("tier").value;
    writeUrl();
    plan();
  });
  $("choice").addEventListener("submit", (event) => {
    event.preventDefault();
    choosePlan($("from").value.trim(), $("to").value.trim());
  });
  await refresh();
  if (view && state.from && view.byVersion.has(state.from)) select(state.from, false);
}

start();
