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
  this.t1 = Math.max(1, (data.run && data.run.duration_ns) || 1);
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

/* What is under (x, y) in CSS px: {kind, ...} or null. */
J.Timeline.prototype.pick = function (x, y) {
  var t = this.t(x), tol = 3 / this.scale, i, k;
  for (var li = 0; li < this.lanes.length; li++) {
    var l = this.lanes[li];
    if (y >= l.evY && y < l.rowY) {
      var best = null, bestDist = 5;
      if (l.logs) for (i = Math.max(0, J.upperIndex(l.logs.t, t - tol)); i < l.logs.t.length && l.logs.t[i] <= t + tol; i++) {
        var dx = Math.abs(this.x(l.logs.t[i]) - x);
        if (dx < bestDist) { bestDist = dx; best = { kind: 'log', lane: l, i: i }; }
      }
      if (best) return best;
      if (l.marks) for (i = Math.max(0, J.upperIndex(l.marks.t, t - tol)); i < l.marks.t.length && l.marks.t[i] <= t + tol; i++)
        return { kind: 'mark', lane: l, i: i };
      var evs = [['gc', l.gc], ['compile', l.cc]];
      for (k = 0; k < evs.length; k++) {
        var ev = evs[k][1];
        if (!ev) continue;
        for (i = Math.max(0, J.upperIndex(ev.s, t) - 64); i < ev.s.length && ev.s[i] <= t + tol; i++)
          if (ev.s[i] + ev.d[i] >= t - tol) return { kind: evs[k][0], lane: l, i: i, s: ev.s[i], d: ev.d[i] };
      }
      return null;
    }
    if (y >= l.rowY && y < l.rowY + l.depth * this.ROW) {
      var d = Math.floor((y - l.rowY) / this.ROW);
      var lists = [[l.spans[d], false], [l.blocks[d], true]];
      for (k = 0; k < 2; k++) {
        var r = lists[k][0];
        if (!r) continue;
        i = J.upperIndex(r.s, t + tol);
        if (i >= 0 && r.s[i] + r.d[i] >= t - tol)
          return { kind: lists[k][1] ? 'block' : 'span', lane: l, depth: d, s: r.s[i], d: r.d[i], k: r.k[i],
                   n: r.n ? r.n[i] : 1, b: r.b ? r.b[i] : 0 };
      }
      return null;
    }
  }
  return null;
};

J.Timeline.prototype.describe = function (p) {
  var l = p.lane, site = this.sites[p.k] || [];
  switch (p.kind) {
  case 'span':
    return [site[0] || 'site ' + p.k, [
      'duration ' + J.fmtNs(p.d) + '   start ' + J.fmtNs(p.s),
      (site[1] ? site[1] + (site[2] ? ':' + site[2] : '') : '(no location)'),
      l.name + ' · depth ' + p.depth]];
  case 'block':
    return [J.fmtInt(p.n) + ' short spans (merged)', [
      'from ' + J.fmtNs(p.s) + ' for ' + J.fmtNs(p.d) + ', busy ' + J.fmtNs(p.b),
      'most time in: ' + (site[0] || 'site ' + p.k),
      'spans this short are merged in this report; `jager export` keeps every one']];
  case 'gc':
    return ['GC pause', ['duration ' + J.fmtNs(p.d) + '   start ' + J.fmtNs(p.s), l.name]];
  case 'compile':
    return ['Compilation', ['duration ' + J.fmtNs(p.d) + '   at ' + J.fmtNs(p.s),
      this.strings[l.cc.g[p.i]] || '', l.name]];
  case 'log':
    var sev = l.logs.v[p.i];
    var name = sev >= 21 ? 'FATAL' : sev >= 17 ? 'ERROR' : sev >= 13 ? 'WARN' : sev >= 9 ? 'INFO' : sev >= 5 ? 'DEBUG' : 'TRACE';
    return ['Log · ' + name, [this.strings[l.logs.m[p.i]] || '', 'at ' + J.fmtNs(l.logs.t[p.i]) + ' · ' + l.name]];
  case 'mark':
    return ['Mark', [this.strings[l.marks.m[p.i]] || '', 'at ' + J.fmtNs(l.marks.t[p.i])]];
  }
  return ['', []];
};

