/* Timeline: one lane per thread (grouped by process/rank) — or, in a recording with tasks
 * (jager_task_set: Julia tasks), one lane per task wherever it ran (a task that migrated
 * between threads stays one lane, its spans nested as its own tree), then the threads' lanes
 * for what ran outside any task —, span rows by depth, an event row
 * with GC pauses, compile events, log markers and marks, and a counter chart sharing the
 * time axis. A job's point-to-point messages are arrows from the sending thread's event row
 * (when the send began) to the receiving thread's (when the receive completed); each
 * collective instance joins its members' calls across the rank lanes (the last to arrive
 * marked). Canvas only; spans narrower than a pixel are coalesced while drawing, and the
 * C side already merged short spans into "N spans" blocks beyond its per-lane budget. */
'use strict';
J.Timeline = function (data) {
  var self = this;
  this.data = data;
  this.strings = data.strings || [];
  this.sites = data.sites || [];
  this.sampled = {}; /* site key → N of "sampled 1 in N" (events thinned on purpose) */
  (data.table || []).forEach(function (r) { if (r.sampled) self.sampled[r.k] = r.sampled; });
  this.t1 = Math.max(1, data.duration_ns || (data.run && data.run.duration_ns) || 1);
  this.v0 = 0;
  this.v1 = this.t1;
  this.canvas = document.getElementById('tl-canvas');
  this.ccanvas = document.getElementById('ct-canvas');
  this.RULER = 24; this.ROW = 15; this.EVROW = 12; this.LANEHEAD = 17; this.PROCHEAD = 20; this.MAXROWS = 32;
  this.lanes = (data.lanes || []).map(function (l) { return self.prepLane(l); });
  this.procs = data.processes || [];
  this.msgs = data.messages || { a: [], n: 0, drawn: 0 };
  this.colls = data.collectives || { a: [], n: 0, drawn: 0, funcs: [] };
  this.laneOf = {}; /* "proc:thread" → lane: the thread's own, else the first task lane that ran on it */
  this.lanes.forEach(function (l) { if (!l.task) self.laneOf[l.proc + ':' + l.thread] = l; });
  this.lanes.forEach(function (l) {
    (l.threads || []).forEach(function (t) { if (!self.laneOf[l.proc + ':' + t]) self.laneOf[l.proc + ':' + t] = l; });
  });
  this.layout();
  this.hover = null;
  this.counterSel = 0;
  this.initCounters();
  this.bind();
  this.draw();
  window.addEventListener('resize', function () { self.draw(); });
};

J.Timeline.prototype.prepLane = function (l) {
  function rows(list) {
    return (list || []).map(function (r) {
      var s = J.undelta(r.s || []);
      return { s: s, d: r.d || [], k: r.k || [], n: r.n || null, b: r.b || null };
    });
  }
  var lane = {
    name: l.name, proc: l.proc || 0, thread: l.thread || 0, task: l.task || 0, threads: l.threads || null,
    spans: rows(l.rows), blocks: rows(l.blocks),
    raw: l.raw || 0, merged: l.merged || 0, total: l.total || 0, tooDeep: l.too_deep || 0,
    gc: l.gc ? { s: J.undelta(l.gc.s), d: l.gc.d } : null,
    cc: l.cc ? { s: J.undelta(l.cc.s), d: l.cc.d, g: l.cc.g } : null,
    logs: l.logs ? { t: J.undelta(l.logs.t), v: l.logs.v, m: l.logs.m } : null,
    marks: l.marks ? { t: J.undelta(l.marks.t), m: l.marks.m } : null
  };
  lane.depth = Math.min(this.MAXROWS, Math.max(lane.spans.length, lane.blocks.length, 1));
  return lane;
};

J.Timeline.prototype.layout = function () {
  var y = this.RULER, prev = -1, multi = this.procs.length > 1 || (this.procs[0] && this.procs[0].rank !== undefined);
  for (var i = 0; i < this.lanes.length; i++) {
    var l = this.lanes[i];
    if (multi && l.proc !== prev) { l.procY = y; y += this.PROCHEAD; prev = l.proc; } else l.procY = -1;
    l.y = y;
    l.evY = y + this.LANEHEAD;
    l.rowY = l.evY + this.EVROW;
    y = l.rowY + l.depth * this.ROW + 6;
  }
  this.height = Math.max(y + 4, 80);
};

J.Timeline.prototype.x = function (t) { return (t - this.v0) * this.scale; };
J.Timeline.prototype.t = function (x) { return this.v0 + x / this.scale; };

