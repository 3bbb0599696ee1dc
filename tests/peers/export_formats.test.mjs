// `jager export` to Chrome Trace Event JSON, speedscope and CSV, checked against schemas
// written from the formats (../shared/docs/formats.md §4, §5; RFC 4180) and against the
// oracle the recording driver printed; plus truncated and corrupt inputs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { byThread, DRIVER, jager, outPath, recording, run } from '../export/peer_common.mjs';

const isInt = (v) => Number.isInteger(v);
const ns = (us) => Math.round(us * 1000); // our ts/dur carry exactly three decimals

// ---------------------------------------------------------------- Chrome
function checkChromeSchema(doc) {
  assert.equal(typeof doc, 'object');
  assert.ok(Array.isArray(doc.traceEvents), 'traceEvents array');
  assert.equal(doc.displayTimeUnit, undefined, 'ts is in µs; an old Perfetto read "ns" as the unit');
  for (const e of doc.traceEvents) {
    assert.equal(typeof e.name, 'string', JSON.stringify(e));
    assert.ok(['X', 'i', 'C', 'M'].includes(e.ph), `unexpected ph ${e.ph}`);
    assert.ok(isInt(e.pid), 'integer pid');
    if (e.ph === 'M') {
      assert.ok(['process_name', 'thread_name', 'thread_sort_index'].includes(e.name));
      assert.equal(typeof e.args, 'object');
      if (e.name === 'thread_sort_index') assert.ok(isInt(e.args.sort_index));
      else assert.equal(typeof e.args.name, 'string');
      if (e.name !== 'process_name') assert.ok(isInt(e.tid));
      continue;
    }
    assert.equal(typeof e.cat, 'string');
    assert.equal(typeof e.ts, 'number');
    if (e.ph !== 'C') assert.ok(isInt(e.tid), 'integer tid');
    if (e.ph === 'X') {
      assert.equal(typeof e.dur, 'number', 'X needs dur');
      assert.ok(e.dur >= 0);
    }
    if (e.ph === 'i') assert.ok(['t', 'p', 'g'].includes(e.s));
    if (e.ph === 'C') {
      assert.equal(typeof e.args, 'object');
      for (const v of Object.values(e.args)) assert.equal(typeof v, 'number', 'counter series are numbers');
    }
  }
}

/** X slices of each lane must nest strictly (Perfetto's rule for one thread). */
function checkNesting(events) {
  const lanes = new Map();
  for (const e of events.filter((e) => e.ph === 'X')) {
    const k = `${e.pid}/${e.tid}`;
    if (!lanes.has(k)) lanes.set(k, []);
    lanes.get(k).push([ns(e.ts), ns(e.ts) + ns(e.dur)]);
  }
  for (const [lane, v] of lanes) {
    v.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const stack = [];
    let last = -Infinity;
    for (const [s, e] of v) {
      assert.ok(s >= last, `lane ${lane}: starts in order`);
      last = s;
      while (stack.length && stack.at(-1) <= s) stack.pop();
      if (stack.length) assert.ok(e <= stack.at(-1), `lane ${lane}: slice [${s},${e}] overlaps its parent`);
      stack.push(e);
    }
  }
  return lanes;
}