J.Timeline.prototype.bind = function () {
  var self = this, c = this.canvas, drag = null;
  function pos(e) { var r = c.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
  c.addEventListener('wheel', function (e) {
    e.preventDefault();
    var p = pos(e), t = self.t(p[0]);
    var f = Math.pow(1.0018, e.deltaMode === 1 ? e.deltaY * 30 : e.deltaY);
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      var dt = (e.deltaX || e.deltaY) / self.scale;
      self.setView(self.v0 + dt, self.v1 + dt);
      return;
    }
    self.setView(t - (t - self.v0) * f, t + (self.v1 - t) * f);
  }, { passive: false });
  c.addEventListener('mousedown', function (e) {
    if (e.button !== 0) return;
    var p = pos(e);
    drag = { x: p[0], y: p[1], v0: self.v0, v1: self.v1, moved: false, select: e.shiftKey || p[1] < self.RULER };
    c.classList.add('dragging');
    J.tip.hide();
    e.preventDefault();
  });
  window.addEventListener('mousemove', function (e) {
    var p = pos(e);
    if (drag) {
      if (Math.abs(p[0] - drag.x) > 3) drag.moved = true;
      if (!drag.moved) return;
      if (drag.select) { self.sel = [self.t(drag.x), self.t(p[0])]; self.draw(); return; }
      var dt = (drag.x - p[0]) * (drag.v1 - drag.v0) / self.w;
      self.setView(drag.v0 + dt, drag.v1 + dt);
      return;
    }
    if (e.target !== c) return;
    var hit = self.pick(p[0], p[1]);
    if (!hit) { J.tip.hide(); return; }
    var d = self.describe(hit);
    J.tip.show(e.clientX, e.clientY, d[0], d[1]);
  });
  c.addEventListener('mouseleave', function () { if (!drag) J.tip.hide(); });
  window.addEventListener('mouseup', function (e) {
    if (!drag) return;
    var p = pos(e), dr = drag;
    drag = null;
    c.classList.remove('dragging');
    if (dr.select && self.sel) {
      var a = Math.min(self.sel[0], self.sel[1]), b = Math.max(self.sel[0], self.sel[1]);
      self.sel = null;
      if (b - a > 0) self.setView(a, b); else self.draw();
      return;
    }
    if (dr.moved) return;
    /* A click zooms to the span under the pointer (or 2x around it) once it is clear that
     * it is not the first half of a double-click, which zooms out instead. */
    if (self.clickTimer) return;
    self.clickTimer = setTimeout(function () {
      self.clickTimer = null;
      var hit = self.pick(p[0], p[1]);
      if (hit && hit.d > 0 && (hit.kind === 'span' || hit.kind === 'block' || hit.kind === 'gc' || hit.kind === 'compile')) {
        var pad = hit.d * 0.1;
        self.setView(hit.s - pad, hit.s + hit.d + pad);
      } else {
        var t = self.t(p[0]), half = (self.v1 - self.v0) / 4;
        self.setView(t - half, t + half);
      }
    }, 230);
  });
  c.addEventListener('dblclick', function (e) {
    if (self.clickTimer) { clearTimeout(self.clickTimer); self.clickTimer = null; }
    var t = self.t(pos(e)[0]), span = self.v1 - self.v0;
    self.setView(t - span, t + span);
  });
  c.addEventListener('keydown', function (e) {
    var mid = (self.v0 + self.v1) / 2, span = self.v1 - self.v0;
    if (e.key === '+' || e.key === '=') self.setView(mid - span / 4, mid + span / 4);
    else if (e.key === '-') self.setView(mid - span, mid + span);
    else if (e.key === 'ArrowLeft') self.setView(self.v0 - span / 8, self.v1 - span / 8);
    else if (e.key === 'ArrowRight') self.setView(self.v0 + span / 8, self.v1 + span / 8);
    else if (e.key === '0') self.setView(0, self.t1);
  });
  document.getElementById('tl-reset').addEventListener('click', function () { self.setView(0, self.t1); });
  var legend = document.getElementById('tl-legend');
  [['#8fbce6', 'span'], ['#c3ccd8', 'merged spans'], ['#e8710a', 'GC pause'], ['#8e44ad', 'compile'], ['#0b7285', 'log']].forEach(function (x) {
    var s = J.el('span'); var i = J.el('i'); i.style.background = x[0]; s.appendChild(i); s.appendChild(document.createTextNode(x[1])); legend.appendChild(s);
  });
};

