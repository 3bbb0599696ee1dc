// Aggregation into one job file at MPI_Finalize, `jager merge`, multi-file input of the
// commands, %r in the JAGER_PLUGINS-only mode, and the MPI wait-state findings of
// `jager hunt` on programs with known wait states (tests/mpi/mpi_waits.c).
'use strict';
const fs = require('fs');
const u = require('./mpiutil');
const { check, E } = u;

const J = (args) => u.run(E.JAGER_BIN, args);
const waits = u.bin('mpi_waits');
const agg = (extra) => Object.assign({ LD_PRELOAD: u.preload(), JAGER_MPI_AGGREGATE: '1' }, extra || {});
const hunt = (files) => {
  const r = J(['hunt', '--format', 'json', ...files]);
  if (r.code !== 0) throw new Error(`jager hunt ${files}: ${r.code} ${r.err}`);
  return JSON.parse(r.out).findings;
};
const ofKind = (f, k) => f.filter((x) => x.kind === k);
const WAIT_KINDS = ['late_sender', 'late_receiver', 'collective_wait'];

// 1. One job file; the parts kept (JAGER_MPI_KEEP_PARTS) merge to the same bytes and events
{
  const job = u.tmp('late.jgr');
  const r = u.mpiexec(3, agg({ JAGER_OUTPUT: job, JAGER_MPI_KEEP_PARTS: '1' }), waits, ['late']);
  check(r.code === 0, `mpiexec -n 3 with aggregation exits 0 (${r.code} ${r.err.slice(0, 300)})`);
  const parts = [0, 1, 2].map((k) => `${job}.${k}`);
  check(fs.existsSync(job) && parts.every((p) => fs.existsSync(p)), 'the job file and the 3 kept rank files exist');
  const lz4 = u.run('lz4', ['-t', job]);
  check(lz4.code === 0, `lz4 -t checks every frame of the job file (${lz4.err.trim().slice(0, 200)})`);
  const merged = u.tmp('merged.jgr');
  const m = J(['merge', ...parts.slice().reverse(), '-o', merged]);
  check(m.code === 0 && /3 rank\(s\)/.test(m.out), `jager merge of the 3 rank files (given in reverse) exits 0: ${m.out.trim()} ${m.err}`);
  check(fs.readFileSync(merged).equals(fs.readFileSync(job)), 'merge of the rank files = the aggregated file, byte for byte');
  const dj = J(['dump', job]).out.trim().split('\n');
  const dm = J(['dump', merged]).out.trim().split('\n');
  const dparts = parts.flatMap((p, k) => J(['dump', p]).out.trim().split('\n').map((l) => `{"rank":${k},${l.slice(1)}`));
  check(dj.length > 20 && dj.join('\n') === dm.join('\n') && dj.join('\n') === dparts.join('\n'),
    `event for event: dump of the job file = dump of the merge = the rank files' dumps (${dj.length} events)`);
  const ranks = new Set(dj.map((l) => JSON.parse(l).rank));
  check(ranks.size === 3, 'the job file holds 3 ranks, told apart in the dump');
  const calls = dj.map((l) => JSON.parse(l)).filter((e) => e.type === 'mpi.call');
  const count = (rank, f) => calls.filter((e) => e.rank === rank && e.fields.func === f).length;
  check(count(0, 'MPI_Recv') === 5 && count(1, 'MPI_Send') === 5 && [0, 1, 2].every((k) => count(k, 'MPI_Finalize') === 1),
    'exact counts: rank 0 5 MPI_Recv, rank 1 5 MPI_Send, one MPI_Finalize per rank (recorded before the gather)');
  // a folder of the rank files reads as the job too
  fs.mkdirSync(u.tmp('ranks'));
  parts.forEach((p, k) => fs.copyFileSync(p, u.tmp(`ranks/late.jgr.rank${k}`)));
  const dirDump = J(['dump', u.tmp('ranks')]).out.trim().split('\n');
  check(dirDump.join('\n') === dj.join('\n'), 'a folder of the rank files dumps as the job file does');

  // 2. late_sender: rank 0 waits in MPI_Recv (main) for rank 1, ~5 × 50 ms
  for (const [what, files] of [['job file', [job]], ['rank files', parts], ['folder', [u.tmp('ranks')]]]) {
    const f = hunt(files);
    const ls = ofKind(f, 'late_sender');
    const x = ls[0];
    check(ls.length === 1 && x.evidence.waiting_rank === 0 && x.evidence.late_rank === 1,
      `${what}: one late_sender, rank 0 waiting for rank 1 (${JSON.stringify(ls.map((y) => y.title))})`);
    if (x) {
      const w = x.evidence.wait_ns / 1e6;
      check(w > 200 && w < 300, `${what}: the wait is close to the injected 5 × 50 ms (${w.toFixed(1)} ms)`);
      check(x.location.function === 'main' && /MPI_Recv/.test(x.title), `${what}: at the receive in main (${x.location.function})`);
      check(x.evidence.late_rank_work_ns / 1e6 > 45, `${what}: the late rank's work before the send is named (${(x.evidence.late_rank_work_ns / 1e6).toFixed(1)} ms)`);
    }
    // The final barrier: rank 2 waits there ~250 ms while ranks 0 and 1 exchange. Ranks 0 and
    // 1 arrive within microseconds of each other; when rank 0 is last its lateness propagated
    // from its late-sender wait (not its work: no finding), when rank 1 is last its work
    // explains it (a collective_wait naming rank 1, seen under ASan). Either way no finding
    // may name another rank, and none is a late receiver.
    const cw = ofKind(f, 'collective_wait');
    check(cw.every((y) => y.evidence.late_rank === 1 && /MPI_Barrier/.test(y.title)) && cw.length <= 1 &&
      ofKind(f, 'late_receiver').length === 0,
      `${what}: no collective_wait but one naming rank 1 at the final barrier, and no late_receiver (${JSON.stringify(f.map((y) => y.title))})`);
  }
  // report: one page, a lane group per rank; export: one output per rank
  const html = u.tmp('late.html');
  const rep = J(['report', job, '-o', html]);
  const names = rep.code === 0 ? [...fs.readFileSync(html, 'utf8').matchAll(/"name":"(rank \d) ·/g)].map((x) => x[1]) : [];
  check(JSON.stringify([...new Set(names)]) === '["rank 0","rank 1","rank 2"]', `jager report of the job file: processes rank 0, 1, 2 (${[...new Set(names)]})`);
  const ex = J(['export', '--format', 'chrome', job, '-o', u.tmp('late.json')]);
  const tr = ex.code === 0 ? JSON.parse(fs.readFileSync(u.tmp('late.json'), 'utf8')).traceEvents : [];
  const pids = [...new Set(tr.filter((e) => e.ph === 'X').map((e) => e.pid))].sort();
  check(ex.code === 0 && JSON.stringify(pids) === '[0,1,2]' && tr.filter((e) => e.ph === 's').length === 5,
    `jager export of the job file: one Chrome file, pids 0, 1, 2, the 5 messages as arrows (${ex.err.trim()})`);
  // without KEEP_PARTS the rank files go once rank 0 has them
  const job2 = u.tmp('late2.jgr');
  const r2 = u.mpiexec(3, agg({ JAGER_OUTPUT: job2 }), waits, ['late']);
  check(r2.code === 0 && fs.existsSync(job2) && ![0, 1, 2].some((k) => fs.existsSync(`${job2}.${k}`)),
    'default: only the job file is left');
}

// 2b. the natural form (issue 17): LD_PRELOAD and JAGER_OUTPUT on mpiexec itself, no -genv:
//     the ranks inherit them and the job still leaves one file with every rank
{
  const job = u.tmp('outside.jgr');
  const r = u.run(E.MPIEXEC, ['-n', '3', waits, 'late'], { LD_PRELOAD: u.preload(), JAGER_OUTPUT: job });
  const ev = r.code === 0 && fs.existsSync(job) ? J(['dump', job]).out.trim().split('\n').map((l) => JSON.parse(l)) : [];
  const recvs = ev.filter((e) => e.rank === 0 && e.type === 'mpi.call' && e.fields.func === 'MPI_Recv').length;
  check(JSON.stringify([...new Set(ev.map((e) => e.rank))].sort()) === '[0,1,2]' && recvs === 5,
    `LD_PRELOAD=… JAGER_OUTPUT=outside.jgr mpiexec -n 3: one job file with ranks 0, 1, 2 (rank 0: ${recvs} MPI_Recv) (${r.code} ${r.err.slice(0, 200)})`);
  check(fs.readdirSync(u.dir).filter((n) => n.startsWith('outside.jgr')).length === 1, 'and no other file');
}

// 2d. the gather tree: ranks grouped by node (here faked: JAGER_MPI_TEST_NODE_SIZE=2 makes
//     nodes {0,1} {2,3} {4}), each node's leader sends rank 0 its node's parts in one
//     bundle; the job file is the same bytes, and the acknowledgements reach every rank
{
  const job = u.tmp('tree.jgr');
  const r = u.mpiexec(5, agg({ JAGER_OUTPUT: job, JAGER_MPI_KEEP_PARTS: '1', JAGER_MPI_TEST_NODE_SIZE: '2' }), waits, ['late']);
  const parts = [0, 1, 2, 3, 4].map((k) => `${job}.${k}`);
  check(r.code === 0 && fs.existsSync(job) && parts.every((p) => fs.existsSync(p)), `tree: 5 ranks on 3 nodes, one job file (${r.code} ${r.err.slice(0, 200)})`);
  const leaders = parts.map((p) => u.info(p).meta['mpi.node_leader']).join();
  const nodes = u.info(parts[4]).meta['mpi.nodes'];
  check(leaders === '0,0,2,2,4' && nodes === '3', `tree: node leaders 0,0,2,2,4 of 3 nodes (${leaders}; ${nodes})`);
  const merged = u.tmp('tree.merged.jgr');
  J(['merge', ...parts, '-o', merged]);
  check(fs.readFileSync(merged).equals(fs.readFileSync(job)), 'tree: merge of the rank files = the job file, byte for byte');
  const job2 = u.tmp('tree2.jgr');
  const r2 = u.mpiexec(5, agg({ JAGER_OUTPUT: job2, JAGER_MPI_TEST_NODE_SIZE: '2' }), waits, ['late']);
  const left = fs.readdirSync(u.dir).filter((n) => n.startsWith('tree2.jgr'));
  check(r2.code === 0 && JSON.stringify(left) === '["tree2.jgr"]', `tree: every rank acknowledged (through its leader) and its file removed (${left})`);
  const d = J(['dump', job2]).out.trim().split('\n').map((l) => JSON.parse(l));
  check(JSON.stringify([...new Set(d.map((e) => e.rank))].sort()) === '[0,1,2,3,4]' &&
    d.filter((e) => e.type === 'mpi.call' && e.fields.func === 'MPI_Finalize').length === 5, 'tree: the job file holds ranks 0-4, one MPI_Finalize each');
}

// 2c. clocks: on one host the aligned job is causal; a rank whose recorded offset is 100 ms
//     wrong (JAGER_MPI_TEST_SKEW_NS) makes every receive end before its send, and the
//     tools repair that (the receiver's later calls moved forward) and still find the wait
{
  const mpiOf = (file) => {
    const s = J(['summary', '--format', 'json', file]);
    return s.code === 0 ? JSON.parse(s.out).mpi : null;
  };
  const ok = mpiOf(u.tmp('late.jgr'));
  check(ok && ok.messages === 5 && ok.clock_violations === 0, `one host: 5 messages matched, no clock-condition violation (${ok && ok.clock_violations})`);
  const job = u.tmp('skew.jgr');
  const r = u.mpiexec(2, agg({ JAGER_OUTPUT: job, JAGER_MPI_TEST_SKEW_NS: '100000000' }), waits, ['late']);
  const sk = r.code === 0 ? mpiOf(job) : null;
  check(sk && sk.clock_violations === 5 && sk.clock_repaired === 5,
    `rank 1's offset 100 ms off: 5 violations counted, 5 repaired (${sk && JSON.stringify([sk.clock_violations, sk.clock_repaired])})`);
  const ls = ofKind(hunt([job]), 'late_sender');
  const w = ls[0] ? ls[0].evidence.wait_ns / 1e6 : 0;
  check(ls.length === 1 && ls[0].evidence.late_rank === 1 && w > 200 && w < 300,
    `after the repair the late sender is still rank 1 with a wait close to 250 ms (${w.toFixed(1)} ms)`);
}

// 3. balanced: no wait findings
{
  const job = u.tmp('balanced.jgr');
  const r = u.mpiexec(3, agg({ JAGER_OUTPUT: job }), waits, ['balanced']);
  check(r.code === 0, 'balanced program exits 0');
  const f = hunt([job]);
  check(WAIT_KINDS.every((k) => ofKind(f, k).length === 0),
    `balanced: no late_sender, late_receiver or collective_wait (${JSON.stringify(f.map((x) => x.title))})`);
}

// 4. imbalance before an allreduce: collective_wait naming the last rank
{
  const job = u.tmp('imb.%r.jgr');
  const r = u.mpiexec(3, agg({ JAGER_OUTPUT: job }), waits, ['imbalance']);
  const all = u.tmp('imb.all.jgr');
  check(r.code === 0 && fs.existsSync(all) && !fs.existsSync(u.tmp('imb.0.jgr')),
    'JAGER_OUTPUT with %r and aggregation: the job file is the name with %r = all');
  const f = hunt([all]);
  const cw = ofKind(f, 'collective_wait').filter((x) => /MPI_Allreduce/.test(x.title));
  check(cw.length === 1 && cw[0].evidence.late_rank === 2 && cw[0].evidence.instances === 5,
    `imbalance: collective_wait in MPI_Allreduce, late rank 2, 5 instances (${JSON.stringify(f.map((x) => x.title))})`);
  if (cw[0]) {
    // 2 ranks wait ~50 ms in each of 5 allreduces
    const w = cw[0].evidence.wait_ns / 1e6;
    check(w > 350 && w < 650, `imbalance: the wait is close to 2 ranks × 5 × 50 ms (${w.toFixed(1)} ms)`);
  }
}

// 5. %r in JAGER_PLUGINS-only mode (the program calls jager_init(); nothing preloaded)
{
  const out = u.tmp('jr.%r.jgr');
  const r = u.mpiexec(2, { JAGER_PLUGINS: 'mpi', JAGER_OUTPUT: out, JAGER_PLUGIN_PATH: require('path').dirname(E.LIBJAGER_MPI) },
    u.bin('mpi_ring_jager'));
  check(r.code === 0 && fs.existsSync(u.tmp('jr.0.jgr')) && fs.existsSync(u.tmp('jr.1.jgr')),
    `JAGER_PLUGINS=mpi only: %r gives jr.0.jgr and jr.1.jgr (${fs.readdirSync(u.dir).filter((n) => n.startsWith('jr'))})`);
  const s = J(['summary', u.tmp('jr.0.jgr'), u.tmp('jr.1.jgr')]);
  check(s.code === 0 && /rank 0/.test(s.out) && /rank 1/.test(s.out), `jager summary of both rank files: per-rank output (${s.err.slice(0, 200)})`);
}
// 6. a rank that stops recording before MPI_Finalize: the job file holds the others and names it
{
  const t0 = Date.now();
  const r = u.mpiexec(4, { JAGER_OUTPUT: u.tmp('stop.%r.jgr'), JAGER_PLUGINS: 'mpi', JAGER_MPI_AGGREGATE: '1',
    JAGER_PLUGIN_PATH: require('path').dirname(E.LIBJAGER_MPI), RING_STOP_RANK: '1', JAGER_MPI_TIMEOUT_MS: '1500' },
  u.bin('mpi_ring_jager'), [], 60000);
  const secs = (Date.now() - t0) / 1000;
  const job = u.tmp('stop.all.jgr');
  check(r.code === 0 && secs < 30 && fs.existsSync(job), `a rank that stops early: the job finishes and writes ${job} (${secs.toFixed(1)} s)`);
  const ev = J(['dump', job]).out.trim().split('\n').map((l) => JSON.parse(l));
  const ranks = [...new Set(ev.map((e) => e.rank))].sort();
  check(JSON.stringify(ranks) === '[0,2,3]', `the job file holds ranks 0, 2, 3 (${ranks})`);
  check([0, 2, 3].every((k) => ev.filter((e) => e.rank === k && e.type === 'mpi.call' && e.fields.func === 'MPI_Sendrecv').length === 10),
    'each of them with its 10 MPI_Sendrecv');
  const s = J(['summary', '--format', 'json', job]);
  const sj = s.code === 0 ? JSON.parse(s.out) : null;
  check(sj && JSON.stringify(sj.mpi.missing_ranks) === '[1]' && sj.parts.length === 3,
    `jager summary names rank 1 missing (${sj && JSON.stringify(sj.mpi.missing_ranks)})`);
  check(fs.existsSync(u.tmp('stop.1.jgr')) && !fs.existsSync(u.tmp('stop.0.jgr')),
    "the stopped rank keeps its own file; the gathered ranks' files are gone");
}
// 7. with the rusage plugin's readings the wait rules count a rank's time off the CPU out of
// its work (docs/hunt.md): sleeping is not being descheduled, so both known waits stay found
const ruPlugin = require('path').join(require('path').dirname(E.LIBJAGER_MPI), 'libjager-rusage.so');
if (!fs.existsSync(ruPlugin)) console.log('skip the rusage case: the rusage plugin is not built');
else {
  const ru = (extra) => agg(Object.assign({ JAGER_PLUGINS: 'rusage', JAGER_RUSAGE_INTERVAL_MS: '2' }, extra));
  const job = u.tmp('ru.jgr');
  // Two ranks: a third would busy-poll in the final barrier all along, and on 2 CPUs (with
  // ctest -j2 and a sanitizer beside it) rank 1 then waited for a CPU after most sleeps —
  // descheduled, truly, and its run-queue wait smeared over the sleeps until no late_sender
  // was left (seen once in CI under ASan).
  const r = u.mpiexec(2, ru({ JAGER_OUTPUT: job }), waits, ['late']);
  check(r.code === 0 && /rusage\.thread/.test(J(['info', job]).out), 'late with rusage: the job file has rusage.thread readings');
  const ls = ofKind(hunt([job]), 'late_sender');
  const x = ls[0];
  check(ls.length === 1 && x.evidence.waiting_rank === 0 && x.evidence.late_rank === 1 &&
    x.evidence.late_rank_descheduled_ns !== undefined,
    `late with rusage: one late_sender, rank 0 waiting for rank 1, with the late rank's descheduled time (${JSON.stringify(ls.map((y) => y.title))})`);
  // Per message rank 1 sleeps 50 ms and then may wait for a CPU (the other ranks poll in MPI:
  // on a loaded machine that wait is real, 100+ ms); its time outside MPI holds both. The
  // run-queue wait is known at the readings (every 2 ms when the reader gets a CPU) and
  // spread linearly between them, so when a loaded host delays a reading, a wake-up's wait
  // smears back over the sleep (24 of 49 ms seen in CI). Counting the sleep as descheduled
  // would give all of it: at most three quarters is the bound.
  if (x) check(x.evidence.late_rank_descheduled_ns <= x.evidence.late_rank_work_ns * 0.75,
    `late with rusage: rank 1's 50 ms sleeps are not counted as off the CPU (descheduled ${(x.evidence.late_rank_descheduled_ns / 1e6).toFixed(2)} ms of ${(x.evidence.late_rank_work_ns / 1e6).toFixed(2)} ms outside MPI per message)`);
  const job2 = u.tmp('ru2.jgr');
  u.mpiexec(3, ru({ JAGER_OUTPUT: job2 }), waits, ['imbalance']);
  const cw = ofKind(hunt([job2]), 'collective_wait');
  check(cw.length === 1 && cw[0].evidence.late_rank === 2, `imbalance with rusage: collective_wait, late rank 2 (${cw.map((y) => y.title)})`);
}
u.done();
