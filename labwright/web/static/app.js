// Labwright's page: plain JavaScript, no build step. The server renders the page; this adds
// the buttons, the deck slider, the heatmap colours and live progress (server-sent events).
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-Labwright": "1" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = {};
  try { data = await res.json(); } catch (e) { data = {}; }
  if (!res.ok) {
    const err = (data && data.error) || { code: String(res.status), detail: res.statusText };
    throw new Error(`${err.code}: ${err.detail}`);
  }
  return data;
}

function say(id, text) { const el = document.getElementById(id); if (el) el.textContent = text; }

// ------------------------------------------------------------------ e-stop: one press, no dialog
function wireEstop() {
  const button = $("#estop");
  if (!button) return;
  button.addEventListener("click", async () => {
    button.classList.add("pressed");
    try {
      const out = await api("POST", "/api/estop", { reason: "pressed on the page" });
      const stopped = Object.entries(out.stopped || {}).filter(([, ok]) => ok).map(([i]) => i);
      const text = `stopped: ${stopped.join(", ") || "none reachable"}`;
      say("estop-result", text);
      // The run page reloads when the stopped run settles: keep the answer for this tab.
      sessionStorage.setItem("labwright-estop", JSON.stringify({ text, at: Date.now() }));
      document.body.dataset.estop = "pressed";
    } catch (e) {
      say("estop-result", String(e.message));
    }
  });
}

// ------------------------------------------------------------------ sign in / out, new run
function wireLogin() {
  const form = $("#login-form");
  if (form) {
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        await api("POST", "/login", { token: $("#token").value.trim() });
        const next = $("#next").value || "/";
        location.assign(next.startsWith("/") ? next : "/");
      } catch (e) { say("login-error", e.message); }
    });
  }
  const out = $("#logout");
  if (out) out.addEventListener("click", async () => { await api("POST", "/logout"); location.assign("/"); });
  const newRun = $("#new-run");
  if (newRun) {
    newRun.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        const made = await api("POST", "/api/runs", { request: $("#request").value });
        location.assign(`/runs/${encodeURIComponent(made.run_id)}`);
      } catch (e) { say("new-run-error", e.message); }
    });
  }
  $$("button.grant").forEach((b) => b.addEventListener("click", async () => {
    try {
      await api("POST", "/api/actions/approve", { instrument: b.dataset.instrument, action_id: b.dataset.action, args_hash: b.dataset.hash });
      location.reload();
    } catch (e) { b.textContent = e.message; }
  }));
}

// ------------------------------------------------------------------ decisions on a run
function wireDecisions(runId) {
  const base = `/api/runs/${encodeURIComponent(runId)}`;
  const act = async (path, body) => {
    try {
      await api("POST", base + path, body);
      say("decision-error", "");
      $$(".ask button").forEach((b) => { b.disabled = true; });
      say("live", "sent; waiting for the run…");
    } catch (e) { say("decision-error", e.message); }
  };
  const approval = $("#approval");
  const on = (id, fn) => { const el = document.getElementById(id); if (el) el.addEventListener("click", fn); };
  on("approve", () => act("/approve", { basis: JSON.parse(approval.dataset.basis) }));
  on("reject", () => {
    const reason = $("#reject-reason").value.trim();
    if (!reason) { say("decision-error", "a rejection needs a reason"); return; }
    act("/reject", { reason });
  });
  on("edit", () => act("/edit", { request: $("#edit-text").value }));
  on("approve-action", () => act("/approve-action", {}));
  $$("button.answer").forEach((b) => b.addEventListener("click", () => act("/answer", { decision: b.dataset.decision })));
}

// ------------------------------------------------------------------ deck pictures
function hue(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) % 360;
  return h;
}

function colourOf(contents) {
  const entries = Object.entries(contents || {}).filter(([, v]) => v > 0);
  const total = entries.reduce((a, [, v]) => a + v, 0);
  if (!total) return null;
  // The mixture's hue: the volume-weighted mean of its liquids' hues on the colour circle.
  let x = 0, y = 0;
  for (const [liquid, v] of entries) {
    const a = (hue(liquid) * Math.PI) / 180;
    x += Math.cos(a) * v; y += Math.sin(a) * v;
  }
  const h = ((Math.atan2(y, x) * 180) / Math.PI + 360) % 360;
  return `hsl(${h.toFixed(0)}, 70%, 45%)`;
}

