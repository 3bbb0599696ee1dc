// Julia event context in the tools (issue 20 items a–c), on rec_tasks' recording (four
// tasks, one of them migrating between two threads, logs and marks carrying the Julia
// binding's GC counters and code.method, a span error with code.method, hostile task and
// method names): the report's data has exactly one timeline lane per task with the threads
// it ran on and its span count, and julia.gc.* series equal to the values written;
// `summary --by method` counts each method's logs, warnings, errors and span errors exactly;
// the Chrome export puts each task's spans on one lane and the GC counters on "C" tracks
// with the values written. Task 2 migrates inside its solve span: the inner solve, begun on
// thread 1 under it and ended on thread 2 (a JAGER_EV_SPAN_X), keeps solve as its parent in
// the summary's and the report's call trees and in the Chrome export's args, and a log
// written on thread 2 inside it names it; before the task directory it was a root of thread
// 2 (parent_id 0, a second top-level solve in the trees).
'use strict';
const fs = require('fs');
const { tmp, check, done, run, jager, jagerJson } = require('./tutil');

const rec = tmp('tasks.jgr');
const r = run(process.env.REC_TASKS, [rec]);
if (r.code !== 0) throw new Error(`rec_tasks failed (${r.code}): ${r.err}`);
const want = JSON.parse(r.out.trim().split('\n').pop());
const hostile = want.hostile_method;
const methodWant = Object.assign({}, want.methods);
methodWant[hostile] = methodWant.hostile;
delete methodWant.hostile;

// ---- the report's data block: task lanes, GC series, methods ----
const html = tmp('tasks.html');
check(jager(['report', rec, '-o', html]).code === 0, 'jager report exits 0');
const page = fs.readFileSync(html, 'utf8');
const data = JSON.parse(page.match(/<script type="application\/json" id="jager-data">([\s\S]*?)<\/script>/)[1]);
const taskLanes = data.lanes.filter((l) => l.task);
check(data.lanes.length === want.tasks.length && taskLanes.length === want.tasks.length,
  `one lane per task and no other (${data.lanes.length} lanes, ${want.tasks.length} tasks)`);
for (const t of want.tasks) {
  const l = taskLanes.filter((x) => x.task === t.id);
  check(l.length === 1, `task ${t.id}: exactly one lane`);
  if (l.length !== 1) continue;
  check(l[0].total === t.spans, `task ${t.id}: ${l[0].total} spans on its lane, ${t.spans} recorded`);
  check(JSON.stringify(l[0].threads) === JSON.stringify(t.threads), `task ${t.id}: ran on threads ${l[0].threads} (want ${t.threads})`);
  if (t.name) check(l[0].name.includes(t.name), `task ${t.id}: its lane is named after it (${JSON.stringify(l[0].name)})`);
}
check(JSON.stringify(data.lanes.map((l) => l.task)) === JSON.stringify(want.tasks.map((t) => t.id)), 'task lanes in task id order');
const tl2 = taskLanes.find((l) => l.task === 2);
check(tl2 && tl2.rows.length === 2 && tl2.rows[1].s.length === 4, 'task 2: its 3 steps and the migrated solve nest under solve (row 1), as its own tree');
// the page's call tree: the migrated solve under solve, with the 3 steps; one top-level solve
const tr = data.tree, siteName = (k) => data.sites[k] && data.sites[k][0]; // sites: [name, file, line]
const kidsOf = (i) => tr.p.map((p, j) => [p, j]).filter(([p]) => p === i).map(([, j]) => j);
const topSolve = kidsOf(0).filter((j) => siteName(tr.k[j]) === 'solve');
check(topSolve.length === 1 && tr.c[topSolve[0]] === 1, `report tree: one top-level solve, 1 call (${topSolve.map((j) => tr.c[j])})`);
const underSolve = topSolve.length === 1 ? kidsOf(topSolve[0]).map((j) => `${siteName(tr.k[j])}:${tr.c[j]}`).sort() : [];
check(JSON.stringify(underSolve) === JSON.stringify(['solve:1', 'step:3']), `report tree: solve holds the migrated solve and 3 steps (${underSolve})`);
for (let i = 0; i < want.gc_keys.length; i++) {
  const c = data.counters.find((x) => x.name === 'julia.' + want.gc_keys[i]);
  const vals = want.gc.map((row) => row[i]);
  check(c && JSON.stringify(c.v) === JSON.stringify(vals), `series julia.${want.gc_keys[i]} = the values written (${c && c.v} vs ${vals})`);
}
check(!page.includes(hostile) && !page.includes('<svg onload'), 'hostile names escaped in the page source');
const pm = data.methods;
check(pm.length === Object.keys(methodWant).length, `the page's methods: ${pm.length}`);
for (const m of pm) {
  const w = methodWant[m.method];
  check(w && m.logs === w.logs && m.warnings === w.warnings && m.errors === w.errors && m.span_errors === w.span_errors,
    `page: ${m.method}: ${m.logs} logs, ${m.warnings} warn, ${m.errors} errors, ${m.span_errors} span errors`);
}

