// The explorer's Fleet view, loaded by app.js only on a page the engine
// marks as having fleet answers (<body data-fleet>: its status port, with a
// fleet store). It uses app.js's functions and state (html, element,
// getJson, channelsOf, architectures, FLEET); app.js calls addFleetView
// once and showFleet each time the view is shown.
//
// Plain JavaScript and SVG as app.js: no dependency, no build step.
"use strict";

// What the fleet answers say (on the status port only, see FLEET), drawn
// as the engine counts it: clusters per version now (a bar per channel,
// stacked by version, the most common first: the page keeps no version
// order), clusters arriving at the newest releases (the rollouts' targets,
// then each channel's newest release as /v1/channels names it) over a
// week, each rollout's progress (offered and arrived out of the clusters
// in its scope), and the stuck clusters as listed.

const FLEET_PANELS = [
  ["fleet-versions", "Clusters per version"],
  ["fleet-adoption", "Arrivals at the newest releases"],
  ["fleet-rollouts", "Rollouts"],
  ["fleet-stuck", "Stuck clusters"],
];
const ADOPTION_HOURS = 168; // a week of arrivals
const ADOPTION_CHARTS = 4; // releases whose arrivals are drawn, at most
const CHART_W = 1000; // the charts' width in their own units, stretched to their panel's
const BAR_H = 20;
const AREA_H = 90;
// A colour per version (the same in every channel), the most common first;
// no red (errors and risks are red on this page).
const PALETTE = ["#1d4ed8", "#b45309", "#047857", "#7c3aed", "#0e7490", "#be185d", "#4d7c0f", "#854d0e", "#475569", "#6366f1"];

// "1 cluster", "1,200 clusters".
function clusters(count) {
  return `${count.toLocaleString("en-US")} cluster${count === 1 ? "" : "s"}`;
}

// "5.5 h", "3.2 days".
function duration(hours) {
  return hours < 48 ? `${hours.toFixed(1)} h` : `${(hours / 24).toLocaleString("en-US", { maximumFractionDigits: 1 })} days`;
}

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
  fleet.append(html("p", "", { id: "fleet-status", role: "status", "aria-live": "polite" }));
  const panels = html("div", undefined, { class: "fleet-panels" });
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
  const ask = (what, params) => settled(getJson(`${FLEET}${what}`, params));
  const [versions, rollouts, stuck] = await Promise.all([ask("versions"), ask("rollouts"), ask("stuck")]);
  const groups = versions.answer ? fleetGroups(versions.answer) : [];
  const newest = await newestReleases(groups);
  const chosen = adoptionVersions(rollouts.answer, groups, newest);
  const adoption = await Promise.all(chosen.map((version) => ask("adoption", { version, hours: ADOPTION_HOURS })));
  showPanel("fleet-versions", versions, () => drawVersions(versions.answer, groups, newest));
  showPanel("fleet-adoption", { answer: adoption }, () => drawAdoption(adoption));
  showPanel("fleet-rollouts", rollouts, () => drawRollouts(rollouts.answer));
  showPanel("fleet-stuck", stuck, () => drawStuck(stuck.answer, newest));
  if (versions.error) {
    status.textContent = `The fleet: ${versions.error.message}`;
    status.classList.add("error");
    return;
  }
  const { answer } = versions;
  const channels = new Set(answer.versions.map((count) => count.channel)).size;
  const versionCount = new Set(answer.versions.map((count) => count.version)).size;
  status.textContent = `${clusters(answer.clusters)} active in the last ${answer.activeHours} h, on ${versionCount} ` +
    `version${versionCount === 1 ? "" : "s"} in ${channels} channel${channels === 1 ? "" : "s"}. ` +
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

