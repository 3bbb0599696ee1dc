// `jager export` of a job: one Chrome/Perfetto file with the ranks as processes (pid =
// rank, process_name) and one flow arrow per matched message, from the sending call's
// slice to the completing call's (in the report every k-th beyond 4000, the legend saying
// how many were drawn); CSV and Parquet tables with a `rank` column. The
// messages are matched here from the dumps by their ids (mpiutil.messages), independently
// of the tool, so the arrows are checked against an exact count.
'use strict';
const fs = require('fs');
const path = require('path');
const { pathToFileURL } = require('url');
const vm = require('vm');
const u = require('./mpiutil');
const { check, E } = u;

const J = (args) => u.run(E.JAGER_BIN, args);

// Each matched message (from the dumps), keyed by its id.
function matched(files) {
  const sends = new Map(), recvs = new Map();
  files.forEach((f, k) => {
    const m = u.messages(k, u.dump(f));
    for (const s of m.sends) sends.set(u.msgId(s), s);
    for (const r of m.recvs) recvs.set(u.msgId(r), r);
  });
  return [...sends.values()].filter((s) => recvs.has(u.msgId(s)));
}

// The Chrome file's arrows against the messages: count, ranks, bytes, binding.
function checkChrome(what, trace, msgs, nranks) {
  const ev = trace.traceEvents;
  const names = ev.filter((e) => e.ph === 'M' && e.name === 'process_name');
  check(names.length === nranks && names.every((e, k) => e.pid === k && e.args.name.startsWith(`rank ${k} `)),
    `${what}: ${nranks} processes, pid = rank, named "rank R · …" (${names.map((e) => e.args.name.split(' ').slice(0, 2).join(' '))})`);
  const calls = ev.filter((e) => e.ph === 'X' && e.cat === 'mpi.call');
  check(new Set(calls.map((e) => e.pid)).size === nranks, `${what}: every rank's MPI calls under its own pid`);
  const s = ev.filter((e) => e.ph === 's' && e.cat === 'mpi.message');
  const f = ev.filter((e) => e.ph === 'f' && e.cat === 'mpi.message');
  check(s.length === msgs.length && f.length === msgs.length,
    `${what}: one arrow per matched message: ${s.length} starts, ${f.length} ends, ${msgs.length} messages`);
  check(trace.otherData['mpi.arrows'] === String(msgs.length) && trace.otherData['mpi.messages'] === String(msgs.length),
    `${what}: otherData says ${trace.otherData['mpi.arrows']} arrows of ${trace.otherData['mpi.messages']} messages`);
  const fById = new Map(f.map((e) => [e.id, e]));
  // pairs (from, to, bytes) of the arrows = those of the messages, as multisets
  const key = (a, b, n) => `${a}>${b}:${n}`;
  const want = msgs.map((m) => key(m.from, m.to, m.bytes)).sort();
  const got = s.map((e) => key(e.pid, fById.has(e.id) ? fById.get(e.id).pid : '?', e.args.bytes)).sort();
  check(JSON.stringify(want) === JSON.stringify(got), `${what}: each arrow from the sender's pid to the receiver's, with its bytes`);
  // each end lies inside an MPI call's slice on its pid and tid (what the flow binds to)
  const inSlice = (e) => calls.some((c) => c.pid === e.pid && c.tid === e.tid && c.ts <= e.ts && e.ts <= c.ts + c.dur);
  const unbound = s.concat(f).filter((e) => !inSlice(e));
  check(unbound.length === 0, `${what}: every arrow end inside an MPI call's slice of its lane (${unbound.length} not)`);
  return { s, f, calls };
}

