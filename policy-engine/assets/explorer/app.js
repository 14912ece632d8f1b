// The update graph explorer: draws one channel's releases and updates as a
// layered graph (one band per minor version, newest to the right), shows a
// selected release's updates and risks, and asks the engine for a plan from
// one release to another and for why an update is not offered.
//
// Plain JavaScript and hand-written SVG: no dependency, no build step. Every
// request goes to the engine that served the page (paths relative to it).
// What is drawn is what the engine answers: the order of releases, which
// updates are recommended or conditional, and which are phased (graph-data's
// phased rollouts: offered to a growing share of the fleet over a window)
// come from the library behind /v1/channel (the CVO's rules), never from a
// rule or version order here.
//
// A channel or architecture the engine does not know is an error on the
// page, with the nearest names it does know: the page never draws another
// channel than the one asked for.
//
// <body data-state> is "loading" while the page waits for the engine and
// "ready" once everything asked for is drawn and answered (what the tests
// and scripts/screenshots.sh wait for).
//
// The Fleet view: on the status port of an engine with a fleet store, the
// engine serves the page with <body data-fleet="v1/fleet/">, where the
// fleet answers are (cluster ids are not public: they are on that port
// only); the page then loads fleet.js, which draws them. Without it (the
// public page) the page has no Fleet view and asks nothing about the fleet.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const LABEL_PX = 12; // a release's label, in CSS pixels: the drawing is never scaled
const ROW_H = 22; // one release per row
const RADIUS = 5; // a release's circle
const TOP = 30; // room for the band labels
const BAND_GAP = 14; // before a band's first column
const MIN_ROWS = 8; // a band's columns are never shorter, however low the window
const TIERS = ["stable", "fast", "candidate", "eus"];
// Where the fleet answers are, relative to the page; undefined on the
// public page.
const FLEET = document.body.dataset.fleet;

const $ = (id) => document.getElementById(id);
const state = { arch: "", channel: "", from: "", to: "", tier: "", view: "" };
let view = null; // the drawn channel: releases, updates, nodes by version
let architectures = null; // the engine's, once asked
const channelsAnswers = new Map(); // arch → its channels, as /v1/channels lists them

// The band a release is drawn in: its major.minor.
const minorOf = (version) => version.split(".").slice(0, 2).join(".");

// ---- waiting ----------------------------------------------------------------

let pending = 0;

// Runs `task` with the page marked as loading until every task is done.
async function busy(task) {
  pending += 1;
  document.body.dataset.state = "loading";
  try {
    return await task();
  } finally {
    pending -= 1;
    if (!pending) document.body.dataset.state = "ready";
  }
}

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

// The engine's /v1/channel answer, as it is: releases in version order (a
// release phasing into the channel with its `phasing`), each with its updates
// newest first ({to, recommended, risks}, a phased one with its `phased`
// window and share), and the counts. Indexed here only to be drawn: releases
// by version, and the releases that update to each.
function indexChannel(answer) {
  const releases = answer.releases.map((release) => ({ ...release, updaters: [] }));
  const byVersion = new Map(releases.map((release) => [release.version, release]));
  for (const release of releases) {
    for (const update of release.updates) byVersion.get(update.to).updaters.push(release.version);
  }
  return {
    releases,
    byVersion,
    recommended: answer.recommendedCount,
    conditional: answer.conditionalCount,
    phased: answer.phasedCount || 0, // absent from an engine older than phasing
  };
}

// ---- phased rollouts --------------------------------------------------------

// A phased update's rollout in words, at the moment the engine answered:
// "offered to 45% of clusters now, window 2025-06-02T09:00:00Z →
// 2025-06-22T09:00:00Z".
function phasedText(phased) {
  return `offered to ${Math.floor(phased.share * 100)}% of clusters now, window ${phased.start} → ${phased.end}`;
}

// A release phasing into the channel in words: in it since its start, every
// update into it offered to every cluster (and the release listed) by the end.
function phasingText(phasing) {
  return `phasing into ${state.channel} since ${phasing.start}; every cluster is offered it by ${phasing.end}`;
}

