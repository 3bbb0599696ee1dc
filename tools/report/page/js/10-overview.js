/* Run overview (key figures and metadata) and the ranked findings. */
'use strict';
J.renderOverview = function (data) {
  var runs = data.runs || [data.run || {}], run = runs[0] || {}, procs = data.processes || [];
  function sum(key) { return runs.reduce(function (a, r) { return a + (r[key] || 0); }, 0); }
  var title = runs.length > 1 ? runs.length + ' processes · ' + (run.command_line || run.process || '') : (run.command_line || run.process || 'recording');
  document.getElementById('top-title').textContent = title;

  var kpis = document.getElementById('kpis');
  function kpi(label, value, warn) {
    var box = J.el('div', 'kpi' + (warn ? ' warn' : ''));
    box.appendChild(J.el('div', 'v', value));
    box.appendChild(J.el('div', 'k', label));
    kpis.appendChild(box);
  }
  kpi('duration', J.fmtNs(data.duration_ns || run.duration_ns || 0));
  if (runs.length > 1) kpi('processes', J.fmtInt(runs.length));
  kpi('spans', J.fmtInt(sum('spans_total')));
  kpi('events in file' + (runs.length > 1 ? 's' : ''), J.fmtInt(sum('events')));
  kpi('threads', J.fmtInt((data.lanes || []).length));
  kpi('sites with calls', J.fmtInt((data.table || []).length));
  if (sum('gc_pauses')) kpi('GC pauses · ' + J.fmtNs(sum('gc_ns')), J.fmtInt(sum('gc_pauses')));
  if (sum('compiles')) kpi('compiles · ' + J.fmtNs(sum('compile_ns')), J.fmtInt(sum('compiles')));
  kpi('events dropped', J.fmtInt(sum('dropped')), sum('dropped') > 0);
  if (run.span_cost_ns) kpi('cost per span', J.fmtNs(run.span_cost_ns));
  if (runs.length === 1 && run.overhead_share !== undefined) kpi('instrumentation cost (est.)', J.fmtPct(run.overhead_share), run.overhead_share > 0.05);
  if (sum('file_bytes')) kpi('file size', J.fmtBytes(sum('file_bytes')));
  if (sum('truncated')) kpi('file ends early', 'partial', true);

  var meta = document.getElementById('meta');
  function row(k, v, into) {
    if (v === undefined || v === null || v === '') return;
    (into || meta).appendChild(J.el('dt', null, k));
    (into || meta).appendChild(J.el('dd', null, v));
  }
  if (runs.length > 1) row('processes', procs.map(function (p) { return p.name; }).join('\n'));
  runs.forEach(function (r, i) {
    var dl = meta;
    if (runs.length > 1) { /* one folded block per process */
      var det = J.el('details', 'all-meta'), sum2 = J.el('summary', null, (procs[i] || {}).name || r.file);
      dl = J.el('dl', 'meta');
      det.appendChild(sum2);
      det.appendChild(dl);
      meta.parentNode.appendChild(det);
    }
    row('host', r.host, dl);
    row('process', r.process, dl);
    row('command line', r.command_line, dl);
    if (r.start_unix_ns) row('started (UTC)', new Date(r.start_unix_ns / 1e6).toISOString().replace('T', ' ').replace('Z', ''), dl);
    row('plugins', (r.plugins || []).join(', ') || 'none', dl);
    if (r.drops && r.drops.length)
      row('drops by reason', r.drops.map(function (d) { return d[0] + ': ' + J.fmtInt(d[1]); }).join(', '), dl);
    if (r.read_error) row('read error', r.read_error, dl);
    row('file', r.file, dl);
    if (r.lod) row('timeline detail', r.lod, dl);
    if (runs.length > 1 && r.overhead_share !== undefined) row('instrumentation cost (est.)', J.fmtPct(r.overhead_share), dl);
    /* every metadata entry, folded away: most are for the curious */
    var m = r.meta || [];
    if (m.length) {
      var det2 = J.el('details', 'all-meta'), s2 = J.el('summary', null, 'all metadata (' + m.length + ' entries)');
      var dl2 = J.el('dl', 'meta');
      det2.appendChild(s2);
      det2.appendChild(dl2);
      for (var k = 0; k < m.length; k++) row(m[k][0], m[k][1], dl2);
      (runs.length > 1 ? dl.parentNode : meta.parentNode).appendChild(det2);
    }
  });
};

J.renderAllocators = function (data) {
  var t = document.getElementById('allocators');
  var rows = data.allocators || [];
  if (!t) return;
  if (!rows.length) {
    t.appendChild(J.el('caption', null, 'No site allocated memory.'));
    return;
  }
  var multi = (data.processes || []).length > 1;
  var head = J.el('tr');
  ['site', 'location', 'self', 'total', 'calls', 'per call', 'GC'].forEach(function (h) { head.appendChild(J.el('th', null, h)); });
  t.appendChild(head);
  for (var i = 0; i < rows.length; i++) {
    var a = rows[i], tr = J.el('tr');
    var proc = multi && data.processes[a.proc] ? '  ·  ' + data.processes[a.proc].name : '';
    tr.appendChild(J.el('td', null, a.func));
    tr.appendChild(J.el('td', 'loc', (a.file ? a.file + (a.line ? ':' + a.line : '') : '') + proc));
    tr.appendChild(J.el('td', 'num', J.fmtBytes(a.self_bytes)));
    tr.appendChild(J.el('td', 'num', J.fmtBytes(a.bytes)));
    tr.appendChild(J.el('td', 'num', String(a.calls)));
    tr.appendChild(J.el('td', 'num', J.fmtBytes(a.calls ? a.bytes / a.calls : 0)));
    tr.appendChild(J.el('td', 'num', J.fmtNs(a.gc_ns)));
    t.appendChild(tr);
  }
};

