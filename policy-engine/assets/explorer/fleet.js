// The explorer's Fleet view, loaded by app.js only on a page the engine
// marks as having fleet answers (<body data-fleet>: its status port, with a
// fleet store). It uses app.js's functions and state (html, element,
// channelsOf, architectures, FLEET); app.js calls addFleetView once and
// showFleet each time the view is shown.
//
// Plain JavaScript and SVG as app.js: no dependency, no build step.
"use strict";

// What the fleet answers say (on the status port only, see FLEET), drawn
// as the engine counts it: each rollout first (where it is, in the
// engine's words, any pause or conflict, offered and arrived out of the
// clusters in its scope), clusters per version now (a bar per channel,
// stacked by version, the most common first: the page keeps no version
// order), clusters arriving at the newest releases (the rollouts'
// targets, then each channel's newest release as /v1/channels names it)
// over a week, and the stuck clusters as listed.
//
// With rollout control (rollouts.token_file) the engine answers about the
// fleet only to a bearer token (scope read or wider): asked for in the
// view on a 401, kept in sessionStorage (this tab only, gone with it),
// sent as Authorization on the fleet's requests alone; never in the URL,
// never logged.
//
// Bounded: a fleet may run thousands of versions (and many channels), so
// what is drawn is capped (the busiest channels, the most common versions
// of each, the rest summed) and the DOM stays the same size whatever the
// fleet's.

const FLEET_PANELS = [
  ["fleet-rollouts", "Rollouts"],
  ["fleet-versions", "Clusters per version"],
  ["fleet-adoption", "Arrivals at the newest releases"],
  ["fleet-stuck", "Stuck clusters"],
];
const ADOPTION_HOURS = 168; // a week of arrivals
const ADOPTION_CHARTS = 4; // releases whose arrivals are drawn, at most
const TOP_CHANNELS = 12; // channels (and architectures) drawn, the busiest; the rest summed in a line
const TOP_VERSIONS = 8; // versions drawn per channel, the most common (and its newest); the rest as "others"
const STUCK_LISTED = 20; // versions listed per stuck list, the most clusters first; the rest summed
const STUCK_EXAMPLES = 10; // clusters shown per version not moving
const TOKEN_KEY = "cincinnati-fleet-token";
const CHART_W = 1000; // the charts' width in their own units, stretched to their panel's
const BAR_H = 20;
const AREA_H = 90;
// A colour per version (the same in every channel), the most common first;
// no red (errors and risks are red on this page). "others" is grey.
const PALETTE = ["#1d4ed8", "#b45309", "#047857", "#7c3aed", "#0e7490", "#be185d", "#4d7c0f", "#854d0e", "#475569", "#6366f1"];
const OTHERS_COLOUR = "#a0aec0";

// "1 cluster", "1,200 clusters".
function clusters(count) {
  return `${count.toLocaleString("en-US")} cluster${count === 1 ? "" : "s"}`;
}

function plural(count, word) {
  return `${count.toLocaleString("en-US")} ${word}${count === 1 ? "" : "s"}`;
}

// "5.5 h", "3.2 days".
function duration(hours) {
  return hours < 48 ? `${hours.toFixed(1)} h` : `${(hours / 24).toLocaleString("en-US", { maximumFractionDigits: 1 })} days`;
}

// A time as the engine sends it (RFC 3339, UTC, to the second), readable:
// "2026-11-20 09:00:00 UTC".
function when(time) {
  return html("time", String(time).replace("T", " ").replace(/Z$/, " UTC"), { datetime: time });
}

// A paragraph of text and elements.
function para(attributes, ...parts) {
  const node = html("p", undefined, attributes);
  node.append(...parts);
  return node;
}

// ---- the token --------------------------------------------------------------

// Kept for this tab only; in memory if the browser keeps no sessionStorage.
let tokenInMemory = "";

function fleetToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  } catch {
    return tokenInMemory;
  }
}