test('chrome: schema, lanes, spans, GC/compile tracks, counters, logs, marks, metadata', () => {
  const { jgr, tables } = recording();
  const out = outPath('trace.json');
  const r = jager('export', '--format', 'chrome', jgr, '-o', out);
  assert.equal(r.status, 0, r.stderr);
  const text = fs.readFileSync(out, 'utf8');
  // hostile strings are escaped: no raw markup survives (safe to embed in HTML too)
  assert.ok(!text.includes('<script') && !text.includes('<img') && !text.includes('</'), 'markup escaped');
  const doc = JSON.parse(text);
  checkChromeSchema(doc);
  const ev = doc.traceEvents;
  const lanes = checkNesting(ev);

  // spans: one X per span, exact start/duration (ns precision), args from the record
  const spans = tables.get('span');
  const xs = ev.filter((e) => e.ph === 'X' && e.cat === 'span');
  assert.equal(xs.length, spans.length);
  const byId = new Map(xs.map((e) => [`${e.tid}/${e.args.span_id}`, e]));
  let base = null;
  for (const s of spans) {
    const e = byId.get(`${s.thread}/${s.span_id}`);
    assert.ok(e, `span ${s.thread}/${s.span_id} exported`);
    assert.equal(e.name, s.name);
    assert.equal(BigInt(ns(e.dur)), BigInt(s.duration_ns));
    const b = BigInt(s.start_ns) - BigInt(ns(e.ts));
    base ??= b;
    assert.equal(b, base, 'one time base for all events');
    assert.equal(String(e.args.parent_id), s.parent_id);
    assert.equal(String(e.args.site), s.site);
    if (s.bytes !== '0') assert.equal(String(e.args.bytes), s.bytes);
    if (s.file) assert.equal(e.args.file, s.file);
  }
  // per thread lanes: each worker lane holds exactly its spans
  for (const t of new Set(spans.map((s) => s.thread)))
    assert.equal(lanes.get(`${xs[0].pid}/${t}`).length, spans.filter((s) => s.thread === t).length);

  // span attributes and the error land in the span's args
  for (const a of tables.get('span_attr')) {
    const e = byId.get(`${a.thread}/${a.span_id}`);
    assert.deepEqual(e.args.attributes, a.attributes);
  }
  for (const a of tables.get('span_error')) assert.equal(byId.get(`${a.thread}/${a.span_id}`).args.error, a.message);

  // GC pauses and compiles on their own named lanes
  const names = new Map(ev.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => [e.tid, e.args.name]));
  const gc = ev.filter((e) => e.ph === 'X' && e.cat === 'gc.pause');
  assert.equal(gc.length, tables.get('gc.pause').length);
  tables.get('gc.pause').forEach((p, i) => {
    assert.equal(BigInt(ns(gc[i].dur)), BigInt(p.duration_ns));
    assert.equal(BigInt(ns(gc[i].ts)) + base, BigInt(p.time_ns));
    assert.equal(gc[i].args.full, p.full);
    assert.deepEqual(gc[i].args.stack, ['inlined_helper (src/helper.jl:5)', 'alloc_array (src/alloc.jl:11)',
      'assemble (src/assemble.jl:88)', 'main (src/main.jl:1)'], 'trigger stack symbolized, innermost first');
  });
  const comp = ev.filter((e) => e.ph === 'X' && e.cat === 'dispatch.compile');
  assert.equal(comp.length, tables.get('dispatch.compile').length);
  tables.get('dispatch.compile').forEach((c, i) => {
    assert.match(names.get(comp[i].tid), /^Compiler( \(\d+\))?$/);
    assert.equal(comp[i].name, c.signature);
    assert.equal(BigInt(ns(comp[i].dur)), BigInt(c.duration_ns) + BigInt(c.inference_ns), 'inference + codegen');
    assert.equal(String(comp[i].args.duration_ns), c.duration_ns);
    assert.equal(String(comp[i].args.inference_ns), c.inference_ns);
  });
  assert.ok(comp.some((e) => names.get(e.tid) === 'Compiler (2)'), 'an overlapping compile gets a second lane');
  assert.ok(gc.every((e) => names.get(e.tid) === 'GC'), 'disjoint pauses share one lane');
  // a plugin type with strings/sites: generic instants with fields as args
  const samples = ev.filter((e) => e.cat === 'test.sample');
  assert.equal(samples.length, tables.get('test.sample').length);
  tables.get('test.sample').forEach((s, i) => {
    assert.equal(samples[i].ph, 'i');
    assert.equal(samples[i].args.label, s.label);
    assert.equal(samples[i].args.ratio, s.ratio);
    assert.equal(samples[i].args.flag, s.flag);
    assert.equal(samples[i].args.where, s.where_name ?? 'site#0');
  });

  // an all-numeric plugin type: counter events, one series per field
  const levels = ev.filter((e) => e.cat === 'test.level');
  assert.equal(levels.length, 2 * tables.get('test.level').length, 'one counter per field');
  tables.get('test.level').forEach((l, i) => {
    assert.deepEqual(levels[2 * i], { name: 'test.level.queue', cat: 'test.level', ph: 'C', ts: levels[2 * i].ts,
      pid: levels[2 * i].pid, tid: Number(l.thread), args: { value: Number(l.queue) } });
    assert.equal(levels[2 * i + 1].name, 'test.level.load');
    assert.equal(levels[2 * i + 1].args.value, l.load);
    assert.equal(BigInt(ns(levels[2 * i].ts)) + base, BigInt(l.time_ns));
  });
  // counters: every sample, exact values; one track per counter (no per-thread id: a
  // monotonic counter's samples are the process's running total, whatever thread adds)
  const cs = byThread(ev.filter((e) => e.ph === 'C' && e.cat === 'counter'), (e) => e.tid);
  assert.equal(cs.length, tables.get('counter').length);
  tables.get('counter').forEach((c, i) => {
    assert.equal(cs[i].name, c.name);
    assert.equal(cs[i].args.value, c.value);
    assert.equal(cs[i].id, undefined);
  });
  // logs and marks
  const logs = byThread(ev.filter((e) => e.ph === 'i' && e.cat === 'log'), (e) => e.tid);
  assert.equal(logs.length, tables.get('log').length);
  tables.get('log').forEach((l, i) => {
    assert.equal(logs[i].args.body, l.body);
    assert.equal(logs[i].args.severity, l.severity_text);
    assert.equal(logs[i].tid, Number(l.thread));
    if (l.attributes) assert.deepEqual(logs[i].args.attributes, l.attributes);
  });
  const marks = ev.filter((e) => e.cat === 'mark');
  assert.deepEqual(marks.map((m) => m.name), tables.get('mark').map((m) => m.name));
  assert.ok(marks.every((m) => m.s === 'p'));
  // metadata: process and every thread named; the run's metadata in otherData
  assert.equal(ev.filter((e) => e.ph === 'M' && e.name === 'process_name').length, 1);
  for (const t of new Set(spans.map((s) => Number(s.thread)))) assert.match(names.get(t), new RegExp(`thread ${t}`));
  assert.equal(doc.otherData['test.hostile'], 'quote " comma , newline \n <script>alert(1)</script> ü');
});