// ---- summary --by method ----
const { json } = jagerJson(['summary', '--by', 'method', rec]);
const ms = json && json.by && json.by.methods;
check(ms && ms.length === 3, 'summary --by method: three methods');
for (const m of ms || []) {
  const w = methodWant[m.method];
  check(w && m.logs === w.logs && m.warnings === w.warnings && m.errors === w.errors && m.span_errors === w.span_errors,
    `summary: ${m.method}: ${JSON.stringify(m)}`);
}
check(ms && ms[0].method === hostile, 'the method with errors first');
const sg = json && json.by.groups;
check(sg && sg.length === 1 && sg[0].name === 'step' && sg[0].calls === 1 && sg[0].value === 'Tuple{typeof(step!), Int64}',
  'spans carrying code.method grouped by site and method');
const text = jager(['summary', '--by', 'method', rec]).out;
check(/By method/.test(text) && text.includes('Tuple{typeof(solve!), Vector{Float64}}'), 'the text summary lists the methods');

// ---- summary --by task: the migrated solve counted under task 2 and nested under solve ----
const byTask = jagerJson(['summary', '--by', 'task', rec]).json;
const tg = byTask && byTask.by && byTask.by.groups.filter((g) => g.name === 'solve');
check(tg && tg.length === 1 && tg[0].value === '2 (solver)' && tg[0].calls === 2, `summary --by task: solve's 2 calls by task 2 (${JSON.stringify(tg)})`);
const top = byTask && byTask.trees[0].nodes.filter((n) => n.name === 'solve');
check(top && top.length === 1 && top[0].calls === 1, `summary: one top-level solve, 1 call (${top && top.map((n) => n.calls)})`);
const inner = top && top.length === 1 ? top[0].children.map((n) => `${n.name}:${n.calls}`).sort() : [];
check(JSON.stringify(inner) === JSON.stringify(['solve:1', 'step:3']), `summary: solve holds the migrated solve and 3 steps (${inner})`);
// each error on its span in the exact-path tree: the migrated solve's (set on thread 2, its
// path is thread 2's, its events thread 1's) and a step's (task 1 interleaved with task 2's
// open solve on thread 1; main's end on thread 1 had flushed that solve's pending children as
// unrecorded): both read 0 before
const errs = top && top.length === 1 ? top[0].children.map((n) => `${n.name}:${n.errors}`).sort() : [];
check(JSON.stringify(errs) === JSON.stringify(['solve:1', 'step:1']) && top[0].errors === 0,
  `summary: the errors on the migrated solve and on a step (${errs}; outer ${top && top[0] && top[0].errors})`);
