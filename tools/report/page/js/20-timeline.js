/* Timeline: one lane per thread (grouped by process/rank), span rows by depth, an event row
 * with GC pauses, compile events, log markers and marks, and a counter chart sharing the
 * time axis. Canvas only; spans narrower than a pixel are coalesced while drawing, and the
 * C side already merged short spans into "N spans" blocks beyond its per-lane budget. */
'use strict';
J.Timeline = function (data) {
  var self = this;
  this.data = data;
  this.strings = data.strings || [];
  this.sites = data.sites || [];
  this.t1 = Math.max(1, data.duration_ns || (data.run && data.run.duration_ns) || 1);
  this.v0 = 0;
  this.v1 = this.t1;
  this.canvas = document.getElementById('tl-canvas');
  this.ccanvas = document.getElementById('ct-canvas');
  this.RULER = 24; this.ROW = 15; this.EVROW = 12; this.LANEHEAD = 17; this.PROCHEAD = 20; this.MAXROWS = 32;
  this.lanes = (data.lanes || []).map(function (l) { return self.prepLane(l); });
  this.procs = data.processes || [];
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
    name: l.name, proc: l.proc || 0, spans: rows(l.rows), blocks: rows(l.blocks),
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
