// `jager report` of a plugin no tool knows by name, rendered by Chromium: a field flagged
// GAUGE is a counter chart that draws, a field flagged COUNTER and the counters the plugin
// registered through the host (with their unit) are series holding exactly what it fed,
// the thread that only emits plugin events has a lane, and the plugin's other events are
// markers whose text lists their fields.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, open, run, tempDir } from './report_browser.mjs';

const CLI = process.env.JAGER_CLI;
let browser, html, fed;

before(async () => {
  const dir = tempDir('jager-report-plugin-');
  const r = run(process.env.JAGER_REPORT_PLUGIN_FIXTURE, [join(dir, 'run.jgr'), process.env.JAGER_TEST_PLUGIN_DIR]);
  fed = JSON.parse(r.stdout.trim().split('\n').pop());
  html = join(dir, 'run.html');
  run(CLI, ['report', join(dir, 'run.jgr'), '-o', html]);
  browser = await launch();
});

after(async () => { if (browser) await browser.close(); });

test('a plugin gauge field is charted; plugin-only threads get a lane; other events are markers', async () => {
  const { page, context, errors } = await open(browser, html);
  try {
    const options = await page.$$eval('#ct-select option', (os) => os.map((o) => [o.value, o.textContent]));
    const gauge = options.find((o) => o[1] === 'good.level.rss (bytes)');
    assert.ok(gauge, options.map((o) => o[1]).join(', '));
    await page.selectOption('#ct-select', gauge[0]);
    const coloured = await page.evaluate(() => {
      const c = document.getElementById('ct-canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 40) n++;
      return n;
    });
    assert.ok(coloured > 20, `the gauge's chart draws a line (${coloured} coloured pixels)`);
    const series = await page.evaluate(() => J.timeline.counters.filter((c) => c.name === 'good.level.rss').map((c) => c.v));
    assert.deepEqual(series, [[1024, 2048, 3072, 4096, 5120]]);
    // The worker thread emitted only plugin events: it has a lane with its three markers.
    const marks = await page.evaluate(() => J.timeline.lanes.map((l) => (l.marks ? l.marks.m.map((i) => J.timeline.strings[i]) : [])));
    const lane = marks.find((m) => m.some((s) => s.startsWith('good.tick')));
    assert.deepEqual(lane, ['good.tick seq=0 payload=0', 'good.tick seq=1 payload=8', 'good.tick seq=2 payload=16']);
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});

test('host counters (counter_register, with their unit) and a COUNTER field are charted with exactly what was fed', async () => {
  const { page, context, errors } = await open(browser, html);
  try {
    const options = await page.$$eval('#ct-select option', (os) => os.map((o) => [o.value, o.textContent]));
    const labels = options.map((o) => o[1]);
    for (const want of ['good.items_done (items)', 'good.queue_depth (items)', 'good.io.reads'])
      assert.ok(labels.includes(want), `${want} offered: ${labels.join(', ')}`);
    // The series the page charts (its timeline data; the chart draws v as it is).
    const series = (name) => page.evaluate((n) => J.timeline.counters.filter((c) => c.name === n).map((c) => c.v), name);
    assert.deepEqual(await series('good.items_done'), [fed.items_done]); // counter_add 2, 3, 5: totals
    assert.deepEqual(await series('good.queue_depth'), [fed.queue_depth]);
    assert.deepEqual(await series('good.io.reads'), [fed.reads]);
    // Each one draws when picked.
    for (const want of ['good.items_done (items)', 'good.queue_depth (items)', 'good.io.reads']) {
      await page.selectOption('#ct-select', options.find((o) => o[1] === want)[0]);
      const coloured = await page.evaluate(() => {
        const c = document.getElementById('ct-canvas');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 40) n++;
        return n;
      });
      assert.ok(coloured > 20, `${want}: the chart draws (${coloured} coloured pixels)`);
    }
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});