J.Timeline.prototype.setView = function (a, b) {
  var minSpan = 1000; /* 1 µs: below that the clock's resolution shows */
  if (b - a < minSpan) { var c = (a + b) / 2; a = c - minSpan / 2; b = c + minSpan / 2; }
  var pad = (b - a) * 0.02;
  if (a < -pad) { b -= a + pad; a = -pad; }
  if (b > this.t1 + pad) { a -= b - this.t1 - pad; b = this.t1 + pad; }
  this.v0 = Math.max(-pad, a);
  this.v1 = Math.min(this.t1 + Math.max(pad, (b - a) * 0.02), b);
  this.draw();
};

J.Timeline.prototype.draw = function () {
  var fit = J.fitCanvas(this.canvas, this.height), ctx = fit.ctx, w = fit.w;
  this.w = w;
  this.scale = w / (this.v1 - this.v0);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, w, this.height);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  this.drawGrid(ctx, w);
  for (var i = 0; i < this.lanes.length; i++) this.drawLane(ctx, this.lanes[i], w);
  this.drawCollectives(ctx);
  this.drawMessages(ctx);
  if (!this.lanes.length) {
    ctx.fillStyle = '#5f6b7a';
    ctx.textAlign = 'left';
    ctx.fillText('No spans, GC pauses, compiles or logs in this recording.', 10, this.RULER + 24);
  }
  if (this.sel) {
    var a = this.x(Math.min(this.sel[0], this.sel[1])), b = this.x(Math.max(this.sel[0], this.sel[1]));
    ctx.fillStyle = 'rgba(31,111,235,0.15)';
    ctx.fillRect(a, 0, b - a, this.height);
    ctx.strokeStyle = '#1f6feb';
    ctx.strokeRect(a + 0.5, 0.5, b - a, this.height - 1);
  }
  document.getElementById('tl-range').textContent =
    J.fmtNs(Math.max(0, this.v0)) + ' – ' + J.fmtNs(this.v1) + '  (' + J.fmtNs(this.v1 - this.v0) + ' shown)';
  this.drawCounters();
};

J.Timeline.prototype.drawGrid = function (ctx, w) {
  var step = J.tickStep(this.v1 - this.v0, Math.max(2, w / 110));
  ctx.fillStyle = '#f7f8fa';
  ctx.fillRect(0, 0, w, this.RULER);
  ctx.strokeStyle = '#dde1e7';
  ctx.beginPath(); ctx.moveTo(0, this.RULER - 0.5); ctx.lineTo(w, this.RULER - 0.5); ctx.stroke();
  ctx.fillStyle = '#5f6b7a';
  ctx.textAlign = 'left';
  for (var t = Math.ceil(this.v0 / step) * step; t <= this.v1; t += step) {
    var x = Math.round(this.x(t)) + 0.5;
    ctx.strokeStyle = '#eef0f3';
    ctx.beginPath(); ctx.moveTo(x, this.RULER); ctx.lineTo(x, this.height); ctx.stroke();
    ctx.strokeStyle = '#b9c1cc';
    ctx.beginPath(); ctx.moveTo(x, this.RULER - 6); ctx.lineTo(x, this.RULER); ctx.stroke();
    ctx.fillText(J.fmtTick(t, step), x + 3, 9);
  }
};

/* Collective instances: each member's call as a bar on its lane's event row, joined from
 * lane to lane at the members' arrivals; the last arrival as a dot. */
J.Timeline.prototype.drawCollectives = function (ctx) {
  var list = this.colls.a || [], mid = this.EVROW / 2, n = 0;
  for (var i = 0; i < list.length; i++) {
    var c = list[i], pts = [], lo = Infinity, hi = -Infinity;
    for (var k = 1; k + 3 < c.length; k += 4) {
      var l = this.laneOf[c[k] + ':' + c[k + 1]];
      if (!l) continue;
      pts.push({ y: l.evY + mid, t0: c[k + 2], t1: c[k + 3] });
      lo = Math.min(lo, c[k + 2]); hi = Math.max(hi, c[k + 3]);
    }
    if (pts.length < 2 || hi < this.v0 || lo > this.v1) continue;
    pts.sort(function (a, b) { return a.y - b.y; });
    var last = pts[0];
    ctx.fillStyle = 'rgba(123,79,181,0.35)';
    for (var j = 0; j < pts.length; j++) {
      var p = pts[j];
      if (p.t0 > last.t0) last = p;
      ctx.fillRect(this.x(p.t0), p.y - 3, Math.max(1, this.x(p.t1) - this.x(p.t0)), 6);
    }
    ctx.strokeStyle = 'rgba(123,79,181,0.8)';
    ctx.beginPath();
    for (j = 0; j < pts.length; j++) {
      if (j) ctx.lineTo(this.x(pts[j].t0), pts[j].y); else ctx.moveTo(this.x(pts[j].t0), pts[j].y);
    }
    ctx.stroke();
    ctx.fillStyle = '#7b4fb5';
    ctx.beginPath(); ctx.arc(this.x(last.t0), last.y, 3, 0, 2 * Math.PI); ctx.fill();
    n++;
  }
  this.collectivesShown = n;
};

