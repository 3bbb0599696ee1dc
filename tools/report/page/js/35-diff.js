/* The differential view (`jager report --baseline BASE.jgr HEAD.jgr`): every call path of
 * the head is matched, by its chain of site names, with the same path in the baseline, the
 * flame graph is coloured by the change (red slower, blue faster, violet new) and a table
 * lists the sites whose total time moved most. Names only ever reach the page as text. */
'use strict';
J.Diff = function (data, flame) {
  var b = data.baseline;
  this.flame = flame;
  var bp = b.tree.p || [], bn = b.tree.n || [], bt = b.tree.t || [];
  var key = new Array(bp.length), map = Object.create(null);
  function keyOf(i) {
    if (key[i] !== undefined) return key[i];
    key[i] = bp[i] < 0 ? '' : keyOf(bp[i]) + '\u0000' + bn[i];
    return key[i];
  }
  for (var i = 0; i < bp.length; i++) { var k = keyOf(i); map[k] = (map[k] || 0) + bt[i]; }
  /* the head's paths, parents first */
  var n = flame.p.length;
  this.base = new Float64Array(n);
  this.known = new Uint8Array(n);
  var hk = new Array(n);
  for (i = 0; i < n; i++) {
    hk[i] = flame.p[i] < 0 ? '' : hk[flame.p[i]] + '\u0000' + flame.name(i);
    if (hk[i] in map) { this.base[i] = map[hk[i]]; this.known[i] = 1; }
  }
  this.data = data;
};

/* Fill colour of head node i: grey within ±2 %, then red or blue by log2 of the ratio. */
J.Diff.prototype.color = function (i) {
  if (this.flame.p[i] < 0) return '#cfd6df';
  if (!this.known[i]) return '#b89be0';
  var h = this.flame.tot[i], b = this.base[i];
  if (!(b > 0)) return '#b89be0';
  var r = h / b;
  if (Math.abs(r - 1) < 0.02) return '#dde2e8';
  var s = Math.min(1, Math.abs(Math.log(r) / Math.LN2));   /* a doubling is full colour */
  var mix = function (a, z) { return Math.round(a + (z - a) * (0.25 + 0.75 * s)); };
  return r > 1 ? 'rgb(' + mix(240, 214) + ',' + mix(220, 60) + ',' + mix(220, 60) + ')'
               : 'rgb(' + mix(220, 50) + ',' + mix(228, 110) + ',' + mix(240, 220) + ')';
};

J.Diff.prototype.describe = function (i) {
  if (!this.known[i]) return 'new: not in the baseline';
  var h = this.flame.tot[i], b = this.base[i];
  return 'baseline ' + J.fmtNs(b) + ' → ' + J.fmtNs(h) + (b > 0 ? ' (' + (h >= b ? '+' : '') + ((h / b - 1) * 100).toFixed(1) + ' %)' : '');
};

/* The sites table of the differential page: by total time moved, largest first. */
J.Diff.prototype.render = function () {
  var sec = document.getElementById('diff');
  sec.hidden = false;
  document.getElementById('diff-base').textContent = this.data.baseline.path;
  var head = Object.create(null), data = this.data;
  (data.table || []).forEach(function (r) {
    var s = data.sites[r.k] || ['?', ''];
    var k = s[0] + '\u0000' + s[1];
    head[k] = { name: s[0], file: s[1], total: (head[k] ? head[k].total : 0) + r.total, calls: r.calls };
  });
  var rows = [], seen = Object.create(null);
  data.baseline.sites.forEach(function (s) {
    var k = s[0] + '\u0000' + s[1], h = head[k];
    seen[k] = 1;
    rows.push({ name: s[0], file: s[1], base: s[2], head: h ? h.total : 0, gone: !h });
  });
  Object.keys(head).forEach(function (k) { if (!seen[k]) rows.push({ name: head[k].name, file: head[k].file, base: 0, head: head[k].total, added: true }); });
  rows.sort(function (x, y) { return Math.abs(y.head - y.base) - Math.abs(x.head - x.base); });
  var body = document.querySelector('#diff-table tbody');
  rows.slice(0, 50).forEach(function (r) {
    var tr = document.createElement('tr');
    var change = r.added ? 'new' : r.gone ? 'removed' : (r.base > 0 ? ((r.head >= r.base ? '+' : '') + ((r.head / r.base - 1) * 100).toFixed(1) + ' %') : '–');
    [r.name, r.file, J.fmtNs(r.base), J.fmtNs(r.head), (r.head >= r.base ? '+' : '−') + J.fmtNs(Math.abs(r.head - r.base)), change]
      .forEach(function (text, c) { var td = J.el('td', c >= 2 ? 'num' : null, text); tr.appendChild(td); });
    tr.className = r.head > r.base * 1.02 ? 'slower' : r.head < r.base * 0.98 ? 'faster' : '';
    body.appendChild(tr);
  });
};
