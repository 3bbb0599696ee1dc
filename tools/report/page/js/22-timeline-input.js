/* Timeline interaction: hit testing, tooltips, wheel/drag/click zoom and pan, keys. */
'use strict';
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
      l.name + ' · depth ' + p.depth].concat(this.sampled[p.k] ? ['sampled 1 in ' + J.fmtInt(this.sampled[p.k]) +
        ' here: the other calls were thinned on purpose (totals exact)'] : [])];
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
  var cl = self.colls;
  if (cl && cl.n) {
    var cs = J.el('span'); var ci = J.el('i'); ci.style.background = '#7b4fb5'; cs.appendChild(ci);
    cs.appendChild(document.createTextNode(J.drawnLabel('collective', cl)));
    legend.appendChild(cs);
  }
  var m = self.msgs;
  if (m && m.n) {
    var s = J.el('span'); var i = J.el('i'); i.style.background = '#146e3c'; s.appendChild(i);
    s.appendChild(document.createTextNode(J.drawnLabel('MPI message', m)));
    legend.appendChild(s);
  }
};
