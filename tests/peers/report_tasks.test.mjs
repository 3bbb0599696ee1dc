// `jager report` of a Julia-like recording (tests/tools/rec_tasks.c: four tasks, one
// migrating between two threads, logs and marks with the Julia binding's GC counters and
// code.method, hostile task and method names), rendered by Chromium: one timeline lane per
// task, counted exactly against the tasks recorded, each drawn with its spans; the GC
// counters charted as julia.gc.* series with the values written; the "By method" table
// with each method's counts and the hostile method shown as text, never run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, open, run, tempDir } from './report_browser.mjs';

const CLI = process.env.JAGER_CLI;
let browser, html, want, htmlMany;

before(async () => {
  const dir = tempDir('jager-report-tasks-');
  const jgr = join(dir, 'tasks.jgr');
  want = JSON.parse(run(process.env.REC_TASKS, [jgr]).stdout.trim().split('\n').pop());
  html = join(dir, 'tasks.html');
  run(CLI, ['report', jgr, '-o', html]);
  run(process.env.REC_TASKS, [join(dir, 'many.jgr'), 'many']);
  htmlMany = join(dir, 'many.html');
  run(CLI, ['report', join(dir, 'many.jgr'), '-o', htmlMany]);
  browser = await launch();
});

after(async () => { if (browser) await browser.close(); });

test('one lane per task, wherever it ran, each drawn with its spans', async () => {
  const { page, context, errors } = await open(browser, html);
  try {
    const lanes = await page.evaluate(() => J.timeline.lanes.map((l) => ({
      task: l.task, threads: l.threads, name: l.name, total: l.total, depth: l.depth,
    })));
    assert.deepEqual(lanes.map((l) => l.task), want.tasks.map((t) => t.id), 'exactly the recorded tasks, in id order');
    for (const t of want.tasks) {
      const l = lanes.find((x) => x.task === t.id);
      assert.equal(l.total, t.spans, `task ${t.id}: spans`);
      assert.deepEqual(l.threads, t.threads, `task ${t.id}: threads`);
      if (t.name) assert.ok(l.name.includes(t.name), `task ${t.id}: named ${l.name}`);
    }
    assert.equal(lanes.find((l) => l.task === 2).depth, 2, 'task 2: solve with its steps nested under it');
    // Every span of row 0 of every lane is inked on the canvas where the page says it is.
    const missing = await page.evaluate(() => {
      const t = J.timeline, c = document.getElementById('tl-canvas'), ctx = c.getContext('2d');
      const sx = c.width / c.getBoundingClientRect().width, out = [];
      for (const l of t.lanes) {
        const r = l.spans[0];
        for (let i = 0; i < r.s.length; i++) {
          const x0 = Math.floor(t.x(r.s[i]) * sx), x1 = Math.ceil(t.x(r.s[i] + r.d[i]) * sx);
          const y = Math.round((l.rowY + t.ROW / 2) * sx);
          const d = ctx.getImageData(Math.max(0, x0 - 1), y, Math.max(1, x1 - x0 + 2), 1).data;
          let coloured = 0;
          for (let k = 0; k < d.length; k += 4) if (Math.max(d[k], d[k + 1], d[k + 2]) - Math.min(d[k], d[k + 1], d[k + 2]) > 30) coloured++;
          if (!coloured) out.push(l.name + ' #' + i);
        }
      }
      return out;
    });
    assert.deepEqual(missing, [], 'every span of the lanes\' first rows is drawn');
    assert.equal(await page.evaluate(() => typeof window.__pwned), 'undefined');
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});

test('the GC counters of logs and marks are charted with the values written', async () => {
  const { page, context, errors } = await open(browser, html);
  try {
    const opts = await page.$$eval('#ct-select option', (os) => os.map((o) => o.textContent));
    for (const k of want.gc_keys) assert.ok(opts.some((o) => o.startsWith('julia.' + k)), `series julia.${k} offered`);
    const picked = await page.evaluate(() => J.timeline.counters[J.timeline.counterSel].name);
    assert.equal(picked, 'julia.gc.allocated_bytes', 'allocated bytes charted first');
    for (let i = 0; i < want.gc_keys.length; i++) {
      const v = await page.evaluate((n) => J.timeline.counters.find((c) => c.name === n).v, 'julia.' + want.gc_keys[i]);
      assert.deepEqual(v, want.gc.map((row) => row[i]), `julia.${want.gc_keys[i]}`);
    }
    const blue = await page.evaluate(() => {
      const c = document.getElementById('ct-canvas'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let k = 0; k < d.length; k += 4) if (d[k + 2] > 180 && d[k] < 120) n++;
      return n;
    });
    assert.ok(blue > 50, `the series' line is drawn (${blue} px)`);
    // another series is chosen in the select
    await page.selectOption('#ct-select', { label: 'julia.gc.time_ns (ns)' });
    assert.equal(await page.evaluate(() => J.timeline.counters[J.timeline.counterSel].name), 'julia.gc.time_ns');
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});

test('logs and span errors by method, hostile method names shown as text', async () => {
  const { page, context, errors } = await open(browser, html);
  try {
    assert.equal(await page.$eval('#methods-block', (b) => b.hidden), false);
    const rows = await page.$$eval('#methods tr', (trs) => trs.slice(1).map((tr) => [...tr.children].map((td) => td.textContent)));
    const hostile = want.hostile_method;
    const exp = { ...want.methods, [hostile]: want.methods.hostile };
    delete exp.hostile;
    assert.equal(rows.length, Object.keys(exp).length);
    assert.equal(rows[0][0], hostile, 'the method with errors first, verbatim');
    for (const r of rows) {
      const w = exp[r[0]];
      assert.ok(w, `row for ${r[0]}`);
      assert.deepEqual(r.slice(1).map(Number), [w.logs, w.warnings, w.errors, w.span_errors], r[0]);
    }
    assert.equal(await page.$$eval('img, svg', (x) => x.length), 0, 'no element made from a program string');
    assert.equal(await page.evaluate(() => typeof window.__pwned), 'undefined');
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});

test('500 tasks: 64 lanes and one shared, all drawn', async () => {
  const { page, context, errors } = await open(browser, htmlMany);
  try {
    const lanes = await page.evaluate(() => J.timeline.lanes.map((l) => [l.task, l.total, l.name]));
    assert.equal(lanes.length, 65);
    assert.equal(lanes.filter((l) => l[0]).length, 64);
    assert.match(lanes[64][2], /^436 other tasks/);
    assert.equal(lanes.reduce((a, l) => a + l[1], 0), 502, 'every span on a lane');
    const h = await page.evaluate(() => document.getElementById('tl-canvas').height);
    assert.ok(h < 32767, `the timeline canvas fits Chromium's limit (${h} px)`);
    const last = await page.evaluate(() => {
      const t = J.timeline, l = t.lanes[t.lanes.length - 1], c = document.getElementById('tl-canvas');
      const d = c.getContext('2d').getImageData(0, Math.round(l.rowY + t.ROW / 2), c.width, 1).data;
      let n = 0;
      for (let k = 0; k < d.length; k += 4) if (Math.max(d[k], d[k + 1], d[k + 2]) - Math.min(d[k], d[k + 1], d[k + 2]) > 30) n++;
      return n;
    });
    assert.ok(last > 0, 'the shared lane is drawn');
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});
