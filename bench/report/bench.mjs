// Report size and load time in Chromium for 10^4, 10^5 and 10^6 spans.
//
//   node bench/report/bench.mjs BUILD_DIR [--sizes 10000,100000,1000000] [--runs 3]
//
// For each size: record a run with tests/peers' report_fixture (the real core), time
// `jager report`, then open the page in Debian's Chromium (playwright-core) `runs` times and
// report the median time to interactive (navigation start until the page has parsed its
// data and drawn every view, measured by the page's own clock) and the median redraw time
// of a timeline zoom and of a flame-graph zoom. Target: interactive under 3 s at 10^6.
import { spawnSync } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { launch, open, record, tempDir } from '../../tests/peers/report_browser.mjs';

const args = process.argv.slice(2);
const build = resolve(args.find((a) => !a.startsWith('--')) || 'build');
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const sizes = opt('--sizes', '10000,100000,1000000').split(',').map(Number);
const runs = Number(opt('--runs', '3'));
process.env.JAGER_REPORT_FIXTURE ||= join(build, 'tests/peers/report_fixture');
process.env.JAGER_PLUGIN_DIR ||= join(build, 'plugins');
const cli = process.env.JAGER_CLI || join(build, 'bin/jager');

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const dir = tempDir('jager-report-bench-');
const rows = [];
const browser = await launch();
try {
  for (const n of sizes) {
    const jgr = join(dir, `run${n}.jgr`), html = join(dir, `run${n}.html`);
    const rec = record(jgr, n);
    const t0 = process.hrtime.bigint();
    const r = spawnSync(cli, ['report', jgr, '-o', html], { encoding: 'utf8' });
    const genMs = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`jager report failed: ${r.stderr}`);
    const loads = [], zooms = [], flames = [];
    let lod = null, errors = [];
    for (let i = 0; i < runs; i++) {
      const o = await open(browser, html);
      loads.push(o.ms);
      errors = errors.concat(o.errors);
      const m = await o.page.evaluate(() => {
        const t = J.timeline, f = J.flame, out = {};
        let a = performance.now();
        for (let k = 0; k < 10; k++) t.setView(t.t1 * (0.2 + k * 0.01), t.t1 * (0.8 - k * 0.01));
        out.zoom = (performance.now() - a) / 10;
        a = performance.now();
        f.zoom(f.kids[0][0] || 0); f.zoom(0);
        out.flame = (performance.now() - a) / 2;
        out.lod = t.lanes.reduce((s, l) => [s[0] + l.total, s[1] + l.raw, s[2] + l.merged], [0, 0, 0]);
        return out;
      });
      zooms.push(m.zoom);
      flames.push(m.flame);
      lod = m.lod;
      await o.context.close();
    }
    rows.push({ spans: rec.spans, jgr: statSync(jgr).size, html: statSync(html).size, genMs, load: median(loads),
      zoom: median(zooms), flame: median(flames), raw: lod[1], merged: lod[2], errors: errors.length });
  }
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}

const mib = (b) => (b / 1048576).toFixed(2) + ' MiB';
const head = ['spans', '.jgr', 'report', 'bytes/span', 'jager report', 'interactive', 'zoom redraw', 'flame zoom', 'exact / merged', 'errors', 'target <3 s'];
const body = rows.map((r) => [String(r.spans), mib(r.jgr), mib(r.html), (r.html / r.spans).toFixed(1), r.genMs.toFixed(0) + ' ms',
  r.load.toFixed(0) + ' ms', r.zoom.toFixed(1) + ' ms', r.flame.toFixed(1) + ' ms', `${r.raw} / ${r.merged}`, String(r.errors),
  r.load < 3000 ? 'yes' : 'NO']);
const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
const line = (cells) => '| ' + cells.map((c, i) => c.padStart(w[i])).join(' | ') + ' |';
console.log(line(head));
console.log('|' + w.map((x) => '-'.repeat(x + 2)).join('|') + '|');
for (const b of body) console.log(line(b));
console.log(`(median of ${runs} loads in headless Chromium at 1400x1000; interactive = navigation start until every view is drawn)`);
