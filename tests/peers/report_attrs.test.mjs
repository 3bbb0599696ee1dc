// `jager report`'s "By attribute" table, rendered by Chromium, on rec_split's attribute run
// (tests/tools/rec_split.c: 40 cycles x 5 calls of `eos`, attribute region = 0..4, region 3
// 20x the work): one row per region with 40 calls, totals equal to `jager summary --by
// region` (cells are set as text, like every table of the page).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { launch, open, run, tempDir } from './report_browser.mjs';

const CLI = process.env.JAGER_CLI;
let browser, html, jgr;

before(async () => {
  const dir = tempDir('jager-report-attrs-');
  jgr = join(dir, 'split.jgr');
  run(process.env.REC_SPLIT, ['attr', jgr]);
  html = join(dir, 'split.html');
  run(CLI, ['report', jgr, '-o', html]);
  browser = await launch();
});

after(async () => { if (browser) await browser.close(); });

test('calls grouped by a span attribute, equal to jager summary --by', async () => {
  const want = JSON.parse(run(CLI, ['summary', '--by', 'region', '--format', 'json', jgr]).stdout).by.groups;
  const { page, context, errors } = await open(browser, html);
  try {
    assert.equal(await page.$eval('#attrs-block', (b) => b.hidden), false, 'the section is shown');
    assert.deepEqual(await page.$$eval('#attrs-select option', (os) => os.map((o) => o.value)), ['region']);
    const rows = await page.$$eval('#attrs tr', (trs) => trs.slice(1).map((tr) => ({
      site: tr.children[0].textContent, value: tr.children[1].textContent, calls: Number(tr.dataset.calls), total: Number(tr.dataset.total),
    })));
    assert.equal(rows.length, 5);
    assert.ok(rows.every((r) => r.site === 'eos' && r.calls === 40), JSON.stringify(rows));
    assert.equal(rows[0].value, '3', 'the heavy region first');
    for (const g of want) {
      const r = rows.find((x) => x.value === g.value);
      assert.ok(r && r.total === g.total_ns, `region ${g.value}: ${r && r.total} ns in the page, ${g.total_ns} in the summary`);
    }
    assert.deepEqual(errors, []);
  } finally { await context.close(); }
});
