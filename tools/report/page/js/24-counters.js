/* The counter chart under the timeline: one series at a time, sharing its time axis. */
'use strict';
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
  /* the live heap is the series people look for first; else the Julia binding's allocated
   * bytes (its GC counters read at each log record and mark: julia.gc.*) */
  ['gc.live_bytes', 'julia.gc.allocated_bytes'].forEach(function (want) {
    self.counters.forEach(function (c, i) { if (c.name === want && !self.counterPicked) { self.counterSel = i; self.counterPicked = true; } });
  });
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