function keepToken(token) {
  tokenInMemory = token;
  try {
    sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Kept in memory only.
  }
}

function forgetToken() {
  tokenInMemory = "";
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Nothing kept.
  }
}

// A fleet answer, asked with the token (if any) as a bearer token; an
// error carrying the answer's status otherwise (401: a token is needed,
// 403: the token was refused).
async function fleetJson(what, params) {
  const query = new URLSearchParams(params).toString();
  const path = `${FLEET}${what}${query ? `?${query}` : ""}`;
  const headers = { Accept: "application/json" };
  const token = fleetToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  // no-store: answers about clusters, asked with a token, are not kept.
  const response = await fetch(path, { headers, cache: "no-store" });
  let body = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON: the status says enough.
  }
  if (!response.ok) {
    const error = new Error((body && body.value) || `${what}: HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return body;
}

// The token form, and the line saying a token is in use: in the view,
// above the panels.
function tokenBox() {
  const box = html("div", undefined, { id: "fleet-token" });
  const form = html("form", undefined, { id: "fleet-token-form", "aria-labelledby": "fleet-token-heading", hidden: "" });
  form.append(
    html("h2", "A token to see the fleet", { id: "fleet-token-heading" }),
    html("p", "This engine answers about the fleet only to a token of its rollouts.token_file (scope read or wider). " +
      "It is kept in this tab only, until the tab is closed, and sent to this engine alone.", { id: "fleet-token-why", class: "hint" }),
    html("p", "", { id: "fleet-token-problem", class: "why", role: "alert", hidden: "" }),
  );
  // No name: the token is never part of a URL, even if the form were sent.
  const input = html("input", undefined, {
    id: "fleet-token-input", type: "password", autocomplete: "off", spellcheck: "false", required: "",
    "aria-describedby": "fleet-token-why",
  });
  const fields = html("div", undefined, { class: "token-fields" });
  fields.append(
    html("label", "Token", { for: "fleet-token-input" }), input,
    html("button", "Use this token", { type: "submit", id: "fleet-token-use" }),
    html("button", "Forget the token", { type: "button", class: "secondary", id: "fleet-token-forget-stored", hidden: "" }),
  );
  form.append(fields);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const token = input.value.trim();
    input.value = "";
    if (!token) return;
    keepToken(token);
    busy(showFleet);
  });
  const kept = para({ id: "fleet-token-kept", class: "hint", hidden: "" }, "Using the token kept for this tab. ");
  const replace = html("button", "Replace the token", { type: "button", class: "secondary", id: "fleet-token-replace" });
  const forget = html("button", "Forget the token", { type: "button", class: "secondary", id: "fleet-token-forget" });
  kept.append(replace, " ", forget);
  replace.addEventListener("click", () => askToken(null, true));
  const forgotten = () => {
    forgetToken();
    busy(showFleet);
  };
  forget.addEventListener("click", forgotten);
  fields.querySelector("#fleet-token-forget-stored").addEventListener("click", forgotten);
  box.append(form, kept);
  return box;
}

// Shows the token form (the panels hidden while a token is needed): on a
// 401, a 403 (`refused`: the engine's words), or to replace the token.
function askToken(refused, replacing) {
  const problem = $("fleet-token-problem");
  problem.hidden = !refused;
  problem.textContent = refused ? `The token was refused: ${refused.message}. Enter another, or forget it.` : "";
  $("fleet-token-form").hidden = false;
  $("fleet-token-form").dataset.asked = refused ? "refused" : replacing ? "replace" : "needed";
  $("fleet-token-forget-stored").hidden = !fleetToken();
  $("fleet-token-kept").hidden = true;
  if (!replacing) $("fleet-panels").hidden = true;
  $("fleet-token-input").focus();
}

function tokenAccepted() {
  $("fleet-token-form").hidden = true;
  delete $("fleet-token-form").dataset.asked;
  $("fleet-token-kept").hidden = !fleetToken();
  $("fleet-panels").hidden = false;
}

// ---- the view ---------------------------------------------------------------

// The view switcher and the Fleet view's panels, on the status port only.
function addFleetView() {
  const nav = html("nav", undefined, { id: "views", "aria-label": "Views" });
  nav.append(html("a", "Update graph", { "data-view": "" }), html("a", "Fleet", { "data-view": "fleet" }));
  nav.addEventListener("click", (event) => {
    const link = event.target.closest("a");
    if (!link || event.button || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    state.view = link.dataset.view;
    busy(showView);
  });
  $("choice").before(nav);
  const fleet = html("div", undefined, { id: "fleet", role: "region", "aria-label": "Fleet" });
  fleet.append(html("p", "", { id: "fleet-status", role: "status", "aria-live": "polite" }), tokenBox());
  const panels = html("div", undefined, { id: "fleet-panels", class: "fleet-panels" });
  for (const [id, heading] of FLEET_PANELS) {
    const section = html("section", undefined, { id, "aria-labelledby": `${id}-heading` });
    section.append(html("h2", heading, { id: `${id}-heading` }), html("div", undefined, { id: `${id}-body` }));
    panels.append(section);
  }
  fleet.append(panels);
  $("graph-view").after(fleet);
}

// An answer, or the error it gave (each panel shows its own).
async function settled(promise) {
  try {
    return { answer: await promise };
  } catch (error) {
    return { error };
  }
}

// The newest release of each channel the fleet runs, as the engine's graph
// has it: "channel arch" → version.
async function newestReleases(groups) {
  const newest = new Map();
  try {
    if (!architectures) ({ architectures } = await getJson("v1/architectures"));
    for (const arch of new Set(groups.map((group) => group.arch))) {
      if (!architectures.includes(arch)) continue;
      for (const channel of await channelsOf(arch)) {
        if (channel.newest) newest.set(`${channel.name} ${arch}`, channel.newest);
      }
    }
  } catch {
    // No graph yet: what is known is marked, and the fleet drawn anyway.
  }
  return newest;
}

// The versions answer by channel and architecture, the most clusters
// first, each with its versions the most clusters first.
function fleetGroups(answer) {
  const groups = new Map();
  for (const count of answer.versions) {
    const key = `${count.channel} ${count.arch}`;
    if (!groups.has(key)) groups.set(key, { key, channel: count.channel, arch: count.arch, clusters: 0, versions: [] });
    const group = groups.get(key);
    group.clusters += count.clusters;
    group.versions.push(count);
  }
  const byClusters = (a, b) => b.clusters - a.clusters;
  for (const group of groups.values()) group.versions.sort(byClusters);
  return [...groups.values()].sort(byClusters);
}

// The releases whose arrivals are drawn: the rollouts' targets, then the
// newest release of each channel the fleet runs (the busiest first).
function adoptionVersions(rollouts, groups, newest) {
  const chosen = (rollouts ? rollouts.rollouts.map((rollout) => rollout.target) : [])
    .concat(groups.map((group) => newest.get(group.key)).filter(Boolean));
  return [...new Set(chosen)].slice(0, ADOPTION_CHARTS);
}

async function showFleet() {
  const started = performance.now();
  const status = $("fleet-status");
  status.textContent = "Loading the fleet…";
  status.classList.remove("error");
  const ask = (what, params) => settled(fleetJson(what, params));
  const [versions, rollouts, stuck] = await Promise.all([ask("versions"), ask("rollouts"), ask("stuck")]);
  const denied = [versions, rollouts, stuck].map(({ error }) => error).find((error) => error && [401, 403].includes(error.status));
  if (denied) {
    const refused = denied.status === 403;
    status.textContent = refused ? "The fleet: the token was refused." : "The fleet: this engine asks for a token.";
    status.classList.toggle("error", refused);
    delete status.dataset.clusters;
    askToken(refused ? denied : null, false);
    return;
  }
  tokenAccepted();
  const groups = versions.answer ? fleetGroups(versions.answer) : [];
  const newest = await newestReleases(groups);
  const chosen = adoptionVersions(rollouts.answer, groups, newest);
  const adoption = await Promise.all(chosen.map((version) => ask("adoption", { version, hours: ADOPTION_HOURS })));
  showPanel("fleet-rollouts", rollouts, () => drawRollouts(rollouts.answer));
  showPanel("fleet-versions", versions, () => drawVersions(versions.answer, groups, newest));
  showPanel("fleet-adoption", { answer: adoption }, () => drawAdoption(adoption));
  showPanel("fleet-stuck", stuck, () => drawStuck(stuck.answer, newest));
  if (versions.error) {
    status.textContent = `The fleet: ${versions.error.message}`;
    status.classList.add("error");
    return;
  }
  const { answer } = versions;
  const channels = new Set(answer.versions.map((count) => count.channel)).size;
  const versionCount = new Set(answer.versions.map((count) => count.version)).size;
  status.textContent = `${clusters(answer.clusters)} active in the last ${answer.activeHours} h, on ${plural(versionCount, "version")} ` +
    `in ${plural(channels, "channel")}. ` +
    countedNote(answer) +
    `Answered and drawn in ${Math.round(performance.now() - started)} ms.`;
  status.dataset.clusters = answer.clusters;
}

// How old the engine's count was when the answer was made of it (the whole
// fleet is counted every fleet.count_interval_secs), if a second or more.
function countedNote(answer) {
  const age = Math.floor((Date.parse(answer.generatedAt) - Date.parse(answer.countedAt)) / 1000);
  return age >= 1 ? `As counted ${age} s before. ` : "";
}

function showPanel(id, { answer, error }, draw) {
  const body = $(`${id}-body`);
  body.replaceChildren(...(error ? [html("p", error.message, { class: "why" })] : draw(answer)));
}

// A chart as wide as its panel, `height` pixels high: drawn CHART_W units
// wide and stretched (no text in it: its labels are the page's; its
// strokes keep their width).
function chart(height, label) {
  return element("svg", {
    class: "chart", height, viewBox: `0 0 ${CHART_W} ${height}`, preserveAspectRatio: "none", role: "img", "aria-label": label,
  });
}

function swatch(colour) {
  const key = html("span", undefined, { class: "swatch", "aria-hidden": "true" });
  key.style.backgroundColor = colour;
  return key;
}

// ---- rollouts ---------------------------------------------------------------

// Each rollout: where it is (the engine's sentence), any pause, hold,
// alert or conflict as a warning, its gates in words, a bar of the
// clusters in its scope with the offered part and the arrived part
// filled, and a mark at its progress.
function drawRollouts(answer) {
  if (!answer.rollouts.length) return [html("p", "No rollout in the cluster policy.")];
  const blocks = answer.rollouts.map((rollout) => {
    const block = html("div", undefined, {
      class: "rollout", "data-target": rollout.target, "data-state": rollout.state, "data-progress": rollout.progress,
      "data-in-scope": rollout.inScope, "data-offered": rollout.offered, "data-arrived": rollout.arrived,
    });
    block.append(html("h3", rollout.target));
    const said = rollout.said ? rollout.said.charAt(0).toUpperCase() + rollout.said.slice(1) : "";
    block.append(html("p", said.endsWith(".") ? said : `${said}.`, { class: "rollout-said" }));
    if (rollout.conflict) {
      block.append(para({ class: "warning rollout-conflict" },
        html("strong", "The policy file and the run-time state disagree: "), rollout.conflict));
    }
    block.append(...controlNotes(rollout));
    block.append(...gateNotes(rollout));
    const svg = chart(BAR_H, `${rollout.offered} offered and ${rollout.arrived} arrived of ${rollout.inScope} in scope`);
    const part = (count) => (rollout.inScope ? (Math.min(count, rollout.inScope) / rollout.inScope) * CHART_W : 0);
    element("rect", { class: "in-scope", x: 0, y: 0, width: CHART_W, height: BAR_H }, svg);
    element("rect", { class: "offered", x: 0, y: 0, width: part(rollout.offered), height: BAR_H }, svg);
    element("rect", { class: "arrived", x: 0, y: 0, width: part(rollout.arrived), height: BAR_H }, svg);
    const mark = Math.min(CHART_W - 1, Math.max(1, (rollout.progress / 100) * CHART_W));
    element("line", { class: "progress", x1: mark, x2: mark, y1: 0, y2: BAR_H }, svg);
    block.append(svg);
    block.append(para({ class: "rollout-figures" },
      html("span", `${rollout.offered.toLocaleString("en-US")} offered`, { class: "key-offered" }), " and ",
      html("span", `${rollout.arrived.toLocaleString("en-US")} arrived`, { class: "key-arrived" }), " of ",
      html("span", `${clusters(rollout.inScope)} in scope`, { class: "key-in-scope" })));
    const median = rollout.medianHoursToArrive;
    const declared = Math.abs(rollout.declaredProgress - rollout.progress) >= 0.05
      ? ` The policy file's schedule alone gives ${rollout.declaredProgress.toFixed(1)}%.` : "";
    block.append(html("p", `Offered to clusters placed below ${rollout.progress.toFixed(1)}%.${declared} ` +
      `${median === null || median === undefined ? "No arrival yet" : `Median ${duration(median)} from offered to arrived`}; ` +
      `${rollout.silentAfterArriving} silent after arriving (not seen for ${answer.silentHours} h). ` +
      `Declared on line ${rollout.line} of the policy file.`, { class: "hint" }));
    return block;
  });
  return blocks.concat([html("p", "The mark is the rollout's progress: the share of clusters it offers the target to now.", { class: "hint" })]);
}