// The legend's entries for what phases in the drawing: the phasing releases,
// and each window of the phased updates (a patch and a minor update into one
// release have two).
function showPhasedKeys() {
  const legend = $("legend");
  for (const key of legend.querySelectorAll(".key.phased, .key.phasing")) key.remove();
  if (view.releases.some((release) => release.phasing)) legend.append(html("span", "phasing release", { class: "key phasing" }));
  const phased = view.releases.flatMap((release) => release.updates.filter((update) => update.phased));
  for (const text of new Set(phased.map((update) => `phased: ${phasedText(update.phased)}`))) {
    legend.append(html("span", text, { class: "key phased" }));
  }
}

// The class of an update's edge: dashed amber when conditional, dash-dotted
// teal when phased.
function edgeClass(update) {
  return `edge${update.recommended ? "" : " conditional"}${update.phased ? " phased" : ""}`;
}

// A release's name for assistive technology: its updates, how many of them
// are phased, and whether it is phasing into the channel itself.
function nodeLabel(release) {
  const phased = release.updates.filter((update) => update.phased).length;
  return `${release.version}: ${release.updates.length} updates` +
    (phased ? `, ${phased} phased` : "") +
    (release.phasing ? `; ${phasingText(release.phasing)}` : "");
}

// ---- names that are not known ------------------------------------------------

// Edits from one name to another: inserting, deleting or replacing a
// character, or swapping two neighbours ("stabel" → "stable": one).
function editDistance(a, b) {
  let before = null;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (before && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        current[j] = Math.min(current[j], before[j - 2] + 1);
      }
    }
    [before, previous] = [previous, current];
  }
  return previous[b.length];
}

// The known names nearest `asked`: the fewest edits away, if that is at
// most a third of its length (two at least); else the names it begins or
// is a part of ("stable" → stable-4.x, "4.18" → fast-4.18, stable-4.18…).
// At most `most`, in the order given (newest last for channels).
function nearestNames(asked, names, most = 5) {
  const wanted = asked.toLowerCase();
  const distances = names.map((name) => editDistance(wanted, name));
  const best = Math.min(...distances);
  if (best <= Math.max(2, Math.floor(wanted.length / 3))) {
    return names.filter((_, index) => distances[index] === best).slice(0, most);
  }
  const containing = names.filter((name) => wanted && (name.startsWith(wanted) || name.split("-").includes(wanted)));
  return containing.slice(-most);
}

// A link to the page with `changes` to the state.
function pageLink(name, changes) {
  return html("a", name, { href: urlOf({ ...state, ...changes }), "data-name": name });
}

// Shows that `asked` is not a known `what` (architecture, channel) `where`,
// with links to the nearest known names (or to all, when they are few).
function showUnknown(what, asked, where, names, link) {
  const nearest = nearestNames(asked, names);
  const problem = $("problem");
  problem.replaceChildren(html("p", `There is no ${what} “${asked}”${where}: nothing is drawn.`));
  problem.dataset.unknown = what;
  const offered = nearest.length ? nearest : names.length <= 8 ? names : [];
  const line = html("p", nearest.length ? "Nearest: " : offered.length ? "Known: " : `${names.length} known: choose one above.`);
  offered.forEach((name, index) => {
    if (index) line.append(", ");
    line.append(link(name));
  });
  problem.append(line);
  problem.hidden = false;
  $("status").textContent = `Not drawn: no ${what} “${asked}”.`;
  $("status").classList.add("error");
}

function hideProblem() {
  const problem = $("problem");
  problem.hidden = true;
  problem.replaceChildren();
  delete problem.dataset.unknown;
}

// ---- URL state ------------------------------------------------------------

function readUrl() {
  const params = new URLSearchParams(location.search);
  for (const key of Object.keys(state)) state[key] = (params.get(key) || "").trim();
}

function urlOf(values) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value) params.set(key, value);
  return `?${params}`;
}

function writeUrl() {
  history.replaceState(null, "", `${location.pathname}${urlOf(state)}`);
  for (const link of document.querySelectorAll("#views a")) link.href = urlOf({ ...state, view: link.dataset.view });
}

// ---- pickers --------------------------------------------------------------

