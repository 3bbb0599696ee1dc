// Shared by the `jager export` peer tests (tests/peers/export_*.test.mjs): makes one
// recording with the real core through export_driver, loads the oracle it printed, runs
// `jager export`, and checks that the npm peers are installed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const peersDir = path.resolve(here, '..', 'peers');

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this test through ctest (ctest -L peers)`);
  return v;
}

export const JAGER = need('JAGER_BIN');
export const DRIVER = need('JAGER_EXPORT_DRIVER');
export const TMP = need('JAGER_TEST_TMP');

/** Throws a clear error when an npm peer is missing. */
export function requirePeers(...names) {
  for (const n of names) {
    if (!fs.existsSync(path.join(peersDir, 'node_modules', n, 'package.json')))
      throw new Error(`npm package '${n}' is missing from tests/peers/node_modules: run scripts/install-deps.sh`);
  }
}

/** Run a program; returns {status, stdout, stderr} (strings). */
export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 << 20, ...opts });
  if (r.error) throw r.error;
  return r;
}

export function jager(...args) {
  return run(JAGER, args, { env: { ...process.env, JAGER_QUIET: '1' } });
}

let cached = null;
/** The recording and the oracle: {jgr, rows: [{table, row}], tables: Map(name -> rows)}. */
export function recording() {
  if (cached) return cached;
  fs.rmSync(TMP, { recursive: true, force: true });
  fs.mkdirSync(TMP, { recursive: true });
  const jgr = path.join(TMP, 'run.jgr');
  const oracle = path.join(TMP, 'expected.jsonl');
  const r = run(DRIVER, [jgr, oracle], { env: { ...process.env, JAGER_QUIET: '1' } });
  if (r.status !== 0) throw new Error(`export_driver failed (${r.status}): ${r.stderr}`);
  // readFileSync(…, 'utf8') turns the deliberately invalid bytes into U+FFFD, as the exporters do.
  const rows = fs.readFileSync(oracle, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const tables = new Map();
  for (const { table, row } of rows) {
    if (!tables.has(table)) tables.set(table, []);
    tables.get(table).push(row);
  }
  // The file interleaves threads by drain, the memory sink by arrival: compare per thread.
  for (const [k, v] of tables) tables.set(k, byThread(v));
  cached = { jgr, rows, tables };
  return cached;
}

/** A fresh output path under TMP. */
let n = 0;
export function outPath(name) {
  return path.join(TMP, `${n++}-${name}`);
}

/** Exclusive time of every span (its duration minus its direct children's), by site name. */
export function exclusiveBySite(spans) {
  const byKey = new Map();
  for (const s of spans) byKey.set(`${s.thread}/${s.span_id}`, s);
  const child = new Map();
  for (const s of spans) {
    if (s.parent_id === '0') continue;
    const k = `${s.thread}/${s.parent_id}`;
    child.set(k, (child.get(k) ?? 0n) + BigInt(s.duration_ns));
  }
  const out = new Map();
  for (const s of spans) {
    const ex = BigInt(s.duration_ns) - (child.get(`${s.thread}/${s.span_id}`) ?? 0n);
    out.set(s.name, (out.get(s.name) ?? 0n) + ex);
  }
  return out;
}

/** Stable sort by thread index (each thread's own order kept). Works for oracle rows
 *  (thread as a string), reader rows (bigint) and Chrome events (tid). */
export function byThread(rows, key = (r) => r.thread) {
  return rows.map((r, i) => [BigInt(key(r)), i, r]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1])).map((x) => x[2]);
}