/* Message arrows (sender → receiver) whose time range meets the view. */
J.Timeline.prototype.drawMessages = function (ctx) {
  var a = this.msgs.a || [], mid = this.EVROW / 2, n = 0;
  ctx.strokeStyle = 'rgba(20,110,60,0.75)';
  ctx.fillStyle = 'rgba(20,110,60,0.85)';
  ctx.lineWidth = 1;
  for (var i = 0; i + 5 < a.length; i += 6) {
    var ls = this.laneOf[a[i] + ':' + a[i + 1]], lr = this.laneOf[a[i + 3] + ':' + a[i + 4]];
    if (!ls || !lr) continue;
    var t0 = a[i + 2], t1 = a[i + 5];
    if (Math.max(t0, t1) < this.v0 || Math.min(t0, t1) > this.v1) continue;
    var x0 = this.x(t0), y0 = ls.evY + mid, x1 = this.x(t1), y1 = lr.evY + mid;
    ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
    var ang = Math.atan2(y1 - y0, x1 - x0), h = 5;
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - h * Math.cos(ang - 0.45), y1 - h * Math.sin(ang - 0.45));
    ctx.lineTo(x1 - h * Math.cos(ang + 0.45), y1 - h * Math.sin(ang + 0.45));
    ctx.closePath(); ctx.fill();
    n++;
  }
  this.arrowsShown = n;
};

/* Visible index range of a row (items don't overlap within a row: sorted by start and end). */
J.Timeline.prototype.visible = function (r) {
  var i = Math.max(0, J.upperIndex(r.s, this.v0));
  var j = J.upperIndex(r.s, this.v1);
  return [i, j];
};

J.Timeline.prototype.drawLane = function (ctx, l, w) {
  if (l.procY >= 0) {
    var p = this.procs[l.proc] || {};
    ctx.fillStyle = '#e9eef6';
    ctx.fillRect(0, l.procY, w, this.PROCHEAD - 2);
    ctx.fillStyle = '#16202e';
    ctx.font = '600 12px system-ui, sans-serif';
    ctx.textAlign = 'left';
    ctx.fillText(J.fitText(ctx, p.name || ('process ' + l.proc), w - 12), 6, l.procY + this.PROCHEAD / 2 - 1);
  }
  ctx.font = '600 11px system-ui, sans-serif';
  ctx.fillStyle = '#1d2330';
  ctx.textAlign = 'left';
  var head = l.name + (l.merged ? '   ·   ' + J.fmtInt(l.total) + ' spans, ' + J.fmtInt(l.raw) + ' drawn exactly, the rest merged' : '') +
    (l.tooDeep > 0 ? '   ·   ' + J.fmtInt(l.tooDeep) + ' spans nested deeper than ' + this.MAXROWS + ' levels not drawn' : '');
  ctx.fillText(J.fitText(ctx, head, w - 12), 6, l.y + this.LANEHEAD / 2);
  ctx.strokeStyle = '#eceff3';
  ctx.beginPath(); ctx.moveTo(0, l.y + 0.5); ctx.lineTo(w, l.y + 0.5); ctx.stroke();
  ctx.font = '11px system-ui, sans-serif';
  this.drawEvents(ctx, l);
  for (var d = 0; d < l.depth; d++) {
    var y = l.rowY + d * this.ROW;
    if (l.blocks[d]) this.drawRow(ctx, l.blocks[d], y, true);
    if (l.spans[d]) this.drawRow(ctx, l.spans[d], y, false);
  }
};