// ---------------------------------------------------------------- speedscope
test('speedscope: schema, balanced O/C per thread, durations equal the recording', () => {
  const { jgr, tables } = recording();
  const out = outPath('profile.speedscope.json');
  const r = jager('export', '--format', 'speedscope', jgr, '-o', out);
  assert.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
  assert.equal(doc.$schema, 'https://www.speedscope.app/file-format-schema.json');
  assert.ok(Array.isArray(doc.shared.frames));
  for (const f of doc.shared.frames) {
    assert.equal(typeof f.name, 'string');
    if ('line' in f) assert.ok(isInt(f.line));
  }
  const spans = tables.get('span');
  const threads = [...new Set(spans.map((s) => s.thread))];
  assert.equal(doc.profiles.length, threads.length, 'one profile per thread with spans');
  assert.ok(isInt(doc.activeProfileIndex) && doc.activeProfileIndex < doc.profiles.length);
  const units = ['none', 'nanoseconds', 'microseconds', 'milliseconds', 'seconds', 'bytes'];
  const durBySite = new Map();
  let opens = 0;
  for (const p of doc.profiles) {
    assert.equal(p.type, 'evented');
    assert.ok(units.includes(p.unit));
    assert.equal(typeof p.name, 'string');
    assert.ok(p.endValue >= p.startValue);
    const stack = [];
    let last = -Infinity;
    for (const e of p.events) {
      assert.ok(e.type === 'O' || e.type === 'C');
      assert.ok(isInt(e.frame) && e.frame >= 0 && e.frame < doc.shared.frames.length);
      assert.ok(e.at >= last, 'at non-decreasing');
      last = e.at;
      if (e.type === 'O') {
        stack.push(e);
        opens++;
      } else {
        const o = stack.pop();
        assert.ok(o && o.frame === e.frame, 'C closes the frame on top of the stack');
        const name = doc.shared.frames[e.frame].name;
        durBySite.set(name, (durBySite.get(name) ?? 0) + (e.at - o.at));
      }
      assert.ok(e.at <= p.endValue);
    }
    assert.equal(stack.length, 0, 'balanced');
  }
  assert.equal(opens, spans.length);
  const want = new Map();
  for (const s of spans) want.set(s.name, (want.get(s.name) ?? 0) + Number(s.duration_ns));
  assert.deepEqual(durBySite, want);
  const outer = doc.shared.frames.find((f) => f.name === 'outer');
  assert.deepEqual(outer, { name: 'outer', file: 'tests/export/driver.c', line: 10 });
});

// ---------------------------------------------------------------- what is left out
/** The stderr lines of an export that start with \p prefix. */
const linesOf = (stderr, prefix) => stderr.split('\n').filter((l) => l.startsWith(prefix));

