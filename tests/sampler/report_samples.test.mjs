// `jager report` on a sampled recording (sampler_hot: in_step inside spans of "step",
// hidden_hot as long outside any span), rendered by Debian's Chromium (playwright-core, as
// tests/peers): the page's sampled flame graph holds exactly the recording's samples — the
// self periods of every call path equal the folded export's, the "inside step" view exactly
// the samples whose site is step — and the density rows exactly each thread's samples; both
// canvases draw, the view switch and the search work, and the page loads clean.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, open, run, tempDir } from '../peers/report_browser.mjs';

const CLI = process.env.JAGER_CLI, HOT = process.env.SAMPLER_HOT, PLUGINS = process.env.JAGER_PLUGIN_DIR;
let browser, dir, html, data, samples, folded;

before(async () => {
  assert.ok(CLI && HOT && PLUGINS, 'JAGER_CLI, SAMPLER_HOT and JAGER_PLUGIN_DIR are set by ctest');
  dir = tempDir('jager-sampled-report-');
  const jgr = join(dir, 'hot.jgr');
  process.env.JAGER_PLUGINS = 'sampler';
  process.env.JAGER_PLUGIN_PATH = PLUGINS;
  process.env.JAGER_OUTPUT = jgr;
  process.env.JAGER_SAMPLER_HZ = '1000';
  run(HOT, ['300']);
  for (const k of ['JAGER_PLUGINS', 'JAGER_OUTPUT']) delete process.env[k];
  html = join(dir, 'hot.html');
  run(CLI, ['report', jgr, '-o', html]);
  const text = readFileSync(html, 'utf8');
  data = JSON.parse(text.match(/<script type="application\/json" id="jager-data">([\s\S]*?)<\/script>/)[1]);
  samples = run(CLI, ['dump', jgr, '--type', 'sampler.sample']).stdout.trim().split('\n').map((l) => JSON.parse(l).fields);
  run(CLI, ['export', '--format', 'folded', jgr, '-o', join(dir, 'hot.folded')]);
  folded = new Map(readFileSync(join(dir, 'hot.folded'), 'utf8').trim().split('\n').map((l) => {
    const i = l.lastIndexOf(' ');
    return [l.slice(0, i), Number(l.slice(i + 1))];
  }));
  browser = await launch();
});

after(async () => { if (browser) await browser.close(); });

const sum = (a, f) => a.reduce((x, s) => x + f(s), 0);

/** Root-first path text of node i and each node's self periods (c minus its children's). */
function selfPaths(sm, root) {
  const kids = sm.p.map(() => []);
  sm.p.forEach((pa, i) => { if (pa >= 0) kids[pa].push(i); });
  const out = new Map();
  const walk = (i, prefix) => {
    const text = sm.p[i] < 0 ? '' : (prefix ? prefix + ';' : '') + sm.fns[sm.k[i]][0];
    const self = sm.c[i] - sum(kids[i], (k) => sm.c[k]);
    if (self > 0 && text) out.set(text, (out.get(text) ?? 0) + self);
    for (const k of kids[i]) walk(k, text);
  };
  walk(root, '');
  return out;
}

test('the sampled tree holds exactly the recording\'s samples', () => {
  const sm = data.samples;
  assert.ok(sm, 'the page has a samples block');
  assert.ok(samples.length > 200, `enough samples (${samples.length})`);
  assert.equal(sm.count, samples.length);
  assert.equal(sm.c[0], sum(samples, (s) => s.weight), 'root periods = Σ weight');
  assert.equal(sm.t[0], sum(samples, (s) => s.cpu_ns), 'root time = Σ cpu_ns');
  assert.deepEqual([...selfPaths(sm, 0)].sort(), [...folded].sort(), 'every path\'s self periods = the folded export');
  // inside step: exactly the samples whose innermost open site is step; hidden_hot never
  const step = data.sites.findIndex((s) => s[0] === 'step');
  const root = sm.roots.find((r) => r[0] === step);
  assert.ok(root, 'a root for the site step');
  const inStep = samples.filter((s) => s.site === 'step');
  assert.equal(sm.c[root[1]], sum(inStep, (s) => s.weight));
  assert.equal(sm.t[root[1]], sum(inStep, (s) => s.cpu_ns));
  const names = [...selfPaths(sm, root[1]).keys()];
  assert.ok(names.some((t) => t.endsWith(';main;in_step')), names.join('\n'));
  assert.ok(!names.some((t) => t.includes('hidden_hot')), 'hidden_hot runs outside every span');
});