// What run-time control did to a rollout, in words: a pause (by whom,
// since when, why), a held progress, alerts firing on it, time it stood
// still.
function controlNotes(rollout) {
  const control = rollout.control;
  if (!control) return [];
  const notes = [];
  const last = control.last && control.last.target === rollout.target ? control.last : null;
  if (control.paused) {
    const { paused } = control;
    const why = last && last.action === "pause" ? `: ${last.reason}` : "";
    notes.push(para({ class: "warning rollout-control", "data-state": "paused" },
      html("strong", "Paused"), ` by ${paused.by} since `, when(paused.since),
      `, keeping ${paused.progress.toFixed(1)}%${why}. Nobody new is offered ${rollout.target} until it is resumed.`));
  }
  if (control.heldProgress !== undefined && control.heldProgress !== null) {
    const by = last && last.action === "hold" ? [` by ${last.by} since `, when(last.at), `: ${last.reason}`] : [];
    notes.push(para({ class: "warning rollout-control", "data-state": "held" },
      html("strong", `Held at ${control.heldProgress}%`), ...by,
      ". The policy file's schedule applies again once released."));
  }
  const firing = control.alerts || [];
  if (firing.length) {
    notes.push(para({ class: "warning rollout-alerts" }, html("strong", "Alerts firing on it: "), firing.join(", ")));
  }
  if (!control.paused && control.stoodStillSecs >= 1) {
    notes.push(html("p", `Its schedule runs ${duration(control.stoodStillSecs / 3600)} later: it stood still in earlier pauses.`, { class: "hint" }));
  }
  return notes;
}