// Fills a picker; a chosen value that is not among `values` is shown as
// such (and cannot be chosen again), never replaced by another.
function fillSelect(select, values, chosen) {
  const options = values.map((value) => new Option(value, value, false, value === chosen));
  if (chosen && !values.includes(chosen)) {
    const unknown = new Option(`${chosen} (unknown)`, chosen, false, true);
    unknown.disabled = true;
    options.unshift(unknown);
  }
  select.replaceChildren(...options);
  select.value = chosen;
}

// The newest stable channel with releases (the engine lists channels in
// reading order, oldest minor first), else the first with releases.
function defaultChannel(names) {
  const stable = names.filter((name) => /^stable-\d+\.\d+$/.test(name));
  return stable.pop() || names[0] || "";
}

// The channels of `arch` (name, releases, oldest, newest), asked once.
async function channelsOf(arch) {
  if (!channelsAnswers.has(arch)) channelsAnswers.set(arch, (await getJson("v1/channels", { arch })).channels);
  return channelsAnswers.get(arch);
}

// The architectures; without one in the URL, amd64 (or the first). False
// when the one asked for is not known.
async function loadArchitectures() {
  if (!architectures) ({ architectures } = await getJson("v1/architectures"));
  if (!state.arch) state.arch = architectures.includes("amd64") ? "amd64" : architectures[0];
  fillSelect($("arch"), architectures, state.arch);
  if (architectures.includes(state.arch)) return true;
  showUnknown("architecture", state.arch, " in this graph", architectures, (name) => pageLink(name, { arch: name }));
  return false;
}

// The channels of the architecture; without one in the URL, the newest
// stable one. False when the one asked for has no release there.
async function loadChannels() {
  const names = (await channelsOf(state.arch)).filter((channel) => channel.releases).map((channel) => channel.name);
  if (!state.channel) state.channel = defaultChannel(names);
  fillSelect($("channel"), names, state.channel);
  if (names.includes(state.channel)) return true;
  showUnknown("channel", state.channel, ` with releases on ${state.arch}`, names, (name) => pageLink(name, { channel: name }));
  return false;
}

// ---- drawing --------------------------------------------------------------