// the attribute set on thread 2 for the migrated solve (thread 1's numbering) groups it
const byPhase = jagerJson(['summary', '--by', 'phase', rec]).json;
const pg = byPhase && byPhase.by && byPhase.by.groups;
check(pg && pg.length === 1 && pg[0].name === 'solve' && pg[0].value === 'late' && pg[0].calls === 1,
  `summary --by phase: the attribute set on thread 2 groups the migrated solve (${JSON.stringify(pg)})`);

// ---- Chrome export: task lanes and GC counter tracks ----
const trace = tmp('tasks.trace.json');
check(jager(['export', '--format', 'chrome', '-o', trace, rec]).code === 0, 'jager export --format chrome exits 0');
const ev = JSON.parse(fs.readFileSync(trace, 'utf8')).traceEvents;
const TASK_BASE = 2000000000;
const spans = ev.filter((e) => e.ph === 'X' && e.cat === 'span');
check(spans.every((e) => e.tid > TASK_BASE), 'every span is on a task lane');
for (const t of want.tasks) {
  const n = spans.filter((e) => e.tid === TASK_BASE + t.id).length;
  check(n === t.spans, `chrome: task ${t.id}: ${n} spans on its lane (want ${t.spans})`);
  const meta = ev.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.tid === TASK_BASE + t.id);
  check(meta && meta.args.name === (t.name ? `task ${t.id} · ${t.name}` : `task ${t.id}`), `chrome: task ${t.id} lane named ${meta && JSON.stringify(meta.args.name)}`);
}
for (let i = 0; i < want.gc_keys.length; i++) {
  const vals = ev.filter((e) => e.ph === 'C' && e.name === 'julia.' + want.gc_keys[i]).map((e) => e.args.value);
  check(JSON.stringify(vals) === JSON.stringify(want.gc.map((row) => row[i])), `chrome: julia.${want.gc_keys[i]} track = the values written (${vals})`);
}
const logs = ev.filter((e) => e.cat === 'log');
check(logs.length === 7 && logs.every((e) => e.tid > TASK_BASE), 'chrome: the seven logs on their tasks\' lanes');
// the migrated solve: on task 2's lane with solve, its args naming solve as its parent
const solves = spans.filter((e) => e.tid === TASK_BASE + 2 && e.name === 'solve').sort((a, b) => b.dur - a.dur);
check(solves.length === 2, `chrome: two solve spans on task 2's lane (${solves.length})`);
if (solves.length === 2) {
  const [outer, inner] = solves;
  check(outer.args.parent_id === 0 && outer.args.begin_thread === 1, `chrome: the outer solve, a root begun on thread 1 (${JSON.stringify(outer.args)})`);
  check(inner.args.parent_id === outer.args.span_id && inner.args.parent_thread === outer.args.begin_thread && inner.args.begin_thread === 1,
    `chrome: the migrated solve's parent is the outer solve (${JSON.stringify(inner.args)})`);
  check(inner.ts >= outer.ts && inner.ts + inner.dur <= outer.ts + outer.dur, 'chrome: the migrated solve lies inside the outer one');
  // set on thread 2 for it (thread 1's numbering): its error and attribute, on no other span
  check(inner.args.error === 'migrated failure' && inner.args.attributes && inner.args.attributes.phase === 'late',
    `chrome: the error and attribute set on thread 2 are the migrated solve's (${JSON.stringify(inner.args)})`);
  const others = spans.filter((e) => e !== inner && (e.args.error === 'migrated failure' || (e.args.attributes && e.args.attributes.phase)));
  check(others.length === 0 && !ev.some((e) => e.ph === 'i' && JSON.stringify(e.args || {}).includes('migrated failure')),
    `chrome: no other span or instant carries them (${JSON.stringify(others)})`);
}
check(logs.filter((e) => e.args.attributes && e.args.attributes['code.method'] === hostile).length === 2,
  'chrome: the hostile method kept verbatim as data');

