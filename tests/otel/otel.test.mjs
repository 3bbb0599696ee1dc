// The otel plugin against a real decoder no one here wrote: an OTLP/HTTP receiver on
// 127.0.0.1, written here, decodes each request with the generated protobuf definitions of
// @opentelemetry/otlp-transformer (pinned in tests/peers/package.json) and validates JSON
// bodies against the same schema (fromObject → toObject must keep every key we sent).
// Every case runs tests/otel/otel_workload with the plugin and checks what arrived against
// the .jgr the same run wrote (read with `jager dump` / `jager info`), and that every span,
// log record and data point is accounted for: exported + dropped by cause == emitted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', 'peers', 'package.json'));
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const C = root.opentelemetry.proto.collector;
const MSG = {
  '/v1/traces': [C.trace.v1.ExportTraceServiceRequest, C.trace.v1.ExportTraceServiceResponse],
  '/v1/logs': [C.logs.v1.ExportLogsServiceRequest, C.logs.v1.ExportLogsServiceResponse],
  '/v1/metrics': [C.metrics.v1.ExportMetricsServiceRequest, C.metrics.v1.ExportMetricsServiceResponse],
};
const CLI = process.env.JAGER_CLI;
const WORKLOAD = process.env.OTEL_WORKLOAD;
const PLUGINS = process.env.JAGER_PLUGIN_PATH;
const DIR = process.env.OTEL_TEST_DIR || path.join(here, 'runs');
fs.mkdirSync(DIR, { recursive: true });

// ---- the receiver ----
const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);
function hexToB64(o) {
  if (Array.isArray(o)) return o.map(hexToB64);
  if (o && typeof o === 'object') {
    const r = {};
    for (const [k, v] of Object.entries(o)) {
      if (ID_FIELDS.has(k)) {
        assert.match(v, /^([0-9a-f]{16}|[0-9a-f]{32})$/, `${k} is lowercase hex in OTLP/JSON`);
        r[k] = Buffer.from(v, 'hex').toString('base64');
      } else r[k] = hexToB64(v);
    }
    return r;
  }
  return o;
}
// Every key we sent must exist in the schema's own rendering of the message.
function sameKeys(sent, back, where) {
  if (Array.isArray(sent)) {
    assert.ok(Array.isArray(back) && back.length === sent.length, `${where}: array length`);
    sent.forEach((v, i) => sameKeys(v, back[i], `${where}[${i}]`));
  } else if (sent && typeof sent === 'object') {
    for (const k of Object.keys(sent)) {
      assert.ok(back && k in back, `${where}.${k} is not a field of the OTLP schema`);
      sameKeys(sent[k], back[k], `${where}.${k}`);
    }
  }
}
function decode(urlPath, headers, raw, jsonTexts) {
  const [Req] = MSG[urlPath];
  let body = raw;
  if (headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(raw);
  if (headers['content-type'] === 'application/json') {
    if (jsonTexts) jsonTexts.push(body.toString('utf8'));
    const sent = JSON.parse(body.toString('utf8'));
    const msg = Req.fromObject(hexToB64(sent));
    const back = Req.toObject(msg, { longs: String, enums: Number, bytes: String, defaults: true });
    sameKeys(hexToB64(sent), back, urlPath);
    return Req.toObject(Req.decode(Req.encode(msg).finish()), { longs: String, enums: Number, bytes: Buffer });
  }
  assert.equal(headers['content-type'], 'application/x-protobuf');
  return Req.toObject(Req.decode(body), { longs: String, enums: Number, bytes: Buffer });
}

// handler(kind, n) → {status, headers, rejected, body} | 'hang' | 'close'; kind is
// traces/logs/metrics, n counts that kind's requests from 0. paths: other URL paths taken
// as one of /v1/traces, /v1/logs, /v1/metrics (a signal's own endpoint).
async function receiver(handler = () => ({ status: 200 }), paths = {}) {
  const got = { traces: [], logs: [], metrics: [], times: { traces: [], logs: [], metrics: [] }, headers: [], sent: { traces: [], logs: [], metrics: [] }, answered: {},
    byKind: { traces: [], logs: [], metrics: [] }, urls: [], json: { traces: [], logs: [], metrics: [] } };
  const counts = { traces: 0, logs: 0, metrics: 0 };
  const hung = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    const arrived = Date.now(); // the request's headers are in
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      got.urls.push(req.url);
      const urlPath = MSG[req.url] ? req.url : paths[req.url];
      if (!urlPath) { got.error = got.error || new Error(`request to ${req.url}`); res.writeHead(404); res.end(); return; }
      const kind = urlPath.slice(4);
      const n = counts[kind]++;
      got.times[kind].push(arrived);
      res.on('finish', () => { (got.answered[kind] ||= [])[n] = Date.now(); });
      got.headers.push(req.headers);
      got.byKind[kind].push(req.headers);
      const act = handler(kind, n);
      let msg = null;
      try {
        msg = decode(urlPath, req.headers, Buffer.concat(chunks), got.json[kind]);
        got.sent[kind].push(msg); // every request, whatever the answer
      } catch (e) { got.error = got.error || e; }
      if (act === 'hang') { hung.push(res); return; }
      if (act === 'close') { req.socket.destroy(); return; }
      if (act.status === 200 && msg) got[kind].push(msg);
      let body = act.body || Buffer.alloc(0);
      const json = req.headers['content-type'] === 'application/json';
      if (act.rejected !== undefined) {
        const Res = MSG[urlPath][1];
        const key = { traces: 'rejectedSpans', logs: 'rejectedLogRecords', metrics: 'rejectedDataPoints' }[kind];
        // OTLP/JSON answers in JSON (int64 as a decimal string), OTLP/protobuf in protobuf
        body = json ? Buffer.from(JSON.stringify({ partialSuccess: { [key]: String(act.rejected), errorMessage: 'test' } }))
          : Buffer.from(Res.encode(Res.fromObject({ partialSuccess: { [key]: act.rejected, errorMessage: 'test' } })).finish());
      }
      res.writeHead(act.status, { 'content-type': json ? 'application/json' : 'application/x-protobuf', ...(act.headers || {}) });
      res.end(body);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    got,
    port: server.address().port,
    close: () => new Promise((r) => { hung.forEach((h) => h.destroy()); server.closeAllConnections(); server.close(r); }),
  };
}