/* ---- counters ---- */
J.Timeline.prototype.initCounters = function () {
  var self = this, sel = document.getElementById('ct-select');
  this.counters = (this.data.counters || []).map(function (c) {
    return { name: c.name, unit: c.unit || '', t: J.undelta(c.t || []), v: c.v || [], lo: c.lo || null, hi: c.hi || null };
  });
  this.counters.forEach(function (c, i) {
    var o = J.el('option', null, c.name + (c.unit ? ' (' + c.unit + ')' : ''));
    o.value = String(i);
    sel.appendChild(o);
  });
  /* the live heap is the series people look for first */
  this.counters.forEach(function (c, i) { if (c.name === 'gc.live_bytes' && !self.counterPicked) { self.counterSel = i; self.counterPicked = true; } });
  sel.value = String(this.counterSel);
  if (!this.counters.length) {
    var o = J.el('option', null, 'no counters in this recording'); sel.appendChild(o); sel.disabled = true;
  }
  sel.addEventListener('change', function () { self.counterSel = +sel.value; self.drawCounters(); });
  this.ccanvas.addEventListener('mousemove', function (e) {
    var c = self.counters[self.counterSel];
    if (!c || !c.t.length) return;
    var r = self.ccanvas.getBoundingClientRect(), t = self.t(e.clientX - r.left);
    var i = Math.max(0, J.upperIndex(c.t, t));
    J.tip.show(e.clientX, e.clientY, c.name, [self.fmtCounter(c, c.v[i]) + ' at ' + J.fmtNs(c.t[i])]);
  });
  this.ccanvas.addEventListener('mouseleave', function () { J.tip.hide(); });
};

J.Timeline.prototype.fmtCounter = function (c, v) {
  if (/byte/i.test(c.unit) || /bytes$/.test(c.name)) return J.fmtBytes(v);
  if (/^ns$/.test(c.unit)) return J.fmtNs(v);
  return Math.abs(v) >= 1e4 ? J.fmtInt(v) : String(Math.round(v * 1000) / 1000);
};

J.Timeline.prototype.drawCounters = function () {
  var H = 120, fit = J.fitCanvas(this.ccanvas, H), ctx = fit.ctx, w = fit.w;
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, w, H);
  var c = this.counters[this.counterSel];
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  if (!c || !c.t.length) {
    ctx.fillStyle = '#5f6b7a'; ctx.fillText('No counter samples in this recording.', 10, H / 2);
    return;
  }
  var lo = Infinity, hi = -Infinity, i;
  var vis = [Math.max(0, J.upperIndex(c.t, this.v0)), Math.max(0, J.upperIndex(c.t, this.v1))];
  for (i = vis[0]; i <= Math.min(c.t.length - 1, vis[1] + 1); i++) {
    var a = c.lo ? c.lo[i] : c.v[i], b = c.hi ? c.hi[i] : c.v[i];
    if (a < lo) lo = a; if (b > hi) hi = b;
  }
  if (!(hi > lo)) { hi = lo + 1; lo = lo - 1; }
  var top = 12, bot = H - 14, self = this;
  function y(v) { return bot - (v - lo) / (hi - lo) * (bot - top); }
  ctx.strokeStyle = '#eef0f3';
  for (var g = 0; g <= 4; g++) { var gy = Math.round(top + g * (bot - top) / 4) + 0.5; ctx.beginPath(); ctx.moveTo(0, gy); ctx.lineTo(w, gy); ctx.stroke(); }
  /* min/max band of binned samples, then the step line */
  if (c.lo) {
    ctx.fillStyle = 'rgba(31,111,235,0.15)';
    for (i = vis[0]; i <= vis[1]; i++) {
      var x0 = this.x(c.t[i]), x1 = i + 1 < c.t.length ? this.x(c.t[i + 1]) : x0 + 1;
      ctx.fillRect(x0, y(c.hi[i]), Math.max(1, x1 - x0), Math.max(1, y(c.lo[i]) - y(c.hi[i])));
    }
  }
  ctx.strokeStyle = '#1f6feb';
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  for (i = vis[0]; i <= Math.min(c.t.length - 1, vis[1] + 1); i++) {
    var px = this.x(c.t[i]), py = y(c.v[i]);
    if (i === vis[0]) ctx.moveTo(Math.max(px, 0), py); else { ctx.lineTo(px, y(c.v[i - 1])); ctx.lineTo(px, py); }
  }
  if (vis[1] >= c.t.length - 1) ctx.lineTo(Math.min(w, this.x(this.t1)), y(c.v[c.v.length - 1]));
  else ctx.lineTo(w, y(c.v[Math.min(c.v.length - 1, vis[1] + 1)]));
  ctx.stroke();
  ctx.lineWidth = 1;
  ctx.fillStyle = '#5f6b7a';
  ctx.textAlign = 'left';
  ctx.fillText(self.fmtCounter(c, hi), 4, top - 4 + 2);
  ctx.fillText(self.fmtCounter(c, lo), 4, bot + 7);
};
