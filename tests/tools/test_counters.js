// A monotonic counter added from several threads, and counters across recordings in one
// process (rec_counters). A monotonic counter's samples carry the process's running total,
// whatever thread adds: `summary --format json` gives 4000 for 4 threads × 1000 adds of 1
// (not a sum of per-thread totals), the report's series and the Chrome export's track end
// at 4000 and run 1, 2, …, 4000 in time order, and a recording's total starts at 0 at
// every jager_init (a second and third recording in the process: 10, then 5).
'use strict';
const fs = require('fs');
const { tmp, check, done, run, jager, jagerJson } = require('./tutil');

const many = tmp('many.jgr'), run2 = tmp('run2.jgr'), run3 = tmp('run3.jgr');
const r = run(process.env.REC_COUNTERS, [many, run2, run3]);
if (r.code !== 0) throw new Error(`rec_counters failed (${r.code}): ${r.err}`);
const want = JSON.parse(r.out.trim().split('\n').pop());
const N = want.threads * want.adds;
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const upTo = (n) => Array.from({ length: n }, (_, i) => i + 1);

// ---- summary: the counters table ----
function counters(file) {
  const { json } = jagerJson(['summary', file]);
  return (json && json.counters) || [];
}
const cm = counters(many);
const items = cm.find((c) => c.name === 'work.items');
check(items && items.kind === 'monotonic' && items.unit === 'items', `summary: work.items, monotonic, in items (${JSON.stringify(items)})`);
check(items && items.samples === N && items.total === N && items.last === N && items.max === N && items.min === 1 && items.first === 1,
  `summary: ${N} samples, total ${N} (4 threads × 1000 adds), min 1, max ${N}: ${JSON.stringify(items)}`);
const queue = cm.find((c) => c.name === 'work.queue');
check(queue && queue.kind === 'gauge' && queue.total === null && queue.samples === 3 && queue.last === 5 && queue.first === 7 &&
  queue.min === 2 && queue.max === 7, `summary: the gauge work.queue: last 5 of 7, 2, 5 (${JSON.stringify(queue)})`);
check(cm.length === 2, `summary: two counters (${cm.length})`);
const c2 = counters(run2).find((c) => c.name === 'work.items');
check(c2 && c2.samples === 1 && c2.total === 10, `summary: the second recording's total is 10, not ${N + 10} (${JSON.stringify(c2)})`);
const c3 = counters(run3).find((c) => c.name === 'work.items');
check(c3 && c3.samples === 1 && c3.total === 5 && c3.min === 5, `summary: the third's is 5, the negative delta ignored (${JSON.stringify(c3)})`);
const text = jager(['summary', many]).out;
check(/^Counters /m.test(text) && /^work\.items\s+items\s+monotonic\s+4000\s+4000\s+1\s+4000$/m.test(text),
  'summary text: a Counters table with work.items total 4000');

// ---- report: the counter series ----
function series(file, name) {
  const html = tmp(`${Math.random().toString(36).slice(2)}.html`);
  check(jager(['report', file, '-o', html]).code === 0, `jager report ${file} exits 0`);
  const data = JSON.parse(fs.readFileSync(html, 'utf8').match(/<script type="application\/json" id="jager-data">([\s\S]*?)<\/script>/)[1]);
  return data.counters.find((c) => c.name === name);
}
const s = series(many, 'work.items');
check(s && s.kind === 'monotonic' && s.v.length > 0 && s.v[s.v.length - 1] === N, `report: work.items ends at ${N} (${s && s.v.slice(-3)})`);
check(s && s.v.every((v, i) => i === 0 || v >= s.v[i - 1]) && Math.max(...(s.hi || s.v)) === N && Math.min(...(s.lo || s.v)) === 1,
  'report: the series never goes down, from 1 to 4000');
const s3 = series(run3, 'work.items');
check(s3 && same(s3.v, [5]), `report: the third recording's series is [5] (${s3 && s3.v})`);

// ---- Chrome export: one track per counter ----
function track(file, name) {
  const trace = tmp(`${Math.random().toString(36).slice(2)}.json`);
  check(jager(['export', '--format', 'chrome', '-o', trace, file]).code === 0, `jager export chrome ${file} exits 0`);
  const ev = JSON.parse(fs.readFileSync(trace, 'utf8')).traceEvents.filter((e) => e.ph === 'C' && e.name === name);
  return ev.sort((a, b) => a.ts - b.ts || a.args.value - b.args.value);
}
const t = track(many, 'work.items');
check(t.length === N && t.every((e) => e.id === undefined && e.pid === t[0].pid), `chrome: ${t.length} samples on one track (no per-thread id)`);
check(new Set(t.map((e) => e.tid)).size === want.threads, 'chrome: the samples come from the 4 threads');
check(t.length && t[t.length - 1].args.value === N, `chrome: the track ends at ${N} (${t.length && t[t.length - 1].args.value})`);
check(same(t.map((e) => e.args.value), upTo(N)), 'chrome: in time order the track reads 1, 2, …, 4000');
const t3 = track(run3, 'work.items');
check(same(t3.map((e) => e.args.value), [5]), `chrome: the third recording's track is [5] (${t3.map((e) => e.args.value)})`);
done();