J.Timeline.prototype.drawRow = function (ctx, r, y, isBlock) {
  var hl = this.highlight;
  var vis = this.visible(r), h = this.ROW - 1, pendX0 = -1, pendX1 = -1, pendCol = null, self = this;
  function flush() {
    if (pendX0 < 0) return;
    ctx.fillStyle = pendCol;
    ctx.fillRect(pendX0, y, Math.max(1, pendX1 - pendX0), h);
    pendX0 = -1;
  }
  for (var i = vis[0]; i <= vis[1]; i++) {
    var s = r.s[i], x0 = this.x(s), x1 = this.x(s + r.d[i]);
    if (x1 < 0) continue;
    if (x0 > this.w) break;
    var col = isBlock ? '#c3ccd8' : J.siteColor(r.k[i]);
    if (hl) col = hl[r.k[i]] ? '#e0457b' : (isBlock ? '#e3e7ec' : '#dde2e8');
    if (x1 - x0 < 2) {
      if (pendX0 >= 0 && x0 <= pendX1 + 1) { pendX1 = Math.max(pendX1, x1); continue; }
      flush();
      pendX0 = x0; pendX1 = Math.max(x1, x0 + 1); pendCol = col;
      continue;
    }
    flush();
    var cx0 = Math.max(x0, -2), cx1 = Math.min(x1, this.w + 2);
    ctx.fillStyle = col;
    ctx.fillRect(cx0, y, cx1 - cx0 - (cx1 - cx0 > 3 ? 0.5 : 0), h);
    if (isBlock) {
      ctx.fillStyle = 'rgba(60,72,88,0.35)';
      var busy = r.b ? Math.min(1, r.b[i] / Math.max(1, r.d[i])) : 1;
      ctx.fillRect(cx0, y + h - 3, (cx1 - cx0) * busy, 3);
    }
    if (cx1 - cx0 > 28) {
      var label = isBlock ? J.fmtInt(r.n[i]) + ' spans · ' + self.siteName(r.k[i]) : self.siteName(r.k[i]);
      ctx.fillStyle = '#14202e';
      var txt = J.fitText(ctx, label, cx1 - cx0 - 6);
      if (txt) ctx.fillText(txt, cx0 + 3, y + h / 2 + 0.5);
    }
  }
  flush();
};

J.Timeline.prototype.drawEvents = function (ctx, l) {
  var y = l.evY, h = this.EVROW - 2, i, vis, x0, x1;
  ctx.fillStyle = '#fafbfc';
  ctx.fillRect(0, y, this.w, h + 1);
  var self = this;
  function bars(ev, color) {
    if (!ev) return;
    vis = [Math.max(0, J.upperIndex(ev.s, self.v0) - 64), J.upperIndex(ev.s, self.v1)];
    ctx.fillStyle = color;
    for (i = vis[0]; i <= vis[1]; i++) {
      x0 = self.x(ev.s[i]); x1 = self.x(ev.s[i] + ev.d[i]);
      if (x1 < 0 || x0 > self.w) continue;
      ctx.fillRect(x0, y + 1, Math.max(1.5, x1 - x0), h - 1);
    }
  }
  bars(l.cc, '#8e44ad');
  bars(l.gc, '#e8710a');
  if (l.logs) {
    vis = [Math.max(0, J.upperIndex(l.logs.t, this.v0)), J.upperIndex(l.logs.t, this.v1)];
    for (i = vis[0]; i <= vis[1]; i++) {
      x0 = this.x(l.logs.t[i]);
      var sev = l.logs.v[i];
      ctx.fillStyle = sev >= 17 ? '#c62828' : sev >= 13 ? '#e8a317' : '#0b7285';
      ctx.beginPath(); ctx.moveTo(x0 - 3.5, y); ctx.lineTo(x0 + 3.5, y); ctx.lineTo(x0, y + h); ctx.closePath(); ctx.fill();
    }
  }
  if (l.marks) {
    vis = [Math.max(0, J.upperIndex(l.marks.t, this.v0)), J.upperIndex(l.marks.t, this.v1)];
    ctx.fillStyle = '#1d2330';
    for (i = vis[0]; i <= vis[1]; i++) { x0 = this.x(l.marks.t[i]); ctx.fillRect(x0 - 0.5, y, 1.5, h); }
  }
};

/* Highlight the spans of sites whose name contains \p query (the flame graph's search). */
J.Timeline.prototype.setHighlight = function (query) {
  if (!query) { this.highlight = null; this.draw(); return; }
  var hl = {};
  for (var k = 1; k < this.sites.length; k++) if (this.sites[k][0].toLowerCase().indexOf(query) >= 0) hl[k] = true;
  this.highlight = hl;
  this.draw();
};

J.Timeline.prototype.siteName = function (k) {
  var s = this.sites[k];
  return s ? s[0] : 'site ' + k;
};
