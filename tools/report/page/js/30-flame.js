/* Icicle (top-down flame graph) of the span tree merged over threads: click to zoom into a
 * frame, breadcrumbs to zoom out, search to highlight, tooltips on hover. The sampled flame
 * graph (32-samples.js) is the same drawing over another tree: `opts` names its element
 * prefix, tree, frame names, colours and tooltip lines. */
'use strict';
J.Flame = function (data, opts) {
  opts = opts || {};
  var self = this, tr = opts.tree || data.tree || { p: [], k: [], t: [], c: [], s: [] };
  this.opts = opts;
  this.px = opts.px || 'fl';
  this.sites = data.sites || [];
  this.p = tr.p || []; this.k = tr.k || []; this.tot = tr.t || []; this.calls = tr.c || []; this.self = tr.s || [];
  var n = this.p.length;
  this.kids = new Array(n);
  this.depth = new Int32Array(n);
  this.maxDepth = 0;
  for (var i = 0; i < n; i++) {
    this.kids[i] = [];
    var pa = this.p[i];
    if (pa >= 0) { this.kids[pa].push(i); this.depth[i] = this.depth[pa] + 1; }
    if (this.depth[i] > this.maxDepth) this.maxDepth = this.depth[i];
  }
  /* heaviest children first, so the widest frames sit on the left */
  for (i = 0; i < n; i++) this.kids[i].sort(function (a, b) { return self.tot[b] - self.tot[a]; });
  this.home = 0; /* the root shown when zoomed out (the sampled graph has one per site) */
  this.focus = 0;
  this.query = '';
  this.ROW = 18;
  this.canvas = document.getElementById(this.px + '-canvas');
  this.rects = [];
  this.bind();
  this.draw();
  window.addEventListener('resize', function () { self.draw(); });
};

J.Flame.prototype.name = function (i) {
  if (this.opts.name) return this.opts.name(i, this);
  if (this.p[i] < 0) return 'all';
  var s = this.sites[this.k[i]];
  return s ? s[0] : 'site ' + this.k[i];
};

J.Flame.prototype.matches = function (i) {
  return this.query !== '' && this.p[i] >= 0 && this.name(i).toLowerCase().indexOf(this.query) >= 0;
};

J.Flame.prototype.draw = function () {
  var n = this.p.length;
  var ancestors = [];
  for (var a = this.focus; a >= 0; a = this.p[a]) ancestors.unshift(a);
  var rows = Math.min(64, Math.max(1, this.maxDepth + 1));
  var fit = J.fitCanvas(this.canvas, rows * this.ROW + 4), ctx = fit.ctx, w = fit.w;
  this.w = w;
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, w, fit.h);
  ctx.font = '11.5px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  this.rects = [];
  if (!n || !(this.tot[this.home] > 0)) {
    ctx.fillStyle = '#5f6b7a'; ctx.fillText(this.opts.empty || 'No spans in this recording.', 10, 12);
    this.renderCrumbs(ancestors);
    return;
  }
  var self = this, focusTot = Math.max(1, this.tot[this.focus]), scale = w / focusTot, matched = 0;
  function box(i, x, y, width, dim) {
    var h = self.ROW - 1, hit = self.matches(i);
    var col = self.diff ? self.diff.color(i) : self.p[i] < 0 ? '#cfd6df' : self.opts.color ? self.opts.color(i, self) : J.siteColor(self.k[i]);
    if (self.query && !hit) col = dim ? '#eef0f3' : '#e3e7ec';
    if (hit) col = '#e0457b';
    ctx.fillStyle = col;
    ctx.fillRect(x, y, Math.max(0.5, width - (width > 3 ? 1 : 0)), h);
    if (width > 24) {
      var txt = J.fitText(ctx, self.name(i), width - 6);
      if (txt) { ctx.fillStyle = hit ? '#ffffff' : '#14202e'; ctx.fillText(txt, x + 3, y + h / 2 + 0.5); }
    }
    self.rects.push([x, y, width, h, i]);
  }
  /* the ancestors of the focus, full width, slightly faded */
  for (var d = 0; d < ancestors.length - 1; d++) box(ancestors[d], 0, d * this.ROW, w, true);
  ctx.globalAlpha = 1;
  /* the focused subtree: iterative depth-first walk with x offsets */
  var baseDepth = ancestors.length - 1;
  var stack = [[this.focus, 0]];
  while (stack.length) {
    var top = stack.pop(), i = top[0], x = top[1], width = this.tot[i] * scale, dep = this.depth[i] - this.depth[this.focus] + baseDepth;
    if (width < 0.4 || dep >= rows) continue;
    if (this.matches(i)) {
      /* count a match once, not again for matching frames nested inside it */
      var nested = false;
      for (var q = this.p[i]; q >= 0 && q !== this.p[this.focus]; q = this.p[q]) if (this.matches(q)) { nested = true; break; }
      if (!nested) matched += this.tot[i];
    }
    box(i, x, dep * this.ROW, width, false);
    var cx = x, kids = this.kids[i];
    for (var c = 0; c < kids.length; c++) { stack.push([kids[c], cx]); cx += this.tot[kids[c]] * scale; }
  }
  document.getElementById(this.px + '-match').textContent = this.query ? J.fmtPct(matched / focusTot) + ' matched' : '';
  this.renderCrumbs(ancestors);
};

