// `jager summary`: numbers equal the core's exact aggregates, % of parent on a known nest,
// per-thread and merged views, --depth, JSON fields, hostile strings escaped.
'use strict';
const fs = require('fs');
const { tmp, check, done, jager, jagerJson, record, walk } = require('./tutil');

const EVIL = 'evil "name"\n<script>alert(1)</script>\\ \x01 end';
const expectPath = tmp('nest.json');
const nest = record('nest', expectPath);
const expect = JSON.parse(fs.readFileSync(expectPath, 'utf8'));

const { json: s } = jagerJson(['summary', nest]);
if (!s) return done();
check(s.tool === 'jager summary' && s.view === 'merged', 'merged view by default');
for (const k of ['run', 'metadata', 'trees', 'sites', 'gc', 'logs', 'event_types', 'drops'])
  check(k in s, `JSON has "${k}"`);
check(s.run.spans === 174 && s.run.spans_total === 174, `174 spans recorded (${s.run.spans}/${s.run.spans_total})`);
check(s.run.dropped === 0 && s.run.clean_end === true && s.run.truncated === false, 'clean, complete file');
check(s.run.threads === 2, 'two threads');
check(s.run.self_cost_pct > 0 && s.run.self_cost_pct < 5 && s.run.span_cost_ns > 1, `instrumentation cost ${s.run.self_cost_pct}% of run`);
check(typeof s.metadata['host.name'] === 'string', 'run metadata carried');

// Exact per-site aggregates: the core's jager_site_stats values, exactly.
const byId = new Map(s.sites.map((x) => [x.id, x]));
for (const [name, e] of Object.entries(expect)) {
  const site = byId.get(e.id);
  check(!!site, `site ${name} listed`);
  if (!site) continue;
  check(site.exact === true, `${name}: totals from the STATS block`);
  for (const f of ['calls', 'total_ns', 'min_ns', 'max_ns', 'bytes', 'errors', 'p50_ns', 'p99_ns'])
    check(site[f] === e[f], `${name}.${f} = ${e[f]} (got ${site[f]})`);
  check(Math.abs(site.mean_ns - e.total_ns / e.calls) < 1, `${name}.mean_ns`);
}
check(byId.get(expect.evil.id).name === EVIL, 'hostile site name survives JSON exactly');
check(byId.get(expect.evil.id).file === 'evil<file>.c', 'file name too');

// The tree, rebuilt from span events, adds up to the exact totals per site.
const tree = s.trees[0].nodes;
const sums = new Map();
for (const { node } of walk(tree)) {
  const a = sums.get(node.site) || { calls: 0, total: 0, bytes: 0, errors: 0 };
  a.calls += node.calls; a.total += node.total_ns; a.bytes += node.bytes; a.errors += node.errors;
  sums.set(node.site, a);
}
for (const [name, e] of Object.entries(expect)) {
  const a = sums.get(e.id) || {};
  check(a.calls === e.calls && a.total === e.total_ns, `tree sums of ${name}: ${a.calls} calls, ${a.total} ns`);
  check(a.bytes === e.bytes && a.errors === e.errors, `tree bytes/errors of ${name}`);
}

// % of parent on the known nest outer → middle → inner, and inner under worker.
const outer = tree.find((n) => n.name === 'outer');
const middle = outer && outer.children.find((n) => n.name === 'middle');
const inner = middle && middle.children.find((n) => n.name === 'inner');
check(outer && middle && inner, 'path outer → middle → inner');
if (inner) {
  check(middle.calls === 10 && inner.calls === 100 && outer.calls === 1, 'calls on the path: 1, 10, 100');
  check(Math.abs(middle.pct_parent - (100 * middle.total_ns) / outer.total_ns) < 1e-3, `middle is ${middle.pct_parent.toFixed(3)}% of outer`);
  check(Math.abs(inner.pct_parent - (100 * inner.total_ns) / middle.total_ns) < 1e-3, `inner is ${inner.pct_parent.toFixed(3)}% of middle`);
  check(middle.self_ns === middle.total_ns - inner.total_ns, 'self time of middle = total − inner');
  check(inner.total_ns >= 100 * 50000 && middle.total_ns >= inner.total_ns + 10 * 100000, 'durations at least the spun time');
  check(middle.errors === 4 && inner.bytes === 409600, 'errors and bytes on the right nodes');
  const pctSum = tree.reduce((a, n) => a + n.pct_parent, 0);
  check(pctSum > 0 && pctSum <= 100.0001, `top-level shares of thread time sum to ${pctSum.toFixed(2)}% ≤ 100%`);
}
const worker = tree.find((n) => n.name === 'worker');
check(worker && worker.calls === 30 && worker.children.length === 1 && worker.children[0].calls === 30, 'worker → inner ×30');