// ---- the program and its recording ----
function run(name, env, args = ['200', '2', '20'], limitMs = 60000) {
  const out = path.join(DIR, `${name}.jgr`);
  fs.rmSync(out, { force: true });
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const p = spawn(WORKLOAD, args, {
      env: {
        PATH: process.env.PATH, JAGER_PLUGINS: 'otel', JAGER_PLUGIN_PATH: PLUGINS, JAGER_OUTPUT: out, JAGER_QUIET: '1',
        OTEL_SERVICE_NAME: 'otel-test', JAGER_OTEL_SITE_RATE: '0', OTEL_METRIC_EXPORT_INTERVAL: '600000', ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '', stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const kill = setTimeout(() => p.kill('SIGKILL'), limitMs);
    p.on('exit', (code) => {
      clearTimeout(kill);
      if (code !== 0) return reject(new Error(`workload exited ${code}: ${stderr}`));
      const t1 = Date.now();
      resolve({ out, wallMs: t1 - t0, t0, t1, loopNs: Number(stdout.trim().split('\n')[0]), stderr });
    });
  });
}

function recording(file) {
  const ev = execFileSync(CLI, ['dump', file], { maxBuffer: 1 << 28 }).toString().trim().split('\n').map((l) => JSON.parse(l));
  const meta = {};
  for (const m of execFileSync(CLI, ['info', file]).toString().matchAll(/^\s+"([^"]+)": "([^"]*)"$/gm)) meta[m[1]] = m[2];
  const counts = {};
  for (const e of ev.filter((e) => e.type === 'otel.export')) {
    counts[`${e.fields.metric}|${e.fields.error_type}`] = e.fields.value;
  }
  return { ev, meta, counts, spans: ev.filter((e) => e.type === 'span'), logs: ev.filter((e) => e.type === 'log') };
}

// The plugin's OTLP span id of a Jäger span: splitmix64(salt ^ (thread << 32 | id)), big-endian.
const M64 = (1n << 64n) - 1n;
function spanId(salt, thread, id) {
  let z = (BigInt('0x' + salt) ^ ((BigInt(thread) << 32n) | BigInt(id))) & M64;
  z = (z + 0x9e3779b97f4a7c15n) & M64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
  z = z ^ (z >> 31n);
  if (z === 0n) z = 1n;
  return z.toString(16).padStart(16, '0');
}

const hex = (b) => (b ? Buffer.from(b).toString('hex') : '');
const spansOf = (got) => got.traces.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));
const logsOf = (got) => got.logs.flatMap((r) => r.resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((s) => s.logRecords)));
const metricsOf = (got) => got.metrics.flatMap((r) => r.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((s) => s.metrics)));
const points = (m) => { const d = m.histogram || m.sum || m.gauge; assert.ok(d, `metric ${m.name} has data: ${JSON.stringify(m)}`); assert.ok(d.dataPoints && d.dataPoints.length, `metric ${m.name} has data points: ${JSON.stringify(m)}`); return d.dataPoints; };
const attr = (list, key) => {
  const a = (list || []).find((x) => x.key === key);
  if (!a) return undefined;
  const v = a.value;
  return v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue;
};

const spanIds = (req) => req.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans.map((x) => hex(x.spanId)))).sort();
const spanIdsAll = (reqs) => reqs.flatMap(spanIds);
function noDuplicates(got) {
  const ids = spansOf(got).map((s) => hex(s.spanId));
  assert.equal(ids.length, new Set(ids).size, 'no span accepted twice');
}

// exported + dropped == emitted, by cause, for one signal; returns the counts.
function accounted(rec, sig, emitted) {
  const c = rec.counts;
  const sum = (prefix) => Object.entries(c).filter(([k]) => k.startsWith(prefix + '|')).reduce((a, [, v]) => a + v, 0);
  const seen = c[`jager.otel.${sig}.seen|`];
  if (emitted !== undefined) assert.equal(seen, emitted, `${sig}: the plugin saw what the program emitted`);
  const sampled = c[`jager.otel.${sig}.sampled_out|`] || 0;
  const exported = sum(`otel.sdk.exporter.${sig}.exported`);
  if (sig !== 'metric_data_point') {
    const processed = sum(`otel.sdk.processor.${sig}.processed`);
    assert.equal(sampled + processed, seen, `${sig}: sampled out + processed (accepted or dropped) == seen`);
    assert.equal(c[`otel.sdk.processor.${sig}.processed|`], exported, `${sig}: every accepted item has an exporter outcome`);
  } else {
    assert.equal(exported, seen, `${sig}: every data point has an exporter outcome`);
  }
  return {
    seen, exported: c[`otel.sdk.exporter.${sig}.exported|`], requests: c[`jager.otel.${sig}.requests|`],
    retries: c[`jager.otel.${sig}.retries|`], cause: (e) => c[`otel.sdk.exporter.${sig}.exported|${e}`] || 0,
    proc: (e) => c[`otel.sdk.processor.${sig}.processed|${e}`] || 0,
  };
}

function endpoint(port) {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BLRP_SCHEDULE_DELAY: '200' };
}

// Full content check of a clean run (any protocol).
// Jäger's log histogram (plugins/otel: site_add, ot_bucket_lower): the bucket of a duration
// and the lower bound of a bucket, in ns.
const HIST_BUCKETS = 192;
function bucketOf(dur) {
  const d = BigInt(dur) | 4n;
  const sh = BigInt(d.toString(2).length - 3);
  const b = Number(sh * 4n + (BigInt(dur) >> sh));
  return Math.min(b, HIST_BUCKETS - 1);
}
const bucketLower = (b) => (b < 8 ? b : (4 + (b % 4)) * 2 ** (Math.floor(b / 4) - 1));