test('density: one row per sampled thread, its bins summing to its samples', () => {
  const d = data.samples.density;
  assert.equal(d.bins, 400);
  assert.ok(d.dt * d.bins >= data.duration_ns, 'the bins cover the run');
  const byTid = new Map();
  for (const s of samples) byTid.set(s.os_tid, (byTid.get(s.os_tid) ?? 0) + s.weight);
  assert.equal(d.lanes.length, byTid.size);
  for (const l of d.lanes) {
    assert.equal(l.total, byTid.get(l.tid), l.name);
    assert.equal(sum(l.n, (x) => x), l.total);
    assert.match(l.name, new RegExp(`tid ${l.tid}\\)?$`));
  }
  // the program computes the whole run: samples spread over most of it, not in one bin
  const busy = d.lanes[0].n.filter((x) => x > 0).length;
  assert.ok(busy > 200, `samples in ${busy} of 400 bins`);
});

async function coloured(page, id) {
  return page.evaluate((cid) => {
    const c = document.getElementById(cid), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 40) n++;
    return n;
  }, id);
}

test('Chromium draws the sampled flame graph and the density; the view and search work', async () => {
  const { page, context, errors, requests, url } = await open(browser, html);
  try {
    assert.deepEqual(errors, []);
    assert.deepEqual(requests, [url], 'the only request is the page itself');
    assert.equal(await page.$eval('#samples', (s) => s.hidden), false, 'the samples section is shown');
    assert.ok(await coloured(page, 'sf-canvas') > 2000, 'sampled flame graph has coloured frames');
    assert.ok(await coloured(page, 'sd-canvas') > 200, 'density has coloured cells');
    assert.equal(await page.$eval('#sd-block', (s) => s.hidden), false, 'the density sits under the timeline');
    // on the timeline's axis: zoomed to the first quarter, the right edge is bin ~100 of 400
    const edge = await page.evaluate(() => {
      J.timeline.setView(0, J.data.duration_ns / 4);
      const d = J.samples.density;
      return [d.hit(1, 5)[1], d.hit(d.w - 1, 5)[1], J.timeline.v0, J.timeline.v1];
    });
    const dt = data.samples.density.dt;
    assert.equal(edge[0], Math.max(0, Math.floor(edge[2] / dt)), `left edge ${edge}`);
    assert.ok(Math.abs(edge[1] - Math.floor(edge[3] / dt)) <= 1, `right edge ${edge}`);
    assert.ok(edge[1] > 80 && edge[1] < 120, `a quarter of the run: ${edge}`);
    assert.ok(await coloured(page, 'sd-canvas') > 100, 'the zoomed density draws');
    const drawn = await page.evaluate(() => J.samples.flame.rects.map((r) => J.samples.flame.name(r[4])));
    assert.ok(drawn.includes('in_step') && drawn.includes('hidden_hot') && drawn.includes('main'), drawn.join(','));

    // search in the all-samples view: the share of hidden_hot's frames, as the data says
    const sm = data.samples;
    const rootOf = (i) => { while (sm.p[i] >= 0) i = sm.p[i]; return i; };
    const hid = sm.p.reduce((a, pa, i) => a + (pa >= 0 && rootOf(i) === 0 && sm.fns[sm.k[i]][0] === 'hidden_hot' ? sm.t[i] : 0), 0);
    await page.fill('#sf-search', 'hidden_hot');
    const want = await page.evaluate((f) => J.fmtPct(f) + ' matched', hid / sm.t[0]);
    assert.equal(await page.textContent('#sf-match'), want);
    assert.ok(hid / sm.t[0] > 0.3 && hid / sm.t[0] < 0.7, `hidden_hot ${hid / sm.t[0]}`);

    // the "inside step" view: its root, no hidden_hot there
    const step = data.sites.findIndex((s) => s[0] === 'step');
    const root = sm.roots.find((r) => r[0] === step)[1];
    await page.selectOption('#sf-view', String(root));
    assert.equal(await page.evaluate(() => J.samples.flame.home), root);
    assert.equal(await page.$eval('#sf-crumbs', (n) => n.dataset.focus), 'inside step');
    assert.equal(await page.textContent('#sf-match'), '0.0 % matched', 'hidden_hot is not inside step');
    await page.fill('#sf-search', 'in_step');
    const inStep = await page.textContent('#sf-match');
    assert.ok(/^(9\d|100) % matched$/.test(inStep), `in_step is nearly all of step: ${inStep}`);
    assert.ok(await coloured(page, 'sf-canvas') > 2000);
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});
