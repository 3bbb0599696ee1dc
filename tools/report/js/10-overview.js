/* Run overview (key figures and metadata) and the ranked findings. */
'use strict';
J.renderOverview = function (data) {
  var run = data.run || {};
  var title = run.command_line || run.process || 'recording';
  document.getElementById('top-title').textContent = title;

  var kpis = document.getElementById('kpis');
  function kpi(label, value, warn) {
    var box = J.el('div', 'kpi' + (warn ? ' warn' : ''));
    box.appendChild(J.el('div', 'v', value));
    box.appendChild(J.el('div', 'k', label));
    kpis.appendChild(box);
  }
  kpi('duration', J.fmtNs(run.duration_ns || 0));
  kpi('spans', J.fmtInt(run.spans_total || 0));
  kpi('events in file', J.fmtInt(run.events || 0));
  kpi('threads', J.fmtInt((data.lanes || []).length));
  kpi('sites with calls', J.fmtInt((data.table || []).length));
  if (run.gc_pauses) kpi('GC pauses · ' + J.fmtNs(run.gc_ns || 0), J.fmtInt(run.gc_pauses));
  if (run.compiles) kpi('compiles · ' + J.fmtNs(run.compile_ns || 0), J.fmtInt(run.compiles));
  kpi('events dropped', J.fmtInt(run.dropped || 0), (run.dropped || 0) > 0);
  if (run.span_cost_ns) kpi('cost per span', J.fmtNs(run.span_cost_ns));
  if (run.overhead_share !== undefined) kpi('instrumentation cost (est.)', J.fmtPct(run.overhead_share), run.overhead_share > 0.05);
  if (run.file_bytes) kpi('file size', J.fmtBytes(run.file_bytes));
  if (run.truncated) kpi('file ends early', 'partial', true);

  var meta = document.getElementById('meta');
  function row(k, v, into) {
    if (v === undefined || v === null || v === '') return;
    (into || meta).appendChild(J.el('dt', null, k));
    (into || meta).appendChild(J.el('dd', null, v));
  }
  row('host', run.host);
  row('process', run.process);
  row('command line', run.command_line);
  if (run.start_unix_ns) row('started (UTC)', new Date(run.start_unix_ns / 1e6).toISOString().replace('T', ' ').replace('Z', ''));
  row('plugins', (run.plugins || []).join(', ') || 'none');
  if (run.drops && run.drops.length)
    row('drops by reason', run.drops.map(function (d) { return d[0] + ': ' + J.fmtInt(d[1]); }).join(', '));
  if (run.read_error) row('read error', run.read_error);
  row('file', run.file);
  if (run.lod) row('timeline detail', run.lod);
  /* every metadata entry, folded away: most are for the curious */
  var m = run.meta || [];
  if (m.length) {
    var det = J.el('details', 'all-meta'), sum = J.el('summary', null, 'all metadata (' + m.length + ' entries)');
    var dl = J.el('dl', 'meta');
    det.appendChild(sum);
    det.appendChild(dl);
    for (var i = 0; i < m.length; i++) row(m[i][0], m[i][1], dl);
    meta.parentNode.appendChild(det);
  }
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
    if (f.cost_ns) cost.push(J.fmtNs(f.cost_ns));
    if (f.share !== undefined && f.share !== null) cost.push(J.fmtPct(f.share) + ' of the run');
    if (cost.length) head.appendChild(J.el('span', 'f-cost', cost.join(' · ')));
    li.appendChild(head);
    if (f.func || f.file) {
      var loc = (f.func || '') + (f.file ? '  ' + f.file + (f.line ? ':' + f.line : '') : '');
      li.appendChild(J.el('div', 'f-loc', loc));
    }
    var ev = f.evidence;
    if (ev && ev.length) li.appendChild(J.el('p', 'f-evidence', Array.isArray(ev) ? ev.join(' · ') : ev));
    if (f.hint) li.appendChild(J.el('p', 'f-hint', f.hint));
    if (f.chain) li.appendChild(J.el('pre', 'f-chain', f.chain));
    list.appendChild(li);
  }
};
