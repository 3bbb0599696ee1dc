// The report of a recording with N and 2N sites (issue 16 item 12: 100k site names once took
// 24 s to load and 33 s per sort in Chromium): time to interactive and one sort by name and
// by total, in Debian's Chromium (playwright-core), side by side with the ratio.
//
//   node bench/quadratic/sites.mjs BUILD_DIR [--n 100000] [--runs 2]
//
// Recordings come from bench_quadratic (`sites` case, --keep) in a temporary folder.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { launch, open, tempDir } from '../../tests/peers/report_browser.mjs';

const args = process.argv.slice(2);
const build = resolve(args.find((a) => !a.startsWith('--')) || 'build');
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const n = Number(opt('--n', '100000'));
const runs = Number(opt('--runs', '2'));
const cli = join(build, 'bin/jager');
const dir = tempDir('jager-sites-bench-');
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

const r = spawnSync(join(build, 'bin/bench_quadratic'), ['sites', '--keep', '--scale', String(n / 100000)],
  { encoding: 'utf8', env: Object.assign({}, process.env, { TMPDIR: dir }) });
if (r.status !== 0) throw new Error(`bench_quadratic failed: ${r.stderr}`);
const browser = await launch();
const res = [];
try {
  for (const size of [n, 2 * n]) {
    const jgr = join(dir, `bench-quadratic-sites-${size}.jgr`), html = join(dir, `sites-${size}.html`);
    const g = spawnSync(cli, ['report', jgr, '-o', html], { encoding: 'utf8' });
    if (g.status !== 0) throw new Error(`jager report failed: ${g.stderr}`);
    const loads = [], byName = [], byTotal = [];
    let rowsShown = 0;
    for (let i = 0; i < runs; i++) {
      const o = await open(browser, html);
      loads.push(o.ms);
      const m = await o.page.evaluate(() => {
        const th = (k) => document.querySelector(`#site-table th[data-key="${k}"]`);
        let a = performance.now();
        th('name').click();
        const name = performance.now() - a;
        a = performance.now();
        th('total').click();
        const total = performance.now() - a;
        return { name, total, rows: document.querySelectorAll('#site-table tbody tr').length };
      });
      byName.push(m.name);
      byTotal.push(m.total);
      rowsShown = m.rows;
      await o.context.close();
    }
    res.push({ size, load: median(loads), name: median(byName), total: median(byTotal), rowsShown });
  }
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
const f = (x) => (x / 1000).toFixed(3) + ' s';
for (const [what, key] of [['interactive', 'load'], ['sort by name', 'name'], ['sort by total', 'total']])
  console.log(`sites: report ${what.padEnd(14)} N=${String(n).padEnd(8)} ${f(res[0][key]).padStart(9)}   2N=${String(2 * n).padEnd(8)} ` +
    `${f(res[1][key]).padStart(9)}   ratio ${(res[1][key] / res[0][key]).toFixed(2)}`);
console.log(`(median of ${runs} loads in headless Chromium; table rows drawn: ${res[0].rowsShown} and ${res[1].rowsShown})`);
