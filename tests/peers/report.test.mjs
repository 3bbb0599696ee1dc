// `jager report` rendered by Debian's Chromium (playwright-core): the page loads clean,
// makes no request, shows the findings, draws the timeline and flame graph, zooms, sorts,
// and shows hostile strings from the program as plain text without running them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, open, record, run, tempDir } from './report_browser.mjs';

const CLI = process.env.JAGER_CLI;
const ARTIFACTS = process.env.JAGER_ARTIFACTS || tempDir('jager-artifacts-');
const HOSTILE = {
  img: '<img src=x onerror=window.__pwned=1>',
  script: '</script><script>window.__pwned=2</script>',
  site: '"><svg onload=window.__pwned=3>',
};

let browser, dir, rec, html;

before(async () => {
  assert.ok(CLI, 'JAGER_CLI must name the jager binary (set by ctest)');
  dir = tempDir('jager-report-');
  rec = record(join(dir, 'run.jgr'), 4000);
  html = join(dir, 'run.html');
  run(CLI, ['report', join(dir, 'run.jgr'), '-o', html]);
  browser = await launch();
});

after(async () => { if (browser) await browser.close(); });

/** Pixels of a canvas that are neither white nor the light greys of grids and rulers. */
async function inkedPixels(page, id) {
  return page.evaluate((cid) => {
    const c = document.getElementById(cid);
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let inked = 0, coloured = 0;
    for (let i = 0; i < d.length; i += 4) {
      const r = d[i], g = d[i + 1], b = d[i + 2];
      if (r < 235 || g < 235 || b < 235) inked++;
      if (Math.max(r, g, b) - Math.min(r, g, b) > 40) coloured++;
    }
    return { inked, coloured, total: d.length / 4 };
  }, id);
}

test('the HTML is self-contained, escaped and locked down by its CSP', () => {
  const text = readFileSync(html, 'utf8');
  const csp = text.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/);
  assert.ok(csp, 'CSP meta present');
  assert.match(csp[1], /default-src 'none'/);
  assert.match(csp[1], /script-src 'sha256-[A-Za-z0-9+/]+=*'/);
  assert.doesNotMatch(csp[1], /unsafe-inline|unsafe-eval|https?:/);
  for (const s of Object.values(HOSTILE)) assert.ok(!text.includes(s), `raw hostile string in the page: ${s}`);
  assert.ok(!/<(link|iframe|object|embed|img)\b/i.test(text), 'no element that could load anything');
  assert.ok(!/\bsrc=|\bhref="http/i.test(text.replace(/\\u003c[^"]*/g, '')), 'no external references');
  const scripts = text.match(/<script\b/g) || [];
  assert.equal(scripts.length, 2, 'exactly the data block and the page script');
  const data = JSON.parse(text.match(/<script type="application\/json" id="jager-data">([\s\S]*?)<\/script>/)[1]);
  assert.equal(data.run.spans_total, rec.spans);
  assert.ok(data.strings.includes('solver starting: ' + HOSTILE.img), 'log body kept intact in the data');
});

test('the page loads with no errors and no network requests, and shows the run', async () => {
  const { page, context, errors, requests, url } = await open(browser, html);
  try {
    assert.deepEqual(errors, []);
    assert.deepEqual(requests, [url], 'the only request is the page itself');
    const kpis = await page.$$eval('.kpi', (ks) => Object.fromEntries(ks.map((k) => [k.querySelector('.k').textContent, k.querySelector('.v').textContent])));
    assert.equal(Number(kpis.spans.replace(/\D/g, '')), rec.spans);
    assert.equal(Number(kpis.threads), 2);
    assert.equal(Number(kpis['events dropped'].replace(/\D/g, '')), 0);
    const gcKpi = Object.entries(kpis).find(([k]) => k.startsWith('GC pauses'));
    assert.ok(gcKpi, 'GC figure shown');
    assert.equal(Number(gcKpi[1]), rec.gc_pauses);
    const meta = await page.$$eval('#overview dt', (dts) => Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling.textContent])));
    assert.match(meta.plugins, /dispatch/);
    assert.equal(meta['fixture.purpose'], 'report test <b>not bold</b>');
    assert.equal(await page.$$eval('#overview b', (b) => b.length), 0, 'metadata shown as text, not markup');
  } finally { await context.close(); }
});

