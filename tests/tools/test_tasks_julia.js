// Julia tasks through the binding into the tools (label julia; issue 20 items a–c):
// tests/tools/julia/tasks_report.jl records a root task and two Jager.@async tasks that yield
// inside their spans and log from `work(::Int)`. The report has exactly one lane per task
// with the spans, logs and marks each emitted; its julia.gc.* series equal the GC counters
// the records carry (`jager dump`, in time order); `summary --by method` counts the five logs
// under work's signature, which the file holds once (one interned string id).
'use strict';
const fs = require('fs');
const path = require('path');
const { tmp, check, done, run, jager, jagerJson, juliaSetup } = require('./tutil');

const src = process.env.JAGER_SOURCE_DIR;
const { julia, depot, lib } = juliaSetup();

const rec = tmp('julia-tasks.jgr');
const r = run(julia, ['--startup-file=no', `--project=${path.join(src, 'bindings', 'julia')}`,
  path.join(src, 'tests', 'tools', 'julia', 'tasks_report.jl'), rec], { JULIA_DEPOT_PATH: depot, JAGER_LIB: lib, JAGER_QUIET: '1' });
check(r.code === 0, `julia tasks_report.jl ran (exit ${r.code})${r.code ? '\n' + r.err.slice(-2000) : ''}`);
if (r.code !== 0) done();
const want = JSON.parse(r.out.trim().split('\n').pop());

const html = tmp('julia-tasks.html');
check(jager(['report', rec, '-o', html]).code === 0, 'jager report exits 0');
const data = JSON.parse(fs.readFileSync(html, 'utf8').match(/<script type="application\/json" id="jager-data">([\s\S]*?)<\/script>/)[1]);
check(data.lanes.length === want.tasks.length && data.lanes.every((l) => l.task), `one lane per task, no other (${data.lanes.length})`);
for (const t of want.tasks) {
  const l = data.lanes.find((x) => x.task === t.id);
  check(l && l.total === t.spans, `task ${t.id}: ${l && l.total} spans (want ${t.spans})`);
  check(l && (l.logs ? l.logs.t.length : 0) === t.logs, `task ${t.id}: ${t.logs} logs on its lane`);
  check(l && (l.marks ? l.marks.t.length : 0) === t.marks, `task ${t.id}: ${t.marks} marks on its lane`);
  if (t.name) check(l && l.name.includes(t.name), `task ${t.id}: named ${l && l.name}`);
}
// the GC counters as the records carry them, in time order
const dump = jager(['dump', rec]).out.trim().split('\n').map((x) => JSON.parse(x))
  .filter((e) => (e.type === 'log' || e.type === 'mark') && e.attrs && 'gc.allocated_bytes' in e.attrs)
  .sort((a, b) => a.time_ns - b.time_ns);
check(dump.length === 6, `six events carry GC counters (${dump.length})`);
for (const k of ['gc.allocated_bytes', 'gc.pauses', 'gc.time_ns', 'gc.full_sweeps']) {
  const c = data.counters.find((x) => x.name === 'julia.' + k);
  check(c && JSON.stringify(c.v) === JSON.stringify(dump.map((e) => e.attrs[k])), `julia.${k} = the values recorded`);
}
const { json } = jagerJson(['summary', '--by', 'method', rec]);
const m = json && json.by.methods;
check(m && m.length === 1 && m[0].method === want.method && m[0].logs === 5, `summary --by method: ${JSON.stringify(m)}`);
const ids = jager(['dump', rec]).out.trim().split('\n').map((x) => JSON.parse(x))
  .filter((e) => e.type === 'log').map((e) => e.attrs['code.method']);
check(ids.length === 5 && ids.every((v) => v && v.string_id === ids[0].string_id), 'the five logs name one interned string');

// Jager.timing_tree (what print_timings shows after a recording) on rec_tasks' file: the
// span task 2 began on thread 1 and ended on thread 2 (a span_x) sits under its true
// parent, with the error set on it on thread 2 (format 1.2's moved span reference); the
// binding read only plain span records before, so it was missing from the tree.
if (process.env.REC_TASKS) {
  const moved = tmp('tasks-moved.jgr');
  const rr = run(process.env.REC_TASKS, [moved]);
  check(rr.code === 0, `rec_tasks ran (${rr.code})`);
  const tr = run(julia, ['--startup-file=no', `--project=${path.join(src, 'bindings', 'julia')}`, '-e',
    'using Jager; show_(n, d) = for c in n.children; println(d, "\t", c.name, "\t", c.calls, "\t", c.errors); show_(c, d + 1); end; ' +
    'show_(Jager.timing_tree(ARGS[1]; exact = false), 0)', moved], { JULIA_DEPOT_PATH: depot, JAGER_LIB: lib, JAGER_QUIET: '1' });
  const rows = tr.out.trim().split('\n').map((l) => l.split('\t'));
  const at = (d, name) => rows.findIndex((x) => x[0] === String(d) && x[1] === name);
  const outer = at(0, 'solve');
  let end = rows.findIndex((x, i) => i > outer && x[0] === '0');
  if (end < 0) end = rows.length;
  const inner = rows.findIndex((x, i) => i > outer && i < end && x[0] === '1' && x[1] === 'solve');
  check(tr.code === 0 && outer >= 0 && inner > outer && rows[inner][2] === '1' && rows[inner][3] === '1' &&
    rows.filter((x) => x[1] === 'solve').length === 2,
    `Jager.timing_tree: the migrated solve under the outer one, 1 call, its error on it (${JSON.stringify(rows)} ${tr.err.slice(-500)})`);
}
done();
