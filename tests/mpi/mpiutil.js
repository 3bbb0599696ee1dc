// Helpers of the MPI tests: run a program under MPICH's mpiexec with the plugin, read
// the recordings back with `jager dump` (events) and `jager info` (metadata), assert.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const E = process.env;
for (const v of ['JAGER_BIN', 'MPIEXEC', 'LIBJAGER', 'LIBJAGER_MPI', 'MPI_TEST_BIN']) {
  if (!E[v]) {
    console.error(`set ${v} (ctest does)`);
    process.exit(2);
  }
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jager-mpi-'));
process.on('exit', () => { if (!E.KEEP_TMP) fs.rmSync(dir, { recursive: true, force: true }); });
const tmp = (name) => path.join(dir, name);
const bin = (name) => path.join(E.MPI_TEST_BIN, name);

let failures = 0;
function check(cond, what) {
  if (cond) console.log('ok   ' + what);
  else {
    console.log('FAIL ' + what);
    failures++;
  }
  return cond;
}
function done() {
  if (failures) {
    console.log(`${failures} check(s) failed`);
    process.exit(1);
  }
  console.log('all checks passed');
}

function run(cmd, args, env, timeoutMs) {
  const r = spawnSync(cmd, args, {
    env: Object.assign({}, E, { JAGER_QUIET: '1' }, env || {}),
    encoding: 'utf8',
    maxBuffer: 512 << 20,
    timeout: timeoutMs || 120000,
  });
  if (r.error && r.error.code !== 'ETIMEDOUT') throw r.error;
  return { code: r.status, signal: r.signal, out: r.stdout || '', err: r.stderr || '' };
}

// mpiexec -n N with per-rank environment (-genv), e.g. {LD_PRELOAD: preload()}.
// One file per rank unless the test asks for aggregation (JAGER_MPI_AGGREGATE: 1).
function mpiexec(n, env, prog, args, timeoutMs) {
  const a = ['-n', String(n)];
  for (const [k, v] of Object.entries(Object.assign({ JAGER_MPI_AGGREGATE: '0' }, env || {}))) a.push('-genv', k, String(v));
  a.push(prog, ...(args || []));
  return run(E.MPIEXEC, a, {}, timeoutMs);
}
const preload = () => `${E.LIBJAGER}:${E.LIBJAGER_MPI}`;

function dump(file) {
  const r = run(E.JAGER_BIN, ['dump', file]);
  if (r.code !== 0) throw new Error(`jager dump ${file}: ${r.err}`);
  return r.out.split('\n').filter((l) => l).map((l) => JSON.parse(l));
}

function info(file) {
  const r = run(E.JAGER_BIN, ['info', file]);
  if (r.code !== 0) throw new Error(`jager info ${file}: ${r.err}`);
  const meta = {};
  for (const m of r.out.matchAll(/^ {2}"([^"]+)": "(.*)"$/gm)) meta[m[1]] = JSON.parse(`"${m[2]}"`);
  return { text: r.out, meta };
}

const calls = (evs) => evs.filter((e) => e.type === 'mpi.call').map((e) => Object.assign({ t: e.time_ns }, e.fields));
const reqs = (evs) => evs.filter((e) => e.type === 'mpi.request').map((e) => Object.assign({ t: e.time_ns }, e.fields));

// Messages of one rank's recording: sends and receives with their ids and times.
function messages(rank, evs) {
  const sends = [], recvs = [];
  for (const c of calls(evs)) {
    if (c.seq > 0 && !c.func.startsWith('MPI_I') && !c.func.startsWith('MPI_Start'))
      sends.push({ from: rank, to: c.dest, tag: c.tag, comm: c.comm, seq: c.seq, bytes: c.bytes, start: c.t, func: c.func });
    if (c.recv_seq > 0)
      recvs.push({ from: c.source, to: rank, tag: c.recv_tag, comm: c.comm, seq: c.recv_seq, bytes: c.recv_bytes,
                   end: c.t + c.duration_ns, func: c.func });
  }
  for (const q of reqs(evs)) {
    if (q.kind === 1 && q.seq > 0)
      sends.push({ from: rank, to: q.dest, tag: q.tag, comm: q.comm, seq: q.seq, bytes: q.bytes, start: q.t, func: q.func });
    if (q.kind === 2 && q.seq > 0)
      recvs.push({ from: q.source, to: rank, tag: q.recv_tag, comm: q.comm, seq: q.seq, bytes: q.recv_bytes,
                   end: q.done, func: q.func });
  }
  return { sends, recvs };
}
const msgId = (m) => `${m.from}>${m.to} tag ${m.tag} comm ${m.comm} #${m.seq}`;

// RFC 4180 rows (the exporter quotes only where needed; CRLF line ends).
function csv(file) {
  const text = fs.readFileSync(file, 'utf8');
  const rows = [];
  let row = [], cell = '', q = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (q) {
      if (ch === '"' && text[i + 1] === '"') { cell += '"'; i++; }
      else if (ch === '"') q = false;
      else cell += ch;
    } else if (ch === '"') q = true;
    else if (ch === ',') { row.push(cell); cell = ''; }
    else if (ch === '\r') continue;
    else if (ch === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; }
    else cell += ch;
  }
  if (cell || row.length) { row.push(cell); rows.push(row); }
  const head = rows.shift();
  return rows.map((r) => Object.fromEntries(head.map((h, k) => [h, r[k]])));
}

module.exports = { check, done, run, mpiexec, preload, dump, info, calls, reqs, messages, msgId, tmp, bin, dir, E, csv };
