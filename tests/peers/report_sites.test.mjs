// The report's site table with more sites than it draws at once (issue 16 item 12: 100k
// sites once took seconds per sort): 1,234 sites (rec_hostile sites), the first 500 rows
// drawn with a "show more" row, a sort orders all of them, "show more" appends the next
// 500 in that order, and a row click still finds its site.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, open, run, tempDir } from './report_browser.mjs';

const CLI = process.env.JAGER_CLI, HOSTILE = process.env.REC_HOSTILE;
const N = 1234;
let browser, html;

before(async () => {
  assert.ok(CLI && HOSTILE, 'JAGER_CLI and REC_HOSTILE must be set (ctest does)');
  const dir = tempDir('jager-report-sites-');
  const r = JSON.parse(run(HOSTILE, ['sites', join(dir, 'sites.jgr'), String(N)]).stdout.trim());
  assert.equal(r.sites, N);
  html = join(dir, 'sites.html');
  run(CLI, ['report', join(dir, 'sites.jgr'), '-o', html]);
  browser = await launch();
});

after(async () => { if (browser) await browser.close(); });

const names = (page) => page.$$eval('#site-table tbody tr:not(.more) td.name', (tds) => tds.map((t) => t.textContent));
const moreText = (page) => page.$eval('#site-table tbody tr.more', (tr) => tr.textContent).catch(() => null);

test('the table draws 500 rows, sorts all sites, and shows more in order', async () => {
  const o = await open(browser, html);
  const { page } = o;
  try {
    assert.deepEqual(o.errors, []);
    let shown = await names(page);
    assert.equal(shown.length, 500);
    assert.match(await moreText(page), /Showing 500 of 1\s?234 sites — show 500 more/);

    // by name, ascending: site_0, site_1, site_10, site_100, … over all 1,234 (collation order)
    await page.click('#site-table th[data-key="name"]');
    const all = Array.from({ length: N }, (_, i) => `site_${i}`).sort(new Intl.Collator().compare);
    shown = await names(page);
    assert.deepEqual(shown, all.slice(0, 500));
    await page.click('#site-table tbody tr.more');
    shown = await names(page);
    assert.deepEqual(shown, all.slice(0, 1000));
    assert.match(await moreText(page), /Showing 1\s?000 of 1\s?234 sites — show 234 more/);
    await page.click('#site-table tbody tr.more');
    shown = await names(page);
    assert.deepEqual(shown, all);
    assert.equal(await moreText(page), null);

    // by calls, descending: the 246 sites called 5 times first (i % 5 == 4; equal calls: the later site first)
    await page.click('#site-table th[data-key="calls"]');
    const calls = await page.$$eval('#site-table tbody tr:not(.more) td:nth-child(3)', (tds) => tds.map((t) => t.textContent));
    assert.equal(calls.length, 500);
    assert.ok(calls.slice(0, 246).every((c) => c === '5') && calls[246] === '4', `calls column: ${calls.slice(240, 250)}`);
    shown = await names(page);
    assert.deepEqual(shown.slice(0, 3), ['site_1229', 'site_1224', 'site_1219']);

    // a row click still finds its site in the flame graph
    await page.click('#site-table tbody tr:first-child');
    assert.equal(await page.evaluate(() => J.flame && J.flame.query), 'site_1229');
    assert.deepEqual(o.errors, []);
  } finally {
    await o.context.close();
  }
});

// Long site names and locations (issue 9 item 11): at 1400 px the table fits its box —
// no horizontal scrolling — and every location is there in full, wrapped, not cut.
test('long names and locations wrap inside the table at 1400 px', async () => {
  const dir = tempDir('jager-report-long-');
  const r = JSON.parse(run(HOSTILE, ['longsites', join(dir, 'long.jgr'), '12']).stdout.trim());
  assert.equal(r.sites, 12);
  const file = join(dir, 'long.html');
  run(CLI, ['report', join(dir, 'long.jgr'), '-o', file]);
  const o = await open(browser, file, { width: 1400, height: 1000 });
  const { page } = o;
  try {
    assert.deepEqual(o.errors, []);
    const m = await page.evaluate(() => {
      const wrap = document.querySelector('#site-table').closest('.table-wrap');
      const cells = [...document.querySelectorAll('#site-table tbody td.loc')];
      return {
        innerWidth: window.innerWidth, docScroll: document.documentElement.scrollWidth,
        wrapScroll: wrap.scrollWidth, wrapClient: wrap.clientWidth,
        locs: cells.map((td) => ({ text: td.textContent, title: td.title, cut: td.scrollWidth > td.clientWidth + 1 })),
      };
    });
    assert.ok(m.docScroll <= m.innerWidth, `page ${m.docScroll} px wide in a ${m.innerWidth} px window`);
    assert.ok(m.wrapScroll <= m.wrapClient + 1, `site table ${m.wrapScroll} px wide in its ${m.wrapClient} px box`);
    assert.equal(m.locs.length, 12);
    for (const l of m.locs) {
      assert.match(l.text, /^\/home\/researcher\/projects\/climate-model\/src\/dynamics\/very\/deep\/nested\/package\/structure\/assemble_boundary_conditions_\d+\.jl:100\d\d$/);
      assert.equal(l.title, l.text);
      assert.ok(!l.cut, `location cut: ${l.text}`);
    }
  } finally {
    await o.context.close();
  }
});