function deckState(frames, upto) {
  const wells = {};
  for (const [lw, ws] of Object.entries(frames.wells)) {
    wells[lw] = {};
    for (const [w, d] of Object.entries(ws)) wells[lw][w] = d;
  }
  const used = new Set();
  for (let i = 0; i < upto && i < frames.steps.length; i++) {
    for (const c of frames.steps[i].wells) { (wells[c.lw] = wells[c.lw] || {})[c.well] = { v: c.v, c: c.c }; }
    for (const t of frames.steps[i].tips) used.add(`${t.rack}:${t.spot}`);
  }
  return { wells, used };
}

function paintDeck(svg, data, upto) {
  const { wells, used } = deckState(data.frames, upto);
  const liquids = new Set();
  $$(".well", svg).forEach((el) => {
    const d = (wells[el.dataset.lw] || {})[el.dataset.well];
    const colour = d && d.v > 0 ? colourOf(d.c) : null;
    if (colour) {
      const max = data.max[el.dataset.lw] || 1;
      el.style.fill = colour;
      el.style.fillOpacity = String(Math.max(0.25, Math.min(1, d.v / max)));
      el.dataset.volume = d.v.toFixed(1);
      Object.keys(d.c).forEach((l) => liquids.add(l));
      el.querySelector("title").textContent = `${el.dataset.lw}:${el.dataset.well} ${d.v.toFixed(1)} uL ` +
        Object.entries(d.c).map(([l, v]) => `${l} ${v.toFixed(1)}`).join(", ");
    } else {
      el.style.fill = ""; el.style.fillOpacity = ""; el.dataset.volume = "0";
    }
  });
  const present = {};
  for (const [rack, spots] of Object.entries(data.frames.tips)) for (const s of spots) present[`${rack}:${s}`] = true;
  $$(".tip", svg).forEach((el) => {
    const key = `${el.dataset.rack}:${el.dataset.spot}`;
    el.classList.toggle("present", Boolean(present[key]) && !used.has(key));
    el.classList.toggle("used", used.has(key));
  });
  const legend = document.getElementById(`legend-${svg.dataset.instrument}`);
  if (legend) {
    legend.innerHTML = "";
    for (const l of [...liquids].sort()) {
      const item = document.createElement("span");
      item.className = "swatch";
      item.style.setProperty("--c", `hsl(${hue(l)}, 70%, 45%)`);
      item.textContent = l;
      legend.appendChild(item);
    }
  }
}

function wireDecks() {
  const stations = $("#stations-data") ? JSON.parse($("#stations-data").textContent) : null;
  $$("script.deck-data").forEach((script) => {
    const inst = script.dataset.instrument;
    const data = JSON.parse(script.textContent);
    const svg = $(`svg.deck[data-instrument="${inst}"]`);
    const slider = document.getElementById(`slider-${inst}`);
    const label = document.getElementById(`slider-label-${inst}`);
    const show = () => {
      const k = Number(slider.value);
      paintDeck(svg, data, k);
      label.textContent = k === 0 ? "before the run" : `after ${data.frames.steps[k - 1].step} (${k} of ${data.frames.steps.length})`;
      $$("#steps tr[data-index]").forEach((tr) => tr.classList.toggle("at", Number(tr.dataset.index) === k - 1));
      if (stations) paintStations(stations, k);
    };
    slider.addEventListener("input", show);
    show();
  });
  if (stations && !$("script.deck-data")) paintStations(stations, 0);
}

function paintStations(stations, k) {
  const where = k === 0 ? stations.plates.initial : stations.plates.steps[k - 1] || stations.plates.initial;
  $$("td.station").forEach((td) => {
    const plates = Object.entries(where).filter(([, at]) => at === td.dataset.place).map(([p]) => p);
    td.textContent = plates.join(", ") || "·";
    td.classList.toggle("occupied", plates.length > 0);
  });
}