test('findings: the type instability is shown in red with its call chain', async () => {
  const { page, context, errors } = await open(browser, html);
  try {
    const items = await page.$$eval('#findings-list li.finding', (lis) => lis.map((li) => ({
      kind: li.dataset.kind, cls: li.className, title: li.querySelector('.f-title').textContent,
      chain: (li.querySelector('.f-chain') || {}).textContent || '',
      color: getComputedStyle(li.querySelector('.f-title')).color,
    })));
    assert.ok(items.length >= 1, 'at least one finding shown');
    const inst = items.find((f) => f.kind === 'type_instability');
    assert.ok(inst, `a type_instability finding (got ${items.map((f) => f.kind).join(', ')})`);
    assert.match(inst.cls, /instability/);
    assert.equal(inst.color, 'rgb(198, 40, 40)', 'title in red');
    assert.match(inst.title + inst.chain, /deposit!/);
    assert.match(inst.chain, /step! → deposit!/);
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});

test('timeline and flame graph draw; wheel and click zoom the timeline', async () => {
  const { page, context, errors } = await open(browser, html);
  try {
    const tl = await inkedPixels(page, 'tl-canvas');
    assert.ok(tl.coloured > 2000, `timeline has coloured span pixels (${tl.coloured})`);
    const fl = await inkedPixels(page, 'fl-canvas');
    assert.ok(fl.coloured > 2000, `flame graph has coloured frame pixels (${fl.coloured})`);
    const ct = await inkedPixels(page, 'ct-canvas');
    assert.ok(ct.coloured > 50, `counter chart draws a line (${ct.coloured})`);

    // GC pauses sit on the lane of the thread that triggered them (the main thread), in orange.
    const gcByLane = await page.evaluate(() => J.timeline.lanes.map((l) => [l.name, l.gc ? l.gc.s.length : 0]));
    assert.equal(gcByLane[0][1], rec.gc_pauses, JSON.stringify(gcByLane));
    assert.equal(gcByLane.reduce((a, l) => a + l[1], 0), rec.gc_pauses);
    const orange = await page.evaluate(() => {
      const c = document.getElementById('tl-canvas'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 0xe8) < 8 && Math.abs(d[i + 1] - 0x71) < 8 && Math.abs(d[i + 2] - 0x0a) < 8) n++;
      return n;
    });
    assert.ok(orange > rec.gc_pauses * 6, `GC pauses drawn (${orange} orange pixels)`);
    const compiles = await page.evaluate(() => J.timeline.lanes.reduce((a, l) => a + (l.cc ? l.cc.s.length : 0), 0));
    assert.equal(compiles, 2);

    const shown = () => page.evaluate(() => J.timeline.v1 - J.timeline.v0);
    const full = await shown();
    const canvas = page.locator('#tl-canvas');
    const box = await canvas.boundingBox();
    await canvas.hover({ position: { x: box.width / 2, y: 60 } });
    await page.mouse.wheel(0, -400);
    await page.waitForFunction((f) => J.timeline.v1 - J.timeline.v0 < f * 0.9, full);
    const afterWheel = await shown();
    assert.ok(afterWheel < full * 0.9, `wheel zoomed in (${full} → ${afterWheel})`);
    await canvas.click({ position: { x: box.width / 3, y: 5 } });
    await page.waitForFunction((f) => J.timeline.v1 - J.timeline.v0 < f * 0.6, afterWheel);
    await page.click('#tl-reset');
    assert.equal(await shown(), full);
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});

test('clicking the flame graph zooms into the frame; search highlights', async () => {
  const { page, context, errors } = await open(browser, html);
  try {
    const before = await page.$eval('#fl-crumbs', (n) => n.textContent);
    assert.equal(before, 'all');
    // The widest child of the root sits at the left of the second row.
    const target = await page.evaluate(() => J.flame.name(J.flame.kids[0][0]));
    await page.locator('#fl-canvas').click({ position: { x: 5, y: 18 + 9 } });
    const crumbs = await page.$$eval('#fl-crumbs button', (bs) => bs.map((b) => b.textContent));
    assert.deepEqual(crumbs, ['all', target]);
    assert.equal(await page.$eval('#fl-crumbs', (n) => n.dataset.focus), target);
    await page.fill('#fl-search', 'kernel');
    const match = await page.$eval('#fl-match', (n) => n.textContent);
    assert.match(match, /\d+ % matched/);
    assert.notEqual(match, '0 % matched');
    await page.click('#fl-crumbs button');
    assert.equal(await page.$eval('#fl-crumbs', (n) => n.dataset.focus), 'all');
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});

test('the site table sorts and carries the exact totals and signatures', async () => {
  const { page, context, errors } = await open(browser, html);
  try {
    const col = async (i) => page.$$eval(`#site-table tbody tr td:nth-child(${i})`, (tds) => tds.map((t) => t.textContent));
    const names = await col(1);
    assert.equal(names.length, rec.sites);
    const calls = (await col(3)).map((s) => Number(s.replace(/\D/g, '')));
    assert.equal(calls[names.indexOf('kernel')], rec.kernel_calls);
    await page.click('#site-table th[data-key="calls"]');
    assert.equal(await page.$eval('#site-table th[data-key="calls"]', (t) => t.getAttribute('aria-sort')), 'descending');
    const desc = (await col(3)).map((s) => Number(s.replace(/\D/g, '')));
    assert.deepEqual(desc, [...desc].sort((a, b) => b - a));
    await page.click('#site-table th[data-key="calls"]');
    const asc = (await col(3)).map((s) => Number(s.replace(/\D/g, '')));
    assert.deepEqual(asc, [...asc].sort((a, b) => a - b));
    await page.click('#site-table th[data-key="name"]');
    const sortedNames = await col(1);
    assert.deepEqual(sortedNames, [...sortedNames].sort((a, b) => a.localeCompare(b)));
    const sigs = await page.$$eval('#site-table tbody tr', (trs) => trs.filter((tr) => tr.cells[0].textContent === 'deposit!')
      .map((tr) => [...tr.querySelectorAll('.sig')].map((s) => [s.textContent, s.classList.contains('unstable')])));
    assert.equal(sigs.length, 1);
    assert.equal(sigs[0].length, 2, 'both signatures of deposit!');
    assert.ok(sigs[0].some(([t, u]) => /Float64/.test(t) && u), 'the unstable signature is marked');
    // A click on a row finds the site: flame search filled in, its spans highlighted on the timeline.
    await page.locator('#site-table tbody tr', { hasText: 'scatter' }).click();
    assert.equal(await page.$eval('#fl-search', (n) => n.value), 'scatter');
    const pink = await page.evaluate(() => {
      const c = document.getElementById('tl-canvas'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] === 0xe0 && d[i + 1] === 0x45 && d[i + 2] === 0x7b) n++;
      return n;
    });
    assert.ok(pink > 500, `scatter spans highlighted on the timeline (${pink} px)`);
    assert.match(await page.$eval('#fl-match', (n) => n.textContent), /[1-9]\d* % matched/);
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});

test('hostile strings appear as text and execute nothing', async () => {
  const { page, context, errors } = await open(browser, html);
  try {
    assert.equal(await page.evaluate(() => typeof window.__pwned), 'undefined');
    assert.equal(await page.$$eval('main img, main svg, main iframe', (n) => n.length), 0);
    const names = await page.$$eval('#site-table td.name', (tds) => tds.map((t) => t.textContent));
    assert.ok(names.includes(HOSTILE.site), 'hostile site name shown verbatim');
    // Hover the first log marker of the main thread and read the tooltip.
    await page.locator('#tl-canvas').scrollIntoViewIfNeeded();
    const pos = await page.evaluate(() => {
      const t = J.timeline, l = t.lanes.find((x) => x.logs && x.logs.t.length);
      const r = t.canvas.getBoundingClientRect();
      let best = 0;
      for (let i = 0; i < l.logs.t.length; i++) if (/img src/.test(t.strings[l.logs.m[i]])) best = i;
      // zoom right onto the marker so no neighbour is closer
      const at = l.logs.t[best];
      t.setView(at - 2000, at + 2000);
      return { x: r.left + t.x(at), y: r.top + l.evY + 4 };
    });
    await page.mouse.move(pos.x, pos.y);
    const tip = await page.$eval('#tooltip', (n) => n.textContent);
    assert.ok(tip.includes('solver starting: ' + HOSTILE.img), `tooltip shows the message as text: ${tip}`);
    assert.equal(await page.$$eval('#tooltip *', (n) => n.filter((e) => e.tagName !== 'B').length), 0);
    await page.waitForTimeout(200);
    assert.equal(await page.evaluate(() => typeof window.__pwned), 'undefined');
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});

test('screenshot artifact', async () => {
  const { page, context } = await open(browser, html, { width: 1440, height: 900 });
  try {
    mkdirSync(ARTIFACTS, { recursive: true });
    const png = join(ARTIFACTS, 'report.png');
    await page.screenshot({ path: png, fullPage: true });
    assert.ok(statSync(png).size > 20000);
  } finally { await context.close(); }
});

test('a million-span-class load: merged blocks keep the page small and interactive', async () => {
  const big = join(dir, 'big.jgr'), bigHtml = join(dir, 'big.html');
  const r = record(big, 300000, ['--rank', '3']);
  run(CLI, ['report', big, '-o', bigHtml, '--max-spans', '20000']);
  const { page, context, errors } = await open(browser, bigHtml);
  try {
    const lod = await page.evaluate(() => J.timeline.lanes.map((l) => [l.total, l.raw, l.merged]));
    assert.equal(lod.reduce((a, l) => a + l[0], 0), r.spans, 'every span accounted for');
    assert.ok(lod.every((l) => l[0] === l[1] + l[2]), 'raw + merged = total in each lane');
    const raw = lod.reduce((a, l) => a + l[1], 0);
    assert.ok(raw < 20000 + 30000, `exact spans within budget (${raw})`);
    const tl = await inkedPixels(page, 'tl-canvas');
    assert.ok(tl.coloured > 2000);
    assert.deepEqual(errors, []);
    assert.equal(await page.evaluate(() => J.table.rows.find((x) => J.data.sites[x.k][0] === 'kernel').calls), r.kernel_calls);
    // mpi.rank in the metadata: the lanes are grouped under their rank
    const procs = await page.evaluate(() => [J.timeline.procs.map((p) => [p.name, p.rank]), J.timeline.lanes[0].procY]);
    assert.equal(procs[0].length, 1);
    assert.match(procs[0][0][0], /^rank 3 · /);
    assert.equal(procs[0][0][1], '3');
    assert.ok(procs[1] >= 0, 'a process header row above the first lane');
  } finally { await context.close(); }
});

test('several recordings (MPI ranks) share one page, grouped per process', async () => {
  const r0 = record(join(dir, 'rank0.jgr'), 2000, ['--rank', '0']);
  const r1 = record(join(dir, 'rank1.jgr'), 3000, ['--rank', '1']);
  const ranksHtml = join(dir, 'ranks.html');
  run(CLI, ['report', join(dir, 'rank0.jgr'), join(dir, 'rank1.jgr'), '-o', ranksHtml]);
  const { page, context, errors } = await open(browser, ranksHtml);
  try {
    const kpis = await page.$$eval('.kpi', (ks) => Object.fromEntries(ks.map((k) => [k.querySelector('.k').textContent, k.querySelector('.v').textContent])));
    assert.equal(Number(kpis.processes), 2);
    assert.equal(Number(kpis.spans.replace(/\D/g, '')), r0.spans + r1.spans);
    assert.equal(Number(kpis.threads), 4);
    const lanes = await page.evaluate(() => J.timeline.lanes.map((l) => [l.proc, l.total, l.procY >= 0]));
    assert.deepEqual(lanes.map((l) => l[0]), [0, 0, 1, 1]);
    assert.deepEqual(lanes.map((l) => l[2]), [true, false, true, false], 'one process header above each group');
    assert.equal(lanes[0][1] + lanes[1][1], r0.spans);
    assert.equal(lanes[2][1] + lanes[3][1], r1.spans);
    // Flame graph: one node per process under the root, each as heavy as that process's top spans.
    const procs = await page.evaluate(() => J.flame.kids[0].map((i) => J.flame.name(i)).sort());
    assert.equal(procs.length, 2);
    assert.match(procs[0], /^rank 0 · /);
    assert.match(procs[1], /^rank 1 · /);
    // Table: a process column, and each rank's own exact kernel count.
    const rows = await page.$$eval('#site-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const kernel = rows.filter((r) => r[0] === 'kernel').map((r) => [r[1].slice(0, 6), Number(r[3].replace(/\D/g, ''))]).sort();
    assert.deepEqual(kernel, [['rank 0', r0.kernel_calls], ['rank 1', r1.kernel_calls]]);
    // Findings of both ranks, each naming its process.
    const locs = await page.$$eval('#findings-list li[data-kind="type_instability"] .f-loc', (ls) => ls.map((l) => l.textContent));
    assert.equal(locs.length, 2);
    assert.ok(locs.some((l) => /rank 0 · /.test(l)) && locs.some((l) => /rank 1 · /.test(l)), locs.join(' | '));
    const counters = await page.$$eval('#ct-select option', (os) => os.map((o) => o.textContent));
    assert.ok(counters.includes('rank 0: gc.live_bytes (bytes)') && counters.includes('rank 1: gc.live_bytes (bytes)'), counters.join(', '));
    assert.equal(await page.evaluate(() => typeof window.__pwned), 'undefined');
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
  // One unreadable recording: no page at all, rather than a page that silently lacks a process.
  const res = run(CLI, ['report', join(dir, 'rank0.jgr'), join(dir, 'nope.jgr'), '-o', join(dir, 'none.html')], null);
  assert.equal(res.status, 2);
  assert.throws(() => statSync(join(dir, 'none.html')));
});

test('command line: usage, missing input, unwritable output', () => {
  let r = run(CLI, ['report'], null);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /no recording given/);
  r = run(CLI, ['report', join(dir, 'missing.jgr')], null);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /missing\.jgr/);
  r = run(CLI, ['report', join(dir, 'run.jgr'), '-o', join(dir, 'no-such-dir', 'x.html')], null);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /cannot write .*x\.html/);
  r = run(CLI, ['report', join(dir, 'run.jgr'), '--max-spans', 'lots'], null);
  assert.equal(r.status, 1);
  r = run(CLI, ['report', '--help'], null);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /--max-spans N/);
  // The default output name: run.jgr → run.html next to it.
  const copy = join(dir, 'copy.jgr');
  writeFileSync(copy, readFileSync(join(dir, 'run.jgr')));
  run(CLI, ['report', copy]);
  assert.ok(statSync(join(dir, 'copy.html')).size > 50000);
});

test('a truncated recording still gives a report of its good prefix (exit 3)', async () => {
  const whole = readFileSync(join(dir, 'run.jgr'));
  const cut = join(dir, 'cut.jgr'), cutHtml = join(dir, 'cut.html');
  // Cut inside the event frames: where they end depends on the run (packed events are a
  // small part of the file, the tables at its end a large one), so cut shorter until the
  // prefix really lacks events.
  let res, events = 0;
  for (const frac of [0.9, 0.75, 0.6, 0.45, 0.3]) {
    writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * frac)));
    res = run(CLI, ['report', cut, '-o', cutHtml], null);
    const m = res.stderr.match(/partial results: (\d+) events/);
    events = m ? Number(m[1]) : 0;
    if (res.status === 3 && events > 0 && events < rec.spans) break;
  }
  assert.equal(res.status, 3, res.stderr);
  assert.match(res.stderr, /partial results: (\d+) events/);
  const { page, context, errors } = await open(browser, cutHtml);
  try {
    const kpis = await page.$$eval('.kpi', (ks) => Object.fromEntries(ks.map((k) => [k.querySelector('.k').textContent, k.querySelector('.v').textContent])));
    assert.equal(kpis['file ends early'], 'partial');
    assert.equal(Number(kpis['events in file'].replace(/\D/g, '')), events, 'the report covers exactly the good prefix');
    assert.ok(events > 0 && events < rec.spans, `a real prefix (${events} events)`);
    assert.match(await page.$eval('#overview', (n) => n.textContent), /file ends inside the frame/);
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});