test('speedscope and pprof say in one line what they left out; nothing when nothing was', () => {
  const { jgr, tables } = recording();
  const n = (t) => (tables.get(t) ?? []).length;
  // The driver's plugin types: none is sampler.sample; pprof keeps gc.pause as a profile.
  const plugin = n('test.sample') + n('test.level') + n('gc.pause') + n('dispatch.compile');
  const core = n('log') + n('counter') + n('mark');
  assert.ok(plugin > 0 && core > 0 && n('gc.pause') > 0, 'the driver records plugin events, logs, counters and marks');
  let r = jager('export', '--format', 'speedscope', jgr, '-o', outPath('left.speedscope.json'));
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(linesOf(r.stderr, 'jager export speedscope: left out'), [
    `jager export speedscope: left out ${plugin} plugin events and ${core} logs, counters and marks ` +
      '(speedscope shows spans and sampler.sample; see jager report)']);
  r = jager('export', '--format', 'pprof', jgr, '-o', outPath('left.pb.gz'));
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(linesOf(r.stderr, 'jager export pprof: left out'), [
    `jager export pprof: left out ${plugin - n('gc.pause')} plugin events of 3 types ` +
      '(pprof holds spans, gc.pause and sampler.sample; see jager summary or export csv)']);

  // A run of spans alone: neither says anything.
  const plain = outPath('spans-only.jgr');
  const d = run(DRIVER, ['--spans-only', plain], { env: { ...process.env, JAGER_QUIET: '1' } });
  assert.equal(d.status, 0, d.stderr);
  for (const fmt of ['speedscope', 'pprof']) {
    r = jager('export', '--format', fmt, plain, '-o', outPath(`spans-only-${fmt}`));
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(linesOf(r.stderr, `jager export ${fmt}:`), [], `${fmt} left nothing out: ${r.stderr}`);
  }
});

// ---------------------------------------------------------------- CSV
/** RFC 4180 parser: records of fields; returns {rows, quoted} (quoted[i][j]: field was quoted). */
function parseCsv(text) {
  const rows = [], quoted = [];
  let row = [], q = [], i = 0, field = '', wasQuoted = false;
  const endField = () => { row.push(field); q.push(wasQuoted); field = ''; wasQuoted = false; };
  while (i < text.length) {
    const c = text[i];
    if (c === '"' && field === '' && !wasQuoted) {
      wasQuoted = true;
      i++;
      for (;;) {
        const j = text.indexOf('"', i);
        assert.ok(j >= 0, 'closing quote');
        field += text.slice(i, j);
        if (text[j + 1] === '"') { field += '"'; i = j + 2; } else { i = j + 1; break; }
      }
    } else if (c === ',') { endField(); i++; }
    else if (c === '\r' && text[i + 1] === '\n') { endField(); rows.push(row); quoted.push(q); row = []; q = []; i += 2; }
    else { assert.ok(!wasQuoted, 'nothing after a closing quote'); field += c; i++; }
  }
  assert.equal(row.length, 0, 'file ends with CRLF');
  return { rows, quoted };
}

test('csv: one file per event type, RFC 4180, exact values', () => {
  const { jgr, tables } = recording();
  const out = outPath('csv');
  const r = jager('export', '--format', 'csv', jgr, '-o', out);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(out).sort(), [...tables.keys()].map((t) => `${t}.csv`).sort());
  for (const [table, want] of tables) {
    const parsed = parseCsv(fs.readFileSync(path.join(out, `${table}.csv`), 'utf8'));
    assert.deepEqual(parsed.rows[0], Object.keys(want[0]), `${table} header`);
    const order = byThread(parsed.rows.slice(1).map((r, i) => ({ thread: r[0], i }))).map((x) => x.i + 1);
    const rows = [parsed.rows[0], ...order.map((i) => parsed.rows[i])];
    const quoted = [parsed.quoted[0], ...order.map((i) => parsed.quoted[i])];
    assert.equal(rows.length - 1, want.length, `${table} rows`);
    want.forEach((w, i) => {
      const got = rows[i + 1];
      Object.entries(w).forEach(([k, v], j) => {
        const cell = got[j];
        if (v === null) assert.ok(cell === '' && !quoted[i + 1][j], `${table}.${k} null`);
        else if (typeof v === 'number') assert.equal(Number(cell), v, `${table}.${k}`);
        else if (typeof v === 'boolean') assert.equal(cell, String(v));
        else if (typeof v === 'object') assert.deepEqual(JSON.parse(cell), v, `${table}.${k}`);
        else assert.equal(cell, v, `${table}.${k} row ${i}`);
      });
    });
  }
});