function checkContent(rec, got, { traceParent, window } = {}) {
  assert.ifError(got.error);
  const salt = rec.meta['otel.span_id_salt'], traceId = rec.meta['otel.trace_id'], rootId = rec.meta['otel.root_span_id'];
  assert.match(salt, /^[0-9a-f]{16}$/);
  const spans = spansOf(got);
  assert.equal(spans.length, rec.spans.length + 1, 'every span of the .jgr and the process span arrived, once');
  const byId = new Map(spans.map((s) => [hex(s.spanId), s]));
  assert.equal(byId.size, spans.length, 'span ids are unique');
  const rootSpan = byId.get(rootId);
  assert.ok(rootSpan, 'the process span arrived');
  assert.equal(rootSpan.name, 'otel-test');
  if (traceParent) {
    assert.equal(hex(rootSpan.parentSpanId), traceParent.span, 'the process span is a child of TRACEPARENT');
    assert.equal(traceId, traceParent.trace, 'the run continues the TRACEPARENT trace');
  } else {
    assert.equal(hex(rootSpan.parentSpanId), '', 'without TRACEPARENT the process span is a root');
  }
  for (const s of spans) assert.equal(hex(s.traceId), traceId);
  if (window) {
    // Unix times: every span starts and ends inside the test's own wall window of the run.
    const lo = BigInt(window.t0 - 5) * 1000000n, hi = BigInt(window.t1 + 5) * 1000000n;
    for (const s of spans) {
      assert.ok(BigInt(s.startTimeUnixNano) >= lo && BigInt(s.startTimeUnixNano) <= hi, `${s.name} starts in [${window.t0}, ${window.t1}] ms: ${s.startTimeUnixNano}`);
      assert.ok(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano) && BigInt(s.endTimeUnixNano) <= hi, `${s.name} ends in the window`);
    }
  }
  const errors = new Set(rec.ev.filter((e) => e.type === 'span_error').map((e) => `${e.thread}:${e.span_id}`));
  const attrd = new Set(rec.ev.filter((e) => e.type === 'span_attr').map((e) => `${e.thread}:${e.span_id}`));
  for (const j of rec.spans) {
    const s = byId.get(spanId(salt, j.thread, j.span_id));
    assert.ok(s, `span ${j.thread}:${j.span_id} arrived with the mapped id`);
    assert.equal(s.name, j.site);
    assert.equal(hex(s.parentSpanId), j.parent_id ? spanId(salt, j.thread, j.parent_id) : rootId, 'parent as in the .jgr');
    assert.equal(BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano), BigInt(j.dur_ns), 'duration as in the .jgr');
    assert.equal(s.kind, 1);
    const failed = errors.has(`${j.thread}:${j.span_id}`);
    assert.equal(s.status?.code === 2, failed, 'status ERROR exactly on the spans marked failed');
    if (failed) {
      assert.equal(s.status.message, 'residual diverged');
      assert.equal(s.events.length, 1);
      assert.equal(s.events[0].name, 'exception');
      assert.equal(attr(s.events[0].attributes, 'exception.message'), 'residual diverged');
    }
    if (attrd.has(`${j.thread}:${j.span_id}`)) {
      assert.equal(attr(s.attributes, 'phase'), 'assemble');
      assert.equal(String(attr(s.attributes, 'iteration')), String(rec.ev.find((e) => e.type === 'span_attr' && e.thread === j.thread && e.span_id === j.span_id).attrs.iteration));
    } else {
      assert.equal(attr(s.attributes, 'phase'), undefined);
    }
  }
  // Resource
  const res = got.traces[0].resourceSpans[0].resource.attributes;
  assert.equal(attr(res, 'service.name'), 'otel-test');
  assert.equal(attr(res, 'host.name'), rec.meta['host.name']);
  assert.equal(String(attr(res, 'process.pid')), rec.meta['process.pid']);
  assert.equal(attr(res, 'process.command_line'), rec.meta['process.command_line']);
  // Logs
  const logs = logsOf(got);
  assert.equal(logs.length, rec.logs.length, 'every log record arrived, once');
  const want = rec.logs.map((l) => `${l.severity}|${l.body}|${l.attrs.index}|${spanId(salt, l.thread, l.span_id)}`).sort();
  const have = logs.map((l) => `${l.severityNumber}|${l.body.stringValue}|${attr(l.attributes, 'index')}|${hex(l.spanId)}`).sort();
  assert.deepEqual(have, want, 'severity, body, attributes and span of every log record');
  for (const l of logs) assert.equal(hex(l.traceId), traceId);
  const sevText = { 9: 'INFO', 13: 'WARN' };
  for (const l of logs) assert.equal(l.severityText, sevText[l.severityNumber], `severityText of severity ${l.severityNumber}`);
  // Metrics: per-site histograms with the .jgr's call counts
  const metrics = metricsOf(got);
  const hist = metrics.filter((m) => m.name === 'jager.span.duration');
  assert.equal(hist.length, 1);
  const bySite = {};
  for (const j of rec.spans) bySite[j.site] = (bySite[j.site] || 0) + 1;
  const pts = points(hist[0]);
  assert.equal(pts.length, Object.keys(bySite).length, 'one histogram point per site');
  for (const p of pts) {
    const site = attr(p.attributes, 'code.function.name');
    assert.equal(Number(p.count), bySite[site], `calls of ${site}`);
    assert.equal(p.bucketCounts.reduce((a, b) => a + Number(b), 0), Number(p.count), 'bucket counts add up');
    assert.equal(p.bucketCounts.length, (p.explicitBounds || []).length + 1);
    // The buckets are Jäger's: from the first non-empty bucket lo of the .jgr's durations to
    // the last, bounds the lower edges of lo+1 … hi in seconds, counts exactly the .jgr's.
    const want = new Array(HIST_BUCKETS).fill(0);
    for (const j of rec.spans.filter((x) => x.site === site)) want[bucketOf(j.dur_ns)]++;
    const lo = want.findIndex((x) => x > 0), hi = want.length - 1 - [...want].reverse().findIndex((x) => x > 0);
    assert.deepEqual((p.explicitBounds || []).map(Number), Array.from({ length: hi - lo }, (_, i) => bucketLower(lo + 1 + i) / 1e9), `${site}: explicit bounds are the plugin's buckets`);
    assert.deepEqual(p.bucketCounts.map(Number), want.slice(lo, hi + 1), `${site}: bucket counts of the .jgr's durations`);
    const dsum = rec.spans.filter((j) => j.site === site).reduce((a, j) => a + j.dur_ns, 0);
    assert.ok(Math.abs(p.sum - dsum / 1e9) <= 1e-9 * Math.max(1, dsum / 1e9), 'sum of durations');
  }
  const items = metrics.find((m) => m.name === 'workload.items');
  assert.ok(items && items.sum.isMonotonic, 'the program counter as a monotonic sum');
  // one running total for the process, whatever thread adds (tools_counters checks that the
  // latest sample carries it): the largest sample, never a sum over threads
  const samples = rec.ev.filter((e) => e.type === 'counter' && e.counter === 'workload.items');
  assert.ok(new Set(samples.map((e) => e.thread)).size > 1, 'the counter is added from several threads');
  assert.equal(points(items)[0].asDouble, Math.max(...samples.map((e) => e.value)), 'the counter total of the .jgr');
  const received = metrics.reduce((a, m) => a + points(m).length, 0);
  const exp = metrics.find((m) => m.name === 'otel.sdk.exporter.span.exported');
  assert.ok(exp, 'self-metrics under their semantic-convention names');
  assert.ok(metrics.find((m) => m.name === 'otel.sdk.processor.span.queue.capacity'));
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.exported, spans.length);
  const l = accounted(rec, 'log', rec.logs.length);
  assert.equal(l.exported, logs.length);
  const m = accounted(rec, 'metric_data_point');
  assert.equal(m.exported, received, 'data points exported == data points received');
}

test('export', async () => {
  const r = await receiver();
  const run1 = await run('export', { ...endpoint(r.port) });
  await r.close();
  const rec = recording(run1.out);
  checkContent(rec, r.got, { window: run1 });
  assert.ok(r.got.traces.length >= 1);
});

test('json', async () => {
  const r = await receiver();
  const run1 = await run('json', { ...endpoint(r.port), OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' });
  await r.close();
  assert.ok(r.got.headers.every((h) => h['content-type'] === 'application/json' && h['content-encoding'] === 'gzip'));
  checkContent(recording(run1.out), r.got, { window: run1 });
  // The spec's JSON mapping: enums as integers in the raw JSON, not names or strings.
  const raw = (kind) => r.got.json[kind].map((t) => JSON.parse(t));
  const rawSpans = raw('traces').flatMap((x) => x.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  assert.ok(rawSpans.length > 0);
  for (const x of rawSpans) assert.ok(Number.isInteger(x.kind) && (x.kind === 1 || x.kind === 2), `raw kind ${JSON.stringify(x.kind)}`);
  const rawLogs = raw('logs').flatMap((x) => x.resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords)));
  assert.ok(rawLogs.length > 0);
  for (const x of rawLogs) {
    assert.ok(Number.isInteger(x.severityNumber) && [9, 13].includes(x.severityNumber), `raw severityNumber ${JSON.stringify(x.severityNumber)}`);
    assert.equal(x.severityText, x.severityNumber === 9 ? 'INFO' : 'WARN');
  }
});

test('traceparent', async () => {
  const r = await receiver();
  const tp = { trace: '4bf92f3577b34da6a3ce929d0e0e4736', span: '00f067aa0ba902b7' };
  const run1 = await run('traceparent', { ...endpoint(r.port), TRACEPARENT: `00-${tp.trace}-${tp.span}-01`, TRACESTATE: 'rojo=00f067aa0ba902b7' });
  await r.close();
  const rec = recording(run1.out);
  checkContent(rec, r.got, { traceParent: tp });
  for (const s of spansOf(r.got)) assert.equal(s.traceState, 'rojo=00f067aa0ba902b7');
  for (const l of logsOf(r.got)) assert.equal(hex(l.traceId), tp.trace);
});

// One batch, sent at shutdown: the first answer is 503 with Retry-After: 2.
const oneBatch = { OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_BSP_MAX_QUEUE_SIZE: '8192', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8192', JAGER_OTEL_SHUTDOWN_TIMEOUT: '15000' };

test('retry_after', async () => {
  const r = await receiver((kind, n) => (kind === 'traces' && n === 0 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 }));
  const run1 = await run('retry_after', { ...endpoint(r.port), ...oneBatch });
  await r.close();
  const rec = recording(run1.out);
  const t = r.got.times.traces;
  assert.deepEqual(spanIds(r.got.sent.traces[1]), spanIds(r.got.sent.traces[0]), 'the second request is the retry of the first');
  const delay = t[1] - r.got.answered.traces[0]; // from the 503 answer to the retry's arrival
  console.log(`# Retry-After: 2 -> retry ${delay} ms after the 503 answer`);
  assert.ok(delay >= 1600 && delay <= 2400, `the retry waited Retry-After: 2 s within ±20 % (waited ${delay} ms)`);
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.exported, s.seen, 'everything exported after the retry');
  assert.equal(s.retries, 1);
  assert.equal(s.requests, t.length);
  assert.equal(spansOf(r.got).length, s.seen);
  noDuplicates(r.got);
});