// Clusters per version now: a bar per channel and architecture, as long
// as its clusters (the busiest channel the whole width), in a segment per
// version; and each version with its count.
function drawVersions(answer, groups, newest) {
  if (!groups.length) return [html("p", `No cluster asked for updates in the last ${answer.activeHours} h.`)];
  const colours = new Map();
  const totals = new Map();
  for (const count of answer.versions) totals.set(count.version, (totals.get(count.version) || 0) + count.clusters);
  [...totals].sort((a, b) => b[1] - a[1]).forEach(([version], index) => colours.set(version, PALETTE[index % PALETTE.length]));
  const scale = CHART_W / Math.max(...groups.map((group) => group.clusters));
  return groups.map((group) => {
    const block = html("div", undefined, { class: "fleet-group", "data-channel": group.channel, "data-arch": group.arch, "data-clusters": group.clusters });
    block.append(html("h3", `${group.channel} (${group.arch}): ${clusters(group.clusters)}`));
    const svg = chart(BAR_H, `${group.channel} on ${group.arch}: ${clusters(group.clusters)} by version`);
    let x = 0;
    for (const count of group.versions) {
      const segment = element("rect", {
        class: "segment", x, y: 0, width: count.clusters * scale, height: BAR_H,
        fill: colours.get(count.version), "data-version": count.version, "data-clusters": count.clusters,
      }, svg);
      element("title", {}, segment).textContent = `${count.version}: ${clusters(count.clusters)}`;
      x += count.clusters * scale;
    }
    const list = html("ul", undefined, { class: "fleet-version-list" });
    for (const count of group.versions) {
      const item = html("li", undefined, {
        class: "fleet-version", "data-channel": group.channel, "data-arch": group.arch,
        "data-version": count.version, "data-clusters": count.clusters,
      });
      item.append(swatch(colours.get(count.version)), ` ${count.version}: ${count.clusters.toLocaleString("en-US")}`);
      if (newest.get(group.key) === count.version) item.append(" ", html("span", "newest", { class: "badge" }));
      list.append(item);
    }
    block.append(svg, list);
    return block;
  });
}

// Clusters arriving at each release over the window, added up: an area
// rising with each hour's arrivals.
function drawAdoption(answers) {
  const drawn = answers.filter((adoption) => adoption.answer);
  if (!answers.length) return [html("p", "No rollout, and no channel with a newest release the fleet runs.")];
  return answers.map(({ answer, error }) => (error ? html("p", error.message, { class: "why" }) : adoptionChart(answer)))
    .concat(drawn.length ? [html("p", "Added up over the hours each arrived in (a cluster arrives when it first reports the release).", { class: "hint" })] : []);
}

function adoptionChart(answer) {
  const block = html("div", undefined, { class: "adoption", "data-version": answer.version, "data-clusters": answer.clusters });
  const days = answer.hours % 24 ? `${answer.hours} h` : `${answer.hours / 24} days`;
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
  axis.append(html("span", `${days} ago`), html("span", answer.clusters ? `${clusters(answer.clusters)} by now` : "now"));
  block.append(svg, axis);
  return block;
}

