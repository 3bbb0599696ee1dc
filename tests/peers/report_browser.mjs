// Shared by report.test.mjs and bench/report/bench.mjs: run the fixture and `jager report`,
// launch Debian's Chromium through playwright-core with everything that could reach a
// network switched off, and open a report while recording console errors, page errors
// and every request the page makes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.JAGER_CHROMIUM || '/usr/bin/chromium';

export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Run a program; throws with its output when it exits with another code than `expect`. */
export function run(cmd, args, expect = 0) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, JAGER_QUIET: '1' } });
  if (r.error) throw r.error;
  if (expect !== null && r.status !== expect)
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status} (expected ${expect})\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** Record a run with report_fixture; returns what it says it recorded. */
export function record(out, spans, extra = []) {
  const fixture = process.env.JAGER_REPORT_FIXTURE;
  const args = [out, '--spans', String(spans), ...extra];
  if (process.env.JAGER_PLUGIN_DIR) args.push('--plugin-dir', process.env.JAGER_PLUGIN_DIR);
  const r = run(fixture, args);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

/** A headless Chromium; Playwright gives each launch a fresh temporary user-data-dir. */
export async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

/**
 * Open `file` in a fresh context. Returns { page, context, errors, requests, ms }: ms is
 * the time from navigation start until the page marked itself ready (data parsed, every
 * view drawn), as the page's own performance clock measures it.
 */
export async function open(browser, file, { width = 1400, height = 1000 } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const errors = [], requests = [];
  // Errors and warnings count; the one exception is Chrome's hint about repeated
  // getImageData, which the tests' own pixel readbacks cause.
  page.on('console', (m) => {
    if (m.type() !== 'error' && m.type() !== 'warning') return;
    if (m.type() === 'warning' && /willReadFrequently/.test(m.text())) return;
    errors.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  const url = pathToFileURL(file).href;
  await page.goto(url, { waitUntil: 'load', timeout: 120000 });
  await page.waitForSelector('body[data-ready="1"]', { timeout: 120000 });
  const ms = await page.evaluate(() => window.__jagerReady);
  return { page, context, errors, requests, url, ms };
}
