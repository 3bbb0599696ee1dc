// `jager export --format parquet` read back by two Parquet readers we did not write:
// DuckDB (@duckdb/node-api) and hyparquet. Both must return exactly the values the
// recording driver printed, with the intended types, for uncompressed and ZSTD pages, plain
// and dictionary-encoded strings, one and many row groups. hyparquet has no ZSTD codec of
// its own: it is handed the `zstd` command-line tool as its decompressor.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { byThread, jager, outPath, recording, requirePeers, run } from '../export/peer_common.mjs';

requirePeers('@duckdb/node-api', 'hyparquet');
const { DuckDBInstance } = await import('@duckdb/node-api');
const { parquetReadObjects, parquetMetadata } = await import('hyparquet');

const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
async function query(sql) {
  const reader = await conn.runAndReadAll(sql);
  return { rows: reader.getRowObjects(), names: reader.columnNames(), types: reader.columnTypes().map(String) };
}
const sqlPath = (p) => `'${p.replaceAll("'", "''")}'`;

// Expected DuckDB type of every column: the table model's kinds as DuckDB sees them.
const STRING_COLS = new Set(['name', 'file', 'severity_text', 'site_name', 'trace_id', 'ctx_span_id', 'body',
  'attributes', 'unit', 'kind', 'reason', 'source', 'text', 'message', 'label', 'signature', 'where_name']);
function expectedType(table, col, sample) {
  if (STRING_COLS.has(col)) return 'VARCHAR';
  if (typeof sample === 'number') return 'DOUBLE';
  if (typeof sample === 'boolean') return 'BOOLEAN';
  if ((table === 'test.sample' && (col === 'count' || col === 'stack')) || (table === 'test.level' && col === 'queue') || (table === 'gc.pause' && (col === 'requested' || col === 'stack')))
    return 'UBIGINT';
  return 'BIGINT';
}

/** Rows in file order split into row groups of n. */
function byGroup(rows, n) {
  const out = [];
  for (let i = 0; i < rows.length; i += n) out.push(rows.slice(i, i + n));
  return out;
}

/** Compare one reader's value to the oracle's. */
function same(got, want, where) {
  if (want === null) return assert.equal(got ?? null, null, where);
  if (typeof want === 'object') return assert.deepEqual(JSON.parse(got), want, where);
  if (typeof want === 'string' && typeof got === 'bigint') return assert.equal(got, BigInt(want), where);
  if (typeof want === 'number') return assert.ok(Object.is(got, want), `${where}: ${got} !== ${want}`);
  assert.equal(got, want, where);
}

function zstdDecompress(input, outputLength) {
  let r;
  try {
    r = run('zstd', ['-d', '-c', '-q'], { input: Buffer.from(input), encoding: 'buffer' });
  } catch (e) {
    throw new Error(`the zstd command is missing (${e.message}): run scripts/install-deps.sh`);
  }
  assert.equal(r.status, 0, `zstd -d failed: ${r.stderr}`);
  assert.equal(r.stdout.length, outputLength);
  return new Uint8Array(r.stdout);
}

const configs = [
  { codec: 'none', dict: 'never', rg: null },
  { codec: 'none', dict: 'always', rg: null },
  { codec: 'zstd', dict: 'never', rg: null },
  { codec: 'zstd', dict: 'always', rg: null },
  { codec: 'zstd', dict: 'auto', rg: 100 },
  { codec: 'none', dict: 'auto', rg: 7 },
];