// Its gates, in words: office hours, canaries, a rate.
function gateNotes(rollout) {
  const notes = [];
  if (rollout.officeHours) notes.push(html("p", `Newly offers ${rollout.target} only within office hours: ${rollout.officeHours}.`, { class: "rollout-gates" }));
  const canaries = rollout.canaries;
  if (canaries) {
    const arrived = canaries.clusters.filter((canary) => canary.arrivedAt).length;
    const parts = [`Canaries: ${canaries.wanted} wanted${canaries.group ? ` from the group ${canaries.group}` : ""}`];
    if (!canaries.chosenAt) parts.push(", not chosen yet");
    else parts.push(`, ${canaries.clusters.length} chosen since `, when(canaries.chosenAt), `, ${arrived} arrived`);
    if (canaries.arrivedAt) parts.push(" (the last at ", when(canaries.arrivedAt), ")");
    else if (canaries.dueBy) parts.push("; due by ", when(canaries.dueBy));
    notes.push(para({ class: "rollout-gates" }, ...parts, "."));
  }
  const rate = rollout.rate;
  if (rate) {
    const parts = [`At most ${clusters(rate.clusters)} newly offered every ${rate.periodHours} h: ${rate.inPeriod} in this period`];
    if (rate.periodEnds) parts.push(" (it ends ", when(rate.periodEnds), ")");
    parts.push(`, ${rate.admitted} admitted in all, ${rate.waiting} waiting.`);
    notes.push(para({ class: "rollout-gates" }, ...parts));
  }
  return notes;
}