J.Flame.prototype.renderCrumbs = function (ancestors) {
  var nav = document.getElementById(this.px + '-crumbs'), self = this;
  while (nav.firstChild) nav.removeChild(nav.firstChild);
  ancestors.forEach(function (i, idx) {
    if (idx) nav.appendChild(J.el('span', 'sep', '›'));
    var b = J.el('button', null, self.name(i));
    b.type = 'button';
    b.addEventListener('click', function () { self.zoom(i); });
    nav.appendChild(b);
  });
  nav.dataset.focus = this.p.length ? this.name(this.focus) : '';
};

/* Highlight frames whose site name contains \p text, here and on the timeline. */
J.Flame.prototype.search = function (text) {
  var input = document.getElementById(this.px + '-search');
  if (input.value !== text) input.value = text;
  this.query = text.trim().toLowerCase();
  this.draw();
  if (J.timeline && this.px === 'fl') J.timeline.setHighlight(this.query);
};

J.Flame.prototype.zoom = function (i) {
  this.focus = i;
  this.draw();
};

J.Flame.prototype.hit = function (x, y) {
  for (var r = this.rects.length - 1; r >= 0; r--) {
    var q = this.rects[r];
    if (x >= q[0] && x < q[0] + q[2] && y >= q[1] && y < q[1] + q[3]) return q[4];
  }
  return -1;
};

J.Flame.prototype.bind = function () {
  var self = this, c = this.canvas;
  function pos(e) { var r = c.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
  c.addEventListener('click', function (e) {
    var p = pos(e), i = self.hit(p[0], p[1]);
    if (i < 0) return;
    /* clicking the focused frame itself zooms out one level */
    self.zoom(i === self.focus && self.p[i] >= 0 ? self.p[i] : i);
    J.tip.hide();
  });
  c.addEventListener('mousemove', function (e) {
    var p = pos(e), i = self.hit(p[0], p[1]);
    if (i < 0) { J.tip.hide(); return; }
    var root = Math.max(1, self.tot[self.home]), site = self.sites[self.k[i]] || [];
    var lines = ['total ' + J.fmtNs(self.tot[i]) + ' (' + J.fmtPct(self.tot[i] / root) + ' of all, ' +
      J.fmtPct(self.tot[i] / Math.max(1, self.tot[self.focus])) + ' of view)'];
    if (self.opts.describe) lines = lines.concat(self.opts.describe(i, self));
    else {
      lines.push('self ' + J.fmtNs(self.self[i] || 0) + ' · ' + J.fmtInt(self.calls[i] || 0) + ' calls');
      if (site[1]) lines.push(site[1] + (site[2] ? ':' + site[2] : ''));
    }
    if (self.diff) lines.push(self.diff.describe(i));
    J.tip.show(e.clientX, e.clientY, self.name(i), lines);
  });
  c.addEventListener('mouseleave', function () { J.tip.hide(); });
  var input = document.getElementById(this.px + '-search');
  input.addEventListener('input', function () { self.search(input.value); });
  document.getElementById(this.px + '-reset').addEventListener('click', function () { self.zoom(self.home); });
};
