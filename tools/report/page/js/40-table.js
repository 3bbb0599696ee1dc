/* Sortable per-site table with the signature breakdown of each site.
 * A recording may hold 100k sites: a sort compares precomputed keys (one Intl.Collator for
 * text), the body draws the first J.TABLE_PAGE rows with a "show more" row, and one click
 * listener on the body serves every row, so a sort or the first draw costs milliseconds,
 * not seconds of DOM work. */
'use strict';
J.TABLE_PAGE = 500;
J.SiteTable = function (data) {
  var self = this;
  this.sites = data.sites || [];
  this.rows = (data.table || []).slice();
  var maxTotal = 1;
  this.rows.forEach(function (r) { if (r.total > maxTotal) maxTotal = r.total; });
  this.maxTotal = maxTotal;
  var S = function (r) { return self.sites[r.k] || []; };
  this.cols = [
    { key: 'name', label: 'Site', cls: 'name', get: function (r) { return S(r)[0] || ''; }, text: true },
    { key: 'proc', label: 'Process', cls: 'loc', get: function (r) { var p = (data.processes || [])[r.proc || 0]; return p ? p.name : ''; }, text: true },
    { key: 'loc', label: 'Location', cls: 'loc', get: function (r) { var s = S(r); return s[1] ? s[1] + (s[2] ? ':' + s[2] : '') : ''; }, text: true },
    { key: 'calls', label: 'Calls', get: function (r) { return r.calls; }, fmt: J.fmtInt },
    { key: 'total', label: 'Total', get: function (r) { return r.total; }, fmt: J.fmtNs, bar: true },
    { key: 'self', label: 'Self', get: function (r) { return r.self; }, fmt: J.fmtNs },
    { key: 'mean', label: 'Mean', get: function (r) { return r.calls ? r.total / r.calls : 0; }, fmt: J.fmtNs },
    { key: 'p50', label: 'p50', get: function (r) { return r.p50; }, fmt: J.fmtNs },
    { key: 'p99', label: 'p99', get: function (r) { return r.p99; }, fmt: J.fmtNs },
    { key: 'max', label: 'Max', get: function (r) { return r.max; }, fmt: J.fmtNs },
    { key: 'bytes', label: 'Allocated', get: function (r) { return r.bytes || 0; }, fmt: J.fmtBytes },
    { key: 'gc', label: 'GC %', get: function (r) { return r.total ? Math.min(1, (r.gc || 0) / r.total) : 0; }, fmt: J.fmtPct },
    { key: 'errors', label: 'Errors', get: function (r) { return r.errors || 0; }, fmt: J.fmtInt },
    { key: 'sigs', label: 'Signatures', cls: 'sigs', get: function (r) { return (r.sigs || []).length; }, sigs: true }
  ];
  /* the process column only when the page holds several */
  if (!((data.processes || []).length > 1)) this.cols = this.cols.filter(function (c) { return c.key !== 'proc'; });
  this.sortKey = 'total';
  this.sortDir = -1;
  this.shown = J.TABLE_PAGE;
  this.table = document.getElementById('site-table');
  this.renderHead();
  /* a click on a row finds the site in the flame graph and on the timeline; on the last row, shows more */
  this.table.tBodies[0].addEventListener('click', function (ev) {
    var tr = ev.target.closest ? ev.target.closest('tr') : null;
    if (!tr) return;
    if (tr.classList.contains('more')) { self.shown += J.TABLE_PAGE; self.renderBody(true); return; }
    var s = self.sites[Number(tr.dataset.k)];
    if (s && J.flame) { J.flame.search(s[0]); document.getElementById('timeline').scrollIntoView({ behavior: 'smooth' }); }
  });
  this.renderBody();
};

J.SiteTable.prototype.renderHead = function () {
  var self = this, tr = J.el('tr'), thead = this.table.tHead;
  this.cols.forEach(function (c) {
    var th = J.el('th', c.cls || null, c.label);
    th.dataset.key = c.key;
    th.setAttribute('aria-sort', c.key === self.sortKey ? (self.sortDir > 0 ? 'ascending' : 'descending') : 'none');
    th.addEventListener('click', function () {
      if (self.sortKey === c.key) self.sortDir = -self.sortDir;
      else { self.sortKey = c.key; self.sortDir = c.text ? 1 : -1; }
      self.table.tHead.querySelectorAll('th').forEach(function (h) {
        h.setAttribute('aria-sort', h.dataset.key === self.sortKey ? (self.sortDir > 0 ? 'ascending' : 'descending') : 'none');
      });
      self.shown = J.TABLE_PAGE;
      self.renderBody();
    });
    tr.appendChild(th);
  });
  thead.appendChild(tr);
};