test('status_429', async () => {
  // 429 without Retry-After (backoff), then 429 with an HTTP-date Retry-After, then 200.
  const r = await receiver((kind, n) => {
    if (kind !== 'traces' || n > 1) return { status: 200 };
    if (n === 0) return { status: 429 };
    // An HTTP date 4 s ahead (whole seconds: 3 to 4 s from now); the backoff is 300 ms, so
    // a wait of 2 s or more can only come from the date.
    return { status: 429, headers: { 'retry-after': new Date(Date.now() + 4000).toUTCString() } };
  });
  const run1 = await run('status_429', { ...endpoint(r.port), ...oneBatch, JAGER_OTEL_RETRY_INITIAL_BACKOFF: '300' });
  await r.close();
  const rec = recording(run1.out);
  const t = r.got.times.traces;
  assert.deepEqual(spanIds(r.got.sent.traces[2]), spanIds(r.got.sent.traces[0]), 'requests 2 and 3 retry the first');
  assert.ok(t[1] - t[0] >= 150 && t[1] - t[0] <= 1000, `jittered backoff after 429 (${t[1] - t[0]} ms)`);
  const waited = t[2] - r.got.answered.traces[1];
  console.log(`# Retry-After: <date + 4 s> -> retry ${waited} ms after the 429 answer`);
  assert.ok(waited >= 2000 && waited <= 8000, `the HTTP-date Retry-After was honoured (waited ${waited} ms)`);
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.exported, s.seen);
  assert.equal(s.retries, 2);
  noDuplicates(r.got);
});

test('status_400', async () => {
  const r = await receiver((kind) => (kind === 'traces' ? { status: 400 } : { status: 200 }));
  const run1 = await run('status_400', { ...endpoint(r.port), ...oneBatch });
  await r.close();
  const rec = recording(run1.out);
  assert.equal(spanIdsAll(r.got.sent.traces).length, new Set(spanIdsAll(r.got.sent.traces)).size, '400 is never retried: no span sent twice');
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.cause('400'), s.seen, 'all spans counted under error.type 400');
  assert.equal(s.exported, 0);
  assert.equal(s.retries, 0);
  assert.equal(s.requests, r.got.times.traces.length);
  assert.equal(spanIdsAll(r.got.sent.traces).length, s.seen, 'each span sent once');
  assert.equal(accounted(rec, 'log', rec.logs.length).exported, rec.logs.length, 'logs unaffected');
});

test('partial', async () => {
  const r = await receiver((kind, n) => (kind === 'traces' && n === 0 ? { status: 200, rejected: 7 } : { status: 200 }));
  const run1 = await run('partial', { ...endpoint(r.port), ...oneBatch });
  await r.close();
  const rec = recording(run1.out);
  assert.equal(spanIdsAll(r.got.sent.traces).length, new Set(spanIdsAll(r.got.sent.traces)).size, 'a partial success is not retried');
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.cause('rejected'), 7);
  assert.equal(s.exported, s.seen - 7);
  assert.equal(spansOf(r.got).length, s.seen, 'the receiver got them all and rejected 7');
});

// Faults that end in loss: small queue, short timeouts, bounded final flush.
const lossy = { OTEL_BSP_MAX_QUEUE_SIZE: '256', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '1000', JAGER_OTEL_SHUTDOWN_TIMEOUT: '1500', JAGER_OTEL_RETRY_INITIAL_BACKOFF: '100' };

test('hang', async () => {
  const r = await receiver((kind) => (kind === 'traces' ? 'hang' : { status: 200 }));
  const run1 = await run('hang', { ...endpoint(r.port), ...lossy }, ['2000', '2', '20']);
  await r.close();
  const rec = recording(run1.out);
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.exported, 0);
  assert.ok(s.cause('timeout') > 0, 'the hung requests count as timeout');
  assert.ok(s.proc('queue_full') > 0, 'the full queue dropped and counted');
  assert.ok(run1.wallMs < 15000, `the program was not held up (${run1.wallMs} ms)`);
  // No log line per failed span or request: one otel diagnostic in all, the summary of what
  // was lost (a warning).
  const diags = rec.ev.filter((e) => e.type === 'diag' && e.source === 'otel');
  assert.equal(diags.length, 1, `one otel diagnostic: ${JSON.stringify(diags.map((e) => e.text))}`);
  assert.ok(diags[0].severity >= 13 && /^not exported: /.test(diags[0].text));
  const md = accounted(rec, 'metric_data_point');
  assert.ok(md.exported > 0 && md.exported === md.seen, 'the last metrics still went out');
  // jager summary shows the same counts.
  const sum = execFileSync(CLI, ['summary', run1.out]).toString();
  const otel = sum.slice(sum.indexOf('OpenTelemetry export'));
  assert.ok(sum.includes('OpenTelemetry export'), 'jager summary has the otel section');
  const line = otel.split('\n').find((l) => l.startsWith('span '));
  assert.match(line, new RegExp(`^span\\s+${s.seen}\\s+0\\s+.*queue_full ${s.proc('queue_full')}.*timeout ${s.cause('timeout')}`));
  // … and its JSON the same numbers, cause by cause.
  const js = JSON.parse(execFileSync(CLI, ['summary', '--format', 'json', run1.out]).toString()).otel;
  assert.equal(js.span.seen, s.seen);
  assert.equal(js.span.exported, 0);
  assert.equal(js.span.not_exported.queue_full, s.proc('queue_full'));
  assert.equal(js.span.not_exported.timeout, s.cause('timeout'));
  assert.equal(js.metric_data_point.exported, md.seen);
  assert.equal(accounted(rec, 'log', rec.logs.length).exported, rec.logs.length, 'logs unaffected');
});

test('closed', async () => {
  const r = await receiver((kind) => (kind === 'traces' ? 'close' : { status: 200 }));
  const run1 = await run('closed', { ...endpoint(r.port), ...lossy });
  await r.close();
  const rec = recording(run1.out);
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.exported, 0);
  assert.ok(s.cause('connection') > 0, 'lost connections counted as connection');
  assert.ok(s.retries > 0, 'a lost connection is retried');
  assert.equal(s.cause('connection') + s.cause('shutdown') + s.cause('timeout') + s.proc('queue_full'), s.seen);
});

test('unreachable', async () => {
  const probe = await receiver();
  const port = probe.port;
  await probe.close(); // nothing listens there now
  const run1 = await run('unreachable', { ...endpoint(port), ...lossy, OTEL_EXPORTER_OTLP_TIMEOUT: '1000' });
  const rec = recording(run1.out);
  for (const sig of ['span', 'log', 'metric_data_point']) {
    const s = accounted(rec, sig, sig === 'span' ? rec.spans.length + 1 : sig === 'log' ? rec.logs.length : undefined);
    assert.equal(s.exported, 0, `${sig}: nothing exported`);
    assert.ok(s.cause('connection') + s.cause('timeout') + s.cause('shutdown') + s.proc('queue_full') === s.seen, `${sig}: all lost by cause`);
  }
  assert.ok(run1.wallMs < 15000);
});