// ---- clusters per version ---------------------------------------------------

// The versions of a channel drawn: the most common, and its newest
// release wherever it ranks; the rest summed.
function drawnVersions(group, newest) {
  const shown = group.versions.slice(0, TOP_VERSIONS);
  const rest = group.versions.slice(TOP_VERSIONS);
  const newestAt = rest.findIndex((count) => count.version === newest.get(group.key));
  if (newestAt >= 0) shown.push(...rest.splice(newestAt, 1));
  return { shown, others: { versions: rest.length, clusters: rest.reduce((sum, count) => sum + count.clusters, 0) } };
}

// Clusters per version now: a bar per channel and architecture (the
// busiest), as long as its clusters (the busiest channel the whole
// width), in a segment per version drawn and one for the others; and each
// version with its count.
function drawVersions(answer, groups, newest) {
  if (!groups.length) return [html("p", `No cluster asked for updates in the last ${answer.activeHours} h.`)];
  const shownGroups = groups.slice(0, TOP_CHANNELS).map((group) => ({ ...group, ...drawnVersions(group, newest) }));
  const totals = new Map();
  for (const group of shownGroups) {
    for (const count of group.shown) totals.set(count.version, (totals.get(count.version) || 0) + count.clusters);
  }
  const colours = new Map();
  [...totals].sort((a, b) => b[1] - a[1]).forEach(([version], index) => colours.set(version, PALETTE[index % PALETTE.length]));
  const scale = CHART_W / Math.max(...shownGroups.map((group) => group.clusters));
  const blocks = shownGroups.map((group) => {
    const block = html("div", undefined, {
      class: "fleet-group", "data-channel": group.channel, "data-arch": group.arch, "data-clusters": group.clusters,
      "data-versions": group.versions.length,
    });
    block.append(html("h3", `${group.channel} (${group.arch}): ${clusters(group.clusters)} on ${plural(group.versions.length, "version")}`));
    const svg = chart(BAR_H, `${group.channel} on ${group.arch}: ${clusters(group.clusters)} by version`);
    let x = 0;
    const segment = (count, colour, attributes, title) => {
      const rect = element("rect", { class: "segment", x, y: 0, width: count * scale, height: BAR_H, fill: colour, ...attributes }, svg);
      element("title", {}, rect).textContent = title;
      x += count * scale;
    };
    for (const count of group.shown) {
      segment(count.clusters, colours.get(count.version), { "data-version": count.version, "data-clusters": count.clusters },
        `${count.version}: ${clusters(count.clusters)}`);
    }
    const { others } = group;
    if (others.versions) {
      segment(others.clusters, OTHERS_COLOUR, { class: "segment others", "data-others": others.versions, "data-clusters": others.clusters },
        `${plural(others.versions, "other version")}: ${clusters(others.clusters)}`);
    }
    const list = html("ul", undefined, { class: "fleet-version-list" });
    for (const count of group.shown) {
      const item = html("li", undefined, {
        class: "fleet-version", "data-channel": group.channel, "data-arch": group.arch,
        "data-version": count.version, "data-clusters": count.clusters,
      });
      item.append(swatch(colours.get(count.version)), ` ${count.version}: ${count.clusters.toLocaleString("en-US")}`);
      if (newest.get(group.key) === count.version) item.append(" ", html("span", "newest", { class: "badge" }));
      list.append(item);
    }
    if (others.versions) {
      const item = html("li", undefined, { class: "fleet-others", "data-others": others.versions, "data-clusters": others.clusters });
      item.append(swatch(OTHERS_COLOUR), ` others (${plural(others.versions, "version")}): ${others.clusters.toLocaleString("en-US")}`);
      list.append(item);
    }
    block.append(svg, list);
    return block;
  });
  const rest = groups.slice(TOP_CHANNELS);
  if (rest.length) {
    const sum = rest.reduce((total, group) => total + group.clusters, 0);
    blocks.push(html("p", `And ${plural(rest.length, "more channel")} (by architecture): ${clusters(sum)}, not drawn.`, {
      class: "fleet-more", "data-channels": rest.length, "data-clusters": sum,
    }));
  }
  return blocks;
}