/** Calls grouped by a span attribute's value: one table per key, chosen in a select. */
J.renderAttrs = function (data) {
  var rows = data.attrs || [];
  var block = document.getElementById('attrs-block'), sel = document.getElementById('attrs-select');
  var t = document.getElementById('attrs');
  if (!block || !rows.length) return;
  block.hidden = false;
  var keys = [];
  rows.forEach(function (r) { if (keys.indexOf(r.key) < 0) keys.push(r.key); });
  keys.forEach(function (k) { var o = J.el('option', null, k); o.value = k; sel.appendChild(o); });
  var multi = (data.processes || []).length > 1;
  function show() {
    while (t.firstChild) t.removeChild(t.firstChild);
    var head = J.el('tr');
    ['site', sel.value, 'calls', 'total', 'mean', 'max'].forEach(function (h) { head.appendChild(J.el('th', null, h)); });
    t.appendChild(head);
    rows.filter(function (r) { return r.key === sel.value; }).forEach(function (r) {
      var tr = J.el('tr');
      var proc = multi && data.processes[r.proc] ? '  ·  ' + data.processes[r.proc].name : '';
      tr.appendChild(J.el('td', null, r.func + proc));
      tr.appendChild(J.el('td', 'attr-value', r.value));
      tr.appendChild(J.el('td', 'num', String(r.calls)));
      tr.appendChild(J.el('td', 'num', J.fmtNs(r.total)));
      tr.appendChild(J.el('td', 'num', J.fmtNs(r.calls ? r.total / r.calls : 0)));
      tr.appendChild(J.el('td', 'num', J.fmtNs(r.max)));
      tr.dataset.calls = String(r.calls);
      tr.dataset.total = String(r.total);
      t.appendChild(tr);
    });
  }
  sel.addEventListener('change', show);
  show();
};

/** Log records and span errors grouped by code.method (text only: method names are program strings). */
J.renderMethods = function (data) {
  var rows = data.methods || [], block = document.getElementById('methods-block'), t = document.getElementById('methods');
  if (!block || !rows.length) return;
  block.hidden = false;
  var multi = (data.processes || []).length > 1;
  var head = J.el('tr');
  ['method', 'logs', 'warnings', 'errors', 'span errors'].forEach(function (h) { head.appendChild(J.el('th', null, h)); });
  t.appendChild(head);
  rows.forEach(function (r) {
    var tr = J.el('tr');
    var proc = multi && data.processes[r.proc] ? '  ·  ' + data.processes[r.proc].name : '';
    tr.appendChild(J.el('td', 'attr-value', r.method + proc));
    tr.appendChild(J.el('td', 'num', String(r.logs)));
    tr.appendChild(J.el('td', 'num', String(r.warnings)));
    tr.appendChild(J.el('td', 'num', String(r.errors)));
    tr.appendChild(J.el('td', 'num', String(r.span_errors)));
    tr.dataset.logs = String(r.logs);
    tr.dataset.spanErrors = String(r.span_errors);
    t.appendChild(tr);
  });
};

J.renderFindings = function (data) {
  var list = document.getElementById('findings-list');
  var fs = data.findings || [];
  document.getElementById('findings-count').textContent = '(' + fs.length + ')';
  if (!fs.length) {
    list.appendChild(J.el('li', 'empty', 'No findings: nothing in this run crossed a hunt threshold.'));
    return;
  }
  for (var i = 0; i < fs.length; i++) {
    var f = fs[i];
    var unstable = f.kind === 'type_instability';
    var li = J.el('li', 'finding' + (unstable ? ' instability' : '') + (f.severity ? ' sev-' + f.severity : ''));
    li.dataset.kind = f.kind;
    var head = J.el('div', 'f-head');
    head.appendChild(J.el('span', 'f-rank', '#' + (i + 1)));
    head.appendChild(J.el('span', 'f-kind', f.kind));
    head.appendChild(J.el('span', 'f-title', f.title));
    var cost = [];
    if (f.cost_ns) cost.push(J.fmtNs(f.cost_ns) + (f.estimate ? ' (estimated from ' + f.estimate + ')' : ''));
    if (f.share !== undefined && f.share !== null) cost.push(J.fmtPct(f.share) + ' of the run');
    if (cost.length) head.appendChild(J.el('span', 'f-cost', cost.join(' · ')));
    li.appendChild(head);
    var procName = (data.processes || []).length > 1 && data.processes[f.proc] ? data.processes[f.proc].name : '';
    if (f.func || f.file || procName) {
      var loc = (f.func || '') + (f.file ? '  ' + f.file + (f.line ? ':' + f.line : '') : '') + (procName ? '  ·  ' + procName : '');
      li.appendChild(J.el('div', 'f-loc', loc.trim()));
    }
    var ev = f.evidence;
    if (ev && ev.length) li.appendChild(J.el('p', 'f-evidence', Array.isArray(ev) ? ev.join(' · ') : ev));
    if (f.hint) li.appendChild(J.el('p', 'f-hint', f.hint));
    if (f.chain) li.appendChild(J.el('pre', 'f-chain', f.chain));
    list.appendChild(li);
  }
};