// ------------------------------------------------------------------ readings
function wireReadings() {
  $$("table.heatmap").forEach((table) => {
    const low = Number(table.dataset.low), high = Number(table.dataset.high);
    $$("td.hm", table).forEach((td) => {
      if (td.dataset.v === "") return;
      const v = Number(td.dataset.v);
      const t = high > low ? (v - low) / (high - low) : 0.5;
      td.style.background = `hsl(${(220 - 200 * t).toFixed(0)}, 75%, ${(88 - 45 * t).toFixed(0)}%)`;
      td.style.color = t > 0.6 ? "white" : "black";
    });
  });
  $$("script.series-data").forEach((script) => {
    const series = JSON.parse(script.textContent);
    const svg = script.nextElementSibling;
    const wells = Object.keys(series[0] || {});
    const all = series.flatMap((r) => Object.values(r)).filter((v) => Number.isFinite(v));
    const lo = Math.min(...all), hi = Math.max(...all);
    const x = (i) => 40 + (800 * i) / Math.max(1, series.length - 1);
    const y = (v) => 190 - (180 * (v - lo)) / Math.max(1e-9, hi - lo);
    for (const w of wells) {
      const pts = series.map((r, i) => (Number.isFinite(r[w]) ? `${x(i).toFixed(1)},${y(r[w]).toFixed(1)}` : "")).filter(Boolean);
      const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
      line.setAttribute("points", pts.join(" "));
      line.setAttribute("class", "series-line");
      line.style.stroke = `hsl(${hue(w)}, 60%, 45%)`;
      const title = document.createElementNS("http://www.w3.org/2000/svg", "title");
      title.textContent = w;
      line.appendChild(title);
      svg.appendChild(line);
    }
  });
}

// ------------------------------------------------------------------ live progress
async function follow(runId, rendered) {
  // fetch + a stream reader rather than EventSource: the request carries the page's header.
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      const res = await fetch(`/api/runs/${encodeURIComponent(runId)}/stream`, {
        credentials: "same-origin", headers: { "X-Labwright": "1" },
      });
      if (!res.ok || !res.body) return;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
          const event = (block.match(/^event: (.*)$/m) || [])[1];
          const data = (block.match(/^data: (.*)$/m) || [])[1];
          if (event && data) onEvent(event, JSON.parse(data), rendered);
        }
      }
    } catch (e) { /* the server went away: try again */ }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

function onEvent(event, data, rendered) {
  if (event === "status") {
    const badge = $("#run-status");
    badge.textContent = data.status; badge.dataset.status = data.status;
    badge.className = `badge s-${data.status}`;
    if (data.steps) {
      $("#progress-bar").style.width = `${(100 * data.done) / data.steps}%`;
      say("progress-text", `${data.done} of ${data.steps} steps done${data.driving ? " · running" : ""}`);
    }
    // A new question, or the end of the run: the server renders the page for it.
    if (!data.driving && (data.status !== rendered.status || data.asks !== rendered.asks)) location.reload();
  } else if (event === "progress") {
    if (data.what === "dispatch") {
      say("live", `step ${data.index + 1} of ${data.total}: ${data.step} ${data.instrument} ${data.command}`);
      $$("#steps tr[data-step]").forEach((tr) => {
        if (tr.dataset.step === data.step) { tr.dataset.state = "current"; tr.className = "st-current"; tr.querySelector(".state").textContent = "current"; }
        else if (Number(tr.dataset.index) < data.index && tr.dataset.state !== "done") { tr.dataset.state = "done"; tr.className = "st-done"; tr.querySelector(".state").textContent = "done"; }
      });
    } else if (data.what === "estop") {
      say("live", `e-stop pressed by ${data.by}`);
    } else if (data.what !== "driving" && data.what !== "settled") {
      say("live", `${data.what} ${data.step || ""}`);
    }
  } else if (event === "audit") {
    const table = $("#audit");
    if (table && !$(`#audit tr[data-seq="${data.seq}"]`) && data.seq > (Number(table.dataset.last) || 0)) {
      const tr = document.createElement("tr");
      tr.dataset.seq = data.seq;
      for (const k of ["seq", "agent", "tool", "outcome", "note"]) { const td = document.createElement("td"); td.textContent = data[k]; tr.appendChild(td); }
      table.appendChild(tr);
    }
  }
}

// ------------------------------------------------------------------ start
document.addEventListener("DOMContentLoaded", () => {
  wireEstop();
  const pressed = JSON.parse(sessionStorage.getItem("labwright-estop") || "null");
  if (pressed && Date.now() - pressed.at < 60000) say("estop-result", pressed.text);
  wireLogin();
  wireReadings();
  const run = $("#run");
  if (run) {
    const audit = $("#audit");
    if (audit) audit.dataset.last = String(Math.max(0, ...$$("#audit tr td:first-child").map((td) => Number(td.textContent))));
    wireDecisions(run.dataset.run);
    wireDecks();
    const asks = $("#approval") ? "approval" : $("#escalation") ? "escalation" : null;
    follow(run.dataset.run, { status: run.dataset.status, asks });
  }
  document.body.dataset.ready = "true";
});