(async () => {
  // 1. mpi_calls on 4 ranks (blocking, non-blocking, wildcards, Waitany, probes, persistent)
  const N = 4;
  const job = u.tmp('calls.jgr');
  const r = u.mpiexec(N, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: job, JAGER_RING_BYTES: '8M', JAGER_MPI_AGGREGATE: '1',
    JAGER_MPI_KEEP_PARTS: '1' }, u.bin('mpi_calls'), [u.tmp('x')]);
  check(r.code === 0 && fs.existsSync(job), `mpi_calls on 4 ranks, one job file (${r.code} ${r.err.slice(0, 300)})`);
  const parts = [...Array(N).keys()].map((k) => `${job}.${k}`);
  const msgs = matched(parts);
  check(msgs.length > 50, `the dumps hold ${msgs.length} matched messages`);
  const sum = JSON.parse(J(['summary', '--format', 'json', job]).out);
  check(sum.mpi.messages === msgs.length, `jager summary matches as many (${sum.mpi.messages})`);

  const tj = u.tmp('calls.trace.json');
  const e = J(['export', '--format', 'chrome', job, '-o', tj]);
  check(e.code === 0 && fs.existsSync(tj) && !fs.existsSync(u.tmp('calls.trace.rank0.json')),
    `export of the job file: one Chrome file (${e.code} ${e.err.trim()})`);
  const trace = JSON.parse(fs.readFileSync(tj, 'utf8'));
  const { calls } = checkChrome('job file', trace, msgs, N);
  // the rank files give the same file
  const tr = u.tmp('ranks.trace.json');
  J(['export', '--format', 'chrome', ...parts, '-o', tr]);
  const t2 = JSON.parse(fs.readFileSync(tr, 'utf8'));
  check(JSON.stringify(t2.traceEvents) === JSON.stringify(trace.traceEvents), 'the rank files export to the same events');
  // per rank exactly its MPI calls
  const perRank = parts.map((p) => u.calls(u.dump(p)).length);
  check(perRank.every((n, k) => calls.filter((c) => c.pid === k).length === n),
    `each pid holds exactly its rank's mpi.call events (${perRank})`);
  // one time axis: rank 0's clock; the job's first event near 0, nothing negative
  check(trace.traceEvents.every((x) => x.ph === 'M' || x.ts >= 0), 'no event before the job\'s time origin');

  // the report: one arrow per matched message, each between lanes the page has
  const html = u.tmp('calls.html');
  const rep = J(['report', job, '-o', html]);
  check(rep.code === 0, `jager report of the job (${rep.err.trim().slice(0, 200)})`);
  const page = fs.readFileSync(html, 'utf8');
  const data = JSON.parse(page.match(/<script type="application\/json"[^>]*>([\s\S]*?)<\/script>/)[1]);
  const a = data.messages.a, lanes = new Set(data.lanes.map((l) => `${l.proc}:${l.thread}`));
  check(data.messages.n === msgs.length && data.messages.drawn === msgs.length && a.length === 6 * msgs.length,
    `report: ${data.messages.drawn} of ${data.messages.n} arrows for ${msgs.length} messages`);
  let bad = 0;
  const pairs = [];
  for (let i = 0; i < a.length; i += 6) {
    if (!lanes.has(`${a[i]}:${a[i + 1]}`) || !lanes.has(`${a[i + 3]}:${a[i + 4]}`)) bad++;
    pairs.push(`${a[i]}>${a[i + 3]}`);
  }
  check(bad === 0, `report: every arrow joins two lanes of the page (${bad} do not)`);
  check(JSON.stringify(pairs.sort()) === JSON.stringify(msgs.map((m) => `${m.from}>${m.to}`).sort()),
    'report: arrows from the sender\'s process to the receiver\'s');

  // 2. CSV: one table per type, a rank column, every rank's rows
  const cdir = u.tmp('csv');
  const c = J(['export', '--format', 'csv', job, '-o', cdir]);
  check(c.code === 0 && fs.existsSync(path.join(cdir, 'mpi.call.csv')) && !fs.existsSync(u.tmp('csv.rank0')),
    `export csv of the job: one folder (${c.err.trim()})`);
  const rows = fs.readFileSync(path.join(cdir, 'mpi.call.csv'), 'utf8').trim().split('\r\n').map((l) => l.split(','));
  check(rows[0][0] === 'rank' && rows[0][1] === 'thread', `mpi.call.csv's first column is rank (${rows[0].slice(0, 3)})`);
  const fi = rows[0].indexOf('func');
  const byRank = [0, 0, 0, 0];
  for (const row of rows.slice(1)) byRank[Number(row[0])]++;
  check(JSON.stringify(byRank) === JSON.stringify(perRank), `mpi.call.csv: rows per rank = each rank's calls (${byRank})`);
  const fin = rows.slice(1).filter((x) => x[fi] === 'MPI_Finalize').map((x) => x[0]).sort();
  check(fin.join() === '0,1,2,3', `one MPI_Finalize row per rank, told apart by rank (${fin})`);
  const rk = fs.readFileSync(path.join(cdir, 'mpi.rank.csv'), 'utf8').trim().split('\r\n').map((l) => l.split(','));
  const ri = rk[0].indexOf('rank_2');
  check(rk[0][0] === 'rank' && ri > 0 && rk.slice(1).every((x) => x[0] === x[ri]),
    'mpi.rank.csv: the rank column equals the event\'s own rank field (rank_2)');

  // 3. Parquet read back by hyparquet (a peer no one here wrote), when the peers are installed
  const hp = path.join(__dirname, '..', 'peers', 'node_modules', 'hyparquet', 'package.json');
  const pdir = u.tmp('pq');
  const p = J(['export', '--format', 'parquet', '--parquet-codec', 'none', job, '-o', pdir]);
  check(p.code === 0 && fs.existsSync(path.join(pdir, 'mpi.call.parquet')), `export parquet of the job: one folder (${p.err.trim()})`);
  if (!fs.existsSync(hp)) {
    console.log('skip parquet read-back: tests/peers/node_modules/hyparquet is not installed');
  } else {
    const pkg = JSON.parse(fs.readFileSync(hp, 'utf8'));
    const { parquetReadObjects } = await import(pathToFileURL(path.join(path.dirname(hp), pkg.main || 'src/index.js')).href);
    const buf = fs.readFileSync(path.join(pdir, 'mpi.call.parquet'));
    const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    const objs = await parquetReadObjects({ file });
    const pr = [0, 0, 0, 0];
    for (const o of objs) pr[Number(o.rank)]++;
    check(JSON.stringify(pr) === JSON.stringify(perRank), `hyparquet reads the rank column: rows per rank ${pr}`);
    const csvFuncs = rows.slice(1).map((x) => `${x[0]}:${x[fi]}`).sort().join();
    check(objs.map((o) => `${o.rank}:${o.func}`).sort().join() === csvFuncs, 'Parquet (rank, func) rows = the CSV\'s');
  }

  // 4. 4 threads per rank in MPI at once: the arrows find the call on its thread's lane
  const th = u.tmp('th.jgr');
  const r2 = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: th, JAGER_RING_BYTES: '4M', JAGER_MPI_AGGREGATE: '1',
    JAGER_MPI_KEEP_PARTS: '1' }, u.bin('mpi_threads'));
  check(r2.code === 0, `mpi_threads on 2 ranks (${r2.err.slice(0, 200)})`);
  const tmsgs = matched([0, 1].map((k) => `${th}.${k}`));
  check(tmsgs.length === 2 * 4 * 26, `2 ranks × 4 threads × 26 messages matched in the dumps (${tmsgs.length})`);
  const tt = u.tmp('th.trace.json');
  J(['export', '--format', 'chrome', th, '-o', tt]);
  checkChrome('threads', JSON.parse(fs.readFileSync(tt, 'utf8')), tmsgs, 2);

  // 5. pprof: one profile, each rank's spans labelled rank=R (mpi_ring_jager records "ring"
  // and "reduce" once per rank), read back by `go tool pprof` when Go is installed
  const rj = u.tmp('rj.%r.jgr');
  const r3 = u.mpiexec(3, { JAGER_PLUGINS: 'mpi', JAGER_PLUGIN_PATH: path.dirname(E.LIBJAGER_MPI), JAGER_OUTPUT: rj,
    JAGER_MPI_AGGREGATE: '1' }, u.bin('mpi_ring_jager'));
  const rjob = u.tmp('rj.all.jgr');
  check(r3.code === 0 && fs.existsSync(rjob), `mpi_ring_jager on 3 ranks, one job file (${r3.err.slice(0, 200)})`);
  const pb = u.tmp('rj.pb.gz');
  const pe = J(['export', '--format', 'pprof', rjob, '-o', pb]);
  check(pe.code === 0 && fs.existsSync(pb) && !fs.existsSync(u.tmp('rj.pb.rank0.gz')), `pprof of the job: one profile (${pe.err.trim().split('\n').pop()})`);
  const go = u.run('go', ['version']);
  if (go.code !== 0) console.log('skip the pprof read-back: no go (Debian golang-go)');
  else {
    const genv = { HOME: u.dir, PPROF_TMPDIR: u.dir, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };
    const raw = u.run('go', ['tool', 'pprof', '-symbolize=none', '-raw', pb], genv);
    const samples = raw.out.split('Locations')[0];
    const tags = [...samples.matchAll(/rank:\[(\d+)\]/g)].map((m) => Number(m[1])).sort();
    check(raw.code === 0 && JSON.stringify(tags) === '[0,0,1,1,2,2]', `go tool pprof: 2 samples per rank, labelled rank 0, 1, 2 (${tags})`);
    const locs = (raw.out.split('Locations')[1] || '').split('Mappings')[0];
    const names = [...new Set([...locs.matchAll(/ (ring|reduce) /g)].map((m) => m[1]))].sort();
    check(JSON.stringify(names) === '["reduce","ring"]', `the sites ring and reduce (${names})`);
    // a numeric-looking value is read as a range by -tagfocus: anchor it to match the text
    const top = u.run('go', ['tool', 'pprof', '-symbolize=none', '-top', '-tagfocus=rank=^2$', pb], genv);
    const t2 = [...top.out.matchAll(/^\s*([\d.]+)ms .* (ring|reduce)$/gm)].map((m) => m[2]).sort();
    const wall2 = samples.split('\n').filter((l, i, a) => /rank:\[2\]/.test(a[i + 1] || '')).length;
    check(JSON.stringify(t2) === '["reduce","ring"]' && wall2 === 2 && /Active filters:\s*tagfocus=rank=\^2\$/.test(top.out),
      `go tool pprof -tagfocus=rank=^2$ keeps rank 2's two spans (${t2})`);
  }

  // the report joins each collective across the ranks: 3 MPI_Allreduce and 1 MPI_Barrier on
  // MPI_COMM_WORLD, each with its 3 members
  const rh = u.tmp('rj.html');
  J(['report', rjob, '-o', rh]);
  const rd = JSON.parse(fs.readFileSync(rh, 'utf8').match(/<script type="application\/json"[^>]*>([\s\S]*?)<\/script>/)[1]);
  const co = rd.collectives;
  const kinds = co.a.map((x) => `${co.funcs[x[0]]}×${(x.length - 1) / 4}`);
  check(co.n === 4 && co.drawn === 4 && JSON.stringify(kinds) === '["MPI_Allreduce×3","MPI_Allreduce×3","MPI_Allreduce×3","MPI_Barrier×3"]',
    `report: 4 collective instances, each joining its 3 ranks (${kinds})`);
  check(co.a.every((x) => [0, 1, 2].every((k) => x.filter((v, i) => i % 4 === 1 && v === k).length === 1)),
    'report: every instance has one call of each rank');
  check(rd.messages.n === 30, `report: the 30 ring messages as arrows (${rd.messages.n})`);

  // 5b. more messages than the report draws (REPORT_MAX_ARROWS, 4000): mpi_waits small 1000
  // sends 5000 messages of 8 bytes from rank 0 to rank 1; every 2nd is drawn, and the
  // legend (the page's own J.drawnLabel, run here) says how many of how many
  const many = u.tmp('many.jgr');
  const r4 = u.mpiexec(2, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: many, JAGER_RING_BYTES: '8M', JAGER_MPI_AGGREGATE: '1' },
    u.bin('mpi_waits'), ['small', '1000']);
  check(r4.code === 0 && fs.existsSync(many), `mpi_waits small 1000 on 2 ranks, one job file (${r4.err.slice(0, 200)})`);
  const mh = u.tmp('many.html');
  J(['report', many, '-o', mh]);
  const mpage = fs.readFileSync(mh, 'utf8');
  const md = JSON.parse(mpage.match(/<script type="application\/json"[^>]*>([\s\S]*?)<\/script>/)[1]).messages;
  check(md.n === 5000 && md.drawn === 2500 && md.a.length === 6 * md.drawn,
    `report: 5000 messages, every 2nd drawn: ${md.drawn} arrows of ${md.n} (${md.a.length / 6} in the data)`);
  const ctx = vm.createContext({ console, performance: { now: () => 0 } });
  try { vm.runInContext(mpage.match(/<script>([\s\S]*?)<\/script>/)[1], ctx); } catch (err) { /* no DOM: the page's main stops */ }
  const label = vm.runInContext('J.drawnLabel', ctx)('MPI message', md);
  check(label === 'MPI message (2\u2009500 of 5\u2009000 drawn)', `report legend: "${label}"`);
  check(vm.runInContext('J.drawnLabel', ctx)('MPI message', { n: 30, drawn: 30 }) === 'MPI message (30)',
    'report legend: all drawn → the count alone');

  // 6. speedscope keeps one output per rank
  const ss = J(['export', '--format', 'speedscope', job, '-o', u.tmp('s.json')]);
  check(ss.code === 0 && [0, 1, 2, 3].every((k) => fs.existsSync(u.tmp(`s.rank${k}.json`))), 'speedscope: one file per rank');
  u.done();
})().catch((err) => {
  console.log('FAIL ' + (err.stack || err));
  process.exit(1);
});