// Per-thread view.
const { json: th } = jagerJson(['summary', nest, '--threads']);
check(th && th.view === 'threads' && th.trees.length === 2, 'one tree per thread');
if (th) {
  const names = th.trees.map((t) => t.nodes.map((n) => n.name).join(','));
  check(names.some((x) => x.includes('outer')) && names.some((x) => x === 'worker'), `thread trees: ${names.join(' | ')}`);
  check(th.trees.every((t) => typeof t.os_tid === 'number' && t.os_tid > 0), 'threads carry OS ids');
}

// --depth 1 cuts the tree.
const { json: d1 } = jagerJson(['summary', nest, '--depth', '1']);
check(d1 && d1.trees[0].nodes.length >= 3 && d1.trees[0].nodes.every((n) => n.children.length === 0), '--depth 1 shows top level only');

// Text: a table, the header line, and no raw control characters from names.
const txt = jager(['summary', nest]);
check(txt.code === 0, 'text exit 0');
check(/instrumentation [0-9.]+% of run/.test(txt.out) && /dropped 0/.test(txt.out), 'header with cost and drops');
check(/^outer\s+1\s/m.test(txt.out) && /^  middle\s+10\s/m.test(txt.out) && /^    inner\s+100\s/m.test(txt.out), 'nested rows');
check(!txt.out.includes('\x01') && txt.out.includes('\\x0a<scrip') && txt.out.includes('\\x01 end'),
  'control bytes escaped in text, a long name cut in the middle');

// Signature breakdown of a site with several signatures (Julia-side telemetry).
const jl = record('julia');
const { json: js } = jagerJson(['summary', jl]);
const dep = js && js.sites.find((x) => x.name === 'deposit!');
check(dep && dep.signatures.length === 2 && dep.signatures.every((g) => g.calls === 10), 'deposit! lists 2 signatures ×10');
// 60 pauses in the phases, 4 of 1 ms in sparse_build (stacks with no program frame)
check(js && js.gc.pauses === 64 && js.gc.total_ns === 20 * (2 * 1500000 + 300000) + 4 * 1000000, `GC totals (${js && js.gc.pauses} pauses, ${js && js.gc.total_ns} ns)`);
const asm = js && [...walk(js.trees[0].nodes)].find((x) => x.node.name === 'assemble');
check(asm && asm.node.gc_pauses === 40 && asm.node.gc_ns === 40 * 1500000, 'GC time inside assemble, to the nanosecond');
check(asm && Math.abs(asm.node.gc_pct - (100 * asm.node.gc_ns) / asm.node.total_ns) < 1e-3, 'GC % of assemble');
const jtxt = jager(['summary', jl]);
check(/↳ Tuple\{typeof\(deposit!\), Vector\{Particle\}, Particle\{Float(32|64)\}\}\s+10 calls \(50\.0%\)/.test(jtxt.out), 'text shows the signature breakdown');
check(js && js.event_types.some((t) => t.name === 'gpu.kernel' && t.count === 120 && !t.interpreted), 'unknown plugin type counted by name');

