// "The run" and the shares on a real Julia recording (label julia; issue 9 items 7 and 8):
// tests/tools/julia/run_length.jl, single-threaded, recorded through Jager.jl with the gc
// plugin. Its cumulative gc.sample gc_total_ns (typed as a duration) would reach past the
// END block were it read as one; the run length is the END block's within 1 ms in `jager
// info`, `jager summary`, `jager hunt` (its JSON run_ns), `jager report` and
// Jager.timing_run_ns / print_timings on the same file. Jäger's own thread (jager-gc) is
// not program time: the top-level share is the phase's time over the run, not half of it,
// the main thread's tree holds all of it, the phases inside `main` sum to ~100 % of it, and
// no share exceeds 100 %.
'use strict';
const fs = require('fs');
const path = require('path');
const { tmp, check, done, run, jager, jagerJson, walk, juliaSetup } = require('./tutil');

const src = process.env.JAGER_SOURCE_DIR;
const { julia, depot, lib } = juliaSetup();
const env = { JULIA_DEPOT_PATH: depot, JAGER_LIB: lib, JAGER_PLUGIN_PATH: process.env.JAGER_PLUGIN_DIR, JAGER_QUIET: '1' };

const out = tmp('run_length.jgr');
const r = run(julia, ['--startup-file=no', `--project=${path.join(src, 'bindings', 'julia')}`,
  path.join(src, 'tests', 'tools', 'julia', 'run_length.jl'), out], env);
check(r.code === 0, `julia run_length.jl ran (exit ${r.code})${r.code ? '\n' + r.err.slice(-2000) : ''}`);

const endRun = Number((/^duration_ns: (\d+)$/m.exec(jager(['info', out]).out) || [])[1]);
check(endRun > 0, `END block span ${endRun} ns`);
const near = (x) => typeof x === 'number' && Math.abs(x - endRun) <= 1e6;

// The gc plugin's cumulative sample is there and would stretch the run if read as a duration.
const samples = jager(['dump', out]).out.split('\n').filter((l) => l.includes('"type":"gc.sample"')).map((l) => JSON.parse(l));
const last = samples[samples.length - 1];
const { json: s } = jagerJson(['summary', out]);
check(!!last && last.fields.gc_total_ns > 0 && s && last.time_ns + last.fields.gc_total_ns > s.run.end_ns + 1e6,
  `gc.sample gc_total_ns ${last && last.fields.gc_total_ns} ns at the end would reach past the END block`);

const julRun = Number((/^run\t(\d+)$/m.exec(r.out) || [])[1]);
check(near(julRun), `Jager.timing_run_ns ${julRun} ns = END block's ${endRun} ns`);
// The program's part: from the end of Jager.start() to the call of Jager.stop() (Jäger's own
// start and stop work — plugins, symbolizing, stop hooks — is not the program's time).
const meta = (k) => Number((new RegExp(`"${k}": "(\\d+)"`).exec(jager(['info', out]).out) || [])[1]);
const prog = meta('julia.program_end_ns') - meta('julia.program_start_ns');
check(prog > 0 && prog < endRun, `the program's part ${prog} ns lies inside the run ${endRun} ns`);
const shown = /Jäger: \d+ sites, ([\d.]+)(s|ms) recorded/.exec(r.out);
const shownNs = shown ? Number(shown[1]) * (shown[2] === 's' ? 1e9 : 1e6) : NaN;
check(Math.abs(shownNs - prog) <= 0.01 * prog, `print_timings shows ${shown && shown[0]} (the program's part ${prog} ns)`);
check(s && near(s.run.duration_ns) && s.run.duration_from === 'end_block', `summary run ${s && s.run.duration_ns} ns = END block's`);
const { json: h } = jagerJson(['hunt', out, '--min-pct', '0']);
check(h && near(h.run_ns), `hunt run ${h && h.run_ns} ns = END block's`);
const html = tmp('run_length.html');
const rep = jager(['report', out, '-o', html]);
let rc = null;
try {
  rc = JSON.parse(/<script type="application\/json" id="jager-data">([\s\S]*?)<\/script>/.exec(fs.readFileSync(html, 'utf8'))[1]);
} catch (e) {
  console.log(`report data unreadable: ${e.message} (exit ${rep.code})`);
}
check(rc && near(rc.run.duration_ns) && near(rc.duration_ns), `report run ${rc && rc.run.duration_ns} ns = END block's`);

if (s) {
  check(s.run.helper_threads === 1 && s.run.thread_ns === prog, `jager-gc left out: thread time ${s.run.thread_ns} ns = the program's part`);
  const top = s.trees[0].nodes;
  const main = top.find((n) => n.name === 'main');
  check(top.length === 1 && !!main, `one top-level phase (${top.map((n) => n.name)})`);
  if (main) {
    const expect = (100 * main.total_ns) / prog;
    check(Math.abs(main.pct_parent - expect) < 1e-2, `main: ${main.pct_parent} % = its time over the program's part (${expect.toFixed(3)} %), not over two threads`);
    // the script is start; main(); stop: main is the whole program (issue 9 item 8)
    check(main.pct_parent > 95 && main.pct_parent <= 100, `main: ${main.pct_parent} % of the main thread, ~100 %`);
    const pt = /^ main\s+\S+\s+1\s+\S+\s+([\d.]+)%/m.exec(r.out);
    check(pt && Math.abs(Number(pt[1]) - main.pct_parent) <= 0.1, `print_timings' %tot of main ${pt && pt[1]} = the CLI's ${main.pct_parent.toFixed(1)}`);
    const inner = main.children.reduce((a, n) => a + n.pct_parent, 0);
    check(main.children.length === 2 && inner > 99 && inner <= 100.0001, `alloc + compute: ${inner.toFixed(3)} % of main`);
  }
  const bad = [...walk(s.trees[0].nodes)].filter((x) => !(x.node.pct_parent <= 100 && x.node.gc_pct <= 100));
  check(bad.length === 0, `every %parent and GC % ≤ 100 (${bad.map((x) => x.node.name)})`);
}
const { json: t } = jagerJson(['summary', out, '--threads']);
if (t) {
  const prog = t.trees.filter((x) => !x.helper), helper = t.trees.filter((x) => x.helper);
  check(prog.length === 1 && helper.length === 1 && helper[0].name === 'jager-gc' && helper[0].nodes.length === 0,
    `one program thread and the jager-gc helper (${t.trees.map((x) => `${x.name}${x.helper ? ' (helper)' : ''}`)})`);
  const mainT = prog.length === 1 ? prog[0].nodes.find((n) => n.name === 'main') : null;
  const mainM = s && s.trees[0].nodes.find((n) => n.name === 'main');
  check(mainT && mainM && mainT.total_ns === mainM.total_ns && mainT.pct_parent >= mainM.pct_parent && mainT.pct_parent <= 100,
    `the main thread's tree holds main (${mainT && mainT.pct_parent} % of its thread)`);
  const bad = t.trees.flatMap((x) => [...walk(x.nodes)]).filter((x) => !(x.node.pct_parent <= 100 && x.node.gc_pct <= 100));
  check(bad.length === 0, 'per thread: every %parent and GC % ≤ 100');
}
done();
