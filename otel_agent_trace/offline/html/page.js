"use strict";
window.addEventListener("error", function (ev) {
  var box = document.getElementById("errors");
  box.textContent = "script error: " + ev.message;
  document.body.setAttribute("data-script-error", ev.message);
});
(function () {
  // Maps keyed by values from the file have no prototype: an id "__proto__" or "constructor" is
  // a key like any other.
  function map(init) { var m = Object.create(null); Object.keys(init || {}).forEach(function (k) { m[k] = init[k]; }); return m; }
  var LAYERS = map({ agent: 1, tool: 1, sys: 1 });
  var MAX_TICKS = 20;  // event ticks drawn on one bar
  var FOLD_CHARS = 1500;  // a longer message text is folded (a click shows it all)

  function block(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function fmtDur(ns) {
    var s = ns / 1e9, sign = s < 0 ? "-" : "";
    s = Math.abs(s);
    if (s < 0.001) return sign + (s * 1e3).toFixed(2) + "ms";
    if (s < 1) return sign + (s * 1e3).toFixed(1) + "ms";
    if (s < 60) return sign + s.toFixed(2) + "s";
    return sign + Math.floor(s / 60) + "m" + String(Math.floor(s % 60)).padStart(2, "0") + "s";
  }
  function show(value) { return typeof value === "string" ? value : JSON.stringify(value, null, 2); }
  function oneLine(value, n) {
    var text = typeof value === "string" ? value : JSON.stringify(value);
    if (text === undefined) return "";
    return text.length > n ? text.slice(0, n) + "\u2026" : text;
  }
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
  var MODEL_OPS = map({ chat: 1, text_completion: 1, generate_content: 1, embeddings: 1 });

  function Run(prefix, mount) {
    var run = this;
    var data = block(prefix + "-data");
    data.spans = block(prefix + "-spans");
    var messages = block(prefix + "-messages") || [];
    var turns = block(prefix + "-turns") || [];
    run.data = data;
    data.spans.forEach(function (s) {  // times from the session's first entry to the page's zero
      s.start -= data.t0; s.end -= data.t0;
      s.events.forEach(function (e) { e.at -= data.t0; });
    });
    messages.forEach(function (m) { m.at -= data.t0; });
    turns.forEach(function (t) { t.at -= data.t0; });
    var total = Math.max(data.duration_ns, 1), v0 = 0, v1 = total;

    var byId = map(), byEntry = map(), byCall = map(), roots = [], byMessage = map();
    data.spans.forEach(function (s) {
      s.children = []; byId[s.id] = s;
      if (s.entry) byEntry[s.entry] = s;
      var a = s.attributes || {};
      var call = a["gen_ai.tool.call.id"];
      if (call !== undefined && call !== null && !byCall[call]) byCall[call] = s;
    });
    data.spans.forEach(function (s) {
      var parent = s.parent && byId[s.parent] && s.parent !== s.id ? byId[s.parent] : null;
      s.up = parent;
      (parent ? parent.children : roots).push(s);
    });
    messages.forEach(function (m) { byMessage[m.id] = m; });
    var turnOfSpan = map();
    turns.forEach(function (t, i) { t.index = i; if (t.kind === "call" && t.span) turnOfSpan[t.span] = t; });
    var snapshots = turns.filter(function (t) { return t.kind === "snapshot"; });
    var ours = data.format === "otel-agent-trace";
    // whether turns list their messages (ours do); else the conversation at a time is the
    // messages written until then (DevDuck, DM)
    var listed = turns.some(function (t) { return t.count > 0; });
    function messagesUntil(time) {
      return messages.filter(function (m) { return m.at <= time; }).map(function (m) { return m.id; });
    }

    // --- the frame ---------------------------------------------------------------------------
    var section = el("section", "run");
    section.setAttribute("data-run", prefix);
    mount.appendChild(section);
    var header = el("header");
    var title = el("h1", null, data.session_id);
    if (prefix === "session") title.id = "title";
    header.appendChild(title);
    var trace = el("span", "trace", data.trace_ids.length ? "trace " + data.trace_ids.join(", ") : "no trace id");
    trace.setAttribute("data-trace-id", data.trace_ids[0] || "");
    header.appendChild(trace);
    var facts = data.spans_total + " spans \u00b7 " + data.entries + " entries \u00b7 " + fmtDur(data.duration_ns) +
      " \u00b7 tier " + data.tier + " \u00b7 " + data.messages + " messages \u00b7 " + snapshots.length + " snapshots" +
      (data.complete ? "" : " \u00b7 unfinished (no session.end)");
    var factsNode = el("span", "fact", facts);
    if (prefix === "session") factsNode.id = "facts";
    header.appendChild(factsNode);
    var legend = el("span", "legend");
    ["agent", "tool", "sys"].forEach(function (layer) {
      var item = el("span");
      item.appendChild(el("i", "layer-" + layer));
      item.appendChild(document.createTextNode(layer));
      legend.appendChild(item);
    });
    header.appendChild(legend);
    var leftOut = [];
    if (data.spans_total > data.spans.length) leftOut.push("only the first " + data.spans.length + " of " + data.spans_total + " spans are drawn");
    if (data.values_cut) leftOut.push(data.values_cut + " values cut to " + data.max_value_chars + " characters");
    if (data.lists_shortened) leftOut.push(data.lists_shortened + " long lists or objects shortened");
    if (data.events_left_out) leftOut.push(data.events_left_out + " span events left out");
    if (data.messages_left_out) leftOut.push(data.messages_left_out + " messages left out");
    if (data.message_texts_cut) leftOut.push(data.message_texts_cut + " message texts cut");
    if (data.bad_lines) leftOut.push(data.bad_lines + " bad lines of the file skipped");
    if (data.torn_last_line) leftOut.push("a torn last line (the writer stopped mid-line)");
    if (data.turns_left_out) leftOut.push(data.turns_left_out + " model calls or snapshots left out of the conversation");
    if (leftOut.length) {
      var note = el("div", "fact", "Left out of this page: " + leftOut.join("; ") +
        ". To see everything: otel-agent-trace view --full " + data.path);
      note.id = prefix === "session" ? "left-out" : prefix + "-left-out";
      header.appendChild(note);
    }
    section.appendChild(header);

    var toolbar = el("div", "toolbar");
    var search = el("input");
    search.type = "search"; search.className = "search"; search.placeholder = "search spans, arguments, messages  ( / )";
    var layerSel = el("select", "layer-filter");
    [["", "every layer"], ["agent", "agent"], ["tool", "tool"], ["sys", "sys"]].forEach(function (o) {
      var opt = el("option", null, o[1]); opt.value = o[0]; layerSel.appendChild(opt);
    });
    var toolSel = el("select", "tool-filter");
    var anyTool = el("option", null, "every tool"); anyTool.value = ""; toolSel.appendChild(anyTool);
    data.tools.forEach(function (t) { var opt = el("option", null, t); opt.value = t; toolSel.appendChild(opt); });
    var errLabel = el("label");
    var errBox = el("input"); errBox.type = "checkbox"; errBox.className = "errors-only";
    errLabel.appendChild(errBox); errLabel.appendChild(document.createTextNode(" errors only"));
    var count = el("span", "count");
    var reset = el("button", "zoom-reset", "whole run");
    reset.title = "zoom out to the whole run (drag on the overview to zoom in)";
    [search, layerSel, toolSel, errLabel, reset, count].forEach(function (n) { toolbar.appendChild(n); });
    section.appendChild(toolbar);

    var minimap = el("div", "minimap");
    minimap.appendChild(el("div", "mm-label", "overview: drag to zoom to a time range"));
    var mmTrack = el("div", "mm-track");
    var canvas = el("canvas");
    var brush = el("div", "brush");
    mmTrack.appendChild(canvas); mmTrack.appendChild(brush);
    minimap.appendChild(mmTrack);
    section.appendChild(minimap);

    var body = el("div", "body");
    var chart = el("div", "chart");
    var axis = el("div", "axis");
    var axisLabel = el("div", "fact");
    axisLabel.style.padding = "4px 8px"; axisLabel.style.fontSize = "11px";
    axis.appendChild(axisLabel);
    var ticks = el("div", "ticks");
    axis.appendChild(ticks);
    chart.appendChild(axis);
    var rows = el("div", "rows");
    var cursor = el("div", "cursor");
    cursor.hidden = true;
    rows.appendChild(cursor);
    chart.appendChild(rows);
    body.appendChild(chart);
    var side = el("aside", "side");
    var tabs = el("div", "tabs");
    var detailsTab = el("button", "active", "Span"), convTab = el("button", null, "Conversation");
    detailsTab.setAttribute("data-tab", "details"); convTab.setAttribute("data-tab", "conversation");
    tabs.appendChild(detailsTab); tabs.appendChild(convTab);
    side.appendChild(tabs);
    var details = el("div", "pane details");
    if (prefix === "session") details.id = "details";
    details.appendChild(el("p", "fact", "Click a span to see its details."));
    var conv = el("div", "pane conversation");
    conv.hidden = true;
    side.appendChild(details); side.appendChild(conv);
    body.appendChild(side);
    section.appendChild(body);

    function tab(name) {
      details.hidden = name !== "details"; conv.hidden = name !== "conversation";
      detailsTab.className = name === "details" ? "active" : ""; convTab.className = name === "conversation" ? "active" : "";
      run.tab = name;
    }
    run.tab = "details";
    detailsTab.addEventListener("click", function () { tab("details"); });
    convTab.addEventListener("click", function () { tab("conversation"); });

    // --- rows --------------------------------------------------------------------------------
    function pos(t) { return 96 * (t - v0) / Math.max(v1 - v0, 1); }
    function extra(span) {
      var a = span.attributes || {}, bits = [];
      var tin = a["gen_ai.usage.input_tokens"], tout = a["gen_ai.usage.output_tokens"];
      if (tin !== undefined || tout !== undefined) bits.push((tin === undefined ? "?" : tin) + "\u2192" + (tout === undefined ? "?" : tout) + " tok");
      var asked = a["agent_trace.tool_calls.names"];
      if (Array.isArray(asked) && asked.length) bits.push("asks " + asked.join(","));
      var tool = a["gen_ai.tool.name"];
      if (typeof tool === "string" && span.name.indexOf(tool) < 0) bits.push("tool " + tool);
      return bits.join(" \u00b7 ");
    }
    function isModel(span) { return MODEL_OPS[(span.attributes || {})["gen_ai.operation.name"]] === 1 || !!turnOfSpan[span.id]; }
    function failed(span) {
      return span.status === "ERROR" || span.events.some(function (e) { return e.name === "exception"; });
    }

    var drawn = 0, selected = null, seen = map();
    function draw(span, depth, container) {
      if (seen[span.id]) return;  // a parent cycle in the file: each span once
      seen[span.id] = true;
      var row = el("div", "row");
      row.setAttribute("data-span-id", span.id);
      var label = el("div", "label");
      label.style.paddingLeft = (6 + depth * 14) + "px";
      var toggle = el("span", "toggle", span.children.length ? "\u25be" : "");
      label.appendChild(toggle);
      label.appendChild(el("span", "name", span.name));
      if (span.status === "ERROR") label.appendChild(el("span", "err", " ERROR"));
      if (!span.finished) label.appendChild(el("span", "err", " UNFINISHED"));
      var more = extra(span);
      if (more) label.appendChild(el("span", "extra", more));
      label.title = span.name + (more ? " \u00b7 " + more : "");
      var track = el("div", "track");
      var bar = el("div", "bar layer-" + (LAYERS[span.layer] ? span.layer : "other"));
      if (span.status === "ERROR") bar.className += " error";
      if (!span.finished) bar.className += " unfinished";
      track.appendChild(bar);
      var marks = [];
      span.events.slice(0, MAX_TICKS).forEach(function (e) {
        var mark = el("div", "evtick" + (e.name === "exception" ? " exception" : ""));
        mark.title = e.name + " +" + fmtDur(e.at);
        mark.setAttribute("data-event", String(e.name));
        track.appendChild(mark);
        marks.push([mark, e.at]);
      });
      var dur = el("div", "dur", fmtDur(span.end - span.start));
      track.appendChild(dur);
      row.appendChild(label);
      row.appendChild(track);
      container.appendChild(row);
      span.row = row; span.bar = bar; span.durNode = dur; span.marks = marks;
      drawn++;
      var kids = el("div", "children");
      span.kids = kids; span.toggle = toggle;
      container.appendChild(kids);
      row.addEventListener("click", function (ev) {
        if (ev.target === toggle && span.children.length) {
          fold(span, kids.style.display !== "none");
          return;
        }
        select(span);
      });
      bar.addEventListener("dblclick", function () { zoom(span.start, Math.max(span.end, span.start + 1)); });
      span.children.sort(byStart).forEach(function (child) { draw(child, depth + 1, kids); });
    }
    function fold(span, folded) {
      span.kids.style.display = folded ? "none" : "";
      span.toggle.textContent = folded ? "\u25b8" : "\u25be";
    }
    function byStart(a, b) { return a.start - b.start; }
    roots.sort(byStart).forEach(function (s) { draw(s, 0, rows); });
    run.drawn = drawn;
    section.setAttribute("data-rendered-spans", String(drawn));

    function place() {
      data.spans.forEach(function (span) {
        if (!span.bar) return;
        var left = pos(span.start), width = Math.max(pos(span.end) - left, 0);
        span.bar.style.left = left + "%";
        span.bar.style.width = width + "%";
        span.durNode.style.left = "calc(" + (left + width) + "% + 4px)";
        span.marks.forEach(function (m) { m[0].style.left = pos(m[1]) + "%"; });
      });
      ticks.textContent = "";
      for (var i = 0; i <= 4; i++) {
        var tick = el("div", "tick", fmtDur(v0 + (v1 - v0) * i / 4));
        tick.style.left = (i * 24) + "%";
        ticks.appendChild(tick);
      }
      snapshots.forEach(function (t) {
        var mark = el("div", "snap-mark");
        mark.style.left = pos(t.at) + "%";
        mark.title = "snapshot #" + t.snapshot_id + (t.description ? " \u2014 " + t.description : "") + " (" + t.count + " messages): click for the conversation as it stood here";
        mark.setAttribute("data-snapshot", String(t.snapshot_id));
        if (run.snapshot === t) mark.className += " current";
        mark.addEventListener("click", function (ev) { ev.stopPropagation(); showSnapshot(t); });
        ticks.appendChild(mark);
      });
      ticks.title = "click: the conversation as it stood at that time";
      placeCursor();
      axisLabel.textContent = v0 > 0 || v1 < total ? "zoomed: +" + fmtDur(v0) + " \u2026 +" + fmtDur(v1) : "whole run";
      section.setAttribute("data-zoom", v0 + "-" + v1);
      var w = 0.96 * (mmTrack.clientWidth || 1);
      brush.style.left = (w * v0 / total) + "px";
      brush.style.width = Math.max(w * (v1 - v0) / total, 2) + "px";
    }
    function zoom(a, b) {
      v0 = Math.max(0, Math.min(a, b)); v1 = Math.min(total, Math.max(a, b));
      if (v1 - v0 < 1) { v0 = 0; v1 = total; }
      place();
    }
    run.zoom = zoom;
    reset.addEventListener("click", function () { zoom(0, total); });

    function paintMinimap() {
      var w = mmTrack.clientWidth, h = mmTrack.clientHeight;
      if (!w || !h) return;
      canvas.width = w; canvas.height = h;
      var ctx = canvas.getContext("2d");
      var order = [];
      (function walk(list) { list.forEach(function (s) { if (s.row) { order.push(s); walk(s.children); } }); })(roots);
      var n = Math.max(order.length, 1);
      function x(t) { return 0.96 * w * t / total; }
      var colours = map({ agent: "#4c78d8", tool: "#e8912d", sys: "#3aa66a" });
      order.forEach(function (s, i) {
        ctx.fillStyle = s.status === "ERROR" ? "#d9363e" : colours[s.layer] || "#8a8f98";
        var y = Math.floor(h * i / n);
        ctx.fillRect(Math.floor(x(s.start)), y, Math.max(1, x(s.end) - x(s.start)), Math.max(1, Math.floor(h / n)));
      });
      ctx.fillStyle = "#8e44ad";
      snapshots.forEach(function (t) { ctx.fillRect(Math.floor(x(t.at)), 0, 1, h); });
    }
    run.paint = function () { paintMinimap(); place(); };
    var dragFrom = null;
    function timeAt(ev) {
      var r = mmTrack.getBoundingClientRect();
      return total * Math.min(Math.max((ev.clientX - r.left) / Math.max(0.96 * r.width, 1), 0), 1);
    }
    mmTrack.addEventListener("mousedown", function (ev) { dragFrom = timeAt(ev); ev.preventDefault(); });
    window.addEventListener("mousemove", function (ev) {
      if (dragFrom === null) return;
      var t = timeAt(ev), w = 0.96 * mmTrack.clientWidth;
      brush.style.left = (w * Math.min(dragFrom, t) / total) + "px";
      brush.style.width = Math.max(w * Math.abs(t - dragFrom) / total, 2) + "px";
    });
    window.addEventListener("mouseup", function (ev) {
      if (dragFrom === null) return;
      var t = timeAt(ev), from = dragFrom;
      dragFrom = null;
      if (Math.abs(t - from) < total / 500) { place(); return; }
      zoom(from, t);
    });

    // --- search and filters ------------------------------------------------------------------
    var said = null;  // span id -> the text of the messages written under it (its model call's)
    function saidUnder(span) {
      if (said === null) {
        said = map();
        messages.forEach(function (m) {
          var owner = (m.span && byId[m.span]) || (m.parent && byEntry[m.parent]);
          if (owner && m.text) said[owner.id] = (said[owner.id] || "") + " " + m.text.slice(0, 4000);
        });
      }
      return said[span.id] || "";
    }
    function haystack(span) {
      if (span.hay === undefined) {
        var a = span.attributes || {};
        span.hay = (span.name + " " + span.layer + " " + (span.status_description || "") + " " +
          JSON.stringify(a).slice(0, 4000) + " " + (JSON.stringify(span.content) || "").slice(0, 4000) + " " +
          span.events.map(function (e) { return e.name; }).join(" ") + saidUnder(span)).toLowerCase();
      }
      return span.hay;
    }
    function applyFilter() {
      var q = search.value.trim().toLowerCase(), layer = layerSel.value, tool = toolSel.value, errs = errBox.checked;
      var active = !!(q || layer || tool || errs), matched = 0;
      data.spans.forEach(function (s) { s.shown = !active; s.match = false; });
      if (active) {
        data.spans.forEach(function (s) {
          var ok = (!q || haystack(s).indexOf(q) >= 0) && (!layer || s.layer === layer) &&
            (!tool || (s.attributes || {})["gen_ai.tool.name"] === tool) && (!errs || failed(s));
          if (!ok) return;
          s.match = true; matched++;
          for (var p = s; p && !p.shown; p = p.up) p.shown = true;
        });
      }
      data.spans.forEach(function (s) {
        if (!s.row) return;
        s.row.style.display = s.shown ? "" : "none";
        s.row.classList.toggle("dim", active && !s.match);
        s.row.classList.toggle("hit", active && s.match);
      });
      count.textContent = active ? matched + " of " + data.spans.length + " spans match" : data.spans.length + " spans";
      section.setAttribute("data-matches", active ? String(matched) : "");
    }
    [search, layerSel, toolSel, errBox].forEach(function (n) {
      n.addEventListener("input", applyFilter);
      n.addEventListener("change", applyFilter);
    });
    document.addEventListener("keydown", function (ev) {  // "/": to the search box, as on many sites
      if (ev.key !== "/" || section.hidden || (ev.target && /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName))) return;
      search.focus(); ev.preventDefault();
    });
    search.addEventListener("keydown", function (ev) {
      if (ev.key !== "Enter") return;  // Enter: the next match
      var hits = data.spans.filter(function (s) { return s.match && s.row; });
      if (!hits.length) return;
      var at = hits.indexOf(selected), next = hits[(at + 1) % hits.length];
      select(next);
    });
    applyFilter();

    // --- details -----------------------------------------------------------------------------
    function spanLink(span, text) {
      var a = el("button", "link", text || span.name);
      a.setAttribute("data-goto-span", span.id);
      a.addEventListener("click", function (ev) { ev.stopPropagation(); select(span, true); });
      return a;
    }
    function showDetails(span) {
      details.textContent = "";
      details.appendChild(el("h2", null, span.name));
      var zoomTo = el("button", "link", "zoom to this span");
      zoomTo.addEventListener("click", function () { zoom(span.start, Math.max(span.end, span.start + 1)); });
      details.appendChild(zoomTo);
      details.appendChild(table({
        layer: span.layer, kind: span.kind, duration: fmtDur(span.end - span.start),
        status: span.status + (span.status_description ? ": " + span.status_description : ""),
        "starts at": "+" + fmtDur(span.start), span_id: span.id, parent_span_id: span.parent, entry: span.entry
      }));
      var a = span.attributes || {}, c = span.content || {};
      if (a["gen_ai.tool.name"] !== undefined || c.tool_arguments !== undefined || c.tool_result !== undefined) {
        details.appendChild(el("h3", null, "tool call"));
        if (c.tool_arguments !== undefined) { details.appendChild(el("div", "fact", "arguments")); details.appendChild(el("pre", "tool-arguments", show(c.tool_arguments))); }
        if (c.tool_result !== undefined) { details.appendChild(el("div", "fact", "result")); details.appendChild(el("pre", "tool-result", show(c.tool_result))); }
      }
      if (turnOfSpan[span.id]) {
        var see = el("button", "link", "its messages, as chat \u2192");
        see.addEventListener("click", function () { tab("conversation"); });
        details.appendChild(see);
      }
      details.appendChild(el("h3", null, "attributes"));
      details.appendChild(table(a));
      var keys = Object.keys(c).filter(function (k) { return k !== "tool_arguments" && k !== "tool_result"; });
      if (keys.length) {
        details.appendChild(el("h3", null, "content"));
        keys.forEach(function (key) {
          details.appendChild(el("div", "fact", key));
          details.appendChild(el("pre", null, show(c[key])));
        });
      }
      if (span.events.length) {
        details.appendChild(el("h3", null, "events"));
        span.events.forEach(function (e) {
          details.appendChild(el("div", null, "+" + fmtDur(e.at) + "  " + e.name));
          details.appendChild(table(e.attributes));
        });
        if (span.events_left_out) details.appendChild(el("div", "fact", "\u2026 and " + span.events_left_out + " more events"));
      }
    }

    // --- the conversation --------------------------------------------------------------------
    var memo = {};
    function turnIds(t) {  // a turn's message ids: the turn before it, cut to ``keep``, then ``add``
      if (memo.index === t.index) return memo.ids;
      var chain = [], i = t.index;
      while (i >= 0) { chain.push(turns[i]); if (turns[i].keep === 0) break; i--; }
      var ids = [];
      for (var k = chain.length - 1; k >= 0; k--) ids = ids.slice(0, chain[k].keep).concat(chain[k].add);
      memo = { index: t.index, ids: ids };
      return ids;
    }
    function turnAt(time) {  // the latest turn at or before ``time`` (a child process's file comes
      var found = null;       // after its parent's: the turns are not all in time order)
      for (var i = 0; i < turns.length; i++) if (turns[i].at <= time && (!found || turns[i].at >= found.at)) found = turns[i];
      return found;
    }
    function bubble(id, output) {
      var m = byMessage[id];
      var box = el("div", "msg role-" + (m ? String(m.role).replace(/[^a-z]/g, "") : "unknown") + (output ? " output" : ""));
      box.setAttribute("data-message-id", id);
      if (!m) {
        box.appendChild(el("div", "who", "message " + id));
        box.appendChild(el("div", "digest", "not in this file (the run was cut off, or the page left it out)"));
        return box;
      }
      var who = el("div", "who", m.role + (m.name ? " " + m.name : "") + " \u00b7 +" + fmtDur(m.at) + (output ? " \u00b7 this call's output " : " "));
      var own = (m.span && byId[m.span]) || (m.parent && byEntry[m.parent]) || null;
      if (own) who.appendChild(spanLink(own, "span \u203a"));
      box.appendChild(who);
      if (m.text !== null && m.text !== undefined && m.text !== "") {
        var full = readable(m), long = full.length > FOLD_CHARS;
        var textNode = el("div", "text", long ? full.slice(0, FOLD_CHARS) + "\u2026" : full);
        if (full !== m.text) { textNode.title = "a tool's JSON answer, laid out"; textNode.className += " json"; }
        box.appendChild(textNode);
        if (long) {
          var more = el("button", "link unfold", "show all " + full.length + " characters");
          more.addEventListener("click", function () {
            var folded = textNode.textContent.length < full.length;
            textNode.textContent = folded ? full : full.slice(0, FOLD_CHARS) + "\u2026";
            more.textContent = folded ? "show less" : "show all " + full.length + " characters";
          });
          box.appendChild(more);
        }
      }
      else if (m.chars) box.appendChild(el("div", "digest", m.chars + " characters, sha256 " + String(m.sha256 || "?").slice(0, 12) + "\u2026" + (ours ? " (the text is in the checkpoint file)" : "")));
      (m.tool_calls || []).forEach(function (call) {
        if (!call || typeof call !== "object") return;
        var line = el("div", "call");
        line.setAttribute("data-call-id", String(call.id));
        line.appendChild(document.createTextNode("\u2192 " + call.name + "(" + oneLine(call.arguments, 300) + ") "));
        var span = byCall[call.id];
        if (span) {
          line.appendChild(spanLink(span, "span \u203a"));
          var c = span.content || {};  // what the tool gave back, from its span (either tier)
          if (c.tool_result !== undefined) line.appendChild(el("div", "call-result", "\u21d0 " + oneLine(c.tool_result, 300)));
          if (span.status === "ERROR") line.appendChild(el("div", "err", "ERROR " + oneLine(span.status_description || "", 300)));
        }
        box.appendChild(line);
      });
      if (m.tool_call_id !== null && m.tool_call_id !== undefined) {
        var answered = byCall[m.tool_call_id];
        var note = el("div", "call", "\u2190 result of " + (answered ? answered.name : "call") + " " + m.tool_call_id + " ");
        if (answered) note.appendChild(spanLink(answered, "span \u203a"));
        box.appendChild(note);
      }
      return box;
    }
    function readable(m) {  // a tool's answer in JSON (as most agents send it), laid out
      if (m.role !== "tool" || !/^\s*[\[{"]/.test(m.text) || m.text.length > 200000) return m.text;
      try {
        var value = JSON.parse(m.text);
        return typeof value === "string" ? value : JSON.stringify(value, null, 2);
      } catch (e) { return m.text; }
    }
    function snapButtons() {
      if (!snapshots.length) return null;
      var bar = el("div", "snaps");
      bar.appendChild(el("span", "fact", "snapshots:"));
      snapshots.forEach(function (t) {
        var b = el("button", run.snapshot === t ? "current" : null, "#" + t.snapshot_id);
        b.title = (t.description || "snapshot") + " \u00b7 +" + fmtDur(t.at) + " \u00b7 " + t.count + " messages";
        b.setAttribute("data-snapshot", String(t.snapshot_id));
        b.addEventListener("click", function () { showSnapshot(t); });
        bar.appendChild(b);
      });
      return bar;
    }
    function renderConversation(heading, ids, outputs, link) {
      conv.textContent = "";
      var buttons = snapButtons();
      if (buttons) conv.appendChild(buttons);
      var h = el("h2", "conv-title", heading);
      conv.appendChild(h);
      if (link) conv.appendChild(link);
      if (!data.full_text && data.messages) conv.appendChild(el("div", "fact", ours ? "A shareable file: messages show their length and SHA-256; the checkpoint file of this session has their text." : "This file holds the messages' length and SHA-256, not their text."));
      if (!ids.length) conv.appendChild(el("p", "fact", "No messages yet at this point of the run."));
      var list = el("div", "bubbles");
      ids.forEach(function (id, i) { list.appendChild(bubble(id, i >= ids.length - outputs)); });
      conv.appendChild(list);
      conv.setAttribute("data-messages-shown", String(ids.length));
    }
    function placeCursor() {  // the time of the conversation shown, a line down the chart
      var t = run.cursorAt, at = t === null || t === undefined ? -1 : pos(t);
      cursor.hidden = at < 0 || at > 100;
      if (!cursor.hidden) cursor.style.left = "calc(var(--tree) + (100% - var(--tree)) * " + (at / 100) + ")";
      section.setAttribute("data-cursor-at", cursor.hidden ? "" : String(Math.round(t)));
    }
    function markSnapshot(t, at) {
      run.snapshot = t;
      run.cursorAt = t ? t.at : at;
      placeCursor();
      var owner = t ? (t.span && byId[t.span]) || (t.parent && byEntry[t.parent]) || null : null;
      Array.prototype.forEach.call(rows.querySelectorAll(".row.snap-owner"), function (r) { r.classList.remove("snap-owner"); });
      if (owner && owner.row) owner.row.classList.add("snap-owner");
      Array.prototype.forEach.call(ticks.querySelectorAll(".snap-mark"), function (m) {
        m.classList.toggle("current", !!t && m.getAttribute("data-snapshot") === String(t.snapshot_id));
      });
    }
    function conversationFor(span) {
      markSnapshot(null);
      var own = turnOfSpan[span.id];
      if (own) {
        renderConversation("Model call " + span.name + ": " + (own.count - own.outputs) + " messages in, " + own.outputs + " out", turnIds(own), own.outputs, null);
        return;
      }
      var t = turnAt(span.start);
      if (listed) {
        var ids = t ? turnIds(t) : [];
        var what = !t ? "" : t.kind === "snapshot" ? " (snapshot #" + t.snapshot_id + ")" : byId[t.span] ? " (after " + byId[t.span].name + ")" : "";
        renderConversation("The conversation as it stood at +" + fmtDur(span.start) + what, ids, 0, t && t.kind === "call" && byId[t.span] ? spanLink(byId[t.span], "the model call") : null);
      } else {  // no model call lists its messages (DevDuck, DM): the messages so far
        renderConversation("The messages up to +" + fmtDur(span.end), messagesUntil(span.end), 0, null);
      }
    }
    function showTime(time) {  // the conversation as it stood at any time of the run
      markSnapshot(null, time);
      var t = turnAt(time);
      var what = !t ? "" : t.kind === "snapshot" ? " (snapshot #" + t.snapshot_id + ")" : byId[t.span] ? " (after " + byId[t.span].name + ")" : "";
      renderConversation("The conversation as it stood at +" + fmtDur(time) + what,
        listed ? (t ? turnIds(t) : []) : messagesUntil(time), 0, null);
      tab("conversation");
    }
    ticks.addEventListener("click", function (ev) {
      var r = ticks.getBoundingClientRect();
      showTime(v0 + (v1 - v0) * Math.max(0, (ev.clientX - r.left) / Math.max(r.width, 1)) * 100 / 96);
    });
    ticks.style.cursor = "pointer";
    function showSnapshot(t) {
      markSnapshot(t);
      var owner = (t.span && byId[t.span]) || (t.parent && byEntry[t.parent]) || null;
      renderConversation("Snapshot #" + t.snapshot_id + (t.description ? " \u2014 " + t.description : "") + ": the conversation as it stood at +" + fmtDur(t.at),
        listed ? turnIds(t) : messagesUntil(t.at), 0, owner ? spanLink(owner, "its span: " + owner.name) : null);
      conv.setAttribute("data-snapshot", String(t.snapshot_id));
      link("snapshot=" + encodeURIComponent(String(t.snapshot_id)));
      tab("conversation");
    }
    run.showSnapshot = function (id) {
      var t = snapshots.filter(function (s) { return String(s.snapshot_id) === String(id); })[0];
      if (t) showSnapshot(t);
    };

    function select(span, reveal) {
      if (!span || !span.row) return;
      for (var p = span.up; p; p = p.up) if (p.kids && p.kids.style.display === "none") fold(p, false);
      if (span.row.style.display === "none") span.row.style.display = "";
      if (selected && selected.row) selected.row.classList.remove("selected");
      selected = span;
      span.row.classList.add("selected");
      showDetails(span);
      conv.removeAttribute("data-snapshot");
      conversationFor(span);
      section.setAttribute("data-selected", span.id);
      link("span=" + encodeURIComponent(span.id));
      if (reveal && span.row.scrollIntoView) span.row.scrollIntoView({ block: "nearest" });
      if (v0 > span.end || v1 < span.start) zoom(0, total);
    }
    function link(what) {  // the address names what is shown: reload or share it, it opens there
      if (!run.linked) return;
      try { history.replaceState(null, "", "#" + what); } catch (e) { /* an address that cannot change */ }
    }
    run.open = function (hash) {
      var m = /^#(span|snapshot)=(.+)$/.exec(hash || "");
      if (!m) return false;
      var value = decodeURIComponent(m[2]);
      if (m[1] === "span" && byId[value] && byId[value].row) { select(byId[value], true); return true; }
      if (m[1] === "snapshot") { var before = run.snapshot; run.showSnapshot(value); return run.snapshot !== before; }
      return false;
    };
    // the keyboard: up and down move to the span shown above or below
    document.addEventListener("keydown", function (ev) {
      if (section.hidden || (ev.target && /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName))) return;
      if (ev.key !== "ArrowDown" && ev.key !== "ArrowUp" && ev.key !== "j" && ev.key !== "k") return;
      var shown = Array.prototype.filter.call(rows.querySelectorAll(".row"), function (r) { return r.offsetParent !== null; });
      var at = selected ? shown.indexOf(selected.row) : -1;
      var next = shown[ev.key === "ArrowDown" || ev.key === "j" ? Math.min(at + 1, shown.length - 1) : Math.max(at - 1, 0)];
      if (next) { next.click(); next.scrollIntoView({ block: "nearest" }); ev.preventDefault(); }
    });
    run.select = select;
    run.spanOf = function (entry) { return byEntry[entry] || null; };
    run.selectEntry = function (entry) { var s = byEntry[entry]; if (s) select(s, true); return !!s; };
    run.section = section;

    place();
    var first = data.spans.length ? rows.querySelector(".row") : null;
    if (first) first.click();  // the first span's details, so the page never opens empty
    else {  // no span: the conversation as the file last has it
      var last = turnAt(total);
      tab("conversation");
      renderConversation("The conversation", listed && last ? turnIds(last) : messagesUntil(total), 0, null);
    }
  }

  // --- one run, or two compared ----------------------------------------------------------------
  var app = document.getElementById("app");
  var compare = block("compare-data");
  var runs = [];
  if (!compare) {
    var single = new Run("session", app);
    runs.push(single);
    document.title = single.data.session_id + " \u2014 otel-agent-trace";
    document.body.setAttribute("data-rendered-spans", String(single.drawn));
    single.paint();
    single.open(location.hash);
    single.linked = true;
    window.addEventListener("resize", single.paint);
    return;
  }
  var appTabs = el("nav", "apptabs");
  document.body.insertBefore(appTabs, app);
  var pane = el("div", "compare-pane");
  pane.id = "compare";
  app.appendChild(pane);
  var runA = new Run("session", app), runB = new Run("other", app);
  runs.push(runA, runB);
  document.title = "diff " + runA.data.session_id + " \u2192 " + runB.data.session_id + " \u2014 otel-agent-trace";
  document.body.setAttribute("data-rendered-spans", String(runA.drawn + runB.drawn));
  var views = [["compare", "Compare", pane], ["a", "A: " + runA.data.session_id, runA.section], ["b", "B: " + runB.data.session_id, runB.section]];
  function view(name) {
    views.forEach(function (v) {
      v[2].hidden = v[0] !== name;
      v[3].className = v[0] === name ? "active" : "";
    });
    if (name === "a") runA.paint();
    if (name === "b") runB.paint();
    document.body.setAttribute("data-view", name);
  }
  views.forEach(function (v) {
    var b = el("button", null, v[1]);
    b.setAttribute("data-view", v[0]);
    b.addEventListener("click", function () { view(v[0]); });
    appTabs.appendChild(b);
    v.push(b);
  });

  pane.appendChild(el("h2", "verdict", compare.different ? "The runs differ" : "The runs do the same thing"));
  var st = compare.status;
  pane.appendChild(el("p", null, "status " + st.base + " \u2192 " + st.candidate + (compare.status_changed ? " (changed)" : "") +
    "; health " + compare.health.base + " \u2192 " + compare.health.candidate +
    "; final answer " + (compare.final_answer_changed ? "changed" : "the same")));
  function answer(a) {
    if (!a) return "none";
    if (a.text !== null && a.text !== undefined) return oneLine(a.text, 400);
    return "<" + a.chars + " chars, sha256 " + String(a.sha256).slice(0, 12) + "\u2026>";
  }
  if (compare.final_answer_changed) {
    pane.appendChild(el("div", "fact", "A: " + answer(compare.final_answer.base)));
    pane.appendChild(el("div", "fact", "B: " + answer(compare.final_answer.candidate)));
  }
  var metrics = el("table", "metrics");
  var head = el("tr");
  ["", "A", "B", "\u0394"].forEach(function (h) { head.appendChild(el("th", null, h)); });
  metrics.appendChild(head);
  Object.keys(compare.metrics).forEach(function (name) {
    var m = compare.metrics[name], tr = el("tr");
    tr.setAttribute("data-metric", name);
    [name, m.base, m.candidate, (m.delta > 0 ? "+" : "") + m.delta].forEach(function (v) { tr.appendChild(el("td", null, v)); });
    metrics.appendChild(tr);
  });
  pane.appendChild(el("h3", null, "metrics"));
  pane.appendChild(metrics);
  var seq = compare.action_sequence;
  pane.appendChild(el("h3", null, "tool calls, aligned"));
  pane.appendChild(el("p", "fact", seq.base_length + " \u2192 " + seq.candidate_length + " tool calls; " + seq.common +
    " in common (common prefix " + seq.common_prefix + "); " + seq.change_count + " changes" +
    (seq.exact_lcs ? "" : " (long sequences: approximate alignment)") + ". Click a row to see its two calls side by side."));
  var aligned = el("table", "aligned");
  var ah = el("tr");
  ["#", "A: " + runA.data.session_id, "", "B: " + runB.data.session_id].forEach(function (h) { ah.appendChild(el("th", null, h)); });
  aligned.appendChild(ah);
  var OPS = { equal: "=", replace: "\u2260", delete: "\u2212", insert: "+" };
  function stepCell(step, which, runOf) {
    var td = el("td", "step " + which);
    if (!step) return td;
    td.appendChild(el("div", null, step.tool + (step.duration_s !== null && step.duration_s !== undefined ? "  " + fmtDur(step.duration_s * 1e9) : "")));
    if (step.error) td.appendChild(el("div", "err", "ERROR " + oneLine(step.error, 200)));
    if (step.detail) td.appendChild(el("div", "fact", oneLine(step.detail, 200)));
    if (step.entry) {
      td.setAttribute("data-entry", step.entry);
      td.title = "compare this row's calls side by side";
    }
    return td;
  }
  function pairSide(step, which, runOf) {
    var col = el("div", "pair-col");
    col.setAttribute("data-side", which);
    col.appendChild(el("div", "fact", "run " + which.toUpperCase() + ": " + runOf.data.session_id));
    if (!step) { col.appendChild(el("p", "fact", "no call here")); return col; }
    col.appendChild(el("div", "pair-name", "#" + (step.index + 1) + " " + step.tool));
    var span = step.entry ? runOf.spanOf(step.entry) : null;
    if (!span) {
      col.appendChild(el("p", "fact", step.detail ? oneLine(step.detail, 400) : "(its span is not on this page)"));
      return col;
    }
    col.appendChild(el("div", span.status === "ERROR" ? "err" : "fact", fmtDur(span.end - span.start) + " \u00b7 " + span.status + (span.status_description ? ": " + oneLine(span.status_description, 300) : "")));
    var c = span.content || {};
    if (c.tool_arguments !== undefined) { col.appendChild(el("div", "fact", "arguments")); col.appendChild(el("pre", "tool-arguments", show(c.tool_arguments))); }
    if (c.tool_result !== undefined) { col.appendChild(el("div", "fact", "result")); col.appendChild(el("pre", "tool-result", show(c.tool_result))); }
    var open = el("button", "link", "open in run " + which.toUpperCase() + " \u203a");
    open.setAttribute("data-open", which);
    open.addEventListener("click", function () { view(which); runOf.selectEntry(step.entry); });
    col.appendChild(open);
    return col;
  }
  var left = el("div", "cmp-main"), pair = el("aside");
  pair.id = "pair";
  pair.appendChild(el("p", "fact", "Click a row to see its two calls side by side."));
  var chosen = null;
  function showPair(row, i, tr) {
    if (chosen) chosen.classList.remove("chosen");
    chosen = tr; tr.classList.add("chosen");
    pair.textContent = "";
    pair.appendChild(el("h3", null, "row " + (i + 1) + ": " + (row.op === "equal" ? "the same tool" : row.op)));
    var grid = el("div", "pair-grid");
    grid.appendChild(pairSide(row.a, "a", runA));
    grid.appendChild(pairSide(row.b, "b", runB));
    pair.appendChild(grid);
    pair.setAttribute("data-row", String(i + 1));
  }
  compare.aligned.forEach(function (row, i) {
    var tr = el("tr", "op-" + row.op);
    tr.setAttribute("data-op", row.op);
    tr.appendChild(el("td", "fact", i + 1));
    tr.appendChild(stepCell(row.a, "a", runA));
    tr.appendChild(el("td", "op", OPS[row.op] || row.op));
    tr.appendChild(stepCell(row.b, "b", runB));
    tr.addEventListener("click", function () { showPair(row, i, tr); });
    aligned.appendChild(tr);
  });
  pane.appendChild(aligned);
  if (compare.aligned_rows > compare.aligned.length) pane.appendChild(el("p", "fact", "\u2026 and " + (compare.aligned_rows - compare.aligned.length) + " more rows (otel-agent-trace diff --json has every change)"));
  var usage = compare.tool_usage.delta;
  if (Object.keys(usage).length) {
    pane.appendChild(el("h3", null, "tool usage"));
    var ut = el("table", "usage");
    Object.keys(usage).forEach(function (tool) {
      var u = usage[tool], tr = el("tr");
      [tool, u.base, u.candidate, (u.delta > 0 ? "+" : "") + u.delta].forEach(function (v) { tr.appendChild(el("td", null, v)); });
      ut.appendChild(tr);
    });
    pane.appendChild(ut);
  }
  // the summary and the aligned calls on the left, the chosen row's two calls on the right
  while (pane.firstChild) left.appendChild(pane.firstChild);
  pane.appendChild(left);
  pane.appendChild(pair);
  var firstChange = compare.aligned.findIndex(function (row) { return row.op !== "equal"; });
  if (firstChange >= 0) showPair(compare.aligned[firstChange], firstChange, aligned.querySelectorAll("tr[data-op]")[firstChange]);
  view("compare");
  window.addEventListener("resize", function () { runs.forEach(function (r) { if (!r.section.hidden) r.paint(); }); });
})();