test('config', async () => {
  // Malformed values: one message each, defaults kept, export still works.
  const r = await receiver();
  const run1 = await run('config', {
    ...endpoint(r.port), OTEL_BSP_MAX_QUEUE_SIZE: 'lots', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', TRACEPARENT: '00-xyz-01',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20t0ken,broken', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=ci,team=hpc',
  });
  await r.close();
  const rec = recording(run1.out);
  const diags = rec.ev.filter((e) => e.type === 'diag' && e.source === 'otel').map((e) => e.text);
  const has = (re) => assert.equal(diags.filter((t) => re.test(t)).length, 1, `one message matching ${re}: ${JSON.stringify(diags)}`);
  has(/^OTEL_BSP_MAX_QUEUE_SIZE="lots" is not an integer in \[1, 16777216\]; using the default 2048$/);
  has(/^OTEL_EXPORTER_OTLP_PROTOCOL=grpc: OTLP\/gRPC is not supported by this plugin; using http\/protobuf$/);
  has(/^TRACEPARENT="00-xyz-01" is not a W3C traceparent; starting a new trace$/);
  has(/^OTEL_EXPORTER_OTLP_HEADERS: "broken" is not key=value; ignored$/);
  assert.equal(rec.counts['otel.sdk.processor.span.queue.capacity|'], 2048);
  assert.ok(r.got.headers.every((h) => h.authorization === 'Bearer t0ken'), 'headers percent-decoded and sent');
  const res = r.got.traces[0].resourceSpans[0].resource.attributes;
  assert.equal(attr(res, 'deployment.environment'), 'ci');
  assert.equal(attr(res, 'team'), 'hpc');
  checkContent(rec, r.got);
});

test('disabled', async () => {
  const r = await receiver();
  const run1 = await run('disabled', { ...endpoint(r.port), OTEL_SDK_DISABLED: 'true' });
  await r.close();
  const rec = recording(run1.out);
  assert.equal(r.got.headers.length, 0, 'nothing sent');
  assert.equal(rec.ev.filter((e) => e.type === 'otel.export').length, 0);
  assert.ok(rec.spans.length > 0, 'the recording is unaffected');
});