// ---------------------------------------------------------------- robustness
test('truncated input: the good prefix is exported, exit 3', () => {
  const { jgr, tables } = recording();
  const bytes = fs.readFileSync(jgr);
  const cut = outPath('cut.jgr');
  fs.writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  const spans = tables.get('span').length;
  for (const fmt of ['chrome', 'speedscope', 'csv', 'parquet', 'pprof']) {
    const out = outPath(`cut-${fmt}`);
    const r = jager('export', '--format', fmt, cut, '-o', out);
    assert.equal(r.status, 3, `${fmt}: exit 3 for a truncated file (${r.stderr})`);
    assert.match(r.stderr, /partial|truncat/i);
    assert.ok(fs.existsSync(out), `${fmt}: output written`);
    if (fmt === 'chrome') {
      const doc = JSON.parse(fs.readFileSync(out, 'utf8'));
      checkChromeSchema(doc);
      const n = doc.traceEvents.filter((e) => e.ph === 'X' && e.cat === 'span').length;
      assert.ok(n < spans, 'a prefix');
    }
    if (fmt === 'speedscope') JSON.parse(fs.readFileSync(out, 'utf8'));
    if (fmt === 'csv') assert.ok(fs.readdirSync(out).length > 0);
  }
});

test('unreadable or missing input: exit 2; damaged after a good prefix: exit 3 (partial); bad usage: exit 1', () => {
  const { jgr } = recording();
  const bytes = Buffer.from(fs.readFileSync(jgr));
  const bad = outPath('bad.jgr');
  const head = Buffer.from(bytes);
  head.fill(0x41, 0, 16); // not a recording
  fs.writeFileSync(bad, head);
  let r = jager('export', '--format', 'chrome', bad, '-o', outPath('x.json'));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /jager export: .*bad\.jgr: .+/);
  const mid = Buffer.from(bytes);
  for (let i = Math.floor(mid.length / 2); i < Math.floor(mid.length / 2) + 64; i++) mid[i] ^= 0x5a;
  const bad2 = outPath('bad2.jgr');
  fs.writeFileSync(bad2, mid);
  const bad2csv = outPath('bad2-csv');
  r = jager('export', '--format', 'csv', bad2, '-o', bad2csv);
  assert.equal(r.status, 3, `corrupt middle: the good prefix is exported, partial: ${r.stderr}`);
  assert.match(r.stderr, /jager export: .*bad2\.jgr: .+/);
  assert.ok(fs.readdirSync(bad2csv).length > 0, 'corrupt middle: the prefix was written');
  r = jager('export', '--format', 'chrome', outPath('missing.jgr'));
  assert.equal(r.status, 2);
  r = jager('export', '--format', 'nope', jgr);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /unknown format 'nope' \(chrome, speedscope, pprof, parquet, csv, folded\)/);
  r = jager('export', jgr);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--format is required \(chrome, speedscope, pprof, parquet, csv, folded\)/);
});

test('cut at many points and bytes flipped: every format exits 0, 2 or 3 and never crashes', () => {
  const { jgr } = recording();
  const bytes = fs.readFileSync(jgr);
  const cases = [];
  for (let k = 1; k <= 12; k++) cases.push(['cut', bytes.subarray(0, Math.floor((bytes.length * k) / 13))]);
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let k = 0; k < 12; k++) {
    const b = Buffer.from(bytes);
    b[Math.floor(rand() * b.length)] ^= 1 << Math.floor(rand() * 8);
    cases.push(['flip', b]);
  }
  for (const [kind, data] of cases) {
    const input = outPath(`${kind}.jgr`);
    fs.writeFileSync(input, data);
    for (const fmt of ['chrome', 'speedscope', 'pprof', 'parquet', 'csv']) {
      const out = outPath(`${kind}-${fmt}`);
      const r = jager('export', '--format', fmt, input, '-o', out);
      assert.equal(r.signal, null, `${kind} ${fmt}: killed by ${r.signal}`);
      assert.ok([0, 2, 3].includes(r.status), `${kind} ${fmt}: exit ${r.status}: ${r.stderr}`);
      if (r.status !== 0) assert.match(r.stderr, /^jager export: /m);
      if (fmt === 'chrome' && fs.existsSync(out)) checkChromeSchema(JSON.parse(fs.readFileSync(out, 'utf8')));
      if (fmt === 'speedscope' && fs.existsSync(out)) JSON.parse(fs.readFileSync(out, 'utf8'));
    }
  }
});