J.SiteTable.prototype.sorted = function () {
  var self = this, col = null;
  this.cols.forEach(function (c) { if (c.key === self.sortKey) col = c; });
  if (this.order && this.orderKey === this.sortKey && this.orderDir === this.sortDir) return this.order;
  var rows = this.rows, n = rows.length, keys = new Array(n), idx = new Array(n), i;
  for (i = 0; i < n; i++) { keys[i] = col.text ? String(col.get(rows[i])) : col.get(rows[i]); idx[i] = i; }
  var cmp = col.text ? new Intl.Collator().compare : null, dir = this.sortDir;
  idx.sort(function (a, b) {
    var x = keys[a], y = keys[b];
    var r = cmp ? cmp(x, y) : x - y;
    if (r === 0) r = (rows[a].k - rows[b].k) * -dir;
    return r * dir;
  });
  this.order = idx.map(function (j) { return rows[j]; });
  this.orderKey = this.sortKey;
  this.orderDir = this.sortDir;
  return this.order;
};

J.SiteTable.prototype.renderBody = function (more) {
  var self = this, tbody = this.table.tBodies[0];
  var all = this.sorted(), from = 0;
  if (more && tbody.lastChild && tbody.lastChild.classList.contains('more')) {
    from = tbody.rows.length - 1;
    tbody.removeChild(tbody.lastChild);
  } else tbody.textContent = '';
  if (!all.length) {
    var tr0 = J.el('tr'), td0 = J.el('td', 'empty', 'No sites recorded.');
    td0.colSpan = this.cols.length; tr0.appendChild(td0); tbody.appendChild(tr0);
    return;
  }
  var rows = all.slice(from, Math.min(all.length, this.shown));
  var frag = document.createDocumentFragment();
  rows.forEach(function (r) {
    var tr = J.el('tr', r.unstable ? 'unstable' : null);
    tr.dataset.k = r.k;
    tr.title = 'Show in the timeline and flame graph';
    self.cols.forEach(function (c) {
      var td = J.el('td', c.cls || null);
      if (c.sigs) {
        (r.sigs || []).forEach(function (s) {
          var line = J.el('span', 'sig' + (s[2] ? ' unstable' : ''), s[0] + (s[1] ? '  × ' + J.fmtInt(s[1]) : ''));
          td.appendChild(line);
        });
      } else {
        var v = c.get(r);
        td.textContent = c.fmt ? c.fmt(v) : v;
        if (c.text) td.title = v;
        if (c.key === 'calls' && r.sampled) { /* thinned on purpose: not a loss */
          td.textContent += ' · 1 in ' + J.fmtInt(r.sampled);
          td.title = 'sampled 1 in ' + J.fmtInt(r.sampled) + ': the sampling mode (JAGER_SAMPLE) recorded about one call in ' +
            J.fmtInt(r.sampled) + ' as an event; the totals are exact';
        }
        if (c.key === 'self' && r.lost) { /* honest about what the events lack */
          td.textContent = '~' + td.textContent;
          td.title = J.fmtInt(r.lost) + ' calls of this site never reached the file: self time is from the recorded calls only';
        }
        if (c.bar) {
          var b = J.el('span', 'bar');
          b.style.width = Math.max(1, Math.round(40 * v / self.maxTotal)) + 'px';
          td.appendChild(b);
        }
      }
      tr.appendChild(td);
    });
    frag.appendChild(tr);
  });
  if (all.length > this.shown) {
    var trm = J.el('tr', 'more'), tdm = J.el('td', 'more',
      'Showing ' + J.fmtInt(this.shown) + ' of ' + J.fmtInt(all.length) + ' sites — show ' +
      J.fmtInt(Math.min(J.TABLE_PAGE, all.length - this.shown)) + ' more');
    tdm.colSpan = this.cols.length;
    trm.title = 'Sorting orders all ' + J.fmtInt(all.length) + ' sites; the table draws them a page at a time';
    trm.appendChild(tdm);
    frag.appendChild(trm);
  }
  tbody.appendChild(frag);
};
