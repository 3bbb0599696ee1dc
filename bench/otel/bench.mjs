// otel plugin benchmark: spans per second exported, and the program's slowdown with the
// plugin on, against the same program without it, measured in one run.
//
//   node bench/otel/bench.mjs BUILD_DIR [--iters N] [--work W] [--runs R]
//
// The program is tests/otel/otel_workload (2 threads, each iteration one "solve" span with
// two "kernel" spans of W busy-loop turns). Modes, each the median of R runs:
//   off          no plugin (the baseline)
//   ok           the plugin exporting to a local receiver that answers 200 at once
//   hang         the receiver never answers traces (the program must not notice)
//   unreachable  nothing listens on the port
// cpu_ms is the program's whole CPU time (its threads, Jäger's collector and the plugin's
// exporters); extra_cpu_ns_per_span is what the plugin added, per span it saw — the cost
// figure that holds on a loaded machine, where loop times mostly measure the neighbours.
// The receiver counts requests and bytes only (no decoding), so the exporter is measured,
// not the receiver. Exported spans come from the recording's own counts (jager dump).
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';

const args = process.argv.slice(2);
const build = args[0];
if (!build) {
  console.error('usage: node bench/otel/bench.mjs BUILD_DIR [--iters N] [--work W] [--runs R]');
  process.exit(2);
}
const opt = (k, d) => { const i = args.indexOf(k); return i > 0 ? Number(args[i + 1]) : d; };
const iters = opt('--iters', 20000), work = opt('--work', 1000), runs = opt('--runs', 3);
const workload = path.join(build, 'tests/otel/otel_workload'), cli = path.join(build, 'bin/jager');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'otel-bench-'));

function receiver(mode) {
  const st = { requests: 0, bytes: 0, first: 0, last: 0 };
  const hung = [];
  const server = http.createServer((req, res) => {
    let n = 0;
    req.on('data', (c) => (n += c.length));
    req.on('end', () => {
      const now = performance.now();
      if (mode === 'hang' && req.url === '/v1/traces') { hung.push(res); return; }
      if (req.url === '/v1/traces') { st.requests++; st.bytes += n; st.first ||= now; st.last = now; }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({
    st, port: server.address().port,
    close: () => new Promise((c) => { hung.forEach((h) => h.destroy()); server.closeAllConnections(); server.close(c); }),
  })));
}

function once(env) {
  const out = path.join(tmp, 'run.jgr');
  return new Promise((resolve, reject) => {
    const p = spawn(workload, [String(iters), '2', '10', String(work)], {
      env: { PATH: process.env.PATH, JAGER_OUTPUT: out, JAGER_QUIET: '1', ...env }, stdio: ['ignore', 'pipe', 'inherit'],
    });
    let so = '';
    p.stdout.on('data', (d) => (so += d));
    p.on('exit', (code) => {
      if (code) return reject(new Error(`workload exit ${code}`));
      const counts = {};
      for (const l of execFileSync(cli, ['dump', out, '--type', 'otel.export'], { maxBuffer: 1 << 26 }).toString().trim().split('\n')) {
        if (!l) continue;
        const e = JSON.parse(l);
        counts[`${e.fields.metric}|${e.fields.error_type}`] = e.fields.value;
      }
      const [loopNs, cpuNs] = so.trim().split('\n').map(Number);
      resolve({ loopNs, cpuNs, counts });
    });
  });
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const plugin = (port) => ({
  JAGER_PLUGINS: 'otel', JAGER_PLUGIN_PATH: path.join(build, 'plugins'), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
  JAGER_OTEL_SITE_RATE: '0', OTEL_BSP_MAX_QUEUE_SIZE: '65536', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2048', OTEL_BSP_SCHEDULE_DELAY: '100',
  OTEL_EXPORTER_OTLP_TIMEOUT: '2000', JAGER_OTEL_SHUTDOWN_TIMEOUT: '2000',
});

const rows = [];
let base, baseCpu;
for (const mode of ['off', 'ok', 'hang', 'unreachable']) {
  const loops = [], rates = [], exported = [], seen = [], cpus = [];
  for (let i = 0; i < runs; i++) {
    let r = null, port = 9;
    if (mode === 'ok' || mode === 'hang') { r = await receiver(mode); port = r.port; }
    if (mode === 'unreachable') { const p = await receiver('ok'); port = p.port; await p.close(); }
    const res = await once(mode === 'off' ? {} : plugin(port));
    loops.push(res.loopNs);
    cpus.push(res.cpuNs);
    const ex = res.counts['otel.sdk.exporter.span.exported|'] || 0;
    exported.push(ex);
    seen.push(res.counts['jager.otel.span.seen|'] || 0);
    if (r && mode === 'ok' && r.st.last > r.st.first) rates.push(ex / ((r.st.last - r.st.first) / 1000));
    if (r) await r.close();
  }
  const loop = median(loops), cpu = median(cpus);
  if (mode === 'off') base = loop, baseCpu = cpu;
  rows.push({ mode, loop_ms: (loop / 1e6).toFixed(1), vs_off: (loop / base).toFixed(3), spans_seen: median(seen), spans_exported: median(exported),
    exported_per_s: rates.length ? Math.round(median(rates)) : '', cpu_ms: (cpu / 1e6).toFixed(0),
    extra_cpu_ns_per_span: mode === 'off' ? '' : Math.round((cpu - baseCpu) / Math.max(1, median(seen))) });
}
console.log(`otel_workload ${iters} iterations x 2 threads x 3 spans, ${work} turns of work per kernel, median of ${runs}`);
console.table(rows);
fs.rmSync(tmp, { recursive: true, force: true });