test('julia', { skip: !process.env.OTEL_JULIA_RUNNER && 'no Julia runner' }, async () => {
  const r = await receiver();
  const out = path.join(DIR, 'julia.jgr');
  fs.rmSync(out, { force: true });
  await new Promise((resolve, reject) => {
    const p = spawn('sh', [process.env.OTEL_JULIA_RUNNER, path.join(here, 'otel_workload.jl')], {
      env: { ...process.env, JAGER_PLUGINS: 'otel,gc', JAGER_OUTPUT: out, JAGER_QUIET: '1', OTEL_SERVICE_NAME: 'otel-test',
        JAGER_OTEL_SITE_RATE: '0', ...endpoint(r.port) },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const kill = setTimeout(() => p.kill('SIGKILL'), 280000);
    p.on('exit', (code) => { clearTimeout(kill); code === 0 ? resolve() : reject(new Error(`julia exited ${code}`)); });
  });
  await r.close();
  const rec = recording(out);
  assert.ifError(r.got.error);
  const salt = rec.meta['otel.span_id_salt'], rootId = rec.meta['otel.root_span_id'];
  const spans = spansOf(r.got);
  assert.equal(spans.length, rec.spans.length + 1, 'every Julia span and the process span arrived');
  assert.ok(rec.spans.filter((j) => j.site === 'step').length >= 300);
  const byId = new Map(spans.map((s) => [hex(s.spanId), s]));
  for (const j of rec.spans) {
    const s = byId.get(spanId(salt, j.thread, j.span_id));
    assert.ok(s, `span ${j.site} arrived`);
    assert.equal(s.name, j.site);
    assert.equal(hex(s.parentSpanId), j.parent_id ? spanId(salt, j.thread, j.parent_id) : rootId);
    // the Julia task that ran it (task records; the root task is the binding's task 1)
    assert.equal(Number(attr(s.attributes, 'jager.task.id')), 1, `span ${j.site} carries its task`);
  }
  // a SparseMatrixCSC given as `attrs = (:A => S,)` (10×20, 3 nonzeros) arrives described by
  // Jager.attributes as typed OTLP attributes, not materialised
  const solve = spans.filter((x) => x.name === 'solve');
  assert.equal(solve.length, 1, 'the solve span arrived');
  const sa = solve[0].attributes;
  assert.equal(attr(sa, 'A.eltype'), 'Float64');
  assert.equal(attr(sa, 'A.size'), '10×20');
  assert.equal(Number(attr(sa, 'A.nnz')), 3);
  assert.ok(sa.find((x) => x.key === 'A.nnz').value.intValue !== undefined, 'nnz is an integer attribute');
  assert.equal(attr(sa, 'A.density'), 0.015);
  assert.equal(logsOf(r.got).length, rec.logs.length);
  assert.ok(rec.logs.length >= 5);
  // code.method, interned by the binding (one string-table entry), arrives as its text
  const methods = logsOf(r.got).map((l) => attr(l.attributes, 'code.method'));
  assert.ok(methods.every((m) => typeof m === 'string' && m.startsWith('Tuple{') && m === methods[0]), JSON.stringify(methods));
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.exported, s.seen);
  assert.equal(accounted(rec, 'log', rec.logs.length).exported, rec.logs.length);
  // The gc plugin's pauses as plugin event counts and time.
  const pauses = rec.ev.filter((e) => e.type === 'gc.pause');
  assert.ok(pauses.length >= 3, 'GC.gc() pauses recorded');
  const metrics = metricsOf(r.got);
  const ev = metrics.find((m) => m.name === 'jager.plugin.events');
  const gcp = points(ev).find((p) => attr(p.attributes, 'jager.event.type') === 'gc.pause');
  assert.equal(Number(gcp.asInt), pauses.length, 'gc.pause count as in the .jgr');
  const dur = points(metrics.find((m) => m.name === 'jager.plugin.event.duration')).find((p) => attr(p.attributes, 'jager.event.type') === 'gc.pause');
  const field = attr(dur.attributes, 'jager.event.field');
  const want = pauses.reduce((a, e) => a + e.fields[field], 0) / 1e9;
  assert.ok(Math.abs(dur.asDouble - want) <= 1e-9 * Math.max(1, want), `gc.pause ${field} sum as in the .jgr`);
});

async function propagate(childCmd, childSite, extraEnv = {}, prefix = 'propagate-') {
  // Each test its own file prefix: ctest runs these in parallel in the same folder.
  // Two processes, one trace: the parent injects its context (the plugin made the process
  // span current), the child reads it from a socket into TRACEPARENT before recording.
  const r = await receiver();
  for (const f of fs.readdirSync(DIR).filter((f) => f.startsWith(prefix))) fs.rmSync(path.join(DIR, f));
  await new Promise((resolve, reject) => {
    const p = spawn(process.env.OTEL_PROPAGATE, childCmd, {
      env: { ...extraEnv, PATH: process.env.PATH, JAGER_PLUGINS: 'otel', JAGER_PLUGIN_PATH: PLUGINS, JAGER_QUIET: '1', OTEL_SERVICE_NAME: 'otel-test',
        JAGER_OUTPUT: path.join(DIR, `${prefix}%p.jgr`), ...endpoint(r.port) },
      stdio: 'inherit',
    });
    const kill = setTimeout(() => p.kill('SIGKILL'), 280000);
    p.on('exit', (code) => { clearTimeout(kill); code === 0 ? resolve() : reject(new Error(`otel_propagate exited ${code}`)); });
  });
  await r.close();
  const recs = fs.readdirSync(DIR).filter((f) => f.startsWith(prefix)).map((f) => recording(path.join(DIR, f)));
  assert.equal(recs.length, 2, 'one recording per process');
  const parent = recs.find((x) => x.spans.some((s) => s.site === 'request'));
  const child = recs.find((x) => x.spans.some((s) => s.site === childSite));
  assert.ok(parent && child && parent !== child);
  assert.equal(child.meta['otel.trace_id'], parent.meta['otel.trace_id'], 'the child continues the parent trace');
  assert.equal(child.meta['otel.parent_span_id'], parent.meta['otel.root_span_id'], "the child's process span is a child of the parent's");
  const spans = spansOf(r.got);
  assert.equal(spans.length, 4, 'request, handle and both process spans');
  for (const s of spans) assert.equal(hex(s.traceId), parent.meta['otel.trace_id']);
  const byId = new Map(spans.map((s) => [hex(s.spanId), s]));
  assert.equal(hex(byId.get(child.meta['otel.root_span_id']).parentSpanId), parent.meta['otel.root_span_id']);
  const handle = spans.find((s) => s.name === childSite);
  assert.equal(hex(handle.parentSpanId), child.meta['otel.root_span_id']);
  const logs = logsOf(r.got);
  assert.equal(logs.length, 1);
  assert.equal(hex(logs[0].traceId), parent.meta['otel.trace_id']);
  const jl = child.logs[0];
  const want = jl.span_id ? spanId(child.meta['otel.span_id_salt'], jl.thread, jl.span_id) : child.meta['otel.root_span_id'];
  assert.equal(hex(logs[0].spanId), want, 'the log record sits in its span (or the process span)');
}

test('propagate', () => propagate([], 'handle'));

test('propagate_late', async () => {
  // The child adopts the parent's context after it started recording (a server thread per
  // request): its spans from then on join the parent's trace, the first of them a child of
  // the parent's process span; spans before the extract and after clearing stay in its own.
  const r = await receiver();
  for (const f of fs.readdirSync(DIR).filter((f) => f.startsWith('late-'))) fs.rmSync(path.join(DIR, f), { recursive: true, force: true });
  await new Promise((resolve, reject) => {
    const p = spawn(process.env.OTEL_PROPAGATE, [], {
      env: { PATH: process.env.PATH, JAGER_PLUGINS: 'otel', JAGER_PLUGIN_PATH: PLUGINS, JAGER_QUIET: '1', OTEL_SERVICE_NAME: 'otel-test',
        OTEL_PROPAGATE_LATE: '1', JAGER_OUTPUT: path.join(DIR, 'late-%p.jgr'), ...endpoint(r.port) },
      stdio: 'inherit',
    });
    const kill = setTimeout(() => p.kill('SIGKILL'), 280000);
    p.on('exit', (code) => { clearTimeout(kill); code === 0 ? resolve() : reject(new Error(`otel_propagate exited ${code}`)); });
  });
  await r.close();
  const recs = fs.readdirSync(DIR).filter((f) => f.startsWith('late-')).map((f) => recording(path.join(DIR, f)));
  assert.equal(recs.length, 2, 'one recording per process');
  const parent = recs.find((x) => x.spans.some((s) => s.site === 'request'));
  const child = recs.find((x) => x.spans.some((s) => s.site === 'handle'));
  assert.ok(parent && child && parent !== child);
  const ptrace = parent.meta['otel.trace_id'], ctrace = child.meta['otel.trace_id'];
  assert.notEqual(ptrace, ctrace, 'the child started its own trace');
  // The .jgr says when the thread adopted and left the parent's context.
  const ctx = child.ev.filter((e) => e.type === 'context');
  const adopted = ctx.find((e) => e.set && e.trace_id === ptrace);
  assert.ok(adopted, 'a context record with the parent trace');
  assert.equal(adopted.trace_span_id, parent.meta['otel.root_span_id']);
  const jh = child.spans.find((s) => s.site === 'handle');
  assert.equal(adopted.first_span, jh.span_id, 'first span under the context is handle');
  assert.ok(ctx.some((e) => !e.set && e.time_ns > adopted.time_ns), 'the clear is recorded');
  const spans = spansOf(r.got);
  assert.equal(spans.length, 7, 'request, before, handle, inner, after and both process spans');
  const by = (name) => spans.find((s) => s.name === name);
  const salt = child.meta['otel.span_id_salt'];
  const id = (site) => { const j = child.spans.find((s) => s.site === site); return spanId(salt, j.thread, j.span_id); };
  assert.equal(hex(by('handle').traceId), ptrace);
  assert.equal(hex(by('handle').parentSpanId), parent.meta['otel.root_span_id'], 'handle is a child of the remote span');
  assert.equal(hex(by('handle').spanId), id('handle'));
  assert.equal(hex(by('inner').traceId), ptrace);
  assert.equal(hex(by('inner').parentSpanId), id('handle'), 'inner stays under handle');
  for (const n of ['before', 'after']) {
    assert.equal(hex(by(n).traceId), ctrace, `${n} is in the child's own trace`);
    assert.equal(hex(by(n).parentSpanId), child.meta['otel.root_span_id']);
  }
  const logs = logsOf(r.got);
  assert.equal(logs.length, 1);
  assert.equal(hex(logs[0].traceId), ptrace);
  // CSV export of the context table: same records as the dump.
  const out = path.join(DIR, 'late-csv');
  fs.rmSync(out, { recursive: true, force: true });
  const file = fs.readdirSync(DIR).filter((f) => f.startsWith('late-') && f.endsWith('.jgr')).map((f) => path.join(DIR, f))
    .find((f) => recording(f).spans.some((s) => s.site === 'handle'));
  execFileSync(CLI, ['export', '--format', 'csv', '-o', out, file]);
  const rows = fs.readFileSync(path.join(out, 'context.csv'), 'utf8').trim().split('\n');
  assert.equal(rows.length - 1, ctx.length, 'context.csv has every context record');
  assert.ok(rows.some((l) => l.includes(ptrace)));
});

test('propagate_julia', { skip: !process.env.OTEL_JULIA_RUNNER && 'no Julia runner' }, () =>
  propagate(['sh', process.env.OTEL_JULIA_RUNNER, path.join(here, 'otel_propagate.jl')], 'handle',
    { JAGER_LIB: process.env.JAGER_LIB, JAGER_TEST_DEPOT: process.env.JAGER_TEST_DEPOT, HOME: process.env.HOME || '/tmp' }, 'propagate_julia-'));

test('sampled', async () => {
  // JAGER_SAMPLE=1/4: a quarter of the spans become events (and OTLP spans); the histograms
  // still count every call, from Jäger's exact aggregates (as jager summary shows them).
  const r = await receiver();
  const run1 = await run('sampled', { ...endpoint(r.port), JAGER_SAMPLE: '1/4' });
  await r.close();
  const rec = recording(run1.out);
  const exact = JSON.parse(execFileSync(CLI, ['summary', '--format', 'json', run1.out]).toString()).sites;
  const spans = spansOf(r.got);
  assert.equal(spans.length, rec.spans.length + 1, 'every span event arrived');
  const hist = metricsOf(r.got).find((m) => m.name === 'jager.span.duration');
  for (const p of points(hist)) {
    const site = exact.find((x) => x.name === attr(p.attributes, 'code.function.name'));
    assert.ok(site && site.exact);
    assert.equal(Number(p.count), site.calls, `${site.name}: every call counted`);
    assert.ok(site.calls > rec.spans.filter((j) => j.site === site.name).length || site.calls === 1, 'more calls than events');
    assert.ok(Math.abs(p.sum * 1e9 - site.total_ns) <= 1e-6 * site.total_ns, 'total time');
    assert.equal(p.bucketCounts.reduce((a, b) => a + Number(b), 0), site.calls);
  }
  accounted(rec, 'span', rec.spans.length + 1);
});

test('site_rate', async () => {
  // The default volume control, JAGER_OTEL_SITE_RATE: at most RATE spans of a site per second
  // of end time become OTLP spans; the rest are sampled out (counted, not a loss), and the
  // histograms still count every call.
  const RATE = 40;
  const r = await receiver();
  const run1 = await run('site_rate', { ...endpoint(r.port), JAGER_OTEL_SITE_RATE: String(RATE) }, ['300', '2', '5']);
  await r.close();
  assert.ifError(r.got.error);
  const rec = recording(run1.out);
  const off = BigInt(rec.meta['clock.anchor_unix_ns']) - BigInt(rec.meta['clock.anchor_ns']);
  const spans = spansOf(r.got).filter((s) => hex(s.spanId) !== rec.meta['otel.root_span_id']);
  const per = {};
  for (const s of spans) {
    const k = `${s.name}@${(BigInt(s.endTimeUnixNano) - off) / 1000000000n}`; // the second of end time, the plugin's clock
    per[k] = (per[k] || 0) + 1;
  }
  for (const [k, n] of Object.entries(per)) assert.ok(n <= RATE, `${k}: ${n} spans exported, at most ${RATE}`);
  const s = accounted(rec, 'span', rec.spans.length + 1);
  const sampled = rec.counts['jager.otel.span.sampled_out|'];
  assert.ok(sampled > 0, 'spans over the rate were sampled out');
  assert.equal(sampled + spans.length + 1, s.seen, 'sampled out + exported (process span included) == emitted');
  assert.equal(s.exported, spans.length + 1);
  assert.ok(rec.spans.filter((j) => j.site === 'kernel').length > RATE, 'the workload exceeds the rate');
  const hist = metricsOf(r.got).find((m) => m.name === 'jager.span.duration');
  for (const p of points(hist)) {
    const site = attr(p.attributes, 'code.function.name');
    assert.equal(Number(p.count), rec.spans.filter((j) => j.site === site).length, `${site}: the histogram counts every call`);
  }
});

test('signal_config', async () => {
  // Per-signal variables: the traces endpoint used as is, logs as http/json, metrics gzip,
  // a signal's own header replacing the generic one of the same name.
  const r = await receiver(undefined, { '/custom/traces': '/v1/traces' });
  const run1 = await run('signal_config', {
    ...endpoint(r.port), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${r.port}/custom/traces`,
    OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: 'gzip',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=generic,x-common=all', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'X-Tenant=traces',
  });
  await r.close();
  assert.ifError(r.got.error);
  assert.deepEqual([...new Set(r.got.urls)].sort(), ['/custom/traces', '/v1/logs', '/v1/metrics'], 'no /v1/traces appended to the traces endpoint');
  const H = r.got.byKind;
  assert.ok(H.traces.length && H.logs.length && H.metrics.length);
  for (const h of H.traces) {
    assert.equal(h['x-tenant'], 'traces', 'the traces header alone, not both');
    assert.equal(h['x-common'], 'all');
    assert.equal(h['content-type'], 'application/x-protobuf');
    assert.equal(h['content-encoding'], undefined);
  }
  for (const h of H.logs) {
    assert.equal(h['x-tenant'], 'generic');
    assert.equal(h['content-type'], 'application/json');
    assert.equal(h['content-encoding'], undefined);
  }
  for (const h of H.metrics) {
    assert.equal(h['x-tenant'], 'generic');
    assert.equal(h['content-type'], 'application/x-protobuf');
    assert.equal(h['content-encoding'], 'gzip');
  }
  checkContent(recording(run1.out), r.got);
});

test('limits', async () => {
  // Attribute limits, the metric interval and the log queue size.
  const r = await receiver((kind) => (kind === 'logs' ? 'hang' : { status: 200 }));
  const run1 = await run('limits', {
    ...endpoint(r.port), OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '1', OTEL_METRIC_EXPORT_INTERVAL: '300',
    OTEL_BLRP_MAX_QUEUE_SIZE: '4', OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: '1000', JAGER_OTEL_SHUTDOWN_TIMEOUT: '3000',
  }, ['50', '1', '200', '0', '1500']);
  await r.close();
  assert.ifError(r.got.error);
  const rec = recording(run1.out);
  const attrd = new Set(rec.ev.filter((e) => e.type === 'span_attr').map((e) => `${e.thread}:${e.span_id}`));
  const salt = rec.meta['otel.span_id_salt'];
  const byId = new Map(spansOf(r.got).map((s) => [hex(s.spanId), s]));
  for (const j of rec.spans) {
    const s = byId.get(spanId(salt, j.thread, j.span_id));
    assert.ok(s);
    // code.file.path, code.line.number, thread.id (+ iteration, phase): one kept, the rest counted
    const all = 3 + (attrd.has(`${j.thread}:${j.span_id}`) ? 2 : 0);
    assert.equal(s.attributes.length, 1, 'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT=1');
    assert.equal(s.droppedAttributesCount, all - 1, `droppedAttributesCount of ${j.site}`);
  }
  // ~5 periodic exports and the final one; without the interval there is only the final one.
  assert.ok(r.got.times.metrics.length >= 3, `OTEL_METRIC_EXPORT_INTERVAL=300 over a 1.5 s run: ${r.got.times.metrics.length} metrics requests`);
  const l = accounted(rec, 'log', rec.logs.length);
  assert.ok(l.proc('queue_full') > 0, `a log queue of 4 with a hung endpoint drops and counts (queue_full ${l.proc('queue_full')})`);
  assert.equal(l.exported, 0);
  accounted(rec, 'span', rec.spans.length + 1);

  // OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=3: string values cut to 3 bytes (file path included).
  const r2 = await receiver();
  const run2 = await run('limits_len', { ...endpoint(r2.port), OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '3' });
  await r2.close();
  const rec2 = recording(run2.out);
  const attrd2 = rec2.ev.filter((e) => e.type === 'span_attr');
  assert.ok(attrd2.length > 0);
  const byId2 = new Map(spansOf(r2.got).map((s) => [hex(s.spanId), s]));
  for (const e of attrd2) {
    const s = byId2.get(spanId(rec2.meta['otel.span_id_salt'], e.thread, e.span_id));
    assert.equal(attr(s.attributes, 'phase'), 'ass', 'the value "assemble" cut to 3');
    assert.equal(String(attr(s.attributes, 'iteration')), String(e.attrs.iteration), 'integers are not cut');
    assert.equal(attr(s.attributes, 'code.file.path').length, 3);
  }
});

test('status_5xx', async () => {
  // 502 and 504 are retried (then 200): nothing lost, nothing sent twice.
  const r = await receiver((kind, n) => (kind !== 'traces' || n > 1 ? { status: 200 } : { status: n === 0 ? 502 : 504 }));
  const run1 = await run('status_5xx', { ...endpoint(r.port), ...oneBatch, JAGER_OTEL_RETRY_INITIAL_BACKOFF: '100' });
  await r.close();
  const rec = recording(run1.out);
  assert.deepEqual(spanIds(r.got.sent.traces[1]), spanIds(r.got.sent.traces[0]));
  assert.deepEqual(spanIds(r.got.sent.traces[2]), spanIds(r.got.sent.traces[0]), '502 and 504 both retried');
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.exported, s.seen);
  assert.equal(s.retries, 2);
  noDuplicates(r.got);
});

test('retry_after_long', async () => {
  // Retry-After: 60 with a 1 s export timeout: the wait cannot fit, so the batch is given up
  // at once (no second request), counted under 503.
  const r = await receiver((kind) => (kind === 'traces' ? { status: 503, headers: { 'retry-after': '60' } } : { status: 200 }));
  const run1 = await run('retry_after_long', { ...endpoint(r.port), ...oneBatch, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '1000' });
  await r.close();
  const rec = recording(run1.out);
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.retries, 0, 'no retry');
  assert.equal(r.got.times.traces.length, s.requests);
  assert.equal(spanIdsAll(r.got.sent.traces).length, s.seen, 'each span sent once');
  assert.equal(s.cause('503'), s.seen, 'all counted under 503');
  assert.ok(run1.wallMs < 30000, `no 60 s wait (${run1.wallMs} ms)`);
});

test('big_response', async () => {
  // A 1 MiB answer with a 64-byte response cap: cut off, no crash, the export counts as done.
  const r = await receiver(() => ({ status: 200, body: Buffer.alloc(1 << 20, 0x41) }));
  const run1 = await run('big_response', { ...endpoint(r.port), JAGER_OTEL_RESPONSE_CAP: '64' });
  await r.close();
  const rec = recording(run1.out);
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.exported, s.seen);
  assert.equal(accounted(rec, 'log', rec.logs.length).exported, rec.logs.length);
  checkContent(rec, r.got);
});

test('partial_json', async () => {
  // partial_success in an OTLP/JSON answer: counted as rejected, not retried.
  const r = await receiver((kind, n) => (kind === 'traces' && n === 0 ? { status: 200, rejected: 5 } : { status: 200 }));
  const run1 = await run('partial_json', { ...endpoint(r.port), ...oneBatch, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
  await r.close();
  const rec = recording(run1.out);
  assert.equal(spanIdsAll(r.got.sent.traces).length, new Set(spanIdsAll(r.got.sent.traces)).size, 'not retried');
  const s = accounted(rec, 'span', rec.spans.length + 1);
  assert.equal(s.cause('rejected'), 5);
  assert.equal(s.exported, s.seen - 5);
});

test('mpi', { skip: !process.env.OTEL_MPIEXEC && 'no MPI' }, async () => {
  // Two MPI ranks (MPICH on loopback) with the mpi and otel plugins: each rank's resource
  // carries mpi.rank and mpi.size, and the job is one trace, rank 0's (broadcast at
  // MPI_Init): the ranks' process spans are children of the job's root span, which rank 0
  // exports (mpi.job), beside each rank's mpi.rank span.
  const r = await receiver();
  const prefix = 'mpi-';
  for (const f of fs.readdirSync(DIR).filter((f) => f.startsWith(prefix))) fs.rmSync(path.join(DIR, f));
  const env = { JAGER_PLUGINS: 'mpi,otel', JAGER_PLUGIN_PATH: PLUGINS, JAGER_OUTPUT: path.join(DIR, `${prefix}%r.jgr`), JAGER_QUIET: '1',
    JAGER_MPI_AGGREGATE: '0', OTEL_SERVICE_NAME: 'otel-test', JAGER_OTEL_SITE_RATE: '0', OTEL_METRIC_EXPORT_INTERVAL: '600000', ...endpoint(r.port) };
  const args = ['-n', '2'];
  for (const [k, v] of Object.entries(env)) args.push('-genv', k, v);
  args.push(process.env.OTEL_MPI_PROGRAM);
  await new Promise((resolve, reject) => {
    const p = spawn(process.env.OTEL_MPIEXEC, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME || '/tmp' }, stdio: 'inherit' });
    const kill = setTimeout(() => p.kill('SIGKILL'), 100000);
    p.on('exit', (code) => { clearTimeout(kill); code === 0 ? resolve() : reject(new Error(`mpiexec exited ${code}`)); });
  });
  await r.close();
  assert.ifError(r.got.error);
  const recs = [0, 1].map((k) => recording(path.join(DIR, `${prefix}${k}.jgr`)));
  const trace = recs[0].meta['mpi.trace_id'], root = recs[0].meta['mpi.root_span_id'];
  assert.match(trace, /^[0-9a-f]{32}$/);
  for (const [k, rec] of recs.entries()) {
    assert.equal(rec.meta['mpi.rank'], String(k));
    assert.equal(rec.meta['mpi.trace_id'], trace, 'one job trace');
    assert.equal(rec.meta['otel.trace_id'], trace, `rank ${k}: the otel plugin took the job's trace`);
    assert.equal(rec.meta['otel.parent_span_id'], root);
  }
  // Resource attributes, per request: which rank sent it.
  const byRank = { 0: [], 1: [] };
  for (const req of r.got.traces) {
    const res = req.resourceSpans[0].resource.attributes;
    assert.equal(Number(attr(res, 'mpi.size')), 2, 'mpi.size is the world size');
    byRank[Number(attr(res, 'mpi.rank'))].push(...req.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  }
  for (const kind of ['logs', 'metrics']) {
    for (const req of r.got[kind]) {
      const res = (req.resourceLogs || req.resourceMetrics)[0].resource.attributes;
      assert.ok([0, 1].includes(Number(attr(res, 'mpi.rank'))));
      assert.equal(Number(attr(res, 'mpi.size')), 2);
    }
  }
  for (const [k, rec] of recs.entries()) {
    const spans = byRank[k];
    const salt = rec.meta['otel.span_id_salt'];
    // the program's spans (ring, reduce), the process span, mpi.rank, and on rank 0 mpi.job
    assert.equal(spans.length, rec.spans.length + 2 + (k === 0 ? 1 : 0), `rank ${k}: every span arrived once`);
    for (const s of spans) assert.equal(hex(s.traceId), trace, `rank ${k}: ${s.name} is in the job's trace`);
    const proc = spans.find((s) => hex(s.spanId) === rec.meta['otel.root_span_id']);
    assert.equal(hex(proc.parentSpanId), root, `rank ${k}: the process span is a child of the job's root span`);
    const rs = spans.find((s) => s.name === 'mpi.rank');
    assert.equal(hex(rs.spanId), rec.meta['mpi.rank_span_id']);
    assert.equal(hex(rs.parentSpanId), root);
    for (const j of rec.spans) {
      const s = spans.find((x) => hex(x.spanId) === spanId(salt, j.thread, j.span_id));
      assert.ok(s, `rank ${k}: ${j.site}`);
      assert.equal(hex(s.parentSpanId), j.parent_id ? spanId(salt, j.thread, j.parent_id) : rec.meta['otel.root_span_id']);
    }
    const s = accounted(rec, 'span', rec.spans.length + 2 + (k === 0 ? 1 : 0));
    assert.equal(s.exported, s.seen);
    for (const l of logsOf({ logs: r.got.logs })) assert.equal(hex(l.traceId), trace);
  }
  const job = byRank[0].find((s) => s.name === 'mpi.job');
  assert.ok(job, 'rank 0 exported the job span');
  assert.equal(hex(job.spanId), root);
  assert.equal(hex(job.parentSpanId), '', 'no TRACEPARENT: the job span is the trace root');
  assert.ok(!byRank[1].some((s) => s.name === 'mpi.job'));
});