// "The run" is the recording's clock span from its END block in every command, even when a
// plugin field typed as a duration (gc.sample's cumulative gc_total_ns: 5 s) would reach past
// it; Jäger's own thread ("jager-gc") is not program time; no share exceeds 100 %.
const ck = record('clock');
const infoRun = Number((/^duration_ns: (\d+)$/m.exec(jager(['info', ck]).out) || [])[1]);
const { json: sc } = jagerJson(['summary', ck]);
const { json: hc } = jagerJson(['hunt', ck]);
const rep = jager(['report', ck, '-o', tmp('clock.html')]);
let rc = null;
try {
  const html = fs.readFileSync(tmp('clock.html'), 'utf8');
  rc = JSON.parse(/<script type="application\/json" id="jager-data">([\s\S]*?)<\/script>/.exec(html)[1]);
} catch (e) {
  console.log(`report data unreadable: ${e.message} (exit ${rep.code})`);
}
check(infoRun > 80e6 && infoRun < 4e9, `END block span ${infoRun} ns: the 80 ms of phases and start/stop, far below 5 s`);
const near = (x) => typeof x === 'number' && Math.abs(x - infoRun) <= 1e6;
check(sc && near(sc.run.duration_ns) && sc.run.duration_from === 'end_block', `summary run ${sc && sc.run.duration_ns} ns = END block's`);
check(sc && sc.run.end_ns - sc.run.start_ns === sc.run.duration_ns, 'summary start..end is the run');
check(hc && near(hc.run_ns), `hunt run ${hc && hc.run_ns} ns = END block's`);
check(rc && near(rc.run.duration_ns) && near(rc.duration_ns), `report run ${rc && rc.run.duration_ns} ns = END block's`);
check(sc && sc.run.helper_threads === 1 && sc.run.thread_ns === sc.run.duration_ns, `jager-gc left out of the thread time (${sc && sc.run.thread_ns} ns)`);
if (sc) {
  const top = sc.trees[0].nodes;
  const sum = top.reduce((a, n) => a + n.pct_parent, 0);
  const expect = (100 * top.reduce((a, n) => a + n.total_ns, 0)) / sc.run.duration_ns;
  check(top.length === 2 && Math.abs(sum - expect) < 1e-3 && sum > 50 && sum <= 100, `top-level shares ${sum.toFixed(2)} % = the phases' time over the run`);
}
// No share above 100 % in any tree of any recording here.
for (const f of [nest, jl, ck]) {
  for (const v of [[], ['--threads']]) {
    const { json: j } = jagerJson(['summary', f, ...v]);
    const bad = j ? j.trees.flatMap((t) => [...walk(t.nodes)]).filter((x) => !(x.node.pct_parent <= 100 && x.node.gc_pct <= 100)) : [1];
    check(bad.length === 0, `${f.split('/').pop()} ${v.join(' ')}: every %parent and GC % ≤ 100`);
  }
}
const { json: tc } = jagerJson(['summary', ck, '--threads']);
const mainTree = tc && tc.trees.find((t) => !t.helper);
check(mainTree && Math.abs(mainTree.nodes.reduce((a, n) => a + n.pct_parent, 0) - 100) < 0.5, 'per thread: the main thread\'s shares sum to 100 %');
check(tc && tc.trees.some((t) => t.helper && t.name === 'jager-gc'), 'the helper thread is marked');

// Sites thinned on purpose (JAGER_SAMPLE=auto) are "sampled 1 in N" in summary, hunt and
// the report, with exact totals, and never reported as lost or dropped.
const sm = record('sampled');
const { json: ss } = jagerJson(['summary', sm]);
const hot = ss && ss.sites.find((x) => x.name === 'hot_loop');
const cold = ss && ss.sites.find((x) => x.name === 'cold_call');
check(hot && hot.calls === 5000 && hot.event_calls === 50 && hot.thinned === 4950 && hot.dropped === 0,
  `hot site: 5000 calls exact, 50 recorded, 4950 thinned (${hot && [hot.calls, hot.event_calls, hot.thinned, hot.dropped]})`);
check(hot && hot.sampled_1_in === 100, `hot site sampled 1 in 100 (${hot && hot.sampled_1_in})`);
check(cold && cold.calls === 20 && cold.thinned === 0 && cold.sampled_1_in === 0, 'cold site: every call recorded');
check(ss && ss.run.dropped === 0 && ss.run.sampled_sites === 1 && ss.run.tree_lost_calls === 0 && ss.run.partial_sites === 0,
  'thinning is neither a drop nor a loss');
const st = jager(['summary', sm]).out;
check(/hot_loop  sampled 1 in 100 \(50 of 5000 calls recorded, 4950 thinned\)/.test(st), 'summary text says "sampled 1 in 100"');
check(!/never reached the file/.test(st) && /dropped 0/.test(st), 'summary text reports no loss');
const ht = jager(['hunt', sm]).out;
check(/hot_loop sampled 1 in 100/.test(ht) && !/dropped/.test(ht), 'hunt text: sampled, not dropped');
const { json: hs } = jagerJson(['hunt', sm]);
check(hs && hs.sampled_sites.length === 1 && hs.sampled_sites[0].sampled_1_in === 100 && hs.sampled_sites[0].thinned === 4950,
  'hunt JSON lists the sampled site');
check(hs && !hs.findings.some((f) => f.kind === 'dropped_events'), 'no dropped_events finding');
const smHtml = tmp('sampled.html');
jager(['report', sm, '-o', smHtml]);
let rs = null;
try {
  rs = JSON.parse(/<script type="application\/json" id="jager-data">([\s\S]*?)<\/script>/.exec(fs.readFileSync(smHtml, 'utf8'))[1]);
} catch (e) {
  console.log(`report data unreadable: ${e.message}`);
}
const row = rs && rs.table.find((r) => (rs.sites[r.k] || [])[0] === 'hot_loop');
check(row && row.sampled === 100 && !row.lost && row.calls === 5000, `report table: sampled 1 in 100, nothing lost (${JSON.stringify(row && [row.sampled, row.lost])})`);
check(rs && rs.dropped === 0 || (rs && rs.run && rs.run.dropped === 0), 'report: no drops');
done();
