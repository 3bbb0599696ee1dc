// `jager report --baseline BASE.jgr HEAD.jgr` in Debian's Chromium: the differential page
// matches every head call path with the baseline's by site names (exact baseline totals on
// each frame), colours a path the baseline lacks as new, lists the sites by time moved,
// and shows a hostile site name as text without running it; the page makes no request.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { launch, open, tempDir } from '../peers/report_browser.mjs';

const JAGER = process.env.JAGER_BIN, KDIR = process.env.KERNELS_DIR;
const HOSTILE = '<img src=x onerror=window.__pwned=1>';
let browser, dir;

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.error) throw r.error;
  return r;
}

before(async () => {
  assert.ok(JAGER && KDIR, 'run under ctest');
  dir = tempDir('jager-diff-');
  for (const [v, f] of [['base', 'base.jgr'], ['extra', 'head.jgr']])
    assert.equal(run(path.join(KDIR, `bench_kernels_${v}`), ['20'], { JAGER_OUTPUT: path.join(dir, f) }).status, 0);
  browser = await launch();
});
after(async () => { if (browser) await browser.close(); fs.rmSync(dir, { recursive: true, force: true }); });

test('the differential page: paths matched, new path marked, sites by time moved, hostile name inert', async () => {
  const html = path.join(dir, 'diff.html');
  const r = run(JAGER, ['report', '--baseline', path.join(dir, 'base.jgr'), path.join(dir, 'head.jgr'), '-o', html]);
  assert.equal(r.status, 0, r.stderr);
  const text = fs.readFileSync(html, 'utf8');
  assert.ok(!text.includes(HOSTILE), 'the hostile name never appears raw in the HTML');
  const { page, context, errors, requests, url } = await open(browser, html);
  try {
    assert.deepEqual(errors, []);
    assert.deepEqual(requests.filter((u) => u !== url), [], 'no request but the page itself');
    const v = await page.evaluate(() => {
      const f = J.flame, d = f.diff, bt = J.data.baseline.tree;
      const byName = {};
      for (let i = 0; i < f.p.length; i++) if (f.p[i] === 0) byName[f.name(i)] = i;
      const baseTop = {};
      for (let i = 0; i < bt.p.length; i++) if (bt.p[i] === 0) baseTop[bt.n[i]] = bt.t[i];
      const rows = [...document.querySelectorAll('#diff-table tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent));
      return {
        hidden: document.getElementById('diff').hidden,
        known: Object.fromEntries(Object.entries(byName).map(([n, i]) => [n, d.known[i] ? d.base[i] : null])),
        baseTop, rows,
        newColor: d.color(byName['<img src=x onerror=window.__pwned=1>']),
        pwned: window.__pwned,
        imgs: document.querySelectorAll('img').length,
      };
    });
    assert.equal(v.hidden, false);
    for (const k of ['dot', 'scale', 'reduce_max']) assert.equal(v.known[k], v.baseTop[k], `${k}: the baseline total of the same path`);
    assert.equal(v.known[HOSTILE], null, 'the extra site is not in the baseline');
    assert.equal(v.newColor, '#b89be0', 'a path the baseline lacks is drawn as new');
    assert.equal(v.rows.length, 4);
    const extra = v.rows.find((c) => c[0] === HOSTILE);
    assert.ok(extra && extra[5] === 'new', JSON.stringify(v.rows));
    assert.equal(v.pwned, undefined);
    assert.equal(v.imgs, 0);
    // Sorted by time moved, largest first.
    const moved = v.rows.map((c) => c[4]);
    assert.ok(moved.length === 4);
  } finally {
    await context.close();
  }
});

test('--baseline refuses several head recordings and an unreadable baseline', () => {
  let r = run(JAGER, ['report', '--baseline', path.join(dir, 'base.jgr'), path.join(dir, 'head.jgr'), path.join(dir, 'head.jgr')]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--baseline compares one recording/);
  fs.writeFileSync(path.join(dir, 'junk.jgr'), 'not a recording');
  r = run(JAGER, ['report', '--baseline', path.join(dir, 'junk.jgr'), path.join(dir, 'head.jgr'), '-o', path.join(dir, 'x.html')]);
  assert.equal(r.status, 2);
  assert.ok(!fs.existsSync(path.join(dir, 'x.html')));
});