function element(name, attributes, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

// The width of each release's label, in the page's font.
function measureLabels(releases) {
  const context = document.createElement("canvas").getContext("2d");
  context.font = `${LABEL_PX}px ${getComputedStyle($("canvas")).fontFamily}`;
  for (const release of releases) release.labelWidth = Math.ceil(context.measureText(release.version).width);
}

// Places releases: bands by minor, left to right; in a band, columns of
// releases, oldest first. As many rows as the room's height holds; more when
// the columns would not fit its width (a narrow screen: the drawing keeps
// the width and grows down). Columns share what width is left, so the
// drawing fills the room.
function layout(releases, room) {
  const bands = [];
  for (const release of releases) {
    const minor = minorOf(release.version);
    if (!bands.length || bands[bands.length - 1].minor !== minor) bands.push({ minor, releases: [] });
    bands[bands.length - 1].releases.push(release);
  }
  const widest = Math.max(0, ...releases.map((release) => release.labelWidth));
  const cell = 2 * RADIUS + 5 + widest + 24; // circle, gap, label, room for edges
  const tallest = Math.max(1, ...bands.map((band) => band.releases.length));
  const columnsAt = (rows) => bands.reduce((sum, band) => sum + Math.ceil(band.releases.length / rows), 0);
  const widthAt = (rows) => columnsAt(rows) * cell + bands.length * BAND_GAP;
  let rows = Math.min(tallest, Math.max(MIN_ROWS, Math.floor((room.height - TOP - ROW_H) / ROW_H)));
  while (rows < tallest && widthAt(rows) > room.width) rows += 1;
  const columns = columnsAt(rows);
  const spare = Math.max(0, room.width - widthAt(rows));
  const cellWidth = cell + Math.floor(Math.min(spare / columns, 2 * cell));
  let x = 0;
  let height = 0;
  for (const band of bands) {
    const bandColumns = Math.ceil(band.releases.length / rows);
    const bandRows = Math.ceil(band.releases.length / bandColumns); // columns of even length
    band.x = x;
    band.releases.forEach((release, index) => {
      release.column = Math.floor(index / bandRows);
      release.x = Math.round(x + BAND_GAP + RADIUS + release.column * cellWidth);
      release.y = TOP + ROW_H / 2 + (index % bandRows) * ROW_H;
      release.band = band;
    });
    band.width = BAND_GAP + bandColumns * cellWidth;
    x += band.width;
    height = Math.max(height, TOP + bandRows * ROW_H + 4);
  }
  return { bands, width: Math.ceil(x), height };
}

// An update as a curve: from the end of the release's label to the left of
// its target's circle; within one column, an arc in the gutter on its left.
function edgePath(from, to) {
  if (from.band === to.band && from.column === to.column) {
    const x = from.x - RADIUS;
    const out = Math.min(3 + (to.y - from.y) / 8, BAND_GAP + 4);
    return `M${x},${from.y}C${x - out},${from.y} ${x - out},${to.y} ${x},${to.y}`;
  }
  const start = from.x + RADIUS + 5 + from.labelWidth + 2;
  const end = to.x - RADIUS;
  const bend = Math.max(20, Math.abs(end - start) / 2);
  return `M${start},${from.y}C${start + bend},${from.y} ${end - bend},${to.y} ${end},${to.y}`;
}

// The room the drawing has: the canvas's width, and the window's height
// below the canvas's top (at most the canvas's own limit).
function room() {
  const canvas = $("canvas");
  const top = canvas.getBoundingClientRect().top + window.scrollY;
  const limit = parseFloat(getComputedStyle(canvas).maxHeight) || window.innerHeight;
  const height = Math.min(limit, window.innerHeight - top - 24);
  return { width: canvas.clientWidth, height: Math.max(height, TOP + MIN_ROWS * ROW_H) };
}

function draw() {
  const started = performance.now();
  measureLabels(view.releases);
  view.room = room();
  const { bands, width, height } = layout(view.releases, view.room);
  const svg = element("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "group",
    "aria-label": `${state.channel} on ${state.arch}: ${view.releases.length} releases in bands by minor version, oldest left`,
  });
  bands.forEach((band, index) => {
    band.alt = index % 2 === 1;
    element("rect", { class: band.alt ? "band alt" : "band", x: band.x, y: 0, width: band.width, height }, svg);
    element("text", { class: "band-label", x: band.x + BAND_GAP, y: 20 }, svg).textContent = band.minor;
  });
  // Edges first: releases and their labels are drawn over them.
  const edges = element("g", { class: "edges", "aria-hidden": "true" }, svg);
  view.edges = new Map();
  for (const release of view.releases) {
    for (const update of release.updates) {
      const to = view.byVersion.get(update.to);
      const path = element("path", {
        class: edgeClass(update),
        "data-from": release.version,
        "data-to": update.to,
        d: edgePath(release, to),
      }, edges);
      if (update.phased) element("title", {}, path).textContent = `${release.version} → ${update.to} phased: ${phasedText(update.phased)}`;
      view.edges.set(`${release.version} ${update.to}`, path);
    }
  }
  const nodes = element("g", { class: "nodes" }, svg);
  for (const release of view.releases) {
    const node = element("g", {
      class: `node${release.band.alt ? " alt" : ""}${release.phasing ? " phasing" : ""}`,
      tabindex: "-1",
      role: "button",
      "data-version": release.version,
      "aria-label": nodeLabel(release),
      transform: `translate(${release.x},${release.y})`,
    }, nodes);
    if (release.phasing) element("title", {}, node).textContent = `${release.version}: ${phasingText(release.phasing)}`;
    element("circle", { r: RADIUS }, node);
    element("text", { x: RADIUS + 5, y: LABEL_PX / 3, "font-size": LABEL_PX }, node).textContent = release.version;
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
    `${view.recommended} recommended and ${view.conditional} conditional updates` +
    (view.phased ? `, ${view.phased} of them phased` : "");
  summary.dataset.releases = view.releases.length;
  summary.dataset.recommended = view.recommended;
  summary.dataset.conditional = view.conditional;
  summary.dataset.phased = view.phased;
  showPhasedKeys();
  summary.dataset.drawMs = (performance.now() - started).toFixed(1);
}

// Nothing drawn (the channel or architecture asked for is not known).
function clearDrawing() {
  view = null;
  $("drawing").hidden = true;
  $("canvas").replaceChildren();
  const summary = $("summary");
  summary.textContent = "";
  for (const key of ["releases", "recommended", "conditional", "phased", "drawMs"]) delete summary.dataset[key];
  for (const key of $("legend").querySelectorAll(".key.phased, .key.phasing")) key.remove();
  $("versions").replaceChildren();
  $("plan-body").replaceChildren(html("p", "Choose a release to start from and one to reach."));
  delete $("plan-body").dataset.plan;
  $("release-body").replaceChildren(html("p", "No release selected."));
  delete $("release-body").dataset.version;
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

// A phased update in the release's list: its badge, and its window and
// share with the duration declared for its kind.
function phasedBlock(phased) {
  const declared = phased.duration ? ` (${phased.duration})` : "";
  return [
    html("span", "phased", { class: "badge phased" }),
    html("p", `Phased: ${phasedText(phased)}${declared}.`, { class: "phased-window" }),
  ];
}

// Marks the release selected and its edges (the drawing only).
function markSelected() {
  for (const node of view.svg.querySelectorAll(".node.selected")) node.classList.remove("selected");
  for (const path of view.svg.querySelectorAll(".edge.touching")) path.classList.remove("touching");
  const release = view.selected && view.byVersion.get(view.selected);
  view.svg.classList.toggle("focused", Boolean(release));
  if (!release) return;
  release.node.classList.add("selected");
  for (const update of release.updates) view.edges.get(`${release.version} ${update.to}`).classList.add("touching");
  for (const from of release.updaters) view.edges.get(`${from} ${release.version}`).classList.add("touching");
}

function select(version, focus) {
  const release = view && view.byVersion.get(version);
  if (!release) return;
  view.selected = version;
  markSelected();
  if (focus) moveFocus(release);

  const body = $("release-body");
  body.replaceChildren();
  body.dataset.version = version;
  body.append(html("h3", version));
  const errata = html("p", "Errata: ");
  errata.append(link(release.url));
  body.append(errata, html("p", `Channels: ${release.channels.join(", ") || "none"}`));
  if (release.phasing) {
    body.append(html("p", `This release is ${phasingText(release.phasing)}, when the graph lists it in the channel.`, { class: "phasing-note" }));
  }
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
    if (update.phased) item.append(" ", ...phasedBlock(update.phased));
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
  busy(plan);
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
    if (!hop.recommended) item.classList.add("with-risks");
    item.append(html("span", hop.recommended ? "recommended" : "conditional", { class: hop.recommended ? "badge" : "badge conditional" }));
    if (WORKERS[hop.workers]) {
      item.dataset.workers = hop.workers;
      item.append(" ", html("span", WORKERS[hop.workers], { class: "workers" }));
    }
    for (const risk of hop.risks) item.append(riskBlock(risk));
    list.append(item);
  }
  return list;
}

// What the worker pools do at a hop of an EUS-to-EUS plan (its runbook's).
const WORKERS = {
  skip: "(workers paused: they skip this release)",
  catchUp: "(workers unpaused after it: they update at once)",
};

// Text with `commands` in backquotes, the commands as code.
function withCode(text) {
  return text.split("`").map((part, index) => (index % 2 ? html("code", part) : part));
}

// An EUS-to-EUS plan's runbook, as /v1/path gives it (Red Hat's Control
// Plane Only update, the same as `cincinnati path`): the steps in order,
// each a sentence and its commands.
function runbookBlock(runbook) {
  const block = html("section", undefined, { id: "runbook-section", "aria-labelledby": "runbook-heading", class: "runbook" });
  block.append(html("h3", "Runbook: a Control Plane Only update", { id: "runbook-heading" }));
  if (runbook.workersSkip.length) {
    block.append(html("p", `The worker nodes never run ${runbook.workersSkip.join(", ")}: one reboot per EUS pair.`, { class: "hint" }));
  }
  const steps = html("ol", undefined, { id: "runbook" });
  for (const step of runbook.steps) {
    const item = html("li", undefined, { "data-action": step.action });
    const sentence = html("p", undefined, { class: "step" });
    sentence.append(...withCode(step.text.endsWith(".") ? step.text : `${step.text}.`));
    item.append(sentence);
    if (step.commands.length) {
      const commands = html("pre");
      commands.append(html("code", step.commands.join("\n")));
      item.append(commands);
    }
    steps.append(item);
  }
  block.append(steps);
  return block;
}

// Draws the plan on the graph: a safe plan's hops as the planned path; a
// plan that needs risks accepted apart (another colour, its hops with
// risks dashed).
function markPath() {
  for (const marked of view.svg.querySelectorAll(".on-path")) marked.classList.remove("on-path", "risky", "with-risks");
  for (const node of view.svg.querySelectorAll(".node.target")) node.classList.remove("target");
  const { hops, risky } = view.path || { hops: [], risky: false };
  for (const hop of hops) {
    const edge = view.edges.get(`${hop.from} ${hop.to}`);
    if (edge) {
      edge.classList.add("on-path");
      edge.classList.toggle("risky", risky);
      edge.classList.toggle("with-risks", !hop.recommended);
      edge.parentNode.appendChild(edge); // drawn last of the edges: on top of them
    }
    for (const version of [hop.from, hop.to]) {
      const release = view.byVersion.get(version);
      if (release) release.node.classList.add("on-path");
      if (release && risky) release.node.classList.add("risky");
    }
  }
  const target = view.byVersion.get(state.to);
  if (target && hops.length) target.node.classList.add("target");
}

// Scrolls the drawing's box (not the page) so the plan's releases are in
// sight, when the drawing is larger than its box (a phone's).
function scrollToPath() {
  const releases = view.path.hops.flatMap((hop) => [hop.from, hop.to]).map((version) => view.byVersion.get(version)).filter(Boolean);
  if (!releases.length) return;
  const canvas = $("canvas");
  const middle = (values) => (Math.min(...values) + Math.max(...values)) / 2;
  canvas.scrollTop = middle(releases.map((release) => release.y)) - canvas.clientHeight / 2;
  canvas.scrollLeft = middle(releases.map((release) => release.x)) - canvas.clientWidth / 2;
}

function showOnDrawing(hops, risky) {
  if (!view) return;
  view.path = { hops, risky };
  markPath();
  scrollToPath();
}

async function plan() {
  const body = $("plan-body");
  delete body.dataset.plan;
  if (!state.from || !state.to) {
    body.replaceChildren(html("p", "Choose a release to start from and one to reach."));
    showOnDrawing([], false);
    return;
  }
  body.replaceChildren(html("p", "Planning…"));
  try {
    const answer = await getJson("v1/path", { from: state.from, to: state.to, arch: state.arch, tier: tier() });
    body.replaceChildren();
    body.dataset.found = answer.found;
    const risky = !answer.found && answer.planWithRisks;
    if (answer.found) {
      const count = answer.plan.hops.length;
      body.append(html("p", count ? `${count} update${count > 1 ? "s" : ""} on the ${answer.tier} tier:` : "Already there."));
      body.append(hopList(answer.plan.hops, "path-list"));
      if (answer.runbook) body.append(runbookBlock(answer.runbook));
      body.dataset.plan = "safe";
    } else {
      body.append(html("p", `No path on the ${answer.tier} tier: ${answer.break.reason}`, { class: risky ? "warning" : "why", id: "no-path" }));
      if (risky) {
        body.append(html("p", `Accepting ${risky.risks.join(", ")} gives this plan (drawn in red, its hops with risks dashed):`));
        body.append(hopList(risky.hops, "risky-path-list"));
      }
      body.dataset.plan = risky ? "risky" : "none";
    }
    showOnDrawing(answer.found ? answer.plan.hops : risky ? risky.hops : [], Boolean(risky));
    await whyNot(body);
  } catch (error) {
    body.replaceChildren(html("p", error.message, { class: "why" }));
  }
}

// When the channel drawn has no update from → to, says why (as `cincinnati
// explain` does): a note beside the plan, not an error.
async function whyNot(body) {
  const from = view && view.byVersion.get(state.from);
  if (!view || (from && from.updates.some((update) => update.to === state.to))) return;
  const answer = await getJson("v1/explain", { channel: state.channel, from: state.from, to: state.to, arch: state.arch });
  const why = html("p", `No direct update in ${state.channel}: ${answer.summary}`, { class: "note", id: "why-not" });
  why.dataset.verdict = answer.verdict;
  body.append(why);
}

// ---- putting it together --------------------------------------------------

async function showChannel() {
  const started = performance.now();
  $("status").textContent = `Loading ${state.channel}…`;
  view = indexChannel(await getJson("v1/channel", { channel: state.channel, arch: state.arch }));
  $("drawing").hidden = false;
  draw();
  $("versions").replaceChildren(...view.releases.map((release) => new Option(release.version)));
  $("status").textContent = `Drawn in ${Math.round(performance.now() - started)} ms.`;
  $("status").classList.remove("error");
}

async function refresh() {
  hideProblem();
  try {
    const known = (await loadArchitectures()) && (await loadChannels());
    writeUrl();
    if (!known) {
      clearDrawing();
      return;
    }
    await showChannel();
    await plan();
  } catch (error) {
    clearDrawing();
    $("status").textContent = error.message;
    $("status").classList.add("error");
  }
}

// A window whose width changed (a phone turned, a window resized) gets the
// drawing laid out again, with its selection and plan. The page reads as
// loading until then: whoever waits for it to be ready (a test, assistive
// technology) does not read a drawing about to be replaced.
let resizing = 0;
let laidOut = null; // ends the loading state of the pending layout
function onResize() {
  clearTimeout(resizing);
  if (!laidOut) busy(() => new Promise((resolve) => (laidOut = resolve)));
  resizing = setTimeout(() => {
    if (state.view !== "fleet") relayout();
    laidOut();
    laidOut = null;
  }, 150);
}

// The drawing laid out again if its room changed (while the Fleet view was
// shown, say), with its selection and plan. (The Fleet view's charts take
// their panel's width as it is.)
function relayout() {
  if (!view || !view.svg) return;
  const now = room();
  if (Math.abs(now.width - view.room.width) < 8 && Math.abs(now.height - view.room.height) < 8) return;
  draw();
  markSelected();
  markPath();
  if (view.path) scrollToPath();
}

async function start() {
  readUrl();
  if (FLEET) {
    await loadScript("explorer/fleet.js");
    addFleetView();
  } else {
    state.view = "";
  }
  $("from").value = state.from;
  $("to").value = state.to;
  if (state.tier) $("tier").value = state.tier;
  $("arch").addEventListener("change", () => {
    state.arch = $("arch").value;
    busy(refresh);
  });
  $("channel").addEventListener("change", () => {
    state.channel = $("channel").value;
    busy(refresh);
  });
  $("tier").addEventListener("change", () => {
    state.tier = $("tier").value;
    writeUrl();
    busy(plan);
  });
  $("choice").addEventListener("submit", (event) => {
    event.preventDefault();
    choosePlan($("from").value.trim(), $("to").value.trim());
  });
  window.addEventListener("resize", onResize);
  await showView();
}

// ---- views ----------------------------------------------------------------

// Loads a script of the page's (the Fleet view's, fleet.js: its functions
// join this script's).
function loadScript(path) {
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = path;
    script.addEventListener("load", resolve);
    script.addEventListener("error", () => reject(new Error(`${path} did not load`)));
    document.head.append(script);
  });
}

let graphShown = false; // the update graph asked for once

// Shows the view of the state (the update graph unless the Fleet view is
// asked for), loading it on its first showing; the fleet's answers are
// asked again at each showing.
async function showView() {
  const fleet = state.view === "fleet";
  document.body.dataset.view = fleet ? "fleet" : "graph";
  for (const link of document.querySelectorAll("#views a")) {
    if (link.dataset.view === state.view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  writeUrl();
  if (fleet) {
    await showFleet();
  } else if (!graphShown) {
    graphShown = true;
    await refresh();
    if (view && state.from && view.byVersion.has(state.from)) select(state.from, false);
  } else {
    relayout();
  }
}

busy(start);
