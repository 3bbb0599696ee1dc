/* Sortable per-site table with the signature breakdown of each site. */
'use strict';
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
  this.table = document.getElementById('site-table');
  this.renderHead();
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
      self.renderBody();
    });
    tr.appendChild(th);
  });
  thead.appendChild(tr);
};

J.SiteTable.prototype.renderBody = function () {
  var self = this, col = null, tbody = this.table.tBodies[0];
  this.cols.forEach(function (c) { if (c.key === self.sortKey) col = c; });
  var rows = this.rows.slice();
  rows.sort(function (a, b) {
    var x = col.get(a), y = col.get(b);
    var r = col.text ? String(x).localeCompare(String(y)) : x - y;
    if (r === 0) r = (a.k - b.k) * -self.sortDir;
    return r * self.sortDir;
  });
  while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
  if (!rows.length) {
    var tr0 = J.el('tr'), td0 = J.el('td', 'empty', 'No sites recorded.');
    td0.colSpan = this.cols.length; tr0.appendChild(td0); tbody.appendChild(tr0);
    return;
  }
  var frag = document.createDocumentFragment();
  rows.forEach(function (r) {
    var tr = J.el('tr', r.unstable ? 'unstable' : null);
    /* a click on a row finds the site in the flame graph and on the timeline */
    tr.addEventListener('click', function () {
      var s = self.sites[r.k];
      if (s && J.flame) { J.flame.search(s[0]); document.getElementById('timeline').scrollIntoView({ behavior: 'smooth' }); }
    });
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
  tbody.appendChild(frag);
};