// Each rollout: a bar of the clusters in its scope, the offered part and
// the arrived part filled, and a mark at its progress.
function drawRollouts(answer) {
  if (!answer.rollouts.length) return [html("p", "No rollout in the cluster policy.")];
  const width = CHART_W;
  const blocks = answer.rollouts.map((rollout) => {
    const block = html("div", undefined, {
      class: "rollout", "data-target": rollout.target, "data-progress": rollout.progress,
      "data-in-scope": rollout.inScope, "data-offered": rollout.offered, "data-arrived": rollout.arrived,
    });
    block.append(html("h3", `${rollout.target}: ${rollout.progress.toFixed(1)}% through (policy file line ${rollout.line})`));
    const control = rollout.control;
    if (control && control.state !== "running") {
      const state = control.state === "held" ? `Held at ${control.held_progress}%` : "Paused";
      block.append(html("p", `${state} at run time by ${control.by} at ${control.at}: ${control.reason}. ` +
        "The policy file's schedule applies again once resumed or released.", { class: "rollout-control", "data-state": control.state }));
    }
    if (rollout.gates) block.append(html("p", `Gates: ${rollout.gates}`, { class: "rollout-gates" }));
    const svg = chart(BAR_H, `${rollout.arrived} arrived and ${rollout.offered} offered of ${rollout.inScope} in scope`);
    const part = (count) => (rollout.inScope ? (Math.min(count, rollout.inScope) / rollout.inScope) * width : 0);
    element("rect", { class: "in-scope", x: 0, y: 0, width, height: BAR_H }, svg);
    element("rect", { class: "offered", x: 0, y: 0, width: part(rollout.offered), height: BAR_H }, svg);
    element("rect", { class: "arrived", x: 0, y: 0, width: part(rollout.arrived), height: BAR_H }, svg);
    const mark = Math.min(width - 1, Math.max(1, (rollout.progress / 100) * width));
    element("line", { class: "progress", x1: mark, x2: mark, y1: 0, y2: BAR_H }, svg);
    block.append(svg);
    const figures = html("p", undefined, { class: "rollout-figures" });
    figures.append(
      html("span", `${rollout.arrived.toLocaleString("en-US")} arrived`, { class: "key-arrived" }), " · ",
      html("span", `${rollout.offered.toLocaleString("en-US")} offered`, { class: "key-offered" }), " · ",
      html("span", `${clusters(rollout.inScope)} in scope`, { class: "key-in-scope" }),
    );
    const median = rollout.medianHoursToArrive;
    block.append(figures, html("p", `${median === null ? "No arrival yet" : `Median ${duration(median)} from offered to arrived`}; ` +
      `${rollout.silentAfterArriving} silent after arriving (not seen for ${answer.silentHours} h).`, { class: "hint" }));
    return block;
  });
  return blocks.concat([html("p", "The mark is the rollout's progress: the share of clusters it offers the target to now.", { class: "hint" })]);
}

// The stuck clusters as the engine lists them: versions with nowhere newer
// to go in their channel, and versions whose clusters have been offered an
// update for longer than the stuck window and have not moved.
function drawStuck(answer, newest) {
  const nowhere = html("ul", undefined, { id: "stuck-nowhere" });
  for (const group of answer.noUpdate) {
    const item = html("li", `${group.version} on ${group.channel} (${group.arch}): ${clusters(group.clusters)}, ${group.reason}`, {
      "data-channel": group.channel, "data-arch": group.arch, "data-version": group.version,
      "data-clusters": group.clusters, "data-reason": group.reason,
    });
    if (newest.get(`${group.channel} ${group.arch}`) === group.version) item.append(" ", html("span", "the channel's newest", { class: "badge" }));
    nowhere.append(item);
  }
  const waiting = html("ul", undefined, { id: "stuck-not-moving" });
  for (const group of answer.notMoving) {
    const item = html("li", `${group.version} on ${group.channel} (${group.arch}): ${clusters(group.clusters)}, offered up to ${group.newestOffered}`, {
      "data-channel": group.channel, "data-arch": group.arch, "data-version": group.version,
      "data-clusters": group.clusters, "data-newest-offered": group.newestOffered,
    });
    const examples = html("details");
    const shown = group.examples.length;
    examples.append(html("summary", shown === group.clusters ? "which, the longest on it first" : `the ${shown} longest on it`));
    const list = html("ol");
    for (const example of group.examples) {
      const line = html("li", undefined, { class: "example", "data-cluster": example.cluster });
      line.append(html("code", example.cluster), ` since ${example.since.replace("T", " ").replace("Z", " UTC")}`);
      list.append(line);
    }
    examples.append(list);
    item.append(examples);
    waiting.append(item);
  }
  const none = () => html("p", "None.");
  return [
    html("h3", `No recommended update to a newer release (active in the last ${answer.activeHours} h)`),
    answer.noUpdate.length ? nowhere : none(),
    html("h3", `Offered an update, not moved for more than ${answer.stuckDays} day${answer.stuckDays === 1 ? "" : "s"}`),
    answer.notMoving.length ? waiting : none(),
  ];
}