// ---- arrivals ---------------------------------------------------------------

// Clusters arriving at each release over the window, added up: an area
// rising with each hour's arrivals; a release nobody arrived at is one
// line, not an empty chart.
function drawAdoption(answers) {
  if (!answers.length) return [html("p", "No rollout, and no channel with a newest release the fleet runs.")];
  const drawn = answers.filter(({ answer }) => answer && answer.clusters);
  return answers.map(({ answer, error }) => (error ? html("p", error.message, { class: "why" }) : adoptionChart(answer)))
    .concat(drawn.length ? [html("p", "Added up over the hours each arrived in (a cluster arrives when it first reports the release).", { class: "hint" })] : []);
}

function windowOf(answer) {
  return answer.hours % 24 ? `${answer.hours} h` : `${answer.hours / 24} days`;
}

function adoptionChart(answer) {
  const days = windowOf(answer);
  if (!answer.clusters) {
    return html("p", `No cluster arrived at ${answer.version} in the last ${days}.`, {
      class: "adoption adoption-none", "data-version": answer.version, "data-clusters": 0,
    });
  }
  const block = html("div", undefined, { class: "adoption", "data-version": answer.version, "data-clusters": answer.clusters });
  block.append(html("h3", `${answer.version}: ${clusters(answer.clusters)} arrived in the last ${days}`));
  const [width, height, top] = [CHART_W, AREA_H, 4];
  const end = Date.parse(answer.generatedAt);
  const start = end - answer.hours * 3600e3;
  const x = (time) => ((Math.min(end, Math.max(start, time)) - start) / (end - start)) * width;
  const most = Math.max(1, answer.clusters);
  const y = (count) => top + (1 - count / most) * (height - top - 1);
  const points = [[x(start), y(0)]];
  let total = 0;
  for (const hour of answer.arrivals) {
    const from = Date.parse(hour.hour);
    points.push([x(from), y(total)]);
    total += hour.clusters;
    points.push([x(from + 3600e3), y(total)]);
  }
  points.push([x(end), y(total)]);
  const line = points.map(([px, py], index) => `${index ? "L" : "M"}${px.toFixed(1)},${py.toFixed(1)}`).join("");
  const svg = chart(height, `${answer.version}: ${clusters(answer.clusters)} arrived over the last ${days}`);
  element("line", { class: "axis", x1: 0, x2: width, y1: y(0), y2: y(0) }, svg);
  element("line", { class: "grid", x1: 0, x2: width, y1: y(most), y2: y(most) }, svg);
  element("path", { class: "area", d: `${line}L${x(end).toFixed(1)},${y(0).toFixed(1)}Z` }, svg);
  element("path", { class: "area-line", d: line }, svg);
  const axis = html("p", undefined, { class: "chart-axis" });
  axis.append(html("span", `${days} ago`), html("span", `${clusters(answer.clusters)} by now`));
  block.append(svg, axis);
  return block;
}