for (const cfg of configs) {
  test(`parquet codec=${cfg.codec} dict=${cfg.dict}${cfg.rg ? ` row groups of ${cfg.rg}` : ''}: DuckDB and hyparquet read our values`, async () => {
    const { jgr, tables } = recording();
    const out = outPath(`pq-${cfg.codec}-${cfg.dict}`);
    const args = ['export', '--format', 'parquet', jgr, '-o', out, '--parquet-codec', cfg.codec, '--parquet-dict', cfg.dict];
    if (cfg.rg) args.push('--row-group-rows', String(cfg.rg));
    const r = jager(...args);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(fs.readdirSync(out).sort(), [...tables.keys()].map((t) => `${t}.parquet`).sort());

    for (const [table, want] of tables) {
      const file = path.join(out, `${table}.parquet`);
      const cols = Object.keys(want[0]);
      // ---- DuckDB: values, column names and types
      const res = await query(`SELECT * FROM read_parquet(${sqlPath(file)})`);
      const { names, types } = res;
      const rows = byThread(res.rows);
      assert.deepEqual(names, cols, `${table}: columns`);
      cols.forEach((c, j) => assert.equal(types[j], expectedType(table, c, want.find((w) => w[c] !== null)?.[c]), `${table}.${c} type`));
      assert.equal(rows.length, want.length, `${table}: row count`);
      want.forEach((w, i) => cols.forEach((c) => same(rows[i][c], w[c], `duckdb ${table}[${i}].${c}`)));

      // ---- the file's own metadata, as DuckDB reads it
      const meta = (await query(`SELECT row_group_id, path_in_schema, compression, encodings, type, num_values, stats_null_count, stats_min_value, stats_max_value FROM parquet_metadata(${sqlPath(file)})`)).rows;
      // integer statistics: each row group's min and max of the oracle's values
      for (const m of meta.filter((x) => x.type === 'INT64')) {
        const vals = byGroup(res.rows, cfg.rg ?? res.rows.length)[Number(m.row_group_id)]
          .map((r) => r[m.path_in_schema]).filter((v) => v !== null).map(BigInt);
        if (!vals.length) {
          assert.equal(m.stats_min_value, null);
          continue;
        }
        const min = vals.reduce((a, b) => (b < a ? b : a)), max = vals.reduce((a, b) => (b > a ? b : a));
        assert.equal(BigInt(m.stats_min_value), min, `${table}.${m.path_in_schema} rg ${m.row_group_id} min`);
        assert.equal(BigInt(m.stats_max_value), max, `${table}.${m.path_in_schema} rg ${m.row_group_id} max`);
      }
      const groups = new Set(meta.map((m) => m.row_group_id)).size;
      assert.equal(groups, cfg.rg ? Math.ceil(want.length / cfg.rg) : 1, `${table}: row groups`);
      for (const m of meta) {
        assert.equal(m.compression, cfg.codec === 'zstd' ? 'ZSTD' : 'UNCOMPRESSED');
        const dictUsed = String(m.encodings).includes('RLE_DICTIONARY');
        assert.ok(m.stats_null_count !== null, 'null counts are written');
        const allNull = m.num_values === m.stats_null_count; /* nothing to put in a dictionary */
        if (m.type !== 'BYTE_ARRAY' || cfg.dict === 'never' || allNull) assert.ok(!dictUsed, `${table}.${m.path_in_schema}: plain`);
        else if (cfg.dict === 'always') assert.ok(dictUsed, `${table}.${m.path_in_schema}: dictionary`);
      }
      if (cfg.dict === 'auto' && table === 'span')
        assert.ok(meta.some((m) => m.path_in_schema === 'name' && String(m.encodings).includes('RLE_DICTIONARY')),
          'auto: repetitive site names are dictionary-encoded');

      // ---- hyparquet: an independent decoder of the same bytes
      const buf = fs.readFileSync(file);
      const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
      const md = parquetMetadata(ab);
      assert.equal(Number(md.num_rows), want.length);
      assert.equal(md.created_by, 'jager version 1.0.0 (build export)');
      const kv = Object.fromEntries((md.key_value_metadata ?? []).map((e) => [e.key, e.value]));
      assert.equal(kv['jager.event_type'], table);
      assert.equal(kv['test.hostile'], 'quote " comma , newline \n <script>alert(1)</script> ü');
      const objs = byThread(await parquetReadObjects({ file: ab, compressors: { ZSTD: zstdDecompress } }));
      assert.equal(objs.length, want.length);
      want.forEach((w, i) => cols.forEach((c) => same(objs[i][c], w[c], `hyparquet ${table}[${i}].${c}`)));
    }
  });
}

test('parquet: values beyond INT64_MAX keep their unsigned value; hostile strings intact', async () => {
  const { jgr, tables } = recording();
  const out = outPath('pq-check');
  assert.equal(jager('export', '--format', 'parquet', jgr, '-o', out).status, 0);
  const { rows } = await query(`SELECT count, label, ratio FROM read_parquet(${sqlPath(path.join(out, 'test.sample.parquet'))})`);
  assert.equal(rows[0].count, 18446744073709551615n);
  assert.equal(rows[0].label, 'label, "quoted"\nü');
  assert.equal(rows[3].label, null);
  const logs = byThread((await query(`SELECT thread, body FROM read_parquet(${sqlPath(path.join(out, 'log.parquet'))})`)).rows).map((r) => r.body);
  assert.ok(logs.includes('invalid utf-8: \uFFFD\uFFFD end'), 'invalid UTF-8 replaced, the rest kept');
  assert.ok(logs.includes('quote " comma , newline \n cr \r tab \t end'));
  assert.deepEqual(logs, tables.get('log').map((l) => l.body));
});

// A task that migrated between threads (rec_tasks of tests/tools: task 2's solve and the solve
// nested in it begun on thread 1, ended on thread 2 — JAGER_EV_SPAN_X records): both are rows
// of the span table, recorded by thread 2, numbered by thread 1 (begin_thread), the inner one
// under the outer one (parent_thread, parent_id); a plain span's begin_thread and
// parent_thread are its own thread.
test('parquet: spans of a task that moved between threads keep their begin thread and parent', { skip: !process.env.REC_TASKS }, async () => {
  const jgr = outPath('tasks.jgr');
  assert.equal(run(process.env.REC_TASKS, [jgr]).status, 0);
  const out = outPath('pq-tasks');
  assert.equal(jager('export', '--format', 'parquet', jgr, '-o', out).status, 0);
  const file = sqlPath(path.join(out, 'span.parquet'));
  const moved = (await query(`SELECT thread, name, span_id, parent_id, begin_thread, parent_thread FROM read_parquet(${file})
    WHERE begin_thread <> thread ORDER BY parent_id`)).rows;
  assert.equal(moved.length, 2, JSON.stringify(moved, (k, v) => (typeof v === 'bigint' ? String(v) : v)));
  const [outer, inner] = moved;
  for (const r of moved) {
    assert.equal(r.name, 'solve');
    assert.equal(r.thread, 2n);
    assert.equal(r.begin_thread, 1n);
    assert.equal(r.parent_thread, 1n);
  }
  assert.equal(outer.parent_id, 0n);
  assert.equal(inner.parent_id, outer.span_id, 'the migrated solve under the outer solve, as thread 1 numbers it');
  // the steps under the outer solve are plain spans of thread 1 with the same parent id
  const steps = (await query(`SELECT parent_id, begin_thread, parent_thread FROM read_parquet(${file}) WHERE name = 'step'`)).rows;
  assert.equal(steps.length, 3);
  for (const s of steps) assert.deepEqual([s.parent_id, s.begin_thread, s.parent_thread], [outer.span_id, 1n, 1n]);
  const plain = (await query(`SELECT count(*) AS n FROM read_parquet(${file}) WHERE begin_thread = thread AND parent_thread = thread`)).rows;
  assert.equal(plain[0].n, 7n, 'the 7 other spans numbered by their own thread');
});
