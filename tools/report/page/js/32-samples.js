/* The sampler's views (data.samples, report_samples.c): a sampled flame graph — CPU time per
 * call path of functions, for all samples or only those taken inside one site — and the
 * sample density over time under the timeline, one row per sampled thread. Hidden when the recording has no
 * samples. Names reach the canvas only through fillText and the tooltip's textContent. */
'use strict';
J.fnColor = function (name) {
  var h = 2166136261;
  for (var i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return J.PALETTE[((h >>> 0) >>> 7) % J.PALETTE.length];
};

J.Samples = function (data) {
  var sm = data.samples, self = this;
  this.sm = sm;
  if (!sm) return;
  document.getElementById('samples').hidden = false;
  this.sites = data.sites || [];
  this.fns = sm.fns || [];
  this.rootSite = {}; /* node index of each site root → site index */
  (sm.roots || []).forEach(function (r) { self.rootSite[r[1]] = r[0]; });
  var c = sm.c || [];
  this.flame = new J.Flame(data, {
    px: 'sf', tree: { p: sm.p, k: sm.k, t: sm.t, c: sm.c, s: sm.s },
    empty: 'No samples here.',
    name: function (i, f) { /* f: the flame graph (called while it is being built) */
      if (f.p[i] >= 0) return (self.fns[f.k[i]] || ['?'])[0];
      var site = self.rootSite[i];
      return site === undefined ? 'all samples' : 'inside ' + (self.sites[site] || ['site ' + site])[0];
    },
    color: function (i, f) { return J.fnColor(f.name(i)); },
    describe: function (i, f) {
      var fn = f.p[i] >= 0 ? self.fns[f.k[i]] : null;
      var lines = ['self ' + J.fmtNs(f.self[i] || 0) + ' · ' + J.fmtInt(c[i] || 0) + ' samples'];
      if (fn && fn[1]) lines.push(fn[1] + (fn[2] ? ':' + fn[2] : ''));
      return lines;
    },
  });
  /* the view: all samples, or those inside one site (largest first) */
  var sel = document.getElementById('sf-view');
  sel.appendChild(new Option('all samples', '0'));
  (sm.roots || []).slice().sort(function (a, b) { return sm.t[b[1]] - sm.t[a[1]]; }).forEach(function (r) {
    var s = self.sites[r[0]] || ['site ' + r[0]];
    sel.appendChild(new Option('inside ' + s[0] + ' (' + J.fmtPct(sm.t[r[1]] / Math.max(1, sm.t[0])) + ')', String(r[1])));
  });
  sel.addEventListener('change', function () { self.view(Number(sel.value)); });
  document.getElementById('sf-summary').textContent = J.fmtInt(c[0] || 0) + ' samples · ' + J.fmtNs(sm.t[0] || 0) + ' CPU time';
  this.density = new J.Density(data);
};

/** Show the tree rooted at node \p root (0: all samples). */
J.Samples.prototype.view = function (root) {
  this.flame.home = root;
  document.getElementById('sf-view').value = String(root);
  this.flame.zoom(root);
};

/* Sample density on the timeline: one row per sampled thread under the lanes, a cell per
 * time bin, darker = more samples; on the timeline's time axis, so it follows its zoom and
 * pan (the timeline's draw() is wrapped below, as its counters chart follows it). */
J.Density = function (data) {
  var d = data.samples.density || { bins: 0, dt: 1, lanes: [] }, self = this;
  this.d = d;
  this.ROW = 16;
  this.max = 1;
  d.lanes.forEach(function (l) { for (var i = 0; i < l.n.length; i++) if (l.n[i] > self.max) self.max = l.n[i]; });
  document.getElementById('sd-block').hidden = false;
  this.canvas = document.getElementById('sd-canvas');
  this.draw();
  var c = this.canvas;
  c.addEventListener('mousemove', function (e) {
    var r = c.getBoundingClientRect(), hit = self.hit(e.clientX - r.left, e.clientY - r.top);
    if (!hit) { J.tip.hide(); return; }
    var l = d.lanes[hit[0]], t0 = hit[1] * d.dt;
    J.tip.show(e.clientX, e.clientY, l.name, [J.fmtInt(l.n[hit[1]]) + ' samples from ' + J.fmtNs(t0) + ' to ' + J.fmtNs(t0 + d.dt),
      J.fmtInt(l.total) + ' samples on this thread']);
  });
  c.addEventListener('mouseleave', function () { J.tip.hide(); });
  window.addEventListener('resize', function () { self.draw(); });
};

/** The time range shown: the timeline's view, or the whole run without a timeline. */
J.Density.prototype.range = function () {
  return J.timeline ? [J.timeline.v0, J.timeline.v1] : [0, this.d.bins * this.d.dt];
};

J.Density.prototype.hit = function (x, y) {
  var lane = Math.floor((y - 2) / this.ROW), r = this.range();
  if (lane < 0 || lane >= this.d.lanes.length || !(this.w > 0)) return null;
  var bin = Math.floor((r[0] + x / this.w * (r[1] - r[0])) / this.d.dt);
  return bin >= 0 && bin < this.d.bins ? [lane, bin] : null;
};

J.Density.prototype.draw = function () {
  var d = this.d, n = d.lanes.length, r = this.range();
  var fit = J.fitCanvas(this.canvas, Math.max(1, n) * this.ROW + 4), ctx = fit.ctx, w = fit.w;
  this.w = w;
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, w, fit.h);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  var scale = w / Math.max(1, r[1] - r[0]);
  var b0 = Math.max(0, Math.floor(r[0] / d.dt)), b1 = Math.min(d.bins, Math.ceil(r[1] / d.dt));
  for (var i = 0; i < n; i++) {
    var l = d.lanes[i], y = 2 + i * this.ROW;
    for (var b = b0; b < b1; b++) {
      if (!l.n[b]) continue;
      /* blue, from light to dark with the share of the busiest bin */
      var f = Math.sqrt(l.n[b] / this.max);
      ctx.fillStyle = 'rgb(' + Math.round(170 - 150 * f) + ',' + Math.round(200 - 150 * f) + ',235)';
      var x0 = (b * d.dt - r[0]) * scale;
      ctx.fillRect(x0, y, Math.max(1, d.dt * scale - (d.dt * scale > 3 ? 0.5 : 0)), this.ROW - 2);
    }
    /* the thread's name over a light plate, as the timeline labels its lanes */
    var label = J.fitText(ctx, l.name, 260);
    ctx.fillStyle = 'rgba(255,255,255,0.85)';
    ctx.fillRect(0, y, ctx.measureText(label).width + 8, this.ROW - 2);
    ctx.fillStyle = '#14202e';
    ctx.fillText(label, 4, y + this.ROW / 2 - 1);
  }
};

(function () { /* the density follows the timeline's zoom and pan */
  var draw = J.Timeline.prototype.draw;
  J.Timeline.prototype.draw = function () {
    draw.apply(this, arguments);
    if (J.samples && J.samples.density) J.samples.density.draw();
  };
})();