// ---- stuck ------------------------------------------------------------------

// The stuck clusters as the engine lists them, but for those on their
// channel's newest release (nothing newer to go to is not stuck):
// versions with nowhere newer to go in their channel, and versions whose
// clusters have been offered an update for longer than the stuck window
// and have not moved. The most clusters first, at most STUCK_LISTED
// versions a list, the rest summed.
function drawStuck(answer, newest) {
  const onNewest = (group) => newest.get(`${group.channel} ${group.arch}`) === group.version;
  const upToDate = answer.noUpdate.concat(answer.notMoving).filter(onNewest);
  const byClusters = (a, b) => b.clusters - a.clusters;
  const noUpdate = answer.noUpdate.filter((group) => !onNewest(group)).sort(byClusters);
  const notMoving = answer.notMoving.filter((group) => !onNewest(group)).sort(byClusters);
  const attributes = (group) => ({
    "data-channel": group.channel, "data-arch": group.arch, "data-version": group.version, "data-clusters": group.clusters,
  });
  const nowhere = html("ul", undefined, { id: "stuck-nowhere" });
  for (const group of noUpdate.slice(0, STUCK_LISTED)) {
    nowhere.append(html("li", `${group.version} on ${group.channel} (${group.arch}): ${clusters(group.clusters)}, ${group.reason}`, {
      ...attributes(group), "data-reason": group.reason,
    }));
  }
  const waiting = html("ul", undefined, { id: "stuck-not-moving" });
  for (const group of notMoving.slice(0, STUCK_LISTED)) {
    const item = html("li", `${group.version} on ${group.channel} (${group.arch}): ${clusters(group.clusters)}, offered up to ${group.newestOffered}`, {
      ...attributes(group), "data-newest-offered": group.newestOffered,
    });
    const examples = html("details");
    const shown = Math.min(group.examples.length, STUCK_EXAMPLES);
    examples.append(html("summary", shown === group.clusters ? "which, the longest on it first" : `the ${shown} longest on it`));
    const list = html("ol");
    for (const example of group.examples.slice(0, STUCK_EXAMPLES)) {
      const line = html("li", undefined, { class: "example", "data-cluster": example.cluster });
      line.append(html("code", example.cluster), " since ", when(example.since));
      list.append(line);
    }
    examples.append(list);
    item.append(examples);
    waiting.append(item);
  }
  const more = (groups, id) => {
    const rest = groups.slice(STUCK_LISTED);
    const sum = rest.reduce((total, group) => total + group.clusters, 0);
    return rest.length ? [html("p", `And ${plural(rest.length, "more version")}: ${clusters(sum)}.`, { id, "data-versions": rest.length, "data-clusters": sum })] : [];
  };
  const none = () => html("p", "None.");
  const newestSum = upToDate.reduce((total, group) => total + group.clusters, 0);
  return [
    html("h3", `No recommended update to a newer release (active in the last ${answer.activeHours} h)`),
    ...(noUpdate.length ? [nowhere, ...more(noUpdate, "stuck-nowhere-more")] : [none()]),
    html("h3", `Offered an update, not moved for more than ${plural(answer.stuckDays, "day")}`),
    ...(notMoving.length ? [waiting, ...more(notMoving, "stuck-not-moving-more")] : [none()]),
    ...(newestSum ? [html("p", `Not listed: ${clusters(newestSum)} on their channel's newest release, with nothing newer to go to.`, {
      id: "stuck-on-newest", class: "hint", "data-clusters": newestSum,
    })] : []),
  ];
}
