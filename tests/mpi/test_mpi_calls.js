// Exact counts on 4 ranks: mpi_calls (a plain MPI program, zero-code LD_PRELOAD) makes a
// known number of each wrapped call and writes what it did; every rank's recording must
// hold exactly those calls, with their bytes, peers and tags, every send matched to one
// receive by its message id (ANY_SOURCE, ANY_TAG and Waitany included), non-blocking
// calls with start and completion, one trace id, clock offsets within their bound, and
// no receive that ends before its send began.
'use strict';
const fs = require('fs');
const u = require('./mpiutil');
const { check } = u;

const N = 4;
const out = u.tmp('run.%r.jgr');
const r = u.mpiexec(N, { LD_PRELOAD: u.preload(), JAGER_OUTPUT: out, JAGER_RING_BYTES: '8M' },
  u.bin('mpi_calls'), [u.tmp('x')]);
check(r.code === 0, `mpiexec -n 4 mpi_calls under LD_PRELOAD exits 0 (${r.code} ${r.signal || ''} ${r.err.slice(0, 300)})`);

const file = (k) => u.tmp(`run.${k}.jgr`);
const initLine = fs.readFileSync(`${__dirname}/mpi_calls.c`, 'utf8').split('\n').findIndex((l) => /CALL\(MPI_Init, /.test(l)) + 1;
const ranks = [];
for (let k = 0; k < N; k++) {
  const file = u.tmp(`run.${k}.jgr`);
  if (!check(fs.existsSync(file), `rank ${k} wrote run.${k}.jgr (%r in JAGER_OUTPUT)`)) continue;
  const evs = u.dump(file), inf = u.info(file);
  const exp = fs.readFileSync(u.tmp(`x.${k}.expect`), 'utf8').trim().split('\n').map((l) => l.split(' '));
  ranks[k] = { evs, meta: inf.meta, text: inf.text, exp };
}
if (ranks.filter(Boolean).length !== N) u.done();

const allSends = [], allRecvs = [];
for (let k = 0; k < N; k++) {
  const { evs, meta, text, exp } = ranks[k];
  check(/status: complete/.test(text) && /dropped: 0/.test(text), `rank ${k}: file complete, nothing dropped`);
  // calls per function, exactly
  const want = {}, got = {};
  for (const e of exp) if (e[0] === 'call') want[e[1]] = Number(e[2]);
  for (const c of u.calls(evs)) got[c.func] = (got[c.func] || 0) + 1;
  const wk = Object.keys(want).sort(), gk = Object.keys(got).sort();
  check(JSON.stringify(wk) === JSON.stringify(gk), `rank ${k}: the ${wk.length} functions called are the ones recorded` +
    (JSON.stringify(wk) === JSON.stringify(gk) ? '' : ` (want ${wk} got ${gk})`));
  const bad = wk.filter((f) => want[f] !== got[f]).map((f) => `${f} want ${want[f]} got ${got[f]}`);
  check(bad.length === 0, `rank ${k}: exactly as many mpi.call events per function as calls made ${bad.join(', ')}`);
  // bytes and recv_bytes per function, summed, where the program says (v/w, neighbourhood, large-count)
  const bw = exp.filter((e) => e[0] === 'bytes');
  const bbad = bw.filter((e) => {
    const cs = u.calls(evs).filter((c) => c.func === e[1]);
    return cs.reduce((n, c) => n + c.bytes, 0) !== Number(e[2]) || cs.reduce((n, c) => n + c.recv_bytes, 0) !== Number(e[3]);
  }).map((e) => `${e[1]} want ${e[2]}/${e[3]}`);
  check(bw.length >= 10 && bbad.length === 0, `rank ${k}: bytes sent/received of ${bw.length} functions as the program counts them ${bbad.join(', ')}`);
  // messages: the recorded ones are exactly the ones the program made
  const { sends, recvs } = u.messages(k, evs);
  const key = (a) => a.map((m) => m.join(' ')).sort().join('\n');
  const wantS = exp.filter((e) => e[0] === 'send').map((e) => e.slice(1).map(Number));
  const wantR = exp.filter((e) => e[0] === 'recv').map((e) => e.slice(1).map(Number));
  check(key(sends.map((m) => [m.to, m.tag, m.bytes])) === key(wantS),
    `rank ${k}: ${wantS.length} sends with their world-rank destination, tag and bytes (got ${sends.length})`);
  check(key(recvs.map((m) => [m.from, m.tag, m.bytes])) === key(wantR),
    `rank ${k}: ${wantR.length} receives with their world-rank source, tag and bytes (got ${recvs.length})`);
  allSends.push(...sends);
  allRecvs.push(...recvs);
  // requests: each started one completes once, after it started
  const started = u.calls(evs).filter((c) => c.func.startsWith('MPI_I') && c.req > 0 && !/probe/.test(c.func));
  const persistent = u.calls(evs).filter((c) => c.func === 'MPI_Start' || c.func === 'MPI_Startall')
    .reduce((n, c) => n + c.completed, 0);
  const completed = u.reqs(evs);
  const byId = new Map(completed.map((q) => [q.req, q]));
  check(started.length > 0 && persistent === 13 && started.length + persistent === completed.length &&
    started.every((c) => byId.has(c.req)) && new Set(completed.map((q) => q.req)).size === completed.length,
    `rank ${k}: all ${started.length} non-blocking calls and ${persistent} persistent starts completed once (mpi.request)`);
  check(completed.every((q) => q.done >= q.t && q.duration_ns === q.done - q.t && /^MPI_(Wait|Test)/.test(q.done_by)),
    `rank ${k}: each request has its start, its completion and the call that completed it`);
  // metadata
  check(meta['mpi.rank'] === String(k) && meta['mpi.world_size'] === String(N) && meta['mpi.rank_from'] === 'PMI_RANK',
    `rank ${k}: metadata rank ${meta['mpi.rank']} (from ${meta['mpi.rank_from']}), world size ${meta['mpi.world_size']}`);
  const pid = (exp.find((e) => e[0] === 'pid') || [])[1], host = (exp.find((e) => e[0] === 'host') || [])[1];
  check(pid && meta['mpi.pid'] === pid && host && meta['mpi.host'] === host,
    `rank ${k}: metadata mpi.pid ${meta['mpi.pid']} and mpi.host ${meta['mpi.host']} are the process's (${pid}, ${host})`);
  const init = u.calls(evs).find((c) => c.func === 'MPI_Init');
  const js = meta['mpi.job_start_ns'];
  check(/^[1-9]\d*$/.test(js || '') && init && Number(js) <= init.t + init.duration_ns,
    `rank ${k}: metadata mpi.job_start_ns ${js}, before its MPI_Init returned (one host clock)`);
  // every call's caller named with its function, file and line (libdw: mpi_calls is a -g
  // build, main not exported); MPI_Init's is the line of its call in mpi_calls.c
  const tj = u.tmp(`run.${k}.trace.json`);
  const ex = u.run(u.E.JAGER_BIN, ['export', '--format', 'chrome', file(k), '-o', tj]);
  const slices = ex.code === 0 ? JSON.parse(fs.readFileSync(tj, 'utf8')).traceEvents.filter((e) => e.cat === 'mpi.call') : [];
  const unnamed = slices.filter((e) => !/^\w+ \(mpi_calls\.c:[1-9]\d*\)$/.test((e.args.caller || [])[0] || ''));
  check(slices.length === u.calls(evs).length && unnamed.length === 0,
    `rank ${k}: the caller of all ${slices.length} calls is "function (mpi_calls.c:line)" (${unnamed.length} not: ` +
    `${unnamed.slice(0, 2).map((e) => `${e.args.func} ${e.args.caller}`)})`);
  const ic = slices.find((e) => e.args.func === 'MPI_Init');
  check(ic && ic.args.caller[0] === `main (mpi_calls.c:${initLine})`,
    `rank ${k}: MPI_Init called from main (mpi_calls.c:${initLine}) (${ic && ic.args.caller})`);
  // clocks
  const clk = evs.filter((e) => e.type === 'mpi.clock').map((e) => e.fields);
  check(clk.length === 2 && clk[0].phase === 0 && clk[1].phase === 1 && clk.every((c) => c.ok),
    `rank ${k}: clock offsets measured at MPI_Init and MPI_Finalize`);
  const parent = k === 0 ? -1 : k - (1 << Math.floor(Math.log2(k)));
  check(clk.every((c) => c.parent === parent && (k === 0 ? c.offset_ns === 0 && c.error_ns === 0 :
    c.rtt_ns > 0 && c.error_ns >= Math.floor(c.rtt_ns / 2) && Math.abs(c.offset_ns) <= c.error_ns + 5000)),
    `rank ${k}: offsets on one host within their error bound + 5 µs (tree parent ${parent}): ` +
    clk.map((c) => `${c.offset_ns}±${c.error_ns} ns`).join(', '));
  // no plugin traffic recorded: the clock and trace exchanges use PMPI on a private comm
  const comms = new Set(u.calls(evs).map((c) => c.comm));
  check(u.calls(evs).filter((c) => c.func === 'MPI_Init' || c.func === 'MPI_Finalize').length === 2,
    `rank ${k}: MPI_Init and MPI_Finalize recorded once each, no plugin traffic among the calls (comms ${[...comms]})`);
  const rs = evs.filter((e) => e.type === 'mpi.rank').map((e) => e.fields);
  const jobs = evs.filter((e) => e.type === 'mpi.job').length;
  check(rs.length === 1 && rs[0].rank === k && rs[0].size === N && rs[0].duration_ns > 0 && jobs === (k === 0 ? 1 : 0),
    `rank ${k}: one mpi.rank span${k === 0 ? ' and the job\'s root span (mpi.job)' : ''}`);
}

check(ranks[0].meta['mpi.missing_ranks'] === '', 'rank 0: every rank reached MPI_Finalize (mpi.missing_ranks empty)');

// one trace for the job
const traces = new Set(ranks.map((x) => x.meta['mpi.trace_id']));
const roots = new Set(ranks.map((x) => x.meta['mpi.root_span_id']));
check(traces.size === 1 && /^[0-9a-f]{32}$/.test([...traces][0]) && roots.size === 1,
  `one trace id ${[...traces][0]} and one root span on all ${N} ranks`);
check(ranks.every((x, k) => x.meta['mpi.traceparent'] === `00-${[...traces][0]}-${x.meta['mpi.rank_span_id']}-01`),
  'each rank records its own traceparent (its rank span) in the job trace');

// every send matched to exactly one receive, and the other way round
const ids = new Map();
for (const s of allSends) ids.set(u.msgId(s), s);
let matched = 0, unmatched = [], causal = 0, bytesOk = 0;
const seen = new Set();
for (const m of allRecvs) {
  const s = ids.get(u.msgId(m));
  if (!s || seen.has(u.msgId(m))) { unmatched.push(u.msgId(m)); continue; }
  seen.add(u.msgId(m));
  matched++;
  // each process calibrates its own TSC (~1 ppm apart: ~2 µs over a 2 s run), and these are
  // the ranks' own clocks, not the job's: an eager receive that ended 1 µs after the send
  // began read as 1 µs before it once (169 of 170); 5 µs, as for the offsets above
  if (m.end + 5000 >= s.start) causal++;
  if (m.bytes === s.bytes) bytesOk++;
}
check(allSends.length === allRecvs.length && matched === allSends.length && unmatched.length === 0,
  `all ${allSends.length} sends matched to their receive by (sender, receiver, tag, comm, seq)` +
  (unmatched.length ? ` unmatched: ${unmatched.slice(0, 5)}` : ''));
check(bytesOk === matched, `matched messages carry the same bytes on both sides (${bytesOk}/${matched})`);
check(causal === matched, `no receive ends before its send began (${causal}/${matched}, one host clock)`);
const wild = allRecvs.filter((m) => m.to === 0 && m.tag >= 21 && m.tag <= 23).length +
  allRecvs.filter((m) => m.to === 1 && m.tag === 30).length;
check(wild === 6, `the ANY_SOURCE/ANY_TAG receives and the Waitany receives resolved to their real senders (${wild}/6)`);
// communicator: the split comm has one id on its members, size 2 and a name
const splitIds = ranks.map((x) => u.calls(x.evs).find((c) => c.func === 'MPI_Comm_set_name').comm);
check(splitIds[0] === splitIds[2] && splitIds[1] === splitIds[3] && splitIds[0] !== splitIds[1] && splitIds[0] > 2,
  `Comm_split: one id per new communicator on all its members (${splitIds})`);
// every communicator the program made has one id on all its members: all messages above
// matched across ranks already; the 4 barriers on the constructors' comms agree on ids
const barrierComms = ranks.map((x) => u.calls(x.evs).filter((c) => c.func === 'MPI_Barrier' && c.comm > 2 &&
  c.comm_size === 4).map((c) => c.comm).join(','));
check(new Set(barrierComms).size === 1 && barrierComms[0].split(',').length === 4 &&
  !barrierComms[0].split(',').some((id) => Number(id) >= 2 ** 63),
  `Comm_dup, Comm_split_type, Comm_dup_with_info, Cart_sub: the same ids on every rank (${barrierComms[0]})`);
const named = ranks.map((x, k) => x.evs.some((e) => e.type === 'mpi.comm' && e.fields.name === (k % 2 ? 'odd' : 'even') &&
  e.fields.size === 2 && e.fields.comm === splitIds[k]));
check(named.every(Boolean), 'MPI_Comm_set_name names the communicator (mpi.comm)');
u.done();
