# ruff: noqa: E501  (an HTML page: its lines are as long as the markup needs)
"""The page of ``view --html``: inline CSS and script, no network; data is filled in as JSON."""

PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>otel-agent-trace session</title>
<style>
  :root { --agent: #4c78d8; --tool: #e8912d; --sys: #3aa66a; --other: #8a8f98; --error: #d9363e;
          --row: 22px; --tree: 440px; font: 13px/1.35 system-ui, -apple-system, "Segoe UI", sans-serif; }
  body { margin: 0; color: #1d2330; background: #fbfbfd; }
  header { padding: 10px 16px; border-bottom: 1px solid #dde1e8; background: #fff; display: flex;
           gap: 18px; align-items: baseline; flex-wrap: wrap; }
  header h1 { font-size: 15px; margin: 0; font-family: ui-monospace, monospace; }
  header .fact { color: #5b6273; }
  .legend span { display: inline-block; margin-right: 12px; }
  .legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
  main { display: flex; height: calc(100vh - 46px); }
  #chart { flex: 1; overflow-x: hidden; overflow-y: auto; position: relative; }
  #axis, .row { display: grid; grid-template-columns: var(--tree) 1fr; }
  #axis { position: sticky; top: 0; background: #fbfbfd; border-bottom: 1px solid #dde1e8; height: 22px; z-index: 2; }
  #axis .ticks { position: relative; overflow: hidden; height: 100%; }
  #axis .tick { position: absolute; top: 4px; font-size: 11px; color: #5b6273; border-left: 1px solid #c9ced8;
                padding-left: 3px; height: 18px; }
  .row { height: var(--row); align-items: center; cursor: pointer; border-bottom: 1px solid #f0f1f4; }
  .row:hover { background: #eef2fb; }
  .row.selected { background: #dfe7fb; }
  .label { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; padding-right: 8px;
           font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
  .toggle { display: inline-block; width: 14px; color: #5b6273; }
  .track { position: relative; height: 100%; }
  .bar { position: absolute; top: 5px; height: 12px; border-radius: 3px; min-width: 2px; }
  .bar.unfinished { background-image: repeating-linear-gradient(45deg, transparent 0 4px, rgba(255,255,255,.55) 4px 8px); }
  .bar.error { outline: 2px solid var(--error); }
  .dur { position: absolute; top: 3px; font-size: 11px; color: #5b6273; white-space: nowrap; }
  .layer-agent { background: var(--agent); } .layer-tool { background: var(--tool); }
  .layer-sys { background: var(--sys); } .layer-other { background: var(--other); }
  .err { color: var(--error); font-weight: 600; }
  #details { width: 420px; border-left: 1px solid #dde1e8; background: #fff; overflow: auto; padding: 12px 14px; }
  #details h2 { font-size: 14px; margin: 0 0 8px; word-break: break-all; }
  #details table { border-collapse: collapse; width: 100%; font-size: 12px; }
  #details td { border-top: 1px solid #f0f1f4; padding: 3px 4px; vertical-align: top; word-break: break-all; }
  #details td:first-child { color: #5b6273; width: 38%; }
  #details pre { white-space: pre-wrap; word-break: break-all; background: #f6f7f9; padding: 6px; font-size: 12px; }
  #details h3 { font-size: 12px; margin: 12px 0 4px; color: #5b6273; text-transform: uppercase; }
  #errors { color: var(--error); }
</style>
</head>
<body>
<header>
  <h1 id="title"></h1>
  <span class="fact" id="facts"></span>
  <span class="legend"><span><i class="layer-agent"></i>agent</span><span><i class="layer-tool"></i>tool</span><span><i class="layer-sys"></i>sys</span></span>
  <span id="errors"></span>
</header>
<main>
  <div id="chart"><div id="axis"><div></div><div class="ticks" id="ticks"></div></div><div id="rows"></div></div>
  <aside id="details"><p class="fact">Click a span to see its details.</p></aside>
</main>
<script type="application/json" id="session-spans">__SPANS_JSON__</script>
<script type="application/json" id="session-data">__DATA_JSON__</script>
<script>
"use strict";
window.addEventListener("error", function (ev) {
  var box = document.getElementById("errors");
  box.textContent = "script error: " + ev.message;
  document.body.setAttribute("data-script-error", ev.message);
});
(function () {
  var data = JSON.parse(document.getElementById("session-data").textContent);
  data.spans = JSON.parse(document.getElementById("session-spans").textContent);
  data.spans.forEach(function (s) {  // times from the session's first entry to the page's zero
    s.start -= data.t0; s.end -= data.t0;
    s.events.forEach(function (e) { e.at -= data.t0; });
  });
  document.title = data.session_id + " \u2014 otel-agent-trace";
  var LAYERS = { agent: 1, tool: 1, sys: 1 };

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function fmtDur(ns) {
    var s = ns / 1e9;
    if (s < 0.001) return (s * 1e3).toFixed(2) + "ms";
    if (s < 1) return (s * 1e3).toFixed(1) + "ms";
    if (s < 60) return s.toFixed(2) + "s";
    return Math.floor(s / 60) + "m" + String(Math.floor(s % 60)).padStart(2, "0") + "s";
  }
  function show(value) { return typeof value === "string" ? value : JSON.stringify(value, null, 2); }

  document.getElementById("title").textContent = data.session_id;
  var facts = data.spans_total + " spans \u00b7 " + data.entries + " entries \u00b7 " + fmtDur(data.duration_ns) +
    " \u00b7 tier " + data.tier + (data.complete ? "" : " \u00b7 unfinished (no session.end)");
  var leftOut = [];
  if (data.spans_total > data.spans.length) leftOut.push("only the first " + data.spans.length + " of " + data.spans_total + " spans are drawn");
  if (data.values_cut) leftOut.push(data.values_cut + " values cut to " + data.max_value_chars + " characters");
  if (data.lists_shortened) leftOut.push(data.lists_shortened + " long lists or objects shortened");
  if (data.events_left_out) leftOut.push(data.events_left_out + " span events left out");
  document.getElementById("facts").textContent = facts;
  if (leftOut.length) {
    var note = el("div", "fact", "Left out of this page: " + leftOut.join("; ") +
      ". To see everything: otel-agent-trace view --full " + data.path);
    note.id = "left-out";
    document.querySelector("header").appendChild(note);
  }

  var byId = {}, roots = [];
  data.spans.forEach(function (s) { s.children = []; byId[s.id] = s; });
  data.spans.forEach(function (s) {
    var parent = s.parent && byId[s.parent] && s.parent !== s.id ? byId[s.parent] : null;
    (parent ? parent.children : roots).push(s);
  });
  function byStart(a, b) { return a.start - b.start; }
  var total = Math.max(data.duration_ns, 1);

  var ticks = document.getElementById("ticks");
  for (var i = 0; i <= 4; i++) {
    var tick = el("div", "tick", fmtDur(total * i / 4));
    tick.style.left = (i * 24) + "%";
    ticks.appendChild(tick);
  }

  var rows = document.getElementById("rows"), drawn = 0, selected = null, seen = {};
  function draw(span, depth, container) {
    if (seen[span.id]) return;  // a parent cycle in the file: each span once
    seen[span.id] = true;
    var row = el("div", "row");
    row.setAttribute("data-span-id", span.id);
    var label = el("div", "label");
    label.style.paddingLeft = (6 + depth * 14) + "px";
    var toggle = el("span", "toggle", span.children.length ? "\u25be" : "");
    label.appendChild(toggle);
    label.appendChild(el("span", null, span.name));
    if (span.status === "ERROR") label.appendChild(el("span", "err", " ERROR"));
    if (!span.finished) label.appendChild(el("span", "err", " UNFINISHED"));
    label.title = span.name;
    var track = el("div", "track");
    var bar = el("div", "bar layer-" + (LAYERS[span.layer] ? span.layer : "other"));
    if (span.status === "ERROR") bar.className += " error";
    if (!span.finished) bar.className += " unfinished";
    var left = 96 * span.start / total, width = 96 * Math.max(span.end - span.start, 0) / total;
    bar.style.left = left + "%";
    bar.style.width = width + "%";
    var dur = el("div", "dur", fmtDur(span.end - span.start));
    dur.style.left = "calc(" + (left + width) + "% + 4px)";
    track.appendChild(bar);
    track.appendChild(dur);
    row.appendChild(label);
    row.appendChild(track);
    container.appendChild(row);
    drawn++;
    var kids = el("div", "children");
    container.appendChild(kids);
    row.addEventListener("click", function (ev) {
      if (ev.target === toggle && span.children.length) {
        var hidden = kids.style.display === "none";
        kids.style.display = hidden ? "" : "none";
        toggle.textContent = hidden ? "\u25be" : "\u25b8";
        return;
      }
      if (selected) selected.classList.remove("selected");
      selected = row;
      row.classList.add("selected");
      details(span);
    });
    span.children.sort(byStart).forEach(function (child) { draw(child, depth + 1, kids); });
  }
  roots.sort(byStart).forEach(function (s) { draw(s, 0, rows); });

  function table(obj) {
    var t = el("table");
    Object.keys(obj || {}).forEach(function (key) {
      var tr = el("tr");
      tr.appendChild(el("td", null, key));
      tr.appendChild(el("td", null, show(obj[key])));
      t.appendChild(tr);
    });
    return t;
  }
  function details(span) {
    var box = document.getElementById("details");
    box.textContent = "";
    box.appendChild(el("h2", null, span.name));
    box.appendChild(table({
      layer: span.layer, kind: span.kind, duration: fmtDur(span.end - span.start),
      status: span.status + (span.status_description ? ": " + span.status_description : ""),
      "starts at": "+" + fmtDur(span.start), span_id: span.id, parent_span_id: span.parent, entry: span.entry
    }));
    box.appendChild(el("h3", null, "attributes"));
    box.appendChild(table(span.attributes));
    if (span.content && Object.keys(span.content).length) {
      box.appendChild(el("h3", null, "content"));
      Object.keys(span.content).forEach(function (key) {
        box.appendChild(el("div", "fact", key));
        box.appendChild(el("pre", null, show(span.content[key])));
      });
    }
    if (span.events.length) {
      box.appendChild(el("h3", null, "events"));
      span.events.forEach(function (e) {
        box.appendChild(el("div", null, "+" + fmtDur(e.at) + "  " + e.name));
        box.appendChild(table(e.attributes));
      });
      if (span.events_left_out) box.appendChild(el("div", "fact", "\u2026 and " + span.events_left_out + " more events"));
    }
  }
  var first = rows.querySelector(".row");
  if (first) first.click();  // the first span's details, so the page never opens empty
  document.body.setAttribute("data-rendered-spans", String(drawn));
})();
</script>
</body>
</html>
"""