// ---- more tasks than lanes: the busiest 64 keep theirs, the others share one ----
const recMany = tmp('many.jgr');
const rm = run(process.env.REC_TASKS, [recMany, 'many']);
const wantMany = JSON.parse(rm.out.trim().split('\n').pop());
const htmlMany = tmp('many.html');
check(jager(['report', recMany, '-o', htmlMany]).code === 0, 'report of 500 tasks exits 0');
const dm = JSON.parse(fs.readFileSync(htmlMany, 'utf8').match(/<script type="application\/json" id="jager-data">([\s\S]*?)<\/script>/)[1]);
const own = dm.lanes.filter((l) => l.task), other = dm.lanes.filter((l) => l.other_tasks);
check(own.length === 64 && other.length === 1 && dm.lanes.length === 65, `64 task lanes and one shared (${own.length} + ${other.length} of ${dm.lanes.length})`);
check(other.length === 1 && other[0].other_tasks === wantMany.tasks - 64 && /436 other tasks/.test(other[0].name), 'the shared lane holds the 436 other tasks');
check(dm.lanes.reduce((a, l) => a + l.total, 0) === wantMany.spans, 'every span on some lane');
check(own.some((l) => l.task === 7 && l.total === 3), 'the busiest task keeps its lane');
check(dm.lanes[dm.lanes.length - 1].other_tasks === 436, 'the shared lane last');

// ---- code.method interned (JAGER_ATTR_STR_ID): one string-table entry, read as its text ----
const all = jager(['dump', rec]).out.trim().split('\n').map((l) => JSON.parse(l));
const dump = all.filter((e) => e.type === 'log');
// the migrated solve's span_x record, and the log written inside it on thread 2
const sx = all.filter((e) => e.type === 'span_x');
const outerX = sx.find((e) => e.parent_id === 0), innerX = sx.find((e) => e.parent_id !== 0);
check(sx.length === 2 && outerX && innerX && sx.every((e) => e.thread === 2 && e.begin_thread === 1 && e.parent_thread === 1) &&
  innerX.parent_id === outerX.span_id, `dump: two span_x records, the inner under the outer (${JSON.stringify(sx)})`);
const resumed = dump.find((e) => e.body === 'resumed');
check(resumed && innerX && resumed.thread === 2 && resumed.span_id === innerX.span_id && resumed.span_thread === 1 && resumed.site === 'solve',
  `dump: the log on thread 2 names the migrated solve as thread 1 numbers it (${JSON.stringify(resumed)})`);
// the attribute and error records set on thread 2 name the migrated solve as thread 1 numbers it
const refs = all.filter((e) => e.type === 'span_attr' || e.type === 'span_error').filter((e) => e.thread === 2);
check(refs.length === 2 && innerX && refs.every((e) => e.span_id === innerX.span_id && e.span_thread === 1 && e.site === 'solve'),
  `dump: span_attr and span_error on thread 2 carry span_thread 1 and the migrated solve's id (${JSON.stringify(refs)})`);
const ids = dump.map((e) => e.attrs && e.attrs['code.method']).filter((v) => v && typeof v === 'object').map((v) => v.string_id);
check(ids.length === 3, `three logs carry an interned code.method (${ids.length})`);
const solveLogs = dump.filter((e) => e.body === 'step done').map((e) => e.attrs['code.method']);
check(solveLogs[0] === 'Tuple{typeof(solve!), Vector{Float64}}' && solveLogs[1].string_id > 0 && solveLogs[1].string_id === solveLogs[2].string_id,
  'the two interned solve! logs name one string-table entry; the plain one carries the text');
const chromeSolve = logs.filter((e) => e.args.body === 'step done').map((e) => e.args.attributes['code.method']);
check(chromeSolve.length === 3 && chromeSolve.every((m) => m === 'Tuple{typeof(solve!), Vector{Float64}}'), 'chrome: interned methods exported as their text');
done();
